// GLM (GlmForCausalLM, modular_glm.py).
#include "testgen/families/llama_like.h"

namespace og::testgen {

// GlmAttention: q/k/v biases iff attention_bias (default true), o_proj none; GlmMLP: Phi-3's
// fused gate_up_proj. GLM-4-0414 adds two norms a layer.
Result<std::vector<TensorSpec>> glm_tensors(const Json& text, const FamilyContext& ctx, bool glm4_norms) {
  OG_ASSIGN_OR_RETURN(bool bias, hf::JsonFields(text, ctx.what).get_bool("attention_bias", true));
  return llama_shaped_tensors(text, ctx, {.qkv_bias = bias, .fused_gate_up = true, .glm4_norms = glm4_norms});
}

// The GLM-4 field set (glm-4-9b-chat-hf's and GLM-4-9B-0414's: 2 kv heads, head_dim 128 here
// 16, partial_rotary_factor 0.5, q/k/v biases, untied) at hidden 64.
Json glm_config_for(const char* model_type, const char* architecture) {
  return {
      {"architectures", {architecture}},
      {"attention_bias", true},
      {"attention_dropout", 0.0},
      {"eos_token_id", {300, 301, 302}},
      {"head_dim", 16},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 160},
      {"max_position_embeddings", 32768},
      {"model_type", model_type},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pad_token_id", 299},
      {"partial_rotary_factor", 0.5},
      {"rms_norm_eps", 1.5625e-07},
      {"rope_theta", 10000.0},
      {"tie_word_embeddings", false},
      {"torch_dtype", "bfloat16"},
      {"transformers_version", "4.51.0"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

namespace {

Result<std::vector<TensorSpec>> glm1_tensors(const Json& text, const FamilyContext& ctx) { return glm_tensors(text, ctx, false); }
Json glm_config() { return glm_config_for("glm", "GlmForCausalLM"); }

}  // namespace

std::vector<FamilyDef> glm_generators() {
  return {
      {"glm", false, "torch_dtype", false, 128, 2, glm_config, nullptr, glm1_tensors},
  };
}

}  // namespace og::testgen
