// DeepSeek-V3 (DeepseekV3ForCausalLM, modeling_deepseek_v3.py).
#include <string>

#include <fmt/format.h>

#include "testgen/family.h"

namespace og::testgen {
namespace {

// DeepseekV3DecoderLayer: the latent attention's self_attn.{q_a_proj, q_a_layernorm, q_b_proj}
// (q_proj when q_lora_rank is null), kv_a_proj_with_mqa [kv_lora_rank + qk_rope_head_dim, H],
// kv_a_layernorm, kv_b_proj [heads * (qk_nope_head_dim + v_head_dim), kv_lora_rank], o_proj;
// input_layernorm and post_attention_layernorm; the dense MLP before first_k_dense_replace,
// DeepseekV3MoE after it (mlp.gate and its e_score_correction_bias, the experts, the shared
// experts); then num_nextn_predict_layers prediction layers after the last, as the hub
// checkpoints hold them (a sparse layer with enorm, hnorm, eh_proj and shared_head.norm).
Result<std::vector<TensorSpec>> deepseek_v3_tensors(const Json& text, const FamilyContext& ctx) {
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  int64_t q_lora = 1536;  // DeepseekV3Config's default; an explicit null: no q latent
  if (text.contains("q_lora_rank")) {
    if (text["q_lora_rank"].is_null()) q_lora = 0;
    else { OG_ASSIGN_OR_RETURN(q_lora, f.get_int("q_lora_rank")); }
  }
  OG_ASSIGN_OR_RETURN(const int64_t R, f.get_int("kv_lora_rank", 512));
  OG_ASSIGN_OR_RETURN(const int64_t dn, f.get_int("qk_nope_head_dim", 128));
  OG_ASSIGN_OR_RETURN(const int64_t dr, f.get_int("qk_rope_head_dim", 64));
  OG_ASSIGN_OR_RETURN(const int64_t dv, f.get_int("v_head_dim", 128));
  OG_ASSIGN_OR_RETURN(const int64_t experts, f.get_int("n_routed_experts", 256));
  OG_ASSIGN_OR_RETURN(const int64_t inter, f.get_int("moe_intermediate_size", 2048));
  OG_ASSIGN_OR_RETURN(const int64_t n_shared, f.get_int("n_shared_experts", 1));
  OG_ASSIGN_OR_RETURN(const int64_t first_dense, f.get_int("first_k_dense_replace", 3));
  OG_ASSIGN_OR_RETURN(const int64_t mtp, f.get_int("num_nextn_predict_layers", 0));
  const int64_t H = d.hidden, nh = d.heads, dk = dn + dr;
  SpecList s;
  s.add("model.embed_tokens.weight", {d.vocab, H}, kEmbeddingInit);
  for (int64_t l = 0; l < d.layers + mtp; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l), at = p + "self_attn.";
    if (q_lora > 0) {
      s.linear(at + "q_a_proj", q_lora, H);
      s.norm(at + "q_a_layernorm", q_lora, kUnitNormInit);
      s.linear(at + "q_b_proj", nh * dk, q_lora, false, kQkGain);
    } else {
      s.linear(at + "q_proj", nh * dk, H, false, kQkGain);
    }
    s.linear(at + "kv_a_proj_with_mqa", R + dr, H, false, kQkGain);
    s.norm(at + "kv_a_layernorm", R, kUnitNormInit);
    s.linear(at + "kv_b_proj", nh * (dn + dv), R, false, kQkGain);
    s.linear(at + "o_proj", H, nh * dv);
    const std::string m = p + "mlp.";
    if (l < first_dense) {
      s.gated_mlp(m, d.intermediate[static_cast<size_t>(std::min(l, d.layers - 1))], H);
    } else {
      s.linear(m + "gate", experts, H);
      s.add(m + "gate.e_score_correction_bias", {experts}, kBiasInit);
      s.experts(m + "experts.", experts, inter, H);
      if (n_shared > 0) s.gated_mlp(m + "shared_experts.", inter * n_shared, H);
    }
    s.norm(p + "input_layernorm", H, kUnitNormInit);
    s.norm(p + "post_attention_layernorm", H, kUnitNormInit);
    if (l >= d.layers) {  // a prediction layer's own tensors
      s.norm(p + "enorm", H, kUnitNormInit);
      s.norm(p + "hnorm", H, kUnitNormInit);
      s.linear(p + "eh_proj", H, 2 * H);
      s.norm(p + "shared_head.norm", H, kUnitNormInit);
    }
  }
  s.norm("model.norm", H, kUnitNormInit);
  if (!d.tie) s.add("lm_head.weight", {d.vocab, H}, linear_init(H, kHeadGain));
  return s.take();
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

}  // namespace

std::vector<FamilyDef> deepseek_v3_generators() {
  return {
      {"deepseek_v3", false, "torch_dtype", false, 0, 128, deepseek_v3_config, nullptr, deepseek_v3_tensors},
      {"moonlight", false, "torch_dtype", false, 0, 128, moonlight_config, nullptr, deepseek_v3_tensors},
  };
}

}  // namespace og::testgen
