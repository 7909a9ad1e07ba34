// ERNIE 4.5 MoE (model_type ernie4_5_moe; ERNIE-4.5-21B-A3B, -Thinking, ERNIE-4.5-300B-A47B):
// transformers' Ernie4_5_MoeForCausalLM. ERNIE 4.5 dense's attention (the rope on interleaved
// pairs of the whole head); on layer l with (l + 1) % moe_layer_interval == 0 and
// moe_layer_start_index <= l <= moe_layer_end_index (-1: the last layer), Ernie4_5_MoeSparseMoeBlock:
//   router r = mlp.gate(x) in f32 [moe_num_experts]; p = softmax(r); the moe_k experts with the
//   largest p + mlp.moe_statics.e_score_correction_bias [1, E] picked, weighted by their p
//   over max(sum, moe_norm_min);
//   experts mlp.experts.E.{gate,up,down}_proj of moe_intermediate_size, one tensor each; plus,
//   on every token, mlp.shared_experts.* of moe_intermediate_size * moe_num_shared_experts
//   (none when 0), ungated.
// The other layers keep the dense MLP. The checkpoints' multi-token-prediction weights
// (mtp_*), which transformers does not load, are skipped. use_bias is refused: no published
// MoE checkpoint sets it, and its shared experts would carry biases the moe op does not hold.
#include <fmt/format.h>

#include <cmath>

#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

struct ErnieMoeConfig {
  int64_t n_experts = 0, top_k = 0, intermediate = 0, shared = 0, start = 0, end = 0, interval = 1;
  bool sparse(int64_t l) const { return (l + 1) % interval == 0 && l >= start && l <= end; }
};

Result<ErnieMoeConfig> read_config(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  ErnieMoeConfig m;
  // The remote-code configs let the layer bounds be lists (one per modality); the text-only
  // checkpoints transformers reads give integers.
  for (const char* key : {"moe_layer_start_index", "moe_layer_end_index"})
    if (t.has(key) && !t.raw(key).is_number_integer())
      return unsupported("{}: field '{}' is {}: offgraph reads one integer (the text model's bound)", c.path,
                         t.field_name(key), t.raw(key).dump());
  OG_ASSIGN_OR_RETURN(m.n_experts, t.get_int("moe_num_experts"));
  OG_ASSIGN_OR_RETURN(m.top_k, t.get_int("moe_k"));
  OG_ASSIGN_OR_RETURN(m.intermediate, t.get_int("moe_intermediate_size"));
  OG_ASSIGN_OR_RETURN(int64_t n_shared, t.get_int("moe_num_shared_experts"));
  OG_ASSIGN_OR_RETURN(m.start, t.get_int("moe_layer_start_index"));
  OG_ASSIGN_OR_RETURN(m.end, t.get_int("moe_layer_end_index"));
  OG_ASSIGN_OR_RETURN(m.interval, t.get_int("moe_layer_interval"));
  OG_ASSIGN_OR_RETURN(const double norm_min, t.get_double("moe_norm_min"));
  if (m.end == -1) m.end = c.num_hidden_layers - 1;  // Ernie4_5_MoeConfig's rule
  if (m.n_experts < 1) return t.invalid("moe_num_experts", "a positive integer");
  if (m.top_k < 1 || m.top_k > m.n_experts || m.top_k > 64)
    return t.invalid("moe_k", fmt::format("between 1 and min(moe_num_experts = {}, 64)", m.n_experts));
  if (m.intermediate < 1) return t.invalid("moe_intermediate_size", "a positive integer");
  if (n_shared < 0) return t.invalid("moe_num_shared_experts", "a non-negative integer");
  if (m.interval < 1) return t.invalid("moe_layer_interval", "a positive integer");
  if (m.start < 0) return t.invalid("moe_layer_start_index", "a non-negative integer");
  if (m.end < -1) return t.invalid("moe_layer_end_index", "a layer index or -1");
  // The moe op renormalizes over max(sum, 1e-12), Ernie4_5_MoeConfig's default floor.
  if (norm_min != 1e-12)
    return unsupported("{}: field '{}' = {}: offgraph renormalizes the routing weights over max(sum, 1e-12) only", c.path,
                       t.field_name("moe_norm_min"), norm_min);
  m.shared = m.intermediate * n_shared;
  return m;
}

std::function<Result<ValueId>(BuildContext&, int64_t, ValueId)> moe_block(ErnieMoeConfig m, fb::Activation act) {
  return [m, act](BuildContext& ctx, int64_t l, ValueId h) -> Result<ValueId> {
    if (!m.sparse(l)) return kNoValue;
    const int64_t H = ctx.config.hidden_size, E = m.n_experts;
    const std::string p = fmt::format("layers.{}.mlp.", l);
    OG_TRY(refuse_fused_experts(ctx, p));
    // transformers keeps the router and its bias in f32 (_keep_in_fp32_modules_strict); so does
    // the program: its probabilities pick the experts.
    OG_ASSIGN_OR_RETURN(WeightId router, ctx.weight(p + "gate.weight", {E, H}, {.keep_f32 = true}));
    MoeSpec spec{.top_k = static_cast<int32_t>(m.top_k),
                 .scoring = fb::RouterScoring::SoftmaxTopK,
                 .normalize_top_k = true,
                 .activation = act};
    OG_ASSIGN_OR_RETURN(spec.choice_bias, ctx.weight(p + "moe_statics.e_score_correction_bias", {1, E},
                                                     {.keep_f32 = true, .flatten = true}));
    OG_TRY(read_experts(ctx, p + "experts.", E, m.intermediate, {"gate_proj", "up_proj", "down_proj"}, spec));
    if (m.shared > 0) OG_TRY(read_shared_expert(ctx, p + "shared_experts.", m.shared, spec));
    const ValueId logits = ctx.g.router(h, router);  // [T, E]
    return ctx.g.moe(h, logits, spec);               // [T, H]
  };
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(const bool bias, t.get_bool("use_bias", false));
  if (bias)
    return unsupported("{}: field '{}' is true: offgraph runs ERNIE 4.5 MoE without biases (its shared experts would "
                       "need them)", c.path, t.field_name("use_bias"));
  OG_ASSIGN_OR_RETURN(ErnieMoeConfig m, read_config(c));
  DecoderOptions o;
  o.rope_interleaved = true;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  o.mlp = moe_block(m, o.activation);
  // Multi-token prediction (mtp_block.N.*, mtp_emb_norm.N, mtp_hidden_norm.N, mtp_linear_proj.N).
  for (const std::string& name : ctx.ckpt.names())
    if (name.starts_with(ctx.prefix + "mtp")) ctx.g.mark_ignored(name);
  return build_decoder(ctx, o);
}

}  // namespace

const Family& ernie4_5_moe_family() {
  static constexpr ModelType kTypes[] = {{"ernie4_5_moe", false}};
  // Ernie4_5_MoeConfig's defaults for keys a config.json may omit (no head_dim: hidden_size /
  // heads); its attribute_map reads num_experts and num_experts_per_tok as moe_num_experts and moe_k.
  static const Family f{.name = "ernie4_5_moe",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5},
                                            {"rope_theta", 500000.0},
                                            {"num_key_value_heads", 4},
                                            {"intermediate_size", 12288},
                                            {"moe_intermediate_size", 1536},
                                            {"moe_k", 6},
                                            {"moe_num_experts", 64},
                                            {"moe_num_shared_experts", 2},
                                            {"moe_layer_start_index", 1},
                                            {"moe_layer_end_index", -1},
                                            {"moe_layer_interval", 1},
                                            {"moe_norm_min", 1e-12}},
                        .config_aliases = {{"num_experts", "moe_num_experts"}, {"num_experts_per_tok", "moe_k"}},
                        .tie_word_embeddings_default = true,
                        .build = build};
  return f;
}

}  // namespace og::exporter
