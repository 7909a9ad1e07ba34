// GLM-4.5 (Glm4MoeForCausalLM, modeling_glm4_moe.py).
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// Glm4MoeDecoderLayer: self_attn.{q,k,v}_proj biased iff attention_bias (o_proj never),
// q_norm/k_norm [head_dim] iff use_qk_norm; the first first_k_dense_replace layers the dense
// mlp.{gate,up,down}_proj, the others Glm4MoeMoE: router mlp.gate [E, hidden] with its
// e_score_correction_bias [E], experts mlp.experts.E.{gate,up,down}_proj and
// mlp.shared_experts.* (moe_intermediate_size * n_shared_experts wide). After the last layer,
// num_nextn_predict_layers multi-token-prediction layers as the hub checkpoints hold them (a
// sparse decoder layer with enorm, hnorm, eh_proj [hidden, 2 hidden] and shared_head.norm),
// which transformers does not load.
Result<std::vector<TensorSpec>> glm4_moe_tensors(const Json& text, const FamilyContext& ctx) {
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(const int64_t L, f.get_int("num_hidden_layers"));
  OG_ASSIGN_OR_RETURN(const int64_t mtp, f.get_int("num_nextn_predict_layers", 0));
  OG_ASSIGN_OR_RETURN(const int64_t experts, f.get_int("n_routed_experts", 128));
  OG_ASSIGN_OR_RETURN(const int64_t inter, f.get_int("moe_intermediate_size", 1408));
  OG_ASSIGN_OR_RETURN(const int64_t n_shared, f.get_int("n_shared_experts", 1));
  OG_ASSIGN_OR_RETURN(const int64_t first_dense, f.get_int("first_k_dense_replace", 1));
  if (experts < 1) return f.invalid("n_routed_experts", "positive");
  if (mtp < 0) return f.invalid("num_nextn_predict_layers", "non-negative");
  LlamaShape shape;
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  OG_ASSIGN_OR_RETURN(shape.qk_norm, flag(text, ctx, "use_qk_norm"));
  // The prediction layers are decoder layers too: generate L + mtp, then add their extras.
  Json with_mtp = text;
  with_mtp["num_hidden_layers"] = L + mtp;
  OG_ASSIGN_OR_RETURN(std::vector<TensorSpec> dense, llama_shaped_tensors(with_mtp, ctx, shape));
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(with_mtp, ctx));
  std::vector<TensorSpec> out = replace_mlps(std::move(dense), [&](int64_t l) { return l >= first_dense; }, [&](int64_t l, SpecList& s) {
    const std::string p = fmt::format("model.layers.{}.mlp.", l);
    s.linear(p + "gate", experts, d.hidden);
    s.add(p + "gate.e_score_correction_bias", {experts}, kBiasInit);
    s.experts(p + "experts.", experts, inter, d.hidden);
    if (n_shared > 0) s.gated_mlp(p + "shared_experts.", inter * n_shared, d.hidden);
  });
  SpecList extra;
  for (int64_t l = L; l < L + mtp; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    extra.norm(p + "enorm", d.hidden, kUnitNormInit);
    extra.norm(p + "hnorm", d.hidden, kUnitNormInit);
    extra.linear(p + "eh_proj", d.hidden, 2 * d.hidden);
    extra.norm(p + "shared_head.norm", d.hidden, kUnitNormInit);
  }
  for (TensorSpec& t : extra.take()) out.push_back(std::move(t));
  return out;
}

// GLM-4.5-Air's field set (tests/data/configs/GLM-4.5-Air.json: q/k/v biases, no q/k norms,
// half the head rotated, rope_theta 1e6, one dense layer first, one shared expert, one
// prediction layer) at 8 experts of which 2 per token, with head_dim 32 against hidden_size /
// heads = 16, as the real model's 128 against 4096 / 96.
Json glm4_moe_config() {
  return {
      {"architectures", {"Glm4MoeForCausalLM"}},
      {"attention_bias", true},
      {"attention_dropout", 0.0},
      {"eos_token_id", {300, 301}},
      {"first_k_dense_replace", 1},
      {"head_dim", 32},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 96},
      {"max_position_embeddings", 4096},
      {"model_type", "glm4_moe"},
      {"moe_intermediate_size", 32},
      {"n_group", 1},
      {"n_routed_experts", 8},
      {"n_shared_experts", 1},
      {"norm_topk_prob", true},
      {"num_attention_heads", 4},
      {"num_experts_per_tok", 2},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"num_nextn_predict_layers", 1},
      {"pad_token_id", 300},
      {"partial_rotary_factor", 0.5},
      {"rms_norm_eps", 1e-5},
      {"rope_scaling", nullptr},
      {"rope_theta", 1000000.0},
      {"routed_scaling_factor", 1.0},
      {"tie_word_embeddings", false},
      {"topk_group", 1},
      {"use_cache", true},
      {"use_qk_norm", false},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> glm4_moe_generators() {
  return {
      {"glm4_moe", false, "torch_dtype", false, 0, 8, glm4_moe_config, nullptr, glm4_moe_tensors},
  };
}

}  // namespace og::testgen
