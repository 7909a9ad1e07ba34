// HunYuan dense (HunYuanDenseV1ForCausalLM, modular_hunyuan_v1_dense.py).
#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// HunYuanDenseV1DecoderLayer: Llama's tensors (biases on q/k/v/o iff attention_bias; the MLP
// never) with self_attn.query_layernorm / key_layernorm over head_dim.
Result<std::vector<TensorSpec>> hunyuan_v1_dense_tensors(const Json& text, const FamilyContext& ctx) {
  LlamaShape shape;
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  shape.o_bias = shape.qkv_bias;
  shape.qk_norm = true;
  shape.q_norm = "query_layernorm";
  shape.k_norm = "key_layernorm";
  return llama_shaped_tensors(text, ctx, shape);
}

// The Hunyuan-*-Instruct field set (its NTK-alpha rope: rope_scaling "dynamic" with alpha
// 1000 and factor 1, q/k norms, no CLA, one expert, tied) at head_dim 16.
Json hunyuan_v1_dense_config() {
  return {
      {"architectures", {"HunYuanDenseV1ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"attention_head_dim", 16},
      {"bos_token_id", 1},
      {"cla_share_factor", 2},
      {"eos_token_id", 2},
      {"head_dim", 16},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 160},
      {"max_position_embeddings", 32768},
      {"mlp_bias", false},
      {"model_type", "hunyuan_v1_dense"},
      {"num_attention_heads", 4},
      {"num_experts", 1},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pad_token_id", 0},
      {"rms_norm_eps", 1e-05},
      {"rope_scaling",
       {{"alpha", 1000.0}, {"beta_fast", 32}, {"beta_slow", 1}, {"factor", 1.0}, {"mscale", 1.0},
        {"mscale_all_dim", 1.0}, {"type", "dynamic"}}},
      {"rope_theta", 10000.0},
      {"tie_word_embeddings", true},
      {"torch_dtype", "float32"},
      {"use_cache", true},
      {"use_cla", false},
      {"use_qk_norm", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> hunyuan_v1_dense_generators() {
  return {
      {"hunyuan_v1_dense", false, "torch_dtype", false, 0, 0, hunyuan_v1_dense_config, nullptr, hunyuan_v1_dense_tensors},
  };
}

}  // namespace og::testgen
