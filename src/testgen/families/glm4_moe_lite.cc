// GLM-4.7-Flash (Glm4MoeLiteForCausalLM, modeling_glm4_moe_lite.py): the latent attention's
// layers (mla.h) with GLM-4.5's sigmoid router, the dense layers from mlp_layer_types.
#include "testgen/family.h"
#include "testgen/families/mla.h"

namespace og::testgen {
namespace {

Result<std::vector<TensorSpec>> glm4_moe_lite_tensors(const Json& text, const FamilyContext& ctx) {
  // Glm4MoeLiteConfig's defaults
  static const Json kDefaults = {{"q_lora_rank", 768}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 192},
                                 {"qk_rope_head_dim", 64}, {"v_head_dim", 256}, {"n_routed_experts", 64},
                                 {"moe_intermediate_size", 1536}, {"n_shared_experts", 1}};
  return mla_tensors(text, ctx, MlaTensors{.defaults = kDefaults, .mlp_layer_types = true});
}

// GLM-4.7-Flash's field set (tests/data/configs/GLM-4.7-Flash.json, key order as there: a q
// latent, v as wide as q·k's head (256 = 192 + 64), no mlp_layer_types so layer 0 dense, 64
// experts in one group, 4 a token, renormalized, × 1.8, one shared expert, rope_theta 1e6 on
// interleaved pairs, one prediction layer) shrunk to 8 experts, 2 a token.
Json glm4_moe_lite_config() {
  return {
      {"architectures", {"Glm4MoeLiteForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"pad_token_id", 2},
      {"eos_token_id", {1, 3}},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"intermediate_size", 96},
      {"max_position_embeddings", 202752},
      {"model_type", "glm4_moe_lite"},
      {"moe_intermediate_size", 32},
      {"topk_method", "noaux_tc"},
      {"norm_topk_prob", true},
      {"num_attention_heads", 4},
      {"n_group", 1},
      {"topk_group", 1},
      {"n_routed_experts", 8},
      {"n_shared_experts", 1},
      {"routed_scaling_factor", 1.8},
      {"num_experts_per_tok", 2},
      {"first_k_dense_replace", 1},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 4},
      {"num_nextn_predict_layers", 1},
      {"partial_rotary_factor", 1.0},
      {"rms_norm_eps", 1e-05},
      {"rope_scaling", nullptr},
      {"rope_theta", 1000000},
      {"tie_word_embeddings", false},
      {"q_lora_rank", 48},
      {"kv_lora_rank", 32},
      {"qk_nope_head_dim", 24},
      {"qk_rope_head_dim", 8},
      {"v_head_dim", 32},
      {"vocab_size", 320},
  };
}

// The same with mlp_layer_types given (dense, sparse, dense, sparse), which transformers reads
// instead of first_k_dense_replace.
Json glm4_moe_lite_layer_types_config() {
  Json c = glm4_moe_lite_config();
  c["mlp_layer_types"] = {"dense", "sparse", "dense", "sparse"};
  return c;
}

}  // namespace

std::vector<FamilyDef> glm4_moe_lite_generators() {
  return {
      {"glm4_moe_lite", false, "dtype", false, 0, 20, glm4_moe_lite_config, nullptr, glm4_moe_lite_tensors},
      {"glm4_moe_lite_layer_types", false, "dtype", false, 0, 20, glm4_moe_lite_layer_types_config, nullptr,
       glm4_moe_lite_tensors},
  };
}

}  // namespace og::testgen
