#include "export/families/qwen_moe.h"

#include <fmt/format.h>

#include <algorithm>

namespace og::exporter {

bool QwenMoeConfig::sparse(int64_t layer) const {
  return n_experts > 0 && (layer + 1) % sparse_step == 0 &&
         std::find(mlp_only_layers.begin(), mlp_only_layers.end(), layer) == mlp_only_layers.end();
}

Status refuse_qwen_moe_sliding(const hf::ModelConfig& c, const char* family) {
  OG_ASSIGN_OR_RETURN(bool use, c.text_fields().get_bool("use_sliding_window", false));
  if (use)
    return unsupported("{}: field '{}' is true: offgraph does not run {} with sliding-window attention", c.path,
                       c.text_fields().field_name("use_sliding_window"), family);
  return Status::ok();
}

Result<QwenMoeConfig> read_qwen_moe_config(const hf::ModelConfig& c, bool shared_expert) {
  const hf::JsonFields t = c.text_fields();
  QwenMoeConfig m;
  OG_ASSIGN_OR_RETURN(m.n_experts, t.get_int("num_experts"));
  OG_ASSIGN_OR_RETURN(m.top_k, t.get_int("num_experts_per_tok"));
  OG_ASSIGN_OR_RETURN(m.intermediate, t.get_int("moe_intermediate_size"));
  OG_ASSIGN_OR_RETURN(m.sparse_step, t.get_int("decoder_sparse_step"));
  OG_ASSIGN_OR_RETURN(m.normalize, t.get_bool("norm_topk_prob", false));
  if (t.has("mlp_only_layers")) {
    OG_ASSIGN_OR_RETURN(m.mlp_only_layers, t.get_int_list("mlp_only_layers"));
  }
  if (m.n_experts < 0) return t.invalid("num_experts", "a non-negative integer");
  if (m.n_experts > 0) {
    if (m.top_k < 1 || m.top_k > m.n_experts || m.top_k > 64)
      return t.invalid("num_experts_per_tok", fmt::format("between 1 and min(num_experts = {}, 64)", m.n_experts));
    if (m.intermediate < 1) return t.invalid("moe_intermediate_size", "a positive integer");
  }
  if (shared_expert) {
    OG_ASSIGN_OR_RETURN(m.shared_intermediate, t.get_int("shared_expert_intermediate_size"));
    if (m.shared_intermediate < 1) return t.invalid("shared_expert_intermediate_size", "a positive integer");
  }
  if (m.sparse_step < 1) return t.invalid("decoder_sparse_step", "a positive integer");
  for (int64_t l : m.mlp_only_layers)
    if (l < 0 || l >= c.num_hidden_layers)
      return t.invalid("mlp_only_layers", fmt::format("layer indices in [0, {})", c.num_hidden_layers));
  return m;
}

std::function<Result<ValueId>(BuildContext&, int64_t, ValueId)> qwen_moe_block(QwenMoeConfig moe, fb::Activation act) {
  return [moe, act](BuildContext& ctx, int64_t l, ValueId h) -> Result<ValueId> {
    if (!moe.sparse(l)) return kNoValue;
    const int64_t H = ctx.config.hidden_size, E = moe.n_experts, I = moe.intermediate;
    const std::string p = fmt::format("layers.{}.mlp.", l);
    OG_TRY(refuse_fused_experts(ctx, p));
    // The router is kept f32 (exact for a bf16 checkpoint): its logits pick the experts.
    OG_ASSIGN_OR_RETURN(WeightId router, ctx.weight(p + "gate.weight", {E, H}, {.keep_f32 = true}));
    MoeSpec spec{.top_k = static_cast<int32_t>(moe.top_k),
                 .scoring = fb::RouterScoring::SoftmaxTopK,
                 .normalize_top_k = moe.normalize,
                 .activation = act};
    OG_TRY(read_experts(ctx, p + "experts.", E, I, {"gate_proj", "up_proj", "down_proj"}, spec));
    if (moe.shared_intermediate > 0) {
      OG_TRY(read_shared_expert(ctx, p + "shared_expert.", moe.shared_intermediate, spec));
      // One row: the shared expert's sigmoid gate, kept f32 as the router is.
      OG_ASSIGN_OR_RETURN(spec.shared_expert_gate, ctx.weight(p + "shared_expert_gate.weight", {1, H}, {.keep_f32 = true}));
    }
    const ValueId logits = ctx.g.router(h, router);  // [T, E]
    return ctx.g.moe(h, logits, spec);               // [T, H]
  };
}

}  // namespace og::exporter
