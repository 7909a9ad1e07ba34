// Granite MoE (model_type granitemoe; granite-3.x-1b-a400m, 3b-a800m, PowerMoE): Granite's
// block (granite.h: multipliers, attention biases) with, on every layer, JetMoE's sparse block
// in place of the MLP (transformers' GraniteMoeMoE): router block_sparse_moe.router.layer
// [num_local_experts, hidden], the num_experts_per_tok largest logits and a softmax over those
// (JetMoeTopKGating), and experts stored fused as the hub ships them: input_linear [E, 2I, H]
// (each expert's gate rows, then its up rows: chunk(2)) and output_linear [E, H, I], I =
// intermediate_size. Each expert's matrices are read as slices of those tensors.
#include <fmt/format.h>

#include "export/decoder.h"
#include "export/families/granite.h"
#include "export/family.h"

namespace og::exporter {
namespace {

struct GraniteMoe {
  int64_t n_experts = 0, top_k = 0, intermediate = 0;
  int64_t shared = 0;  // granitemoeshared: shared_mlp's width (0: none)
};

std::function<Result<ValueId>(BuildContext&, int64_t, ValueId)> sparse_block(GraniteMoe moe, fb::Activation act) {
  return [moe, act](BuildContext& ctx, int64_t l, ValueId h) -> Result<ValueId> {
    const int64_t H = ctx.config.hidden_size, E = moe.n_experts, I = moe.intermediate;
    const std::string p = fmt::format("layers.{}.block_sparse_moe.", l);
    // The router is kept f32 (exact for a bf16 checkpoint): its logits pick the experts.
    OG_ASSIGN_OR_RETURN(WeightId router, ctx.weight(p + "router.layer.weight", {E, H}, {.keep_f32 = true}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* in, ctx.tensor(p + "input_linear.weight", {E, 2 * I, H}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* out, ctx.tensor(p + "output_linear.weight", {E, H, I}));
    MoeSpec spec{.top_k = static_cast<int32_t>(moe.top_k),
                 .scoring = fb::RouterScoring::TopKSoftmax,  // a softmax over the k chosen logits
                 .activation = act};
    for (int64_t e = 0; e < E; ++e) {
      OG_ASSIGN_OR_RETURN(WeightId wg, ctx.g.weight(*in, {.expert = e, .row_begin = 0, .row_end = I}));
      OG_ASSIGN_OR_RETURN(WeightId wu, ctx.g.weight(*in, {.expert = e, .row_begin = I, .row_end = 2 * I}));
      OG_ASSIGN_OR_RETURN(WeightId wd, ctx.g.weight(*out, {.expert = e}));
      spec.gate.push_back(wg);
      spec.up.push_back(wu);
      spec.down.push_back(wd);
    }
    if (moe.shared > 0) {  // GraniteMoeSharedMLP on every token, ungated: input_linear [2S, H] (gate, then up)
      const int64_t S = moe.shared;
      const std::string sp = fmt::format("layers.{}.shared_mlp.", l);
      OG_ASSIGN_OR_RETURN(const hf::TensorView* sin, ctx.tensor(sp + "input_linear.weight", {2 * S, H}));
      OG_ASSIGN_OR_RETURN(spec.shared_gate, ctx.g.weight(*sin, {.row_begin = 0, .row_end = S}));
      OG_ASSIGN_OR_RETURN(spec.shared_up, ctx.g.weight(*sin, {.row_begin = S, .row_end = 2 * S}));
      OG_ASSIGN_OR_RETURN(spec.shared_down, ctx.weight(sp + "output_linear.weight", {H, S}));
    }
    const ValueId logits = ctx.g.router(h, router);  // [T, E]
    return ctx.g.moe(h, logits, spec);               // [T, H]
  };
}

}  // namespace

Status build_granite_moe(BuildContext& ctx, bool shared_mlp) {
  const hf::ModelConfig& c = ctx.config;
  const hf::JsonFields t = c.text_fields();
  GraniteMoe moe;
  if (shared_mlp) {
    OG_ASSIGN_OR_RETURN(moe.shared, t.get_int("shared_intermediate_size", 0));
    if (moe.shared < 0) return t.invalid("shared_intermediate_size", "a non-negative integer");
  }
  OG_ASSIGN_OR_RETURN(moe.n_experts, t.get_int("num_local_experts"));
  OG_ASSIGN_OR_RETURN(moe.top_k, t.get_int("num_experts_per_tok"));
  moe.intermediate = c.intermediate_size[0];
  if (moe.n_experts < 1) return t.invalid("num_local_experts", "a positive integer");
  if (moe.top_k < 1 || moe.top_k > moe.n_experts || moe.top_k > 64)
    return t.invalid("num_experts_per_tok", fmt::format("between 1 and min(num_local_experts = {}, 64)", moe.n_experts));
  DecoderOptions o;
  OG_TRY(read_granite_block(c, o));
  o.mlp = sparse_block(moe, o.activation);
  return build_decoder(ctx, o);
}

const Family& granitemoe_family() {
  static constexpr ModelType kTypes[] = {{"granitemoe", false}};
  // transformers' GraniteMoeConfig: rms_norm_eps 1e-6, intermediate_size 11008, 8 experts, 2
  // per token; every multiplier 1.0 when absent (read by read_granite_block);
  // num_key_value_heads falls back to num_attention_heads.
  static const Family f{.name = "granitemoe",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-6},
                                            {"intermediate_size", 11008},
                                            {"num_local_experts", 8},
                                            {"num_experts_per_tok", 2}},
                        .build = [](BuildContext& ctx) { return build_granite_moe(ctx, false); }};
  return f;
}

}  // namespace og::exporter
