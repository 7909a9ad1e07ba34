// DeepSeek-V3 (DeepseekV3ForCausalLM, modeling_deepseek_v3.py).
#include <string>

#include <fmt/format.h>

#include "testgen/family.h"
#include "testgen/families/mla.h"

namespace og::testgen {
namespace {

Result<std::vector<TensorSpec>> deepseek_v3_tensors(const Json& text, const FamilyContext& ctx) {
  // DeepseekV3Config's defaults
  static const Json kDefaults = {{"q_lora_rank", 1536}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128},
                                 {"qk_rope_head_dim", 64}, {"v_head_dim", 128}, {"n_routed_experts", 256},
                                 {"moe_intermediate_size", 2048}, {"n_shared_experts", 1}, {"first_k_dense_replace", 3}};
  return mla_tensors(text, ctx, MlaTensors{.defaults = kDefaults});
}

// DeepSeek-V3's field set (tests/data/configs/DeepSeek-V3.json: q and kv latents, the rope on 64
// interleaved dims of 192, YaRN with mscale_all_dim, 256 experts in 8 groups of which 4 kept
// and 8 experts picked, factor 2.5, three dense layers, one prediction layer) shrunk: 8 experts
// in 4 groups, 2 kept, 2 per token, one dense layer.
Json deepseek_v3_config() {
  return {
      {"architectures", {"DeepseekV3ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 0},
      {"eos_token_id", 1},
      {"ep_size", 1},
      {"first_k_dense_replace", 1},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 96},
      {"kv_lora_rank", 32},
      {"max_position_embeddings", 163840},
      {"model_type", "deepseek_v3"},
      {"moe_intermediate_size", 32},
      {"moe_layer_freq", 1},
      {"n_group", 4},
      {"n_routed_experts", 8},
      {"n_shared_experts", 1},
      {"norm_topk_prob", true},
      {"num_attention_heads", 4},
      {"num_experts_per_tok", 2},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 4},
      {"num_nextn_predict_layers", 1},
      {"q_lora_rank", 48},
      {"qk_nope_head_dim", 16},
      {"qk_rope_head_dim", 8},
      {"rms_norm_eps", 1e-6},
      {"rope_scaling",
       {{"beta_fast", 32}, {"beta_slow", 1}, {"factor", 40}, {"mscale", 1.0}, {"mscale_all_dim", 1.0},
        {"original_max_position_embeddings", 4096}, {"type", "yarn"}}},
      {"rope_theta", 10000},
      {"routed_scaling_factor", 2.5},
      {"scoring_func", "sigmoid"},
      {"tie_word_embeddings", false},
      {"topk_group", 2},
      {"topk_method", "noaux_tc"},
      {"use_cache", true},
      {"v_head_dim", 16},
      {"vocab_size", 320},
  };
}

// Moonlight-16B-A3B's field set (moonshotai: model_type deepseek_v3 without a q latent,
// q_lora_rank null, so q is q_proj x; one group; factor 2.446; two shared experts; no rope
// scaling; rope_theta 5e4) shrunk to 8 experts of which 3 per token.
Json moonlight_config() {
  return {
      {"architectures", {"DeepseekV3ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 0},
      {"eos_token_id", 1},
      {"first_k_dense_replace", 1},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 96},
      {"kv_lora_rank", 32},
      {"max_position_embeddings", 8192},
      {"model_type", "deepseek_v3"},
      {"moe_intermediate_size", 32},
      {"moe_layer_freq", 1},
      {"n_group", 1},
      {"n_routed_experts", 8},
      {"n_shared_experts", 2},
      {"norm_topk_prob", true},
      {"num_attention_heads", 4},
      {"num_experts_per_tok", 3},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 4},
      {"q_lora_rank", nullptr},
      {"qk_nope_head_dim", 16},
      {"qk_rope_head_dim", 8},
      {"rms_norm_eps", 1e-5},
      {"rope_scaling", nullptr},
      {"rope_theta", 50000.0},
      {"routed_scaling_factor", 2.446},
      {"scoring_func", "sigmoid"},
      {"tie_word_embeddings", false},
      {"topk_group", 1},
      {"topk_method", "noaux_tc"},
      {"use_cache", true},
      {"v_head_dim", 16},
      {"vocab_size", 320},
  };
}

// Kimi-K2's field set (tests/data/configs/Kimi-K2-Instruct.json: model_type kimi_k2 with
// DeepSeek-V3's classes, 384 experts in one group, 8 per token, × 2.827, one dense layer first,
// YaRN factor 32 with beta_fast = beta_slow = 1, rope_theta 5e4, no prediction layer) shrunk
// to 8 experts of which 2.
Json kimi_k2_config() {
  Json c = deepseek_v3_config();
  c["model_type"] = "kimi_k2";
  c["n_group"] = 1;
  c["topk_group"] = 1;
  c["routed_scaling_factor"] = 2.827;
  c["num_nextn_predict_layers"] = 0;
  c["rope_theta"] = 50000.0;
  c["rope_scaling"] = {{"beta_fast", 1.0}, {"beta_slow", 1.0}, {"factor", 32.0}, {"mscale", 1.0}, {"mscale_all_dim", 1.0},
                       {"original_max_position_embeddings", 4096}, {"type", "yarn"}};
  return c;
}

}  // namespace

std::vector<FamilyDef> deepseek_v3_generators() {
  return {
      {"deepseek_v3", false, "torch_dtype", false, 0, 128, deepseek_v3_config, nullptr, deepseek_v3_tensors},
      {"moonlight", false, "torch_dtype", false, 0, 128, moonlight_config, nullptr, deepseek_v3_tensors},
      {"kimi_k2", false, "torch_dtype", false, 0, 128, kimi_k2_config, nullptr, deepseek_v3_tensors},
  };
}

}  // namespace og::testgen
