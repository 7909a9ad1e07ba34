// Mixtral (MixtralForCausalLM, modular_mixtral.py).
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// MixtralDecoderLayer: Mistral's attention (no biases); block_sparse_moe in place of the MLP
// on every layer: the router block_sparse_moe.gate [num_local_experts, hidden] and experts
// block_sparse_moe.experts.E.{w1,w3,w2} (gate, up [intermediate_size, hidden], down), as the
// published checkpoints name them (transformers 5 fuses them in memory only).
Result<std::vector<TensorSpec>> mixtral_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(std::vector<TensorSpec> dense, llama_shaped_tensors(text, ctx, LlamaShape{}));
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(int64_t experts, f.get_int(f.has("num_local_experts") ? "num_local_experts" : "num_experts"));
  if (experts < 1) return f.invalid("num_local_experts", "positive");
  return replace_mlps(std::move(dense), [](int64_t) { return true; }, [&](int64_t layer, SpecList& s) {
    const std::string p = fmt::format("model.layers.{}.block_sparse_moe.", layer);
    const int64_t inter = d.intermediate[static_cast<size_t>(layer)];
    s.linear(p + "gate", experts, d.hidden);
    for (int64_t e = 0; e < experts; ++e) {
      s.linear(fmt::format("{}experts.{}.w1", p, e), inter, d.hidden);
      s.linear(fmt::format("{}experts.{}.w2", p, e), d.hidden, inter);
      s.linear(fmt::format("{}experts.{}.w3", p, e), inter, d.hidden);
    }
  });
}

// Mixtral-8x7B-v0.1's field set at 8 experts of which 2 per token, with a sliding window of
// 6 on every layer (its config has none; Mistral's block honours one when set).
Json mixtral_config() {
  return {
      {"architectures", {"MixtralForCausalLM"}},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 64},
      {"max_position_embeddings", 32768},
      {"model_type", "mixtral"},
      {"num_attention_heads", 4},
      {"num_experts_per_tok", 2},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"num_local_experts", 8},
      {"output_router_logits", false},
      {"rms_norm_eps", 1e-5},
      {"rope_theta", 1e6},
      {"router_aux_loss_coef", 0.02},
      {"sliding_window", 6},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.36.0.dev0"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> mixtral_generators() {
  return {
      {"mixtral", false, "torch_dtype", false, 0, 8, mixtral_config, nullptr, mixtral_tensors},
  };
}

}  // namespace og::testgen
