// Gemma-4 text (gemma4 wrapper or gemma4_text), after transformers' modeling_gemma4.py.
//
// Layer types: layer_types, else sliding iff (i + 1) % 6 != 0; the last layer is always
// full (transformers forces it). Full layers have their own k/v geometry: per_layer_config[i]
// when present, else head_dim = global_head_dim (default 512) and, only with
// attention_k_eq_v, kv heads = num_global_key_value_heads.
//
// The block: x*w RMSNorms (no 1 + w), q/k norms per head and a weightless v norm, attention
// scale 1.0, sandwich norms, gelu-tanh MLP (twice as wide on KV-shared layers with
// use_double_wide_mlp), per-layer inputs added after the MLP through a gate and projection,
// then the whole residual scaled by layer_scalar. KV-shared layers (the last
// num_kv_shared_layers) compute no k/v: their update_and_attend only reads the donor's cache.
//
// enable_moe_block (google/gemma-4-26B-A4B; docs/moe_families.md §1): every layer runs the
// dense MLP and a mixture of experts in parallel on the same residual x:
//   dense = post_feedforward_layernorm_1(mlp(pre_feedforward_layernorm(x)))
//   r     = router.proj(rms(x) * router.scale * H^-1/2)        (weightless norm; the two
//           factors folded into one f32 norm weight, rounded once)
//   w     = softmax(r) -> top_k_experts -> renormalized -> * router.per_expert_scale[e]
//   moe   = post_feedforward_layernorm_2(sum_j w_j expert_{e_j}(pre_feedforward_layernorm_2(x)))
//   x     = x + post_feedforward_layernorm(dense + moe)
// Experts are fused and output-major: experts.gate_up_proj [E, 2I, H] (rows [0, I) gate,
// [I, 2I) up, not interleaved) and experts.down_proj [E, H, I], gated hidden_activation.
#include <fmt/format.h>

#include <cmath>

#include "export/build_context.h"
#include "export/decoder.h"
#include "export/families/gemma_common.h"
#include "export/family.h"
#include "export/rope.h"

namespace og::exporter {
namespace {

struct Gemma4Moe {
  bool enabled = false;
  int64_t n_experts = 0, top_k = 0, intermediate = 0;
};

Result<Gemma4Moe> read_moe(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  Gemma4Moe m;
  OG_ASSIGN_OR_RETURN(m.enabled, t.get_bool("enable_moe_block", false));
  if (!m.enabled) return m;
  auto positive = [&](const char* key, int64_t& out) -> Status {
    if (!t.has(key) || c.text.at(key).is_null()) return t.invalid(key, "a positive integer (enable_moe_block is true)");
    OG_ASSIGN_OR_RETURN(out, t.get_int(key));
    return Status::ok();
  };
  OG_TRY(positive("num_experts", m.n_experts));
  OG_TRY(positive("top_k_experts", m.top_k));
  OG_TRY(positive("moe_intermediate_size", m.intermediate));
  if (m.n_experts < 1) return t.invalid("num_experts", "a positive integer");
  if (m.top_k < 1 || m.top_k > m.n_experts || m.top_k > 64)
    return t.invalid("top_k_experts", fmt::format("between 1 and min(num_experts = {}, 64)", m.n_experts));
  if (m.intermediate < 1) return t.invalid("moe_intermediate_size", "a positive integer");
  return m;
}

// The expert branch of layer `l` on the residual x [T, H], before its post-norm: [T, H].
Result<ValueId> gemma4_experts(BuildContext& ctx, const Gemma4Moe& moe, fb::Activation act, int64_t l, ValueId x) {
  GraphBuilder& g = ctx.g;
  const int64_t H = ctx.config.hidden_size, E = moe.n_experts, I = moe.intermediate;
  const float eps = static_cast<float>(ctx.config.rms_norm_eps);
  const std::string p = fmt::format("layers.{}.", l);
  // Only transformers' fused 3-D parameters exist for Gemma-4; a per-expert 2-D layout is
  // not guessed at.
  for (const char* per_expert : {"experts.0.gate_proj.weight", "experts.0.up_proj.weight", "experts.0.down_proj.weight",
                                 "experts.0.gate_up_proj.weight", "experts.0.gate_up_proj"})
    if (ctx.has(p + per_expert))
      return unsupported(
          "{}: tensor '{}{}{}' is a per-expert 2-D tensor; offgraph reads Gemma-4 experts only as "
          "the fused 3-D {}experts.gate_up_proj [E, 2I, H] and {}experts.down_proj [E, H, I]",
          ctx.ckpt.dir(), ctx.prefix, p, per_expert, p, p);
  // Router: rms(x) * (scale * H^-1/2), folded into one f32 norm weight.
  OG_ASSIGN_OR_RETURN(
      WeightId router_norm,
      ctx.weight(p + "router.scale", {H},
                 {.keep_f32 = true, .mul = static_cast<float>(1.0 / std::sqrt(static_cast<double>(H)))}));
  // The projection stays f32 (exact for a bf16 checkpoint): its logits pick the experts.
  OG_ASSIGN_OR_RETURN(WeightId proj, ctx.weight(p + "router.proj.weight", {E, H}, {.keep_f32 = true}));
  MoeSpec spec{.top_k = static_cast<int32_t>(moe.top_k),
               .scoring = fb::RouterScoring::SoftmaxTopK,
               .normalize_top_k = true,
               .activation = act};
  OG_ASSIGN_OR_RETURN(spec.expert_scale, ctx.weight(p + "router.per_expert_scale", {E}, {.keep_f32 = true}));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* gu, ctx.tensor(p + "experts.gate_up_proj", {E, 2 * I, H}));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* d, ctx.tensor(p + "experts.down_proj", {E, H, I}));
  for (int64_t e = 0; e < E; ++e) {
    OG_ASSIGN_OR_RETURN(WeightId wg, g.weight(*gu, {.expert = e, .row_begin = 0, .row_end = I}));
    OG_ASSIGN_OR_RETURN(WeightId wu, g.weight(*gu, {.expert = e, .row_begin = I, .row_end = 2 * I}));
    OG_ASSIGN_OR_RETURN(WeightId wd, g.weight(*d, {.expert = e}));
    spec.gate.push_back(wg);
    spec.up.push_back(wu);
    spec.down.push_back(wd);
  }
  const ValueId logits = g.router(g.rms_norm(x, router_norm, eps, static_cast<int32_t>(H)), proj);  // [T, E]
  OG_ASSIGN_OR_RETURN(WeightId pre2, ctx.weight(p + "pre_feedforward_layernorm_2.weight", {H}, {.keep_f32 = true}));
  const ValueId h2 = g.rms_norm(x, pre2, eps, static_cast<int32_t>(H));  // [T, H]
  return g.moe(h2, logits, spec);                                        // [T, H]
}

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  std::vector<std::string> types;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    types.push_back((i + 1) % 6 != 0 ? "sliding_attention" : "full_attention");
  return types;
}

void finalize_layer_types(std::vector<std::string>& types) {
  if (!types.empty()) types.back() = "full_attention";
}

Result<KvGeometry> kv_geometry(const hf::ModelConfig& c, int64_t layer, const std::string& type) {
  KvGeometry g{c.num_key_value_heads, c.head_dim};
  hf::JsonFields t = c.text_fields();
  if (t.has("per_layer_config")) {
    OG_ASSIGN_OR_RETURN(hf::JsonFields plc, t.get_object("per_layer_config"));
    const std::string key = std::to_string(layer);
    if (plc.has(key)) {
      OG_ASSIGN_OR_RETURN(hf::JsonFields lc, plc.get_object(key));
      OG_ASSIGN_OR_RETURN(g.head_dim, lc.get_int("head_dim", g.head_dim));
      OG_ASSIGN_OR_RETURN(g.kv_heads, lc.get_int("num_key_value_heads", g.kv_heads));
    }
    return g;
  }
  if (type != "full_attention") return g;
  OG_ASSIGN_OR_RETURN(g.head_dim, t.get_int("global_head_dim", 512));
  OG_ASSIGN_OR_RETURN(bool k_eq_v, t.get_bool("attention_k_eq_v", false));
  if (k_eq_v) {
    OG_ASSIGN_OR_RETURN(g.kv_heads, t.get_int("num_global_key_value_heads", g.kv_heads));
  }
  return g;
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  const hf::JsonFields t = c.text_fields();
  GraphBuilder& g = ctx.g;
  OG_ASSIGN_OR_RETURN(const Gemma4Moe moe, read_moe(c));
  OG_ASSIGN_OR_RETURN(std::string bidirectional, t.get_string("use_bidirectional_attention", ""));
  if (bidirectional == "all")
    return unsupported("{}: field '{}' is 'all': bidirectional attention cannot run as a causal step program", c.path,
                       t.field_name("use_bidirectional_attention"));
  OG_ASSIGN_OR_RETURN(bool bias, t.get_bool("attention_bias", false));
  if (bias)
    return unsupported("{}: field '{}' is true: Gemma-4 attention biases are not supported", c.path,
                       t.field_name("attention_bias"));
  OG_ASSIGN_OR_RETURN(bool k_eq_v, t.get_bool("attention_k_eq_v", false));
  OG_ASSIGN_OR_RETURN(bool double_wide, t.get_bool("use_double_wide_mlp", false));
  OG_ASSIGN_OR_RETURN(int64_t P, t.get_int("hidden_size_per_layer_input", 0));
  OG_ASSIGN_OR_RETURN(int64_t V_ple, t.get_int("vocab_size_per_layer_input", c.vocab_size));
  OG_ASSIGN_OR_RETURN(double final_cap, t.get_double("final_logit_softcapping", 0.0));
  OG_ASSIGN_OR_RETURN(fb::Activation act, activation_from_config(c));
  if (P < 0 || V_ple < 1)
    return bad_input("{}: hidden_size_per_layer_input {} / vocab_size_per_layer_input {} out of range", c.path, P,
                     V_ple);

  const int64_t H = c.hidden_size, V = c.vocab_size, L = c.num_hidden_layers, Hq = c.num_attention_heads;
  const float eps = static_cast<float>(c.rms_norm_eps);
  // rows of `dim` of x normed: [T, width of x]; the weight [dim] kept f32
  auto norm = [&](ValueId x, const std::string& name, int64_t dim) -> Result<ValueId> {
    OG_ASSIGN_OR_RETURN(WeightId w, ctx.weight(name, {dim}, {.keep_f32 = true}));
    return g.rms_norm(x, w, eps, static_cast<int32_t>(dim));
  };

  OG_ASSIGN_OR_RETURN(const hf::TensorView* embed_t, ctx.tensor("embed_tokens.weight", {V, H}));
  OG_ASSIGN_OR_RETURN(DType loaded, loaded_weight_dtype(c, embed_t->dtype));
  OG_ASSIGN_OR_RETURN(WeightId embed, g.weight(*embed_t));
  // The multimodal wrapper embeds image/audio/video placeholder ids as padding (Gemma4Model).
  std::vector<int32_t> placeholders;
  OG_ASSIGN_OR_RETURN(int64_t pad, t.get_int("pad_token_id", 0));
  if (c.is_wrapped) {
    const hf::JsonFields root = c.root_fields();
    for (const char* key : {"image_token_id", "video_token_id", "audio_token_id"}) {
      OG_ASSIGN_OR_RETURN(std::optional<int64_t> id, root.get_optional_int(key));
      if (id && *id >= 0 && *id < V && *id != pad) placeholders.push_back(static_cast<int32_t>(*id));
    }
  }
  if (pad < 0 || pad >= V) return t.invalid("pad_token_id", "an id inside the vocabulary");
  // [T, H]: the residual stream
  ValueId x = g.embedding(embed, static_cast<int32_t>(H), gemma_embed_scale(H, loaded, /*via_f32=*/true), placeholders,
                          static_cast<int32_t>(pad));

  // Per-layer inputs [T, L * P]: (norm(proj(x) / sqrt(H)) + embed_ple(ids) * sqrt(P)) / sqrt(2).
  ValueId per_layer = -1;  // [T, L * P]
  if (P > 0) {
    OG_ASSIGN_OR_RETURN(WeightId ple, ctx.weight("embed_tokens_per_layer.weight", {V_ple, L * P}));
    // [T, L * P]
    ValueId tok = g.embedding(ple, static_cast<int32_t>(L * P), gemma_embed_scale(P, loaded, true), placeholders,
                              static_cast<int32_t>(pad));
    OG_ASSIGN_OR_RETURN(WeightId wp, ctx.weight("per_layer_model_projection.weight", {L * P, H}));
    // [T, L * P]; normed per P-wide layer slice
    ValueId proj = g.scale(g.linear(x, wp), static_cast<float>(1.0 / std::sqrt(static_cast<double>(H))));
    OG_ASSIGN_OR_RETURN(proj, norm(proj, "per_layer_projection_norm.weight", P));
    per_layer = g.scale(g.add(proj, tok), static_cast<float>(1.0 / std::sqrt(2.0)));
  }

  const int64_t first_shared = L - c.num_kv_shared_layers;
  for (int64_t l = 0; l < L; ++l) {
    const LayerAttention& la = ctx.layers[l];
    const std::string p = "layers." + std::to_string(l) + ".";
    const int64_t D = la.head_dim, Hkv = la.kv_heads;
    const bool owner = la.donor < 0;
    const bool shared = l >= first_shared && first_shared > 0;
    const int64_t I = c.intermediate_size[l] * (double_wide && shared ? 2 : 1);

    OG_ASSIGN_OR_RETURN(ValueId h, norm(x, p + "input_layernorm.weight", H));  // [T, H]
    OG_ASSIGN_OR_RETURN(WeightId wq, ctx.weight(p + "self_attn.q_proj.weight", {Hq * D, H}));
    OG_ASSIGN_OR_RETURN(ValueId q, norm(g.linear(h, wq), p + "self_attn.q_norm.weight", D));  // [T, Hq * D]
    OG_ASSIGN_OR_RETURN(RopeTable rope, rope_for_layer(c, la.type, D));
    OG_ASSIGN_OR_RETURN(RopeWeights tables, add_rope_tables(g, p, rope));  // [rotary_dim / 2]
    q = g.rope(q, tables, static_cast<int32_t>(Hq), static_cast<int32_t>(D), rope.rotary_dim, rope.attention_factor);
    ValueId k = -1, v = -1;  // [T, Hkv * D] each (none on KV-shared layers)
    if (owner) {
      OG_ASSIGN_OR_RETURN(WeightId wk, ctx.weight(p + "self_attn.k_proj.weight", {Hkv * D, H}));
      ValueId k_raw = g.linear(h, wk);  // [T, Hkv * D]
      ValueId v_raw = k_raw;  // [T, Hkv * D]; attention_k_eq_v on full layers: values reuse the key projection
      if (!(k_eq_v && la.type == "full_attention")) {
        OG_ASSIGN_OR_RETURN(WeightId wv, ctx.weight(p + "self_attn.v_proj.weight", {Hkv * D, H}));
        v_raw = g.linear(h, wv);
      }
      OG_ASSIGN_OR_RETURN(k, norm(k_raw, p + "self_attn.k_norm.weight", D));
      k = g.rope(k, tables, static_cast<int32_t>(Hkv), static_cast<int32_t>(D), rope.rotary_dim,
                 rope.attention_factor);
      v = g.rms_norm(v_raw, kNoWeight, eps, static_cast<int32_t>(D));  // v_norm has no weight
    } else {
      for (const char* ignored : {"self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.k_norm.weight"})
        if (ctx.has(p + ignored)) g.mark_ignored(ctx.prefix + p + ignored);
    }
    AttendSpec spec{.cache_id = ctx.layout.layer_to_cache[l],
                    .scale = 1.0f,
                    .softcap = 0.0f,
                    .n_heads = static_cast<int32_t>(Hq),
                    .n_kv_heads = static_cast<int32_t>(Hkv),
                    .head_dim = static_cast<int32_t>(D),
                    .writes_cache = owner};
    ValueId a = g.attend(q, k, v, spec);  // [T, Hq * D]
    OG_ASSIGN_OR_RETURN(WeightId wo, ctx.weight(p + "self_attn.o_proj.weight", {H, Hq * D}));
    // [T, H]
    OG_ASSIGN_OR_RETURN(ValueId attn_out, norm(g.linear(a, wo), p + "post_attention_layernorm.weight", H));
    x = g.add(x, attn_out);

    OG_ASSIGN_OR_RETURN(h, norm(x, p + "pre_feedforward_layernorm.weight", H));  // [T, H]
    OG_ASSIGN_OR_RETURN(WeightId wg, ctx.weight(p + "mlp.gate_proj.weight", {I, H}));
    OG_ASSIGN_OR_RETURN(WeightId wu, ctx.weight(p + "mlp.up_proj.weight", {I, H}));
    OG_ASSIGN_OR_RETURN(WeightId wd, ctx.weight(p + "mlp.down_proj.weight", {H, I}));
    // gate and up [T, I], their product [T, I], m [T, H]
    ValueId m = g.linear(g.act_mul(g.linear(h, wg), g.linear(h, wu), act), wd);
    if (moe.enabled) {  // the dense and expert branches, each post-normed, summed
      OG_ASSIGN_OR_RETURN(m, norm(m, p + "post_feedforward_layernorm_1.weight", H));
      OG_ASSIGN_OR_RETURN(ValueId e, gemma4_experts(ctx, moe, act, l, x));  // [T, H]
      OG_ASSIGN_OR_RETURN(e, norm(e, p + "post_feedforward_layernorm_2.weight", H));
      m = g.add(m, e);
    }
    OG_ASSIGN_OR_RETURN(m, norm(m, p + "post_feedforward_layernorm.weight", H));
    x = g.add(x, m);

    if (P > 0) {
      OG_ASSIGN_OR_RETURN(WeightId wgate, ctx.weight(p + "per_layer_input_gate.weight", {P, H}));
      OG_ASSIGN_OR_RETURN(WeightId wproj, ctx.weight(p + "per_layer_projection.weight", {H, P}));
      // [T, P]: this layer's slice of the per-layer inputs
      ValueId layer_input = g.slice(per_layer, static_cast<int32_t>(l * P), static_cast<int32_t>(P));
      ValueId gated = g.act_mul(g.linear(x, wgate), layer_input, act);  // [T, P]
      // [T, H]
      OG_ASSIGN_OR_RETURN(ValueId pl, norm(g.linear(gated, wproj), p + "post_per_layer_input_norm.weight", H));
      x = g.add(x, pl);
    }
    if (ctx.has(p + "layer_scalar")) {
      OG_ASSIGN_OR_RETURN(const hf::TensorView* s, ctx.tensor(p + "layer_scalar", {1}));
      g.mark_ignored(s->name);
      const float scalar = static_cast<float>(s->get(0));
      if (scalar != 1.0f) x = g.scale(x, scalar);
    }
  }
  OG_ASSIGN_OR_RETURN(x, norm(x, "norm.weight", H));  // [T, H]
  return build_lm_head(ctx, x, embed, static_cast<float>(final_cap));
}

}  // namespace

const Family& gemma4_family() {
  static constexpr ModelType kTypes[] = {{"gemma4", true}, {"gemma4_text", false}};
  // transformers' Gemma4TextConfig defaults for keys that published text_configs omit (an
  // explicit null stays null: hidden_size_per_layer_input null means no per-layer inputs).
  static const Family f{.name = "gemma4",
                        .model_types = kTypes,
                        .config_defaults = {{"vocab_size", 262144},
                                            {"hidden_size", 2304},
                                            {"intermediate_size", 9216},
                                            {"num_hidden_layers", 30},
                                            {"num_attention_heads", 8},
                                            {"num_key_value_heads", 4},
                                            {"head_dim", 256},
                                            {"max_position_embeddings", 131072},
                                            {"rms_norm_eps", 1e-6},
                                            {"sliding_window", 512},
                                            {"hidden_activation", "gelu_pytorch_tanh"},
                                            {"hidden_size_per_layer_input", 256},
                                            {"vocab_size_per_layer_input", 262144}},
                        .tie_word_embeddings_default = true,
                        .default_layer_types = default_layer_types,
                        .finalize_layer_types = finalize_layer_types,
                        .kv_geometry = kv_geometry,
                        .build = build};
  return f;
}

}  // namespace og::exporter
