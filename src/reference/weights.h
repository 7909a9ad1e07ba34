// Checkpoint and config.json access shared by the reference families: float tensors with
// shape checks whose errors name the tensor, embedding rows, the output head (tied or not),
// and config fields where transformers distinguishes "absent" (class default) from null.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"
#include "reference/toolkit.h"

namespace og::reference {

// The tensor `name`, which must be a float tensor of `shape`.
Result<const hf::TensorView*> float_tensor(const hf::Checkpoint& ckpt, const std::string& name,
                                           const std::vector<int64_t>& shape);
// A 1-D float tensor of n entries as float64 (norm weights).
Result<std::vector<double>> vector_f64(const hf::Checkpoint& ckpt, const std::string& name, int64_t n);

// Rows of the embedding table [vocab, hidden] for `tokens`: [T, hidden]. Token ids outside
// [0, vocab) are a bad_input error naming the position and the id.
Result<Mat> embed_rows(const hf::TensorView& table, std::span<const int32_t> tokens);

// The output projection [vocab, hidden]: the embedding table when tie_word_embeddings is set
// or when no lm_head tensor exists (transformers ties them), else the first of `lm_head_names`
// found in the checkpoint.
Result<const hf::TensorView*> output_head(const hf::Checkpoint& ckpt, const hf::ModelConfig& config,
                                          const hf::TensorView& embed,
                                          const std::vector<std::string>& lm_head_names);

// A field of the text config whose default transformers takes from the config class when it
// is absent, but which may also be an explicit null (meaning "off"):
// absent -> `fallback`; null -> nullopt; a number -> it.
Result<std::optional<double>> number_or_null(const hf::ModelConfig& config, const std::string& key,
                                             std::optional<double> fallback);

// layer_types from config.json as "is this layer sliding" flags; empty when absent.
// Only full_attention and sliding_attention are honoured; others are unsupported.
Result<std::vector<bool>> sliding_flags_from_layer_types(const hf::ModelConfig& config);

// For a config `derive`: intermediate_size, unless the config has it, is the field `width_key`
// (GPT-2's n_inner, Falcon's ffn_hidden_size) or, where that is absent or null, 4 × `hidden_key`.
Status mlp_width_from(hf::Json& text, const std::string& path, const std::string& width_key, const std::string& hidden_key);

// Rejects configs asking for non-causal attention (gemma3's use_bidirectional_attention,
// the generic is_causal = false), which the reference does not implement.
Status require_causal(const hf::ModelConfig& config);

}  // namespace og::reference
