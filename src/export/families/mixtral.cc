// Mixtral (model_type mixtral): Mistral's block (sliding_window, when set, on every layer)
// whose MLP is a sparse mixture of experts on every layer (transformers'
// MixtralSparseMoeBlock): router logits = block_sparse_moe.gate(x) [num_local_experts];
// softmax over all experts, the num_experts_per_tok largest, always renormalized to sum 1;
// experts block_sparse_moe.experts.E.{w1,w3,w2} (gate, up, down), intermediate_size wide,
// as the published checkpoints name them. router_jitter_noise is training-only and ignored.
#include <fmt/format.h>

#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(const int64_t E, t.get_int("num_local_experts"));
  OG_ASSIGN_OR_RETURN(const int64_t top_k, t.get_int("num_experts_per_tok"));
  if (E < 1) return t.invalid("num_local_experts", "a positive integer");
  if (top_k < 1 || top_k > E || top_k > 64)
    return t.invalid("num_experts_per_tok", fmt::format("between 1 and min(num_local_experts = {}, 64)", E));
  DecoderOptions o;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  const fb::Activation act = o.activation;
  o.mlp = [E, top_k, act](BuildContext& ctx, int64_t l, ValueId h) -> Result<ValueId> {
    const int64_t H = ctx.config.hidden_size, I = ctx.config.intermediate_size[static_cast<size_t>(l)];
    const std::string p = fmt::format("layers.{}.", l);
    if (ctx.has(p + "mlp.experts.gate_up_proj"))
      return unsupported(
          "{}: '{}{}mlp.experts.gate_up_proj' is transformers 5's in-memory fused layout; offgraph reads "
          "checkpoints as the hub stores them ({}block_sparse_moe.experts.N.w1.weight)",
          ctx.ckpt.dir(), ctx.prefix, p, p);
    const std::string b = p + "block_sparse_moe.";
    // The router is kept f32 (exact for a bf16 checkpoint): its logits pick the experts.
    OG_ASSIGN_OR_RETURN(WeightId router, ctx.weight(b + "gate.weight", {E, H}, {.keep_f32 = true}));
    MoeSpec spec{.top_k = static_cast<int32_t>(top_k),
                 .scoring = fb::RouterScoring::SoftmaxTopK,
                 .normalize_top_k = true,
                 .activation = act};
    OG_TRY(read_experts(ctx, b + "experts.", E, I, {"w1", "w3", "w2"}, spec));
    const ValueId logits = ctx.g.router(h, router);  // [T, E]
    return ctx.g.moe(h, logits, spec);               // [T, H]
  };
  return build_decoder(ctx, o);
}

}  // namespace

const Family& mixtral_family() {
  static constexpr ModelType kTypes[] = {{"mixtral", false}};
  // transformers' MixtralConfig defaults for keys that published configs omit; its
  // attribute_map reads num_experts as num_local_experts.
  static const Family f{.name = "mixtral",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5},
                                            {"num_key_value_heads", 8},
                                            {"rope_theta", 1000000.0},
                                            {"intermediate_size", 14336},
                                            {"num_local_experts", 8},
                                            {"num_experts_per_tok", 2}},
                        .config_aliases = {{"num_experts", "num_local_experts"}},
                        .default_layer_types = sliding_everywhere_if_set,
                        .build = build};
  return f;
}

}  // namespace og::exporter
