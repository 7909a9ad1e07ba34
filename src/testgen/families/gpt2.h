// GPT-2's checkpoint layout as GPT-2 (Conv1D projections) and GPTBigCode (nn.Linear, multi-query
// attention) write it (families/gpt2.cc).
#pragma once

#include <vector>

#include "testgen/family.h"

namespace og::testgen {

// [transformer.]wte [V, n_embd], wpe [n_positions, n_embd], h.N.{ln_1, ln_2 (LayerNorms with
// biases), attn.c_attn (n_embd in; n_embd + 2 kv out, kv = n_embd, or head_dim under
// GPTBigCode's multi_query), attn.c_proj, mlp.c_fc (inner out), mlp.c_proj (each with a bias)},
// ln_f, and lm_head [V, n_embd] unless tied. `linear`: nn.Linear weights [out, in] (GPTBigCode),
// else Conv1D [in, out] (GPT-2). Under transformer. as transformers saves the model; at the top
// level with GenOptions::hub_layout, as openai-community/gpt2's own checkpoint has them.
Result<std::vector<TensorSpec>> gpt2_like_tensors(const Json& text, const FamilyContext& ctx, bool linear);
// Overrides given under the usual names (hidden_size, intermediate_size, ...: the tests that
// patch every family alike) become GPT2Config's own, which is what its config.json holds.
Status gpt2_like_derive(Json& text, const Json& overrides, const FamilyContext& ctx);

}  // namespace og::testgen
