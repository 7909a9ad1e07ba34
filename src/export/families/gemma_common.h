// What the Gemma families share (as qwen_common.h does for Qwen's): the decoder options of
// Gemma-2/3 and the embedding normalizer of all four.
#pragma once

#include "export/decoder.h"

namespace og::exporter {

// Gemma-2/3's shared options: (1 + w) sandwich norms, activation, query_pre_attn_scalar
// scale, final softcap, and the embedding normalizer (via_f32: Gemma-3 holds it as float32).
Status gemma_decoder_options(BuildContext& ctx, DecoderOptions& o, bool via_f32);

// Gemma's embedding normalizer sqrt(hidden) in the loaded dtype. Gemma-3 holds it as a
// float32 buffer first (via_f32), Gemma-2 builds it directly in the embedding's dtype.
float gemma_embed_scale(int64_t hidden_size, DType loaded, bool via_f32);

}  // namespace og::exporter
