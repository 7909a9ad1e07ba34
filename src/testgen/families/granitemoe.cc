// Granite MoE (GraniteMoeForCausalLM, modular_granitemoe.py).
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {

// GraniteMoeDecoderLayer: Llama's attention (biases iff attention_bias), the two norms, and
// block_sparse_moe in place of the MLP: router.layer [E, hidden] and the fused experts
// input_linear [E, 2I, hidden] (rows [0, I) of expert e its gate, [I, 2I) its up) and
// output_linear [E, hidden, I], as the hub stores them.
Result<std::vector<TensorSpec>> granite_moe_tensors(const Json& text, const FamilyContext& ctx, bool shared_mlp) {
  LlamaShape shape;
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  shape.o_bias = shape.qkv_bias;
  OG_ASSIGN_OR_RETURN(std::vector<TensorSpec> dense, llama_shaped_tensors(text, ctx, shape));
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(int64_t experts, f.get_int("num_local_experts"));
  if (experts < 1) return f.invalid("num_local_experts", "positive");
  int64_t shared = 0;
  if (shared_mlp) { OG_ASSIGN_OR_RETURN(shared, f.get_int("shared_intermediate_size", 0)); }
  return replace_mlps(std::move(dense), [](int64_t) { return true; }, [&](int64_t layer, SpecList& s) {
    const std::string p = fmt::format("model.layers.{}.block_sparse_moe.", layer);
    const int64_t inter = d.intermediate[static_cast<size_t>(layer)];
    s.linear(p + "router.layer", experts, d.hidden);
    s.add(p + "input_linear.weight", {experts, 2 * inter, d.hidden}, linear_init(d.hidden));
    s.add(p + "output_linear.weight", {experts, d.hidden, inter}, linear_init(inter));
    if (shared > 0) {  // GraniteMoeSharedMLP: input_linear [2S, hidden] (gate, then up), output_linear
      const std::string sp = fmt::format("model.layers.{}.shared_mlp.", layer);
      s.linear(sp + "input_linear", 2 * shared, d.hidden);
      s.linear(sp + "output_linear", d.hidden, shared);
    }
  });
}

namespace {

Result<std::vector<TensorSpec>> granitemoe_tensors(const Json& text, const FamilyContext& ctx) {
  return granite_moe_tensors(text, ctx, false);
}

}  // namespace


// granite-3.1-3b-a800m-instruct's field set (tied embeddings, rope_theta 1e7, 40 experts of
// which 8 per token) at 8 experts of which 2, with Granite's multipliers set so that each is
// exercised (the dense tiny model's values).
Json granitemoe_config() {
  return {
      {"architectures", {"GraniteMoeForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"attention_multiplier", 0.0625},
      {"bos_token_id", 0},
      {"embedding_multiplier", 12.0},
      {"eos_token_id", 0},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 32},
      {"logits_scaling", 6.0},
      {"max_position_embeddings", 131072},
      {"model_type", "granitemoe"},
      {"num_attention_heads", 4},
      {"num_experts_per_tok", 2},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"num_local_experts", 8},
      {"output_router_logits", false},
      {"pad_token_id", 0},
      {"residual_multiplier", 0.22},
      {"rms_norm_eps", 1e-6},
      {"rope_scaling", nullptr},
      {"rope_theta", 10000000.0},
      {"router_aux_loss_coef", 0.001},
      {"tie_word_embeddings", true},
      {"transformers_version", "4.46.0"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

std::vector<FamilyDef> granitemoe_generators() {
  return {
      {"granitemoe", false, "torch_dtype", false, 0, 0, granitemoe_config, nullptr, granitemoe_tensors},
  };
}

}  // namespace og::testgen
