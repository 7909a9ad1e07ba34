#include "export/families/deepseek_moe.h"

#include <fmt/format.h>

#include <cmath>

namespace og::exporter {

Result<std::vector<bool>> read_sparse_layers(const hf::ModelConfig& c, SparseLayers rule) {
  const hf::JsonFields t = c.text_fields();
  const int64_t L = c.num_hidden_layers;
  std::vector<bool> sparse(static_cast<size_t>(L), true);
  if (rule == SparseLayers::kFromFirstKDenseReplace) {
    OG_ASSIGN_OR_RETURN(const int64_t first_dense, t.get_int("first_k_dense_replace", 0));
    if (first_dense < 0 || first_dense > L)
      return t.invalid("first_k_dense_replace", fmt::format("in [0, num_hidden_layers = {}]", L));
    for (int64_t l = 0; l < first_dense; ++l) sparse[static_cast<size_t>(l)] = false;
    return sparse;
  }
  if (!t.has("mlp_layer_types") || t.raw("mlp_layer_types").is_null()) {
    if (L > 0) sparse[0] = false;
    return sparse;
  }
  const hf::Json& types = t.raw("mlp_layer_types");
  if (!types.is_array() || static_cast<int64_t>(types.size()) != L)
    return t.invalid("mlp_layer_types", fmt::format("a list of num_hidden_layers = {} entries", L));
  for (int64_t l = 0; l < L; ++l) {
    const hf::Json& v = types[static_cast<size_t>(l)];
    if (!v.is_string() || (v != "dense" && v != "sparse"))
      return t.invalid("mlp_layer_types", fmt::format("\"dense\" or \"sparse\" for each layer (entry {} is {})", l, v.dump()));
    sparse[static_cast<size_t>(l)] = v == "sparse";
  }
  return sparse;
}

Result<DeepseekMoeConfig> read_sigmoid_moe_config(const hf::ModelConfig& c, SparseLayers rule) {
  const hf::JsonFields t = c.text_fields();
  DeepseekMoeConfig m;
  OG_ASSIGN_OR_RETURN(m.n_experts, t.get_int("n_routed_experts"));
  OG_ASSIGN_OR_RETURN(m.top_k, t.get_int("num_experts_per_tok"));
  OG_ASSIGN_OR_RETURN(m.intermediate, t.get_int("moe_intermediate_size"));
  OG_ASSIGN_OR_RETURN(int64_t n_shared, t.get_int("n_shared_experts"));
  OG_ASSIGN_OR_RETURN(m.sparse, read_sparse_layers(c, rule));
  OG_ASSIGN_OR_RETURN(m.n_group, t.get_int("n_group"));
  OG_ASSIGN_OR_RETURN(m.topk_group, t.get_int("topk_group"));
  OG_ASSIGN_OR_RETURN(m.normalize, t.get_bool("norm_topk_prob", true));
  OG_ASSIGN_OR_RETURN(m.routed_scale, t.get_double("routed_scaling_factor"));
  if (m.n_experts < 2) return t.invalid("n_routed_experts", "an integer >= 2");
  if (m.top_k < 1 || m.top_k > m.n_experts || m.top_k > 64)
    return t.invalid("num_experts_per_tok", fmt::format("between 1 and min(n_routed_experts = {}, 64)", m.n_experts));
  if (m.intermediate < 1) return t.invalid("moe_intermediate_size", "a positive integer");
  if (n_shared < 0) return t.invalid("n_shared_experts", "a non-negative integer");
  m.shared = m.intermediate * n_shared;
  // The router scores a group by the sum of its two best experts (topk(2)), so a group needs two.
  if (m.n_group < 1 || m.n_experts % m.n_group != 0 || m.n_experts / m.n_group < 2)
    return t.invalid("n_group", fmt::format("a divisor of n_routed_experts = {} leaving at least 2 experts a group",
                                            m.n_experts));
  if (m.topk_group < 1 || m.topk_group > m.n_group)
    return t.invalid("topk_group", fmt::format("between 1 and n_group = {}", m.n_group));
  // The kept groups must hold top_k experts (torch.topk would pick among the masked -inf).
  if (m.top_k > m.topk_group * (m.n_experts / m.n_group))
    return t.invalid("num_experts_per_tok", fmt::format("at most topk_group x experts a group = {}",
                                                        m.topk_group * (m.n_experts / m.n_group)));
  if (!std::isfinite(m.routed_scale)) return t.invalid("routed_scaling_factor", "a finite number");
  return m;
}

std::function<Result<ValueId>(BuildContext&, int64_t, ValueId)> deepseek_moe_block(DeepseekMoeConfig m, fb::Activation act) {
  return [m, act](BuildContext& ctx, int64_t l, ValueId h) -> Result<ValueId> {
    if (!m.sparse[static_cast<size_t>(l)]) return kNoValue;
    const int64_t H = ctx.config.hidden_size, E = m.n_experts;
    const std::string p = fmt::format("layers.{}.mlp.", l);
    OG_TRY(refuse_fused_experts(ctx, p));
    // The router and its bias are kept f32: transformers computes the router in f32, and its
    // scores pick the experts.
    OG_ASSIGN_OR_RETURN(WeightId router, ctx.weight(p + "gate.weight", {E, H}, {.keep_f32 = true}));
    MoeSpec spec{.top_k = static_cast<int32_t>(m.top_k),
                 .scoring = m.scoring,
                 .normalize_top_k = m.normalize,
                 .routed_scale = static_cast<float>(m.routed_scale),
                 .activation = act};
    if (m.choice_bias) {
      OG_ASSIGN_OR_RETURN(spec.choice_bias, ctx.weight(p + "gate.e_score_correction_bias", {E}, {.keep_f32 = true}));
    }
    spec.n_group = static_cast<int32_t>(m.n_group);
    spec.topk_group = static_cast<int32_t>(m.topk_group);
    spec.group_top = m.group_top;
    spec.masked_key = m.masked_key;
    OG_TRY(read_experts(ctx, p + "experts.", E, m.intermediate, {"gate_proj", "up_proj", "down_proj"}, spec));
    if (m.shared > 0) OG_TRY(read_shared_expert(ctx, p + "shared_experts.", m.shared, spec));
    const ValueId logits = ctx.g.router(h, router);  // [T, E]
    return ctx.g.moe(h, logits, spec);               // [T, H]
  };
}

Status skip_prediction_layers(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  OG_ASSIGN_OR_RETURN(const int64_t n, t.get_int("num_nextn_predict_layers", 0));
  if (n < 0) return t.invalid("num_nextn_predict_layers", "a non-negative integer");
  skip_layers_past_last(ctx, n);
  return Status::ok();
}

}  // namespace og::exporter
