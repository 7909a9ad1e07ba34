// StableLM (StableLmForCausalLM, modeling_stablelm.py).
#include "testgen/families/layer_norm_like.h"

namespace og::testgen {
namespace {

// StableLmAttention: q/k/v biases iff use_qkv_bias, o_proj none, with qk_layernorm a
// weight-only LayerNorm per head (q_layernorm.norms.{h}); StableLmMLP: Llama's, unbiased; no
// post_attention_layernorm when use_parallel_residual.
Result<std::vector<TensorSpec>> stablelm_tensors(const Json& text, const FamilyContext& ctx) {
  const hf::JsonFields t(text, ctx.what);
  OG_ASSIGN_OR_RETURN(bool qkv_bias, t.get_bool("use_qkv_bias", false));
  OG_ASSIGN_OR_RETURN(bool parallel, t.get_bool("use_parallel_residual", false));
  OG_ASSIGN_OR_RETURN(bool qk_layernorm, t.get_bool("qk_layernorm", false));
  return layer_norm_tensors(text, ctx, {.qkv_bias = qkv_bias, .parallel = parallel, .qk_layernorm = qk_layernorm,
                                        .qk_norm_heads_list = "norms"});
}

// stablelm-2-1_6b's field set (q/k/v biases, partial_rotary_factor 0.25: 4 of head_dim 16
// rotate) at hidden 64, with 2 kv heads of 4 (the 1.6B model has as many as query heads).
Json stablelm_config() {
  return {
      {"architectures", {"StableLmForCausalLM"}},
      {"bos_token_id", 300},
      {"eos_token_id", 300},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 192},
      {"max_position_embeddings", 4096},
      {"model_type", "stablelm"},
      {"layer_norm_eps", 1e-5},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"partial_rotary_factor", 0.25},
      {"rope_theta", 10000},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.38.0"},
      {"use_cache", true},
      {"use_qkv_bias", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> stablelm_generators() {
  return {
      {"stablelm", false, "torch_dtype", false, 0, 0, stablelm_config, nullptr, stablelm_tensors},
  };
}

}  // namespace og::testgen
