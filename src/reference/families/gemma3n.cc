// Gemma 3n text models: Gemma3nForCausalLM (model_type gemma3n_text, tensors under "model.")
// and the language model of Gemma3nForConditionalGeneration (model_type gemma3n, text_config,
// tensors under "model.language_model."). Followed: models/gemma3n/modeling_gemma3n.py,
// modular_gemma3n.py and configuration_gemma3n.py, modeling_rope_utils.py, masking_utils.py.
// The semantics an exporter must match, with the places in those files: reference/gemma_n.h.
//
// The residual stream is altup_num_inputs streams (AltUp). Per layer (Gemma3nTextDecoderLayer):
//   pred    = altup.predict(streams);  a = pred[altup_active_idx];  n = input_layernorm(a)
//   laurel  = n + post_laurel_norm(linear_right(linear_left(n)))
//   y       = (a + post_attention_layernorm(attn(n)) + laurel) / sqrt(2)
//   y       = y + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(y)))   (sparse gate on early layers)
//   streams = altup.correct(pred, y)
//   e       = post_per_layer_input_norm(per_layer_projection(act(per_layer_input_gate(
//               streams[active] * correct_output_scale)) * pli[l]))
//   streams[1:] += e
// Every RMSNorm is x̂ * w (Gemma3nRMSNorm); attention scale 1.0; KV-shared tail (gemma_n.h).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "reference/families/families.h"
#include "reference/gemma_n.h"
#include "reference/rope.h"
#include "reference/weights.h"

namespace og::reference {
namespace {

struct Ropes {
  std::vector<double> sliding, full;
};

// Gemma3nTextConfig.convert_rope_params_to_dict: {full: default, sliding: default} or the
// per-layer-type rope_parameters; the old rope_scaling merged into the full-attention entry;
// rope_theta defaulting to rope_theta (1e6) for full layers and rope_local_base_freq (1e4) for
// sliding ones. Gemma3nRotaryEmbedding computes each for head_dim.
Result<Ropes> gemma3n_ropes(const hf::ModelConfig& c, int64_t head_dim) {
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(double full_theta, t.get_double("rope_theta", 1e6));
  OG_ASSIGN_OR_RETURN(double local_theta, t.get_double("rope_local_base_freq", 1e4));
  OG_ASSIGN_OR_RETURN(LayerTypeRopes by_type, rope_params_by_layer_type(c));
  const hf::Json& full = by_type.full;
  const hf::Json& sliding = by_type.sliding;
  Ropes ropes;
  for (bool is_full : {true, false}) {
    const hf::Json& dict = is_full ? full : sliding;
    const std::string where = std::string("rope_parameters.") + (is_full ? "full_attention." : "sliding_attention.");
    const hf::JsonFields f(dict, c.path, t.field_name(where));
    OG_ASSIGN_OR_RETURN(double partial, f.get_double("partial_rotary_factor", 1.0));
    if (partial != 1.0)
      return unsupported("{}: field '{}' = {} is not supported for gemma3n (its attention rotates the whole head)",
                         c.path, f.field_name("partial_rotary_factor"), partial);
    OG_ASSIGN_OR_RETURN(RopeSpec spec, parse_rope_params(&f, is_full ? full_theta : local_theta,
                                                         c.max_position_embeddings));
    OG_TRY(refuse_yarn(spec, c.path, "gemma3n"));
    (is_full ? ropes.full : ropes.sliding) = rope_inv_freq(spec, head_dim);
  }
  return ropes;
}

// One of Gemma3nModel's multimodal embedders (embed_vision / embed_audio), as it embeds a hard
// token id: embedding_post_projection_norm(embedding_projection(hard_embedding_norm(embedding[id - offset]))).
struct MultimodalVocab {
  std::string name;  // "vision" / "audio"
  int64_t offset = 0, size = 128;
  double eps = 1e-6;
};

Result<MultimodalVocab> multimodal_vocab(const hf::ModelConfig& c, const std::string& name, int64_t default_offset) {
  MultimodalVocab m{.name = name, .offset = default_offset};
  const std::string key = name + "_config";
  if (!c.root.contains(key) || c.root.at(key).is_null()) return m;  // Gemma3nConfig builds the default one
  OG_ASSIGN_OR_RETURN(hf::JsonFields f, c.root_fields().get_object(key));
  OG_ASSIGN_OR_RETURN(m.offset, f.get_int("vocab_offset", default_offset));
  OG_ASSIGN_OR_RETURN(m.size, f.get_int("vocab_size", 128));
  OG_ASSIGN_OR_RETURN(m.eps, f.get_double("rms_norm_eps", 1e-6));
  return m;
}

Result<Mat> multimodal_embedding(const hf::Checkpoint& ckpt, const std::string& prefix, const MultimodalVocab& m,
                                 int64_t row, int64_t hidden, const Numerics& nu) {
  OG_ASSIGN_OR_RETURN(const hf::TensorView* table, ckpt.get(prefix + "embedding.weight"));
  if (table->shape.size() != 2 || table->shape[0] != m.size)
    return bad_input("{}: tensor '{}' has shape {}; expected [{}, hidden] ({}_config.vocab_size)", table->file,
                     table->name, table->shape_str(), m.size, m.name);
  const int64_t mh = table->shape[1];
  OG_ASSIGN_OR_RETURN(std::vector<double> hard_norm, vector_f64(ckpt, prefix + "hard_embedding_norm.weight", mh));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* proj,
                      float_tensor(ckpt, prefix + "embedding_projection.weight", {hidden, mh}));
  const int32_t r = static_cast<int32_t>(row);
  OG_ASSIGN_OR_RETURN(Mat e, embed_rows(*table, std::span<const int32_t>(&r, 1)));  // [1, mh]
  nu.settle(e);
  e = rms_norm(e, hard_norm, m.eps, NormStyle::kWeight, mh);
  nu.settle(e);
  e = linear(e, *proj);
  nu.settle(e);
  e = rms_norm_unit(e, m.eps, hidden);
  nu.settle(e);
  return e;
}

struct AltUpWeights {
  std::vector<double> correct_output_scale, router_norm;  // [H]
  const hf::TensorView* correction = nullptr;              // [n, n]
  const hf::TensorView* prediction = nullptr;              // [n*n, n]
  const hf::TensorView* router = nullptr;                  // [n, H]
};

// compute_router_modalities: tanh(modality_router(router_norm(x) * router_input_scale)) [T, n].
Mat router_modalities(const Mat& x, const AltUpWeights& w, double eps, double router_scale, const Numerics& nu) {
  Mat r = rms_norm(x, w.router_norm, eps, NormStyle::kWeight, x.cols);
  nu.settle(r);
  for (double& v : r.v) v *= router_scale;
  nu.settle(r);
  Mat m = linear(r, *w.router);
  nu.settle(m);
  for (double& v : m.v) v = std::tanh(v);
  nu.settle(m);
  return m;
}

// Gemma3nTextAltUp.predict: pred[j] = s[j] + sum_i c[j*n + i] * s[i], c = prediction_coefs(modalities).
// (altup_coef_clip clamps prediction_coefs only in training.)
std::vector<Mat> altup_predict(const std::vector<Mat>& s, int64_t active, const AltUpWeights& w, double eps,
                               double router_scale, const Numerics& nu) {
  const auto n = static_cast<int64_t>(s.size());
  const Mat modalities = router_modalities(s[static_cast<size_t>(active)], w, eps, router_scale, nu);
  Mat coefs = linear(modalities, *w.prediction);  // [T, n*n]
  nu.settle(coefs);
  std::vector<Mat> pred(s.size(), Mat(s[0].rows, s[0].cols));
  for (int64_t j = 0; j < n; ++j) {
    Mat& p = pred[static_cast<size_t>(j)];
    for (int64_t t = 0; t < p.rows; ++t)
      for (int64_t h = 0; h < p.cols; ++h) {
        double acc = 0;
        for (int64_t i = 0; i < n; ++i) acc += coefs.at(t, j * n + i) * s[static_cast<size_t>(i)].at(t, h);
        p.at(t, h) = nu.settle(acc) + s[static_cast<size_t>(j)].at(t, h);
      }
    nu.settle(p);
  }
  return pred;
}

// Gemma3nTextAltUp.correct: out[i] = pred[i] + (y - pred[active]) * (c[i] + 1),
// c = correction_coefs(modalities(y)) with the weights clamped to ±altup_coef_clip.
std::vector<Mat> altup_correct(const std::vector<Mat>& pred, const Mat& y, int64_t active, const AltUpWeights& w,
                               std::optional<double> clip, double eps, double router_scale, const Numerics& nu) {
  const auto n = static_cast<int64_t>(pred.size());
  const Mat modalities = router_modalities(y, w, eps, router_scale, nu);
  Mat coefs(y.rows, n);  // [T, n]
  for (int64_t o = 0; o < n; ++o)
    for (int64_t t = 0; t < y.rows; ++t) {
      double acc = 0;
      for (int64_t i = 0; i < n; ++i) {
        double wv = w.correction->get(o * n + i);
        if (clip) wv = std::clamp(wv, -*clip, *clip);
        acc += modalities.at(t, i) * wv;
      }
      coefs.at(t, o) = acc;
    }
  nu.settle(coefs);
  for (double& v : coefs.v) v += 1.0;
  nu.settle(coefs);
  Mat innovation = y;
  const Mat& pa = pred[static_cast<size_t>(active)];
  for (size_t i = 0; i < innovation.v.size(); ++i) innovation.v[i] -= pa.v[i];
  nu.settle(innovation);
  std::vector<Mat> out(pred.size(), Mat(y.rows, y.cols));
  for (int64_t i = 0; i < n; ++i) {
    Mat& o = out[static_cast<size_t>(i)];
    for (int64_t t = 0; t < y.rows; ++t)
      for (int64_t h = 0; h < y.cols; ++h)
        o.at(t, h) = nu.settle(innovation.at(t, h) * coefs.at(t, i)) + pred[static_cast<size_t>(i)].at(t, h);
    nu.settle(o);
  }
  return out;
}

// Rescales p to the per-token RMS `target` (Gemma3nTextModel: altup_projections on the way in,
// altup_unembed_projections on the way out): p * target / sqrt(max(mean(p²), eps)).
void to_magnitude(Mat& p, const std::vector<double>& target, double eps, const Numerics& nu) {
  for (int64_t t = 0; t < p.rows; ++t) {
    double ms = 0;
    for (int64_t h = 0; h < p.cols; ++h) ms += p.at(t, h) * p.at(t, h);
    ms = nu.settle(ms / static_cast<double>(p.cols));
    const double mag = nu.settle(std::sqrt(std::max(ms, eps)));
    for (int64_t h = 0; h < p.cols; ++h) p.at(t, h) = nu.settle(p.at(t, h) * target[static_cast<size_t>(t)]) / mag;
  }
  nu.settle(p);
}

std::vector<double> rms_of_rows(const Mat& x, const Numerics& nu) {
  std::vector<double> r(static_cast<size_t>(x.rows));
  for (int64_t t = 0; t < x.rows; ++t) {
    double ms = 0;
    for (int64_t h = 0; h < x.cols; ++h) ms += x.at(t, h) * x.at(t, h);
    r[static_cast<size_t>(t)] = nu.settle(std::sqrt(nu.settle(ms / static_cast<double>(x.cols))));
  }
  return r;
}

Result<std::vector<double>> gemma3n_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                            std::span<const int32_t> tokens, const ForwardOptions& options) {
  OG_ASSIGN_OR_RETURN(GemmaNPlan plan, gemma3n_plan(c));
  const hf::JsonFields t = c.text_fields();
  const int64_t H = c.hidden_size, heads = c.num_attention_heads, V = c.vocab_size, L = c.num_hidden_layers;
  const int64_t D = plan.layers[0].head_dim;
  const double eps = c.rms_norm_eps;
  OG_ASSIGN_OR_RETURN(Ropes ropes, gemma3n_ropes(c, D));
  OG_ASSIGN_OR_RETURN(std::string act_name, t.get_string("hidden_activation"));
  OG_ASSIGN_OR_RETURN(Activation act,
                      parse_activation(act_name, c.path + ": field '" + t.field_name("hidden_activation") + "'"));
  OG_ASSIGN_OR_RETURN(bool bias, t.get_bool("attention_bias", false));
  OG_ASSIGN_OR_RETURN(int64_t P, t.get_int("hidden_size_per_layer_input", 256));
  if (P <= 0) return t.invalid("hidden_size_per_layer_input", "a positive integer");
  OG_ASSIGN_OR_RETURN(int64_t vps, t.get_int("vocab_size_per_layer_input", 262144));
  if (vps <= 0) return t.invalid("vocab_size_per_layer_input", "a positive integer");
  OG_ASSIGN_OR_RETURN(int64_t n, t.get_int("altup_num_inputs", 4));
  if (n < 1) return t.invalid("altup_num_inputs", "at least 1");
  OG_ASSIGN_OR_RETURN(int64_t active, t.get_int("altup_active_idx", 0));
  if (active < 0 || active >= n) return t.invalid("altup_active_idx", fmt::format("in [0, {})", n));
  OG_ASSIGN_OR_RETURN(std::optional<double> coef_clip, number_or_null(c, "altup_coef_clip", 120.0));
  OG_ASSIGN_OR_RETURN(bool correct_scale, t.get_bool("altup_correct_scale", true));
  OG_ASSIGN_OR_RETURN(int64_t laurel_rank, t.get_int("laurel_rank", 64));
  OG_ASSIGN_OR_RETURN(std::optional<double> final_cap, number_or_null(c, "final_logit_softcapping", 30.0));
  if (final_cap && !(*final_cap > 0)) return t.invalid("final_logit_softcapping", "a positive number or null");

  OG_ASSIGN_OR_RETURN(std::string mp, gemma_n_prefix(c, ckpt));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* embed, float_tensor(ckpt, mp + "embed_tokens.weight", {V, H}));
  OG_ASSIGN_OR_RETURN(DType wdt, weight_dtype(c, *embed, options));
  const Numerics nu{options.float32_activations};
  // Constants Gemma3n holds as float32 tensors and casts to the activation dtype.
  const double normalizer = float32_constant_in(std::sqrt(static_cast<double>(H)), wdt);
  const PleScales ple{.embed = float32_constant_in(std::sqrt(static_cast<double>(P)), wdt),
                      .projection = float32_constant_in(std::pow(static_cast<double>(H), -0.5), wdt),
                      .input = float32_constant_in(1.0 / std::sqrt(2.0), wdt)};
  const double router_scale = float32_constant_in(1.0 / static_cast<double>(H), wdt);
  const double magnitude_eps = float32_constant_in(1e-5, wdt);

  // Token ids. Gemma3nTextModel looks every id up in both tables. Gemma3nModel (the wrapper)
  // looks ids outside [0, vocab_size_per_layer_input) up as 0 in the per-layer table and
  // replaces the embedding of vision / audio ids by embed_vision / embed_audio.
  std::vector<int32_t> ids(tokens.begin(), tokens.end()), table_ids = ids;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= V)
      return bad_input("token {} (position {}) is outside the vocabulary [0, {}) of '{}'", ids[i], i, V, embed->name);
    if (ids[i] < vps) continue;
    if (!c.is_wrapped)
      return bad_input("token {} (position {}) is outside the per-layer embedding table [0, {}) "
                       "(vocab_size_per_layer_input); Gemma3nForCausalLM cannot embed it",
                       ids[i], i, vps);
    table_ids[i] = 0;
  }
  OG_ASSIGN_OR_RETURN(Mat x0, embed_rows(*embed, ids));  // [T, H]
  for (double& v : x0.v) v *= normalizer;
  nu.settle(x0);
  if (c.is_wrapped) {
    OG_ASSIGN_OR_RETURN(MultimodalVocab vision, multimodal_vocab(c, "vision", 262144));
    OG_ASSIGN_OR_RETURN(MultimodalVocab audio, multimodal_vocab(c, "audio", 262272));
    const std::string root = mp.rfind("language_model.", 0) == 0 ? "" : "model.";
    for (size_t i = 0; i < ids.size(); ++i) {
      const MultimodalVocab* m = ids[i] >= audio.offset                             ? &audio
                                 : ids[i] >= vision.offset && ids[i] < audio.offset ? &vision
                                                                                    : nullptr;
      // A checkpoint saved without the towers (text-only) embeds these ids with the text
      // table, as the exporter does (Gemma3nForCausalLM's behaviour).
      if (m == nullptr || ckpt.find(root + "embed_" + m->name + ".embedding.weight") == nullptr) continue;
      const int64_t row = ids[i] - m->offset;
      if (row >= m->size)
        return bad_input("token {} (position {}) is past the {} vocabulary [{}, {})", ids[i], i, m->name, m->offset,
                         m->offset + m->size);
      OG_ASSIGN_OR_RETURN(Mat e, multimodal_embedding(ckpt, root + "embed_" + m->name + ".", *m, row, H, nu));
      for (int64_t h = 0; h < H; ++h) x0.at(static_cast<int64_t>(i), h) = e.at(0, h);
    }
  }
  OG_ASSIGN_OR_RETURN(Mat pli, gemma_n_per_layer_inputs(ckpt, mp, table_ids, vps, x0, L, P, eps, ple, nu));

  // AltUp streams: stream 0 the embeddings, stream i an altup_projections[i-1] of them at their RMS.
  std::vector<Mat> s;
  s.push_back(x0);
  {
    const std::vector<double> target = rms_of_rows(x0, nu);
    for (int64_t i = 1; i < n; ++i) {
      OG_ASSIGN_OR_RETURN(const hf::TensorView* w,
                          float_tensor(ckpt, mp + "altup_projections." + std::to_string(i - 1) + ".weight", {H, H}));
      Mat p = linear(x0, *w);
      nu.settle(p);
      to_magnitude(p, target, magnitude_eps, nu);
      s.push_back(std::move(p));
    }
  }

  std::vector<KvState> kv(static_cast<size_t>(L));
  constexpr NormStyle kW = NormStyle::kWeight;
  for (int64_t l = 0; l < L; ++l) {
    const GemmaNLayer& layer = plan.layers[static_cast<size_t>(l)];
    const std::string pre = mp + "layers." + std::to_string(l) + ".";
    auto norm = [&](const std::string& name) { return vector_f64(ckpt, pre + name + ".weight", H); };
    OG_ASSIGN_OR_RETURN(GemmaNAttentionWeights aw, load_gemma_n_attention(ckpt, pre + "self_attn.", layer,
                                                                          layer.kv_source == l, heads, H, bias));
    OG_ASSIGN_OR_RETURN(GemmaNMlpWeights mw, load_gemma_n_mlp(ckpt, pre + "mlp.", layer.intermediate, H));
    OG_ASSIGN_OR_RETURN(std::vector<double> input_ln, norm("input_layernorm"));
    OG_ASSIGN_OR_RETURN(std::vector<double> post_attn_ln, norm("post_attention_layernorm"));
    OG_ASSIGN_OR_RETURN(std::vector<double> pre_ff_ln, norm("pre_feedforward_layernorm"));
    OG_ASSIGN_OR_RETURN(std::vector<double> post_ff_ln, norm("post_feedforward_layernorm"));
    AltUpWeights au;
    OG_ASSIGN_OR_RETURN(au.correct_output_scale, vector_f64(ckpt, pre + "altup.correct_output_scale", H));
    OG_ASSIGN_OR_RETURN(au.router_norm, norm("altup.router_norm"));
    OG_ASSIGN_OR_RETURN(au.correction, float_tensor(ckpt, pre + "altup.correction_coefs.weight", {n, n}));
    OG_ASSIGN_OR_RETURN(au.prediction, float_tensor(ckpt, pre + "altup.prediction_coefs.weight", {n * n, n}));
    OG_ASSIGN_OR_RETURN(au.router, float_tensor(ckpt, pre + "altup.modality_router.weight", {n, H}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* laurel_left,
                        float_tensor(ckpt, pre + "laurel.linear_left.weight", {laurel_rank, H}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* laurel_right,
                        float_tensor(ckpt, pre + "laurel.linear_right.weight", {H, laurel_rank}));
    OG_ASSIGN_OR_RETURN(std::vector<double> laurel_norm, norm("laurel.post_laurel_norm"));
    const std::vector<double>& inv_freq = layer.sliding ? ropes.sliding : ropes.full;
    std::optional<double> multiplier;
    if (layer.sparsity > 0) multiplier = gaussian_sparsity_multiplier(layer.sparsity, wdt);

    std::vector<Mat> pred = altup_predict(s, active, au, eps, router_scale, nu);
    const Mat& a = pred[static_cast<size_t>(active)];
    Mat normed = rms_norm(a, input_ln, eps, kW, H);
    nu.settle(normed);
    // LAuReL: normed + post_laurel_norm(linear_right(linear_left(normed))).
    Mat laurel = linear(normed, *laurel_left);
    nu.settle(laurel);
    laurel = linear(laurel, *laurel_right);
    nu.settle(laurel);
    laurel = rms_norm(laurel, laurel_norm, eps, kW, H);
    nu.settle(laurel);
    add_inplace(laurel, normed);
    nu.settle(laurel);

    Mat attn = gemma_n_attention(normed, aw, layer, l, heads, inv_freq, eps, kv, nu);
    attn = rms_norm(attn, post_attn_ln, eps, kW, H);
    nu.settle(attn);
    Mat y = a;  // attn_gated = active_prediction + attn
    add_inplace(y, attn);
    nu.settle(y);
    add_inplace(y, laurel);
    nu.settle(y);
    for (double& v : y.v) v /= std::sqrt(2.0);  // (attn_gated + laurel_output) / math.sqrt(2)
    nu.settle(y);

    Mat h = rms_norm(y, pre_ff_ln, eps, kW, H);
    nu.settle(h);
    Mat m = gemma_n_mlp(h, mw, act, multiplier ? &*multiplier : nullptr, nu);
    m = rms_norm(m, post_ff_ln, eps, kW, H);
    nu.settle(m);
    add_inplace(y, m);
    nu.settle(y);

    std::vector<Mat> corrected = altup_correct(pred, y, active, au, coef_clip, eps, router_scale, nu);
    Mat first = corrected[static_cast<size_t>(active)];
    if (correct_scale) {
      for (int64_t r = 0; r < first.rows; ++r)
        for (int64_t k = 0; k < H; ++k) first.at(r, k) *= au.correct_output_scale[static_cast<size_t>(k)];
      nu.settle(first);
    }
    OG_ASSIGN_OR_RETURN(Mat e, gemma_n_per_layer_block(ckpt, pre, first, pli, l, P, act, eps, nu));
    for (int64_t i = 1; i < n; ++i) {  // corrected_predictions[1:] += first_prediction
      add_inplace(corrected[static_cast<size_t>(i)], e);
      nu.settle(corrected[static_cast<size_t>(i)]);
    }
    s = std::move(corrected);
  }

  // Back to one stream: stream 0 and the altup_unembed_projections of the others at stream 0's
  // RMS, averaged.
  Mat x = s[0];
  {
    const std::vector<double> target = rms_of_rows(s[0], nu);
    for (int64_t i = 1; i < n; ++i) {
      OG_ASSIGN_OR_RETURN(const hf::TensorView* w, float_tensor(ckpt, mp + "altup_unembed_projections." +
                                                                          std::to_string(i - 1) + ".weight",
                                                                {H, H}));
      Mat p = linear(s[static_cast<size_t>(i)], *w);
      nu.settle(p);
      to_magnitude(p, target, magnitude_eps, nu);
      add_inplace(x, p);
    }
    for (double& v : x.v) v /= static_cast<double>(n);
    nu.settle(x);
  }
  return gemma_n_logits(x, {.ckpt = ckpt, .config = c, .embed = *embed, .norm_prefix = mp, .eps = eps,
                            .final_cap = final_cap, .numerics = nu});
}

Result<std::vector<int64_t>> gemma3n_windows(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(GemmaNPlan plan, gemma3n_plan(c));
  return plan_windows(plan);
}

Result<std::vector<int64_t>> gemma3n_kv_sources(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(GemmaNPlan plan, gemma3n_plan(c));
  return plan_kv_sources(plan);
}

}  // namespace

// Model types and transformers' Gemma3nTextConfig defaults for keys a text_config may omit.
constexpr ModelType kGemma3nTypes[] = {{"gemma3n", true}, {"gemma3n_text", false}};
const Family kGemma3nFamily{"gemma3n", kGemma3nTypes, true, R"({
    "head_dim": 256, "num_key_value_heads": 2, "num_kv_shared_layers": 15, "hidden_activation": "gelu_pytorch_tanh",
    "rms_norm_eps": 1e-6, "sliding_window": 512})",
                            &gemma3n_forward, &gemma3n_windows, &gemma3n_kv_sources};

}  // namespace og::reference
