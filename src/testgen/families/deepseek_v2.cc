// DeepSeek-V2 (DeepseekV2ForCausalLM, modeling_deepseek_v2.py): the latent attention's layers
// (mla.h) with DeepseekV2Moe's router, which has no e_score_correction_bias.
#include "testgen/family.h"
#include "testgen/families/mla.h"

namespace og::testgen {
namespace {

Result<std::vector<TensorSpec>> deepseek_v2_tensors(const Json& text, const FamilyContext& ctx) {
  // DeepseekV2Config's defaults
  static const Json kDefaults = {{"q_lora_rank", 1536}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128},
                                 {"qk_rope_head_dim", 64}, {"v_head_dim", 128}, {"n_routed_experts", 64},
                                 {"moe_intermediate_size", 1407}, {"n_shared_experts", 2}, {"first_k_dense_replace", 0}};
  return mla_tensors(text, ctx, MlaTensors{.defaults = kDefaults, .choice_bias = false});
}

// DeepSeek-V2-Lite-Chat's field set (tests/data/configs/DeepSeek-V2-Lite-Chat.json: no q latent,
// 64 experts, 6 per token by the greedy softmax, not renormalized, two shared experts, one
// dense layer, YaRN factor 40 with mscale = mscale_all_dim = 0.707) shrunk to 8 experts, 3 a token.
Json deepseek_v2_lite_config() {
  return {
      {"architectures", {"DeepseekV2ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"aux_loss_alpha", 0.001},
      {"bos_token_id", 0},
      {"eos_token_id", 1},
      {"first_k_dense_replace", 1},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 96},
      {"kv_lora_rank", 32},
      {"max_position_embeddings", 163840},
      {"model_type", "deepseek_v2"},
      {"moe_intermediate_size", 32},
      {"moe_layer_freq", 1},
      {"n_group", 1},
      {"n_routed_experts", 8},
      {"n_shared_experts", 2},
      {"norm_topk_prob", false},
      {"num_attention_heads", 4},
      {"num_experts_per_tok", 3},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 4},
      {"pretraining_tp", 1},
      {"q_lora_rank", nullptr},
      {"qk_nope_head_dim", 16},
      {"qk_rope_head_dim", 8},
      {"rms_norm_eps", 1e-6},
      {"rope_scaling",
       {{"beta_fast", 32}, {"beta_slow", 1}, {"factor", 40}, {"mscale", 0.707}, {"mscale_all_dim", 0.707},
        {"original_max_position_embeddings", 4096}, {"type", "yarn"}}},
      {"rope_theta", 10000},
      {"routed_scaling_factor", 1.0},
      {"scoring_func", "softmax"},
      {"seq_aux", true},
      {"tie_word_embeddings", false},
      {"topk_group", 1},
      {"topk_method", "greedy"},
      {"use_cache", true},
      {"v_head_dim", 16},
      {"vocab_size", 320},
  };
}

// DeepSeek-V2's (236B) router on the small shape: a q latent, group_limited_greedy over 160
// experts in 8 groups of which 3 kept, 6 a token, times 16 — shrunk to 8 experts in 4 groups
// of which 2 kept, 3 a token; v narrower than q·k's head; no rope scaling.
Json deepseek_v2_grouped_config() {
  Json c = deepseek_v2_lite_config();
  c["q_lora_rank"] = 48;
  c["n_group"] = 4;
  c["topk_group"] = 2;
  c["topk_method"] = "group_limited_greedy";
  c["routed_scaling_factor"] = 16.0;
  c["v_head_dim"] = 12;
  c["rope_scaling"] = nullptr;
  return c;
}

}  // namespace

std::vector<FamilyDef> deepseek_v2_generators() {
  return {
      {"deepseek_v2", false, "torch_dtype", false, 0, 0, deepseek_v2_lite_config, nullptr, deepseek_v2_tensors},
      {"deepseek_v2_grouped", false, "torch_dtype", false, 0, 0, deepseek_v2_grouped_config, nullptr, deepseek_v2_tensors},
  };
}

}  // namespace og::testgen
