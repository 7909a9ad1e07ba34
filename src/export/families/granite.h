// What Granite's dense and mixture-of-experts decoders share (granite.cc, granitemoe.cc,
// granitemoeshared.cc):
// Llama's attention with q/k/v/o biases iff attention_bias, and the four multipliers
// (embedding_multiplier, attention_multiplier as the score scale, residual_multiplier on each
// sublayer's output, logits divided by logits_scaling), each 1.0 when absent and a clear
// error unless positive and finite.
#pragma once

#include "export/decoder.h"

namespace og::exporter {

Status read_granite_block(const hf::ModelConfig& c, DecoderOptions& o);

// Granite MoE's decoder (granitemoe.cc): the block above with JetMoE's experts on every layer,
// and with `shared_mlp` GraniteMoeShared's shared expert beside them.
Status build_granite_moe(BuildContext& ctx, bool shared_mlp);

}  // namespace og::exporter
