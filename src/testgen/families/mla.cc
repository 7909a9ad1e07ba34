// The tensors of the latent-attention families (mla.h).
#include "testgen/families/mla.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace og::testgen {

// A decoder layer with multi-head latent attention: self_attn.{q_a_proj, q_a_layernorm, q_b_proj}
// (q_proj when q_lora_rank is null), kv_a_proj_with_mqa [kv_lora_rank + qk_rope_head_dim, H],
// kv_a_layernorm, kv_b_proj [heads * (qk_nope_head_dim + v_head_dim), kv_lora_rank], o_proj;
// input_layernorm and post_attention_layernorm; the dense MLP on the dense layers,
// the mixture on the others (mlp.gate, with the sigmoid router its e_score_correction_bias, the
// experts, the shared experts); then num_nextn_predict_layers prediction layers after the last, as the hub
// checkpoints hold them (a sparse layer with enorm, hnorm, eh_proj and shared_head.norm).
Result<std::vector<TensorSpec>> mla_tensors(const Json& given, const FamilyContext& ctx, const MlaTensors& o) {
  Json text = given;  // with the class defaults of the keys it lacks (an explicit null stays)
  for (const auto& [key, value] : o.defaults.items())
    if (!text.contains(key)) text[key] = value;
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  int64_t q_lora = 0;  // an explicit null: no q latent
  if (!text["q_lora_rank"].is_null()) { OG_ASSIGN_OR_RETURN(q_lora, f.get_int("q_lora_rank")); }
  OG_ASSIGN_OR_RETURN(const int64_t R, f.get_int("kv_lora_rank"));
  OG_ASSIGN_OR_RETURN(const int64_t dn, f.get_int("qk_nope_head_dim"));
  OG_ASSIGN_OR_RETURN(const int64_t dr, f.get_int("qk_rope_head_dim"));
  OG_ASSIGN_OR_RETURN(const int64_t dv, f.get_int("v_head_dim"));
  OG_ASSIGN_OR_RETURN(const int64_t experts, f.get_int("n_routed_experts"));
  OG_ASSIGN_OR_RETURN(const int64_t inter, f.get_int("moe_intermediate_size"));
  int64_t n_shared = 0;  // null: none
  if (!text["n_shared_experts"].is_null()) { OG_ASSIGN_OR_RETURN(n_shared, f.get_int("n_shared_experts")); }
  std::vector<bool> sparse(static_cast<size_t>(d.layers), true);
  if (o.mlp_layer_types && text.contains("mlp_layer_types") && text["mlp_layer_types"].is_array()) {
    for (int64_t l = 0; l < d.layers && l < static_cast<int64_t>(text["mlp_layer_types"].size()); ++l)
      sparse[static_cast<size_t>(l)] = text["mlp_layer_types"][static_cast<size_t>(l)] == "sparse";
  } else if (o.mlp_layer_types) {
    if (d.layers > 0) sparse[0] = false;
  } else {
    OG_ASSIGN_OR_RETURN(const int64_t first_dense, f.get_int("first_k_dense_replace"));
    for (int64_t l = 0; l < std::min(first_dense, d.layers); ++l) sparse[static_cast<size_t>(l)] = false;
  }
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
    if (l < d.layers && !sparse[static_cast<size_t>(l)]) {
      s.gated_mlp(m, d.intermediate[static_cast<size_t>(std::min(l, d.layers - 1))], H);
    } else {
      s.linear(m + "gate", experts, H);
      if (o.choice_bias) s.add(m + "gate.e_score_correction_bias", {experts}, kBiasInit);
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

}  // namespace og::testgen
