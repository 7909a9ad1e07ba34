// What Cohere's two families share (cohere.cc, cohere2.cc).
#pragma once

#include "export/decoder.h"

namespace og::exporter {

// Command R's block: a parallel block from one weight-only LayerNorm (eps layer_norm_eps),
// biases on q/k/v/o iff attention_bias, the gated MLP, a rope on interleaved pairs, and the
// logits times logit_scale.
Status cohere_decoder_options(const BuildContext& ctx, DecoderOptions& o);

}  // namespace og::exporter
