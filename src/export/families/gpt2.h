// GPT-2's decoder as GPT-2 (Conv1D projections) and GPTBigCode (nn.Linear projections,
// multi-query attention) share it: the options, the config's derived fields, where the tensors
// live and the buffers older checkpoints saved (families/gpt2.cc).
#pragma once

#include <string>

#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {

// The decoder options of GPT-2's names and block: `linear` for nn.Linear projections (else
// Conv1D, read transposed, and scale_attn_by_inverse_layer_idx read); activation_function
// defaulting to `default_activation`.
Result<DecoderOptions> gpt2_decoder_options(const BuildContext& ctx, bool linear, const char* default_activation);
// The model under transformer. (saved by transformers) or at the top level (the original
// GPT-2 checkpoints).
Result<std::string> gpt2_find_prefix(const hf::Checkpoint& ckpt);
// The attention's causal-mask buffers (attn.bias, attn.masked_bias) older transformers saved
// with the weights.
bool gpt2_is_buffer(const std::string& name);
// GPT2Config's defaults as its __init__ has them (activation_function `activation`), and its
// attribute_map (n_embd is hidden_size, n_layer num_hidden_layers, n_head num_attention_heads,
// n_positions max_position_embeddings) with the fields read under the shared readers' names.
hf::Json gpt2_config_defaults(const char* activation);
hf::Json gpt2_config_aliases();

}  // namespace og::exporter
