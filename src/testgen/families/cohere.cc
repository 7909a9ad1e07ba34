// Cohere (CohereForCausalLM, modular_cohere.py).
#include "testgen/families/layer_norm_like.h"

namespace og::testgen {

// CohereAttention (Llama's: q/k/v/o biases iff attention_bias) and CohereMLP (gated, no
// biases); one weight-only input_layernorm feeds both halves of the parallel block.
Result<std::vector<TensorSpec>> cohere_tensors(const Json& text, const FamilyContext& ctx) {
  const hf::JsonFields t(text, ctx.what);
  OG_ASSIGN_OR_RETURN(bool bias, t.get_bool("attention_bias", false));
  OG_ASSIGN_OR_RETURN(std::vector<TensorSpec> specs,
                      layer_norm_tensors(text, ctx, {.qkv_bias = bias, .o_bias = bias, .parallel = true, .norm_bias = false}));
  OG_ASSIGN_OR_RETURN(bool qk_norm, t.get_bool("use_qk_norm", false));
  if (qk_norm) {  // Command R+: CohereLayerNorm((heads, head_dim)) on q and k
    OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
    for (int64_t i = 0; i < d.layers; ++i) {
      const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
      specs.push_back({p + "q_norm.weight", {d.heads, d.head_dim}, kUnitNormInit});
      specs.push_back({p + "k_norm.weight", {d.kv_heads, d.head_dim}, kUnitNormInit});
    }
  }
  return specs;
}

namespace {

// c4ai-command-r-08-2024's field set (GQA, logit_scale 0.0625, tied) at hidden 64; its
// attention biases switched on so that the interleaved pairing of q's and k's biases is tested.
Json cohere_config() {
  return {
      {"_name_or_path", "CohereForAI/c4ai-command-r-08-2024"},
      {"architectures", {"CohereForCausalLM"}},
      {"attention_bias", true},
      {"attention_dropout", 0.0},
      {"bos_token_id", 5},
      {"eos_token_id", 255},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 192},
      {"layer_norm_eps", 1e-5},
      {"logit_scale", 0.0625},
      {"max_position_embeddings", 131072},
      {"model_type", "cohere"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pad_token_id", 0},
      {"rope_theta", 4000000},
      {"torch_dtype", "bfloat16"},
      {"transformers_version", "4.44.2"},
      {"use_cache", true},
      {"use_qk_norm", false},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> cohere_generators() {
  return {
      {"cohere", false, "torch_dtype", true, 0, 0, cohere_config, nullptr, cohere_tensors},
  };
}

}  // namespace og::testgen
