// Gemma-3n text (gemma3n wrapper or gemma3n_text), after transformers' modeling_gemma3n.py;
// the exact semantics, with float64 terms, are written down in reference/gemma_n.h.
//
// Layer types: layer_types, else full attention iff (i + 1) % 5 == 0. The last
// num_kv_shared_layers layers compute no k/v and read their donor's cache.
//
// The residual stream is n = altup_num_inputs streams of width H, held as one value
// [T, n * H] (stream i in columns [i*H, (i+1)*H)), so that AltUp's per-token mixing is one
// generic stream_mix op. Per layer, with a = altup_active_idx:
//   modalities(x) = tanh(modality_router(router_norm(x) * 1/H))                 [T, n]
//   pred  = s + stream_mix(s, prediction_coefs(modalities(s_a)))                  (predict)
//   h     = input_layernorm(pred_a)
//   y     = (pred_a + post_attention_layernorm(attn(h)) + h + post_laurel_norm(right(left(h)))) / sqrt(2)
//   y     = y + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(y)))    (gaussian top-k gate early)
//   s     = pred + stream_mix(y - pred_a, clamp(correction_coefs) modalities(y) + 1)   (correct)
//   e     = post_per_layer_input_norm(per_layer_projection(act(per_layer_input_gate(s_a * correct_output_scale)) *
//   pli_l)) s     = s + stream_mix_const(e, [0, 1, ..., 1])                             (streams 1.. get e)
// correct_output_scale is folded into per_layer_input_gate's columns, the coefficient clamp
// into correction_coefs (transformers clamps those weights at inference), its + 1 into a bias.
// In: s_0 = embeddings, s_i = rms_match(altup_projections[i-1](s_0), s_0); out: the mean of
// s_0 and rms_match(altup_unembed_projections[i-1](s_i), s_0), then norm, tied head, softcap.
#include <cmath>
#include <numbers>
#include <optional>

#include "base/special_functions.h"
#include "export/build_context.h"
#include "export/decoder.h"
#include "export/families/gemma_common.h"
#include "export/family.h"
#include "export/rope.h"
#include "hf/json_fields.h"

namespace og::exporter {
namespace {

// A number field where JSON null means "none" and absence means the config class default.
Result<std::optional<double>> number_or_null(const hf::ModelConfig& c, const std::string& key, double fallback) {
  if (!c.text.contains(key)) return std::optional<double>(fallback);
  if (c.text.at(key).is_null()) return std::optional<double>();
  OG_ASSIGN_OR_RETURN(double v, c.text_fields().get_double(key));
  return std::optional<double>(v);
}

// Gemma3nTextMLP's std multiplier: Normal(0, 1).icdf(sparsity) on a float32 tensor, cast to
// the activation dtype.
float gaussian_multiplier(double sparsity, DType loaded) {
  const float v = 2.0f * static_cast<float>(sparsity) - 1.0f;
  const auto e = static_cast<float>(erfinv(static_cast<double>(v)));
  return round_to_dtype(static_cast<double>(static_cast<float>(static_cast<double>(e) * std::numbers::sqrt2)), loaded);
}

// What the config asks for, checked; every refusal names its field.
struct Gemma3nConfig {
  int64_t P = 0, vps = 0, n = 0, active = 0, laurel_rank = 0;
  std::optional<double> coef_clip, final_cap;
  bool correct_scale = true, bias = false;
  std::vector<double> sparsity;  // [L]
  fb::Activation act = fb::Activation::GeluTanh;
};

Result<Gemma3nConfig> read_config(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  const int64_t L = c.num_hidden_layers;
  Gemma3nConfig g;
  OG_ASSIGN_OR_RETURN(g.act, activation_from_config(c));
  OG_ASSIGN_OR_RETURN(g.bias, t.get_bool("attention_bias", false));
  OG_ASSIGN_OR_RETURN(g.P, t.get_int("hidden_size_per_layer_input", 256));
  if (g.P <= 0) return t.invalid("hidden_size_per_layer_input", "a positive integer");
  OG_ASSIGN_OR_RETURN(g.vps, t.get_int("vocab_size_per_layer_input", 262144));
  if (g.vps <= 0) return t.invalid("vocab_size_per_layer_input", "a positive integer");
  OG_ASSIGN_OR_RETURN(g.n, t.get_int("altup_num_inputs", 4));
  if (g.n < 1 || g.n > 64) return t.invalid("altup_num_inputs", "between 1 and 64");
  OG_ASSIGN_OR_RETURN(g.active, t.get_int("altup_active_idx", 0));
  if (g.active < 0 || g.active >= g.n) return t.invalid("altup_active_idx", fmt::format("in [0, {})", g.n));
  OG_ASSIGN_OR_RETURN(g.coef_clip, number_or_null(c, "altup_coef_clip", 120.0));
  if (g.coef_clip && !(*g.coef_clip >= 0)) return t.invalid("altup_coef_clip", "a non-negative number or null");
  OG_ASSIGN_OR_RETURN(g.correct_scale, t.get_bool("altup_correct_scale", true));
  OG_ASSIGN_OR_RETURN(g.laurel_rank, t.get_int("laurel_rank", 64));
  if (g.laurel_rank <= 0) return t.invalid("laurel_rank", "a positive integer");
  OG_ASSIGN_OR_RETURN(g.final_cap, number_or_null(c, "final_logit_softcapping", 30.0));
  if (g.final_cap && !(*g.final_cap > 0)) return t.invalid("final_logit_softcapping", "a positive number or null");
  g.sparsity.assign(static_cast<size_t>(L), 0.0);
  if (t.has("activation_sparsity_pattern")) {
    if (!c.text.at("activation_sparsity_pattern").is_array())
      return t.invalid("activation_sparsity_pattern", fmt::format("a list of {} numbers", L));
    OG_ASSIGN_OR_RETURN(g.sparsity, t.get_double_list("activation_sparsity_pattern"));
    if (static_cast<int64_t>(g.sparsity.size()) != L)
      return t.invalid("activation_sparsity_pattern", fmt::format("a list of {} numbers (one per layer)", L));
    for (double s : g.sparsity)
      if (!(s >= 0 && s < 1)) return t.invalid("activation_sparsity_pattern", "numbers in [0, 1)");
  } else if (L > 10) {  // Gemma3nTextConfig's default: 0.95 on the first 10 layers
    for (int64_t i = 0; i < 10; ++i) g.sparsity[static_cast<size_t>(i)] = 0.95;
  }
  if (t.has("rope_parameters")) {  // transformers keys gemma3n's by layer type only
    OG_ASSIGN_OR_RETURN(hf::JsonFields rp, t.get_object("rope_parameters"));
    for (const auto& [key, value] : c.text.at("rope_parameters").items())
      if (key != "full_attention" && key != "sliding_attention")
        return unsupported(
            "{}: field '{}' must be keyed by layer type (full_attention, sliding_attention) for "
            "gemma3n, found key '{}'",
            c.path, t.field_name("rope_parameters"), key);
  }
  return g;
}

// Gemma3nModel (the multimodal wrapper) embeds ids of its vision and audio towers' hard
// tokens as unit_norm(embedding_projection(hard_embedding_norm(embedding[id - vocab_offset])))
// (eps: the tower config's rms_norm_eps; no sqrt(hidden) scale). That depends on the id
// only, so the rows are computed here in double and overlay the text embedding at run time.
// Checkpoints saved without the towers (text-only) have nothing to overlay.
Status overlay_tower_embeddings(BuildContext& ctx, ValueId& x) {
  const hf::ModelConfig& c = ctx.config;
  const int64_t H = c.hidden_size;
  const std::string root = ctx.prefix.rfind("language_model.", 0) == 0 ? "" : "model.";
  for (auto [tower, default_offset] : {std::pair{"vision", int64_t{262144}}, std::pair{"audio", int64_t{262272}}}) {
    const std::string p = root + "embed_" + tower + ".";
    if (ctx.ckpt.find(p + "embedding.weight") == nullptr) continue;
    int64_t offset = default_offset, size = 128;
    double eps = 1e-6;
    const std::string key = std::string(tower) + "_config";
    if (c.root.contains(key) && !c.root.at(key).is_null()) {
      OG_ASSIGN_OR_RETURN(hf::JsonFields f, c.root_fields().get_object(key));
      OG_ASSIGN_OR_RETURN(offset, f.get_int("vocab_offset", default_offset));
      OG_ASSIGN_OR_RETURN(size, f.get_int("vocab_size", 128));
      OG_ASSIGN_OR_RETURN(eps, f.get_double("rms_norm_eps", 1e-6));
      if (offset < 0 || size < 1 || offset >= c.vocab_size)
        return f.invalid("vocab_offset", fmt::format("an id range inside the vocabulary [0, {})", c.vocab_size));
    }
    OG_ASSIGN_OR_RETURN(const hf::TensorView* table, ctx.ckpt.get(p + "embedding.weight"));
    if (table->shape.size() != 2 || table->shape[0] != size)
      return bad_input("{}: tensor '{}' has shape {}; expected [{}, hidden] ({}_config.vocab_size)", table->file,
                       table->name, table->shape_str(), size, tower);
    const int64_t mh = table->shape[1];
    OG_ASSIGN_OR_RETURN(const hf::TensorView* norm, ctx.ckpt.get(p + "hard_embedding_norm.weight", {mh}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* proj, ctx.ckpt.get(p + "embedding_projection.weight", {H, mh}));
    std::vector<float> rows(static_cast<size_t>(size * H));  // [size, H]
    std::vector<double> e(static_cast<size_t>(mh)), y(static_cast<size_t>(H));
    for (int64_t r = 0; r < size; ++r) {
      double ss = 0;
      for (int64_t k = 0; k < mh; ++k) ss += table->get(r * mh + k) * table->get(r * mh + k);
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(mh) + eps);
      for (int64_t k = 0; k < mh; ++k) e[k] = table->get(r * mh + k) * inv * norm->get(k);
      double ys = 0;
      for (int64_t h = 0; h < H; ++h) {
        double acc = 0;
        for (int64_t k = 0; k < mh; ++k) acc += proj->get(h * mh + k) * e[k];
        y[h] = acc;
        ys += acc * acc;
      }
      const double inv_y = 1.0 / std::sqrt(ys / static_cast<double>(H) + eps);
      for (int64_t h = 0; h < H; ++h) rows[static_cast<size_t>(r * H + h)] = static_cast<float>(y[h] * inv_y);
    }
    for (const hf::TensorView* t : {table, norm, proj}) ctx.g.mark_ignored(t->name);
    OG_ASSIGN_OR_RETURN(WeightId w, ctx.g.weight_f32(p + "hard_token_rows", rows, {size, H}));
    x = ctx.g.embedding_overlay(x, w, static_cast<int32_t>(offset));
  }
  return Status::ok();
}

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  std::vector<std::string> types;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    types.push_back((i + 1) % 5 == 0 ? "full_attention" : "sliding_attention");
  return types;
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  const hf::JsonFields t = c.text_fields();
  GraphBuilder& g = ctx.g;
  OG_ASSIGN_OR_RETURN(const Gemma3nConfig cfg, read_config(c));
  const int64_t H = c.hidden_size, V = c.vocab_size, L = c.num_hidden_layers, Hq = c.num_attention_heads;
  const int64_t n = cfg.n, P = cfg.P;
  const auto H32 = static_cast<int32_t>(H);
  const float eps = static_cast<float>(c.rms_norm_eps);
  auto norm = [&](ValueId x, const std::string& name, int64_t dim) -> Result<ValueId> {
    OG_ASSIGN_OR_RETURN(WeightId w, ctx.weight(name, {dim}, {.keep_f32 = true}));
    return g.rms_norm(x, w, eps, static_cast<int32_t>(dim));
  };
  auto stream = [&](ValueId s, int64_t i) { return g.slice(s, static_cast<int32_t>(i * H), H32); };

  OG_ASSIGN_OR_RETURN(const hf::TensorView* embed_t, ctx.tensor("embed_tokens.weight", {V, H}));
  OG_ASSIGN_OR_RETURN(DType loaded, loaded_weight_dtype(c, embed_t->dtype));
  // Constants transformers holds as float32 buffers and casts to the weights' dtype.
  auto f32_const = [&](double x) { return round_to_dtype(static_cast<double>(static_cast<float>(x)), loaded); };
  const float router_scale = f32_const(1.0 / static_cast<double>(H));
  const float magnitude_eps = f32_const(1e-5);
  OG_ASSIGN_OR_RETURN(WeightId embed, g.weight(*embed_t));
  ValueId x0 = g.embedding(embed, H32, gemma_embed_scale(H, loaded, /*via_f32=*/true));
  if (c.is_wrapped) OG_TRY(overlay_tower_embeddings(ctx, x0));

  // Per-layer inputs [T, L * P]: (norm(proj(x0) * H^-0.5) + embed_ple(ids) * sqrt(P)) * 2^-0.5.
  // Ids past the per-layer table read its row 0, as the multimodal wrapper does.
  OG_ASSIGN_OR_RETURN(WeightId ple, ctx.weight("embed_tokens_per_layer.weight", {cfg.vps, L * P}));
  const ValueId tok = g.embedding(ple, static_cast<int32_t>(L * P), gemma_embed_scale(P, loaded, true));
  OG_ASSIGN_OR_RETURN(WeightId wp, ctx.weight("per_layer_model_projection.weight", {L * P, H}));
  ValueId proj = g.scale(g.linear(x0, wp), f32_const(1.0 / std::sqrt(static_cast<double>(H))));
  OG_ASSIGN_OR_RETURN(proj, norm(proj, "per_layer_projection_norm.weight", P));
  const ValueId per_layer = g.scale(g.add(proj, tok), f32_const(1.0 / std::sqrt(2.0)));

  // Streams in: s_0 = x0, s_i = altup_projections[i-1](x0) at x0's RMS.
  ValueId s = x0;
  for (int64_t i = 1; i < n; ++i) {
    OG_ASSIGN_OR_RETURN(WeightId w, ctx.weight("altup_projections." + std::to_string(i - 1) + ".weight", {H, H}));
    s = g.concat(s, g.rms_match(g.linear(x0, w), x0, magnitude_eps, H32));
  }
  // Adds e [T, H] to streams 1.. of s (transformers: corrected_predictions[1:] += e).
  std::vector<float> to_tail(static_cast<size_t>(n), 1.0f);
  to_tail[0] = 0.0f;
  OG_ASSIGN_OR_RETURN(WeightId tail_coefs, g.weight_f32("streams_after_first", to_tail, {n}));

  for (int64_t l = 0; l < L; ++l) {
    const LayerAttention& la = ctx.layers[l];
    const std::string p = "layers." + std::to_string(l) + ".";
    const int64_t D = la.head_dim, Hkv = la.kv_heads, I = c.intermediate_size[l];
    const bool owner = la.donor < 0;

    // AltUp router and predict.
    OG_ASSIGN_OR_RETURN(WeightId router_norm, ctx.weight(p + "altup.router_norm.weight", {H}, {.keep_f32 = true}));
    OG_ASSIGN_OR_RETURN(WeightId router, ctx.weight(p + "altup.modality_router.weight", {n, H}, {.keep_f32 = true}));
    auto modalities = [&](ValueId x) {  // [T, n]
      return g.act(g.linear(g.scale(g.rms_norm(x, router_norm, eps, H32), router_scale), router), fb::Activation::Tanh);
    };
    OG_ASSIGN_OR_RETURN(WeightId wpred,
                        ctx.weight(p + "altup.prediction_coefs.weight", {n * n, n}, {.keep_f32 = true}));
    const ValueId pred = g.add(g.stream_mix(s, g.linear(modalities(stream(s, cfg.active)), wpred), H32), s);
    const ValueId pa = stream(pred, cfg.active);

    // Attention and LAuReL on the normed active prediction.
    OG_ASSIGN_OR_RETURN(ValueId h, norm(pa, p + "input_layernorm.weight", H));
    auto bias = [&](const std::string& name, int64_t rows) -> Result<WeightId> {
      if (!cfg.bias) return kNoWeight;
      return ctx.weight(p + name, {rows}, {.keep_f32 = true});
    };
    OG_ASSIGN_OR_RETURN(WeightId wq, ctx.weight(p + "self_attn.q_proj.weight", {Hq * D, H}));
    OG_ASSIGN_OR_RETURN(WeightId bq, bias("self_attn.q_proj.bias", Hq * D));
    OG_ASSIGN_OR_RETURN(ValueId q, norm(g.linear(h, wq, bq), p + "self_attn.q_norm.weight", D));
    OG_ASSIGN_OR_RETURN(double local_theta, t.get_double("rope_local_base_freq", 10000.0));
    OG_ASSIGN_OR_RETURN(RopeTable rope, rope_for_layer(c, la.type, D, local_theta, /*default_theta=*/1e6));
    if (rope.rotary_dim != D)
      return unsupported("{}: field '{}' is not 1: Gemma-3n attention rotates the whole head", c.path,
                         t.field_name("partial_rotary_factor"));
    OG_ASSIGN_OR_RETURN(RopeWeights tables, add_rope_tables(g, p, rope));  // [rotary_dim / 2]
    q = g.rope(q, tables, static_cast<int32_t>(Hq), static_cast<int32_t>(D), rope.rotary_dim, rope.attention_factor);
    ValueId k = -1, v = -1;
    if (owner) {
      OG_ASSIGN_OR_RETURN(WeightId wk, ctx.weight(p + "self_attn.k_proj.weight", {Hkv * D, H}));
      OG_ASSIGN_OR_RETURN(WeightId bk, bias("self_attn.k_proj.bias", Hkv * D));
      OG_ASSIGN_OR_RETURN(WeightId wv, ctx.weight(p + "self_attn.v_proj.weight", {Hkv * D, H}));
      OG_ASSIGN_OR_RETURN(WeightId bv, bias("self_attn.v_proj.bias", Hkv * D));
      OG_ASSIGN_OR_RETURN(k, norm(g.linear(h, wk, bk), p + "self_attn.k_norm.weight", D));
      k = g.rope(k, tables, static_cast<int32_t>(Hkv), static_cast<int32_t>(D), rope.rotary_dim,
                 rope.attention_factor);
      v = g.rms_norm(g.linear(h, wv, bv), kNoWeight, eps, static_cast<int32_t>(D));  // v_norm has no weight
    } else {  // hub checkpoints keep k/v tensors on KV-shared layers; transformers ignores them
      for (const char* ignored : {"self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.k_norm.weight",
                                  "self_attn.k_proj.bias", "self_attn.v_proj.bias"})
        if (ctx.has(p + ignored)) g.mark_ignored(ctx.prefix + p + ignored);
    }
    const AttendSpec spec{.cache_id = ctx.layout.layer_to_cache[l],
                          .scale = 1.0f,
                          .softcap = 0.0f,
                          .n_heads = static_cast<int32_t>(Hq),
                          .n_kv_heads = static_cast<int32_t>(Hkv),
                          .head_dim = static_cast<int32_t>(D),
                          .writes_cache = owner};
    const ValueId a = g.attend(q, k, v, spec);
    OG_ASSIGN_OR_RETURN(WeightId wo, ctx.weight(p + "self_attn.o_proj.weight", {H, Hq * D}));
    OG_ASSIGN_OR_RETURN(WeightId bo, bias("self_attn.o_proj.bias", H));
    OG_ASSIGN_OR_RETURN(ValueId attn, norm(g.linear(a, wo, bo), p + "post_attention_layernorm.weight", H));
    OG_ASSIGN_OR_RETURN(WeightId wl, ctx.weight(p + "laurel.linear_left.weight", {cfg.laurel_rank, H}));
    OG_ASSIGN_OR_RETURN(WeightId wr, ctx.weight(p + "laurel.linear_right.weight", {H, cfg.laurel_rank}));
    OG_ASSIGN_OR_RETURN(ValueId laurel, norm(g.linear(g.linear(h, wl), wr), p + "laurel.post_laurel_norm.weight", H));
    laurel = g.add(laurel, h);
    ValueId y = g.scale(g.add(g.add(pa, attn), laurel), static_cast<float>(1.0 / std::sqrt(2.0)));

    // MLP, with the gaussian top-k cutoff on the gate where activation_sparsity_pattern asks.
    OG_ASSIGN_OR_RETURN(ValueId hm, norm(y, p + "pre_feedforward_layernorm.weight", H));
    OG_ASSIGN_OR_RETURN(WeightId wg, ctx.weight(p + "mlp.gate_proj.weight", {I, H}));
    OG_ASSIGN_OR_RETURN(WeightId wu, ctx.weight(p + "mlp.up_proj.weight", {I, H}));
    OG_ASSIGN_OR_RETURN(WeightId wd, ctx.weight(p + "mlp.down_proj.weight", {H, I}));
    ValueId gate = g.linear(hm, wg);
    const double sparsity = cfg.sparsity[static_cast<size_t>(l)];
    if (sparsity > 0) gate = g.gaussian_top_k(gate, gaussian_multiplier(sparsity, loaded));
    OG_ASSIGN_OR_RETURN(ValueId m, norm(g.linear(g.act_mul(gate, g.linear(hm, wu), cfg.act), wd),
                                        p + "post_feedforward_layernorm.weight", H));
    y = g.add(y, m);

    // AltUp correct: s = pred + (y - pred_a) * (clamp(W) modalities(y) + 1), per stream.
    OG_ASSIGN_OR_RETURN(const hf::TensorView* corr_t, ctx.tensor(p + "altup.correction_coefs.weight", {n, n}));
    g.mark_ignored(corr_t->name);
    std::vector<float> corr(static_cast<size_t>(n * n));
    for (int64_t i = 0; i < n * n; ++i) {
      double w = corr_t->get(i);
      if (cfg.coef_clip) w = std::clamp(w, -*cfg.coef_clip, *cfg.coef_clip);
      corr[static_cast<size_t>(i)] = static_cast<float>(w);
    }
    OG_ASSIGN_OR_RETURN(WeightId wcorr, g.weight_f32(corr_t->name + "(clamped)", corr, {n, n}));
    const std::vector<float> ones(static_cast<size_t>(n), 1.0f);
    OG_ASSIGN_OR_RETURN(WeightId bcorr, g.weight_f32(p + "altup.correction_coefs.plus_one", ones, {n}));
    const ValueId innovation = g.add(y, g.scale(pa, -1.0f));
    s = g.add(g.stream_mix(innovation, g.linear(modalities(y), wcorr, bcorr), H32), pred);

    // Per-layer input block on the corrected active stream, added to streams 1..
    OG_ASSIGN_OR_RETURN(const hf::TensorView* cos_t, ctx.tensor(p + "altup.correct_output_scale", {H}));
    g.mark_ignored(cos_t->name);
    std::vector<float> cos(static_cast<size_t>(H), 1.0f);
    if (cfg.correct_scale)
      for (int64_t i = 0; i < H; ++i) cos[static_cast<size_t>(i)] = static_cast<float>(cos_t->get(i));
    // Folded in f32 and kept f32: rounding the product back to bf16 would perturb every gate
    // weight by up to 2^-9 (measured 1e-3 relative on the logits of bf16 tiny models).
    OG_ASSIGN_OR_RETURN(WeightId wgate, ctx.weight(p + "per_layer_input_gate.weight", {P, H},
                                                   {.keep_f32 = cfg.correct_scale, .col_scale = cos.data()}));
    OG_ASSIGN_OR_RETURN(WeightId wproj, ctx.weight(p + "per_layer_projection.weight", {H, P}));
    const ValueId layer_input = g.slice(per_layer, static_cast<int32_t>(l * P), static_cast<int32_t>(P));
    const ValueId gated = g.act_mul(g.linear(stream(s, cfg.active), wgate), layer_input, cfg.act);
    OG_ASSIGN_OR_RETURN(ValueId e, norm(g.linear(gated, wproj), p + "post_per_layer_input_norm.weight", H));
    if (n > 1) s = g.add(s, g.stream_mix_const(e, tail_coefs, H32, static_cast<int32_t>(n)));
  }

  // Streams out: the mean of s_0 and each altup_unembed_projections[i-1](s_i) at s_0's RMS.
  const ValueId s0 = stream(s, 0);
  ValueId x = s0;
  for (int64_t i = 1; i < n; ++i) {
    OG_ASSIGN_OR_RETURN(WeightId w,
                        ctx.weight("altup_unembed_projections." + std::to_string(i - 1) + ".weight", {H, H}));
    x = g.add(x, g.rms_match(g.linear(stream(s, i), w), s0, magnitude_eps, H32));
  }
  if (n > 1) x = g.scale(x, static_cast<float>(1.0 / static_cast<double>(n)));
  OG_ASSIGN_OR_RETURN(x, norm(x, "norm.weight", H));
  return build_lm_head(ctx, x, embed, cfg.final_cap ? static_cast<float>(*cfg.final_cap) : 0.0f);
}

}  // namespace

const Family& gemma3n_family() {
  static constexpr ModelType kTypes[] = {{"gemma3n", true}, {"gemma3n_text", false}};
  // transformers' Gemma3nTextConfig defaults for keys that published text_configs omit.
  static const Family f{.name = "gemma3n",
                        .model_types = kTypes,
                        .config_defaults = {{"head_dim", 256},
                                            {"num_key_value_heads", 2},
                                            {"num_kv_shared_layers", 15},
                                            {"hidden_activation", "gelu_pytorch_tanh"},
                                            {"rms_norm_eps", 1e-6},
                                            {"sliding_window", 512}},
                        .tie_word_embeddings_default = true,
                        .default_layer_types = default_layer_types,
                        .build = build};
  return f;
}

}  // namespace og::exporter
