// Qwen3-MoE: Qwen3's attention (q/k RMSNorm per head, attention_bias on q/k/v/o) with a
// sparse mixture-of-experts block in place of the MLP on layer l when l is not in
// mlp_only_layers, num_experts > 0 and (l + 1) % decoder_sparse_step == 0 (the other layers
// keep the dense MLP of intermediate_size). The block (transformers' Qwen3MoeSparseMoeBlock):
// router logits = mlp.gate(x) [num_experts]; softmax over all experts, the
// num_experts_per_tok largest, renormalized to sum 1 when norm_topk_prob; experts
// mlp.experts.E.{gate,up,down}_proj with moe_intermediate_size. No shared expert.
// router_aux_loss_coef and output_router_logits are training-only and ignored.
#include <fmt/format.h>

#include <algorithm>

#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

// Refused: transformers versions disagree on which layers slide (max_window_layers in 4.5x,
// every layer since), and every published Qwen3-MoE config has it off.
Status refuse_sliding(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(bool use, c.text_fields().get_bool("use_sliding_window", false));
  if (use)
    return unsupported("{}: field '{}' is true: offgraph does not run qwen3_moe with sliding-window attention", c.path,
                       c.text_fields().field_name("use_sliding_window"));
  return Status::ok();
}

struct MoeConfig {
  int64_t n_experts = 0, top_k = 0, intermediate = 0, sparse_step = 1;
  bool normalize = false;
  std::vector<int64_t> mlp_only_layers;
  bool sparse(int64_t layer) const {
    return n_experts > 0 && (layer + 1) % sparse_step == 0 &&
           std::find(mlp_only_layers.begin(), mlp_only_layers.end(), layer) == mlp_only_layers.end();
  }
};

Result<MoeConfig> read_moe_config(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  MoeConfig m;
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
  if (m.sparse_step < 1) return t.invalid("decoder_sparse_step", "a positive integer");
  for (int64_t l : m.mlp_only_layers)
    if (l < 0 || l >= c.num_hidden_layers)
      return t.invalid("mlp_only_layers", fmt::format("layer indices in [0, {})", c.num_hidden_layers));
  return m;
}

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  OG_TRY(refuse_sliding(c));
  return std::vector<std::string>(static_cast<size_t>(c.num_hidden_layers), "full_attention");
}

Result<int64_t> sliding_window(const hf::ModelConfig& c) {
  OG_TRY(refuse_sliding(c));
  return 0;
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  OG_TRY(refuse_sliding(c));
  OG_ASSIGN_OR_RETURN(const MoeConfig moe, read_moe_config(c));
  DecoderOptions o;
  o.qk_norm = true;
  OG_ASSIGN_OR_RETURN(o.qkv_bias, c.text_fields().get_bool("attention_bias", false));
  o.o_bias = o.qkv_bias;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  const fb::Activation act = o.activation;
  o.mlp = [moe, act](BuildContext& ctx, int64_t l, ValueId h) -> Result<ValueId> {
    if (!moe.sparse(l)) return kNoValue;
    const int64_t H = ctx.config.hidden_size, E = moe.n_experts, I = moe.intermediate;
    const std::string p = fmt::format("layers.{}.mlp.", l);
    if (ctx.has(p + "experts.gate_up_proj"))
      return unsupported(
          "{}: '{}{}experts.gate_up_proj' is transformers' in-memory fused layout; offgraph reads "
          "checkpoints with one tensor per expert ({}experts.N.gate_proj.weight)",
          ctx.ckpt.dir(), ctx.prefix, p, p);
    // The router is kept f32 (exact for a bf16 checkpoint): its logits pick the experts.
    OG_ASSIGN_OR_RETURN(WeightId router, ctx.weight(p + "gate.weight", {E, H}, {.keep_f32 = true}));
    MoeSpec spec{.top_k = static_cast<int32_t>(moe.top_k),
                 .scoring = fb::RouterScoring::SoftmaxTopK,
                 .normalize_top_k = moe.normalize,
                 .activation = act};
    for (int64_t e = 0; e < E; ++e) {
      const std::string ex = fmt::format("{}experts.{}.", p, e);
      OG_ASSIGN_OR_RETURN(WeightId wg, ctx.weight(ex + "gate_proj.weight", {I, H}));
      OG_ASSIGN_OR_RETURN(WeightId wu, ctx.weight(ex + "up_proj.weight", {I, H}));
      OG_ASSIGN_OR_RETURN(WeightId wd, ctx.weight(ex + "down_proj.weight", {H, I}));
      spec.gate.push_back(wg);
      spec.up.push_back(wu);
      spec.down.push_back(wd);
    }
    const ValueId logits = ctx.g.router(h, router);  // [T, E]
    return ctx.g.moe(h, logits, spec);               // [T, H]
  };
  return build_decoder(ctx, o);
}

}  // namespace

const Family& qwen3_moe_family() {
  static constexpr ModelType kTypes[] = {{"qwen3_moe", false}};
  // transformers' Qwen3MoeConfig (head_dim absent there: hidden_size / heads, as modeling's
  // getattr fallback; rope_theta is the parser's own 10000 default, as the class has;
  // num_key_value_heads is 4, not num_attention_heads).
  // transformers 5 maps num_experts to num_local_experts and saves only the latter.
  static const Family f{.name = "qwen3_moe",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-6},
                                            {"sliding_window", 4096},
                                            {"intermediate_size", 6144},
                                            {"num_experts", 128},
                                            {"num_experts_per_tok", 8},
                                            {"moe_intermediate_size", 768},
                                            {"norm_topk_prob", false},
                                            {"decoder_sparse_step", 1},
                                            {"num_key_value_heads", 4}},
                        .config_aliases = {{"num_local_experts", "num_experts"}},
                        .default_layer_types = default_layer_types,
                        .sliding_window = sliding_window,
                        .build = build};
  return f;
}

}  // namespace og::exporter
