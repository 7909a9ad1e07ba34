// What the GLM families share (glm.cc, glm4.cc).
#pragma once

#include "export/decoder.h"

namespace og::exporter {

// GLM-4's attention and MLP: q/k/v biases iff attention_bias (default true), o_proj none, the
// fused gate_up_proj, and the rope on interleaved pairs of the first
// head_dim * partial_rotary_factor dims (default 0.5).
Status glm_decoder_options(const BuildContext& ctx, DecoderOptions& o);

// GlmConfig's defaults for keys published configs may omit (Glm4Config's are the same).
const hf::Json& glm_config_defaults();

}  // namespace og::exporter
