// GPT-2's decoder (learned positions, one c_attn, LayerNorms with biases, a plain MLP, no rope)
// as GPT-2 (Conv1D projections) and GPTBigCode (nn.Linear projections, multi-query attention)
// write it; the forward pass is in gpt2.cc, each family's entry in its own file.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"

namespace og::reference {

struct Gpt2Style {
  bool linear = false;                   // nn.Linear [out, in] (GPTBigCode), else Conv1D [in, out]; with
                                         // it, multi_query (default true) and the per-head c_attn
  const char* default_activation = "gelu_new";  // activation_function when absent
};

Result<std::vector<double>> gpt2_like_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                              std::span<const int32_t> tokens, const Gpt2Style& style);
// Every layer full attention.
Result<std::vector<int64_t>> gpt2_like_windows(const hf::ModelConfig& c);
// n_inner null: 4 * n_embd (the MLP's inner_dim), as intermediate_size for the shared readers.
Status gpt2_like_derive(hf::Json& text, const std::string& path);

}  // namespace og::reference
