#include "reference/gemma_n.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>

#include "base/check.h"
#include "base/special_functions.h"
#include "reference/weights.h"

namespace og::reference {

std::vector<double> proportional_inv_freq(double theta, int64_t head_dim, double partial_rotary_factor,
                                          double factor) {
  // rope_angles = int(rope_proportion * head_dim // 2): Python's // on a float floors.
  const auto rope_angles =
      static_cast<int64_t>(std::floor(partial_rotary_factor * static_cast<double>(head_dim) / 2.0));
  std::vector<double> inv(static_cast<size_t>(head_dim / 2), 0.0);
  for (int64_t i = 0; i < rope_angles && i < head_dim / 2; ++i)
    inv[static_cast<size_t>(i)] = 1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(head_dim));
  for (double& f : inv) f /= factor;
  return inv;
}

Result<std::vector<int64_t>> kv_sources(const std::vector<std::string>& layer_types, int64_t num_kv_shared_layers,
                                        const std::string& what) {
  const auto L = static_cast<int64_t>(layer_types.size());
  const int64_t first = L - num_kv_shared_layers;
  std::vector<int64_t> source(static_cast<size_t>(L));
  for (int64_t l = 0; l < L; ++l) {
    source[static_cast<size_t>(l)] = l;
    if (!(l >= first && first > 0)) continue;
    int64_t donor = -1;
    for (int64_t j = first - 1; j >= 0 && donor < 0; --j)
      if (layer_types[static_cast<size_t>(j)] == layer_types[static_cast<size_t>(l)]) donor = j;
    if (donor < 0)
      return bad_input("{}: layer {} is KV-shared (num_kv_shared_layers = {}) but no layer before {} is {}, so it has "
                       "no k/v to read",
                       what, l, num_kv_shared_layers, first, layer_types[static_cast<size_t>(l)]);
    source[static_cast<size_t>(l)] = donor;
  }
  return source;
}

namespace {

Status check_layer_type(const hf::ModelConfig& c, size_t i, const std::string& type) {
  if (type == "full_attention" || type == "sliding_attention") return Status::ok();
  return unsupported("{}: field '{}[{}]' = '{}' is not supported by the reference (supported: full_attention, "
                     "sliding_attention)",
                     c.path, c.text_fields().field_name("layer_types"), i, type);
}

// layer_types from config.json, else every `period`-th layer full (Gemma4: 6, Gemma3n: 5).
Result<std::vector<std::string>> layer_types_for(const hf::ModelConfig& c, int64_t period) {
  std::vector<std::string> types = c.layer_types;
  if (types.empty())
    for (int64_t i = 0; i < c.num_hidden_layers; ++i)
      types.push_back((i + 1) % period == 0 ? "full_attention" : "sliding_attention");
  for (size_t i = 0; i < types.size(); ++i) OG_TRY(check_layer_type(c, i, types[i]));
  return types;
}

// A field that is absent (class default), null or a number.
struct Field {
  bool present = false;
  bool null = false;
};
Field field_state(const hf::ModelConfig& c, const std::string& key) {
  if (!c.text.contains(key)) return {};
  return {true, c.text.at(key).is_null()};
}

Result<int64_t> window_of(const hf::ModelConfig& c, size_t layer, bool sliding, std::optional<double> window) {
  if (!sliding) return int64_t{0};
  if (!window)
    return unsupported("{}: layer {} is sliding_attention but field '{}' is null", c.path, layer,
                       c.text_fields().field_name("sliding_window"));
  if (!(*window >= 1)) return c.text_fields().invalid("sliding_window", "a positive integer");
  return static_cast<int64_t>(*window);
}

// Gemma4TextConfig.use_bidirectional_attention: null or "vision" (bidirectional among image
// tokens only, causal for text) are causal here; "all" is not implemented.
Status gemma4_require_causal(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  if (t.has("use_bidirectional_attention")) {
    const hf::Json& v = c.text.at("use_bidirectional_attention");
    if (v.is_string() && v.get<std::string>() == "vision") {
      // text tokens stay causal
    } else if (v.is_string() && v.get<std::string>() == "all") {
      return unsupported("{}: field '{}' = \"all\" (bidirectional attention) is not supported by the reference",
                         c.path, t.field_name("use_bidirectional_attention"));
    } else if (v.is_boolean() && !v.get<bool>()) {
      // false: causal
    } else {
      return t.invalid("use_bidirectional_attention", "null, \"vision\" or \"all\"");
    }
  }
  OG_ASSIGN_OR_RETURN(bool causal, t.get_bool("is_causal", true));
  if (!causal)
    return unsupported("{}: field '{}' = false (non-causal attention) is not supported by the reference", c.path,
                       t.field_name("is_causal"));
  return Status::ok();
}

// per_layer_config (transformers >= 5.15): {"<layer>": {"head_dim": .., "num_key_value_heads": ..}}.
Status apply_per_layer_config(const hf::ModelConfig& c, std::vector<GemmaNLayer>& layers) {
  const hf::JsonFields t = c.text_fields();
  const hf::Json& plc = c.text.at("per_layer_config");
  if (!plc.is_object()) return t.invalid("per_layer_config", "an object keyed by layer index");
  for (const auto& [key, value] : plc.items()) {
    int64_t idx = -1;
    try {
      size_t used = 0;
      idx = std::stoll(key, &used);
      if (used != key.size()) idx = -1;
    } catch (...) {
      idx = -1;
    }
    if (idx < 0 || idx >= static_cast<int64_t>(layers.size()))
      return t.invalid("per_layer_config", fmt::format("keys that are layer indices below {} (found '{}')",
                                                       layers.size(), key));
    if (!value.is_object()) return t.invalid("per_layer_config." + key, "an object");
    const hf::JsonFields f(value, c.path, t.field_name("per_layer_config." + key + "."));
    for (const auto& [name, v] : value.items()) {
      (void)v;
      GemmaNLayer& L = layers[static_cast<size_t>(idx)];
      if (name == "head_dim") {
        OG_ASSIGN_OR_RETURN(L.head_dim, f.get_int(name));
      } else if (name == "num_key_value_heads") {
        OG_ASSIGN_OR_RETURN(L.kv_heads, f.get_int(name));
      } else {
        return unsupported("{}: field '{}' is not supported by the reference (per_layer_config may set head_dim "
                           "and num_key_value_heads)",
                           c.path, f.field_name(name));
      }
    }
  }
  return Status::ok();
}

Status check_heads(const hf::ModelConfig& c, const std::vector<GemmaNLayer>& layers) {
  for (size_t i = 0; i < layers.size(); ++i) {
    const GemmaNLayer& L = layers[i];
    if (L.head_dim <= 0 || L.head_dim % 2 != 0)
      return bad_input("{}: layer {} has head_dim {}; expected a positive even number", c.path, i, L.head_dim);
    if (L.kv_heads <= 0 || c.num_attention_heads % L.kv_heads != 0)
      return bad_input("{}: layer {} has {} key/value heads, not a divisor of num_attention_heads ({})", c.path, i,
                       L.kv_heads, c.num_attention_heads);
    const GemmaNLayer& D = layers[static_cast<size_t>(L.kv_source)];
    if (D.head_dim != L.head_dim || D.kv_heads != L.kv_heads)
      return bad_input("{}: KV-shared layer {} ({} heads of {}) cannot read the k/v of layer {} ({} heads of {})",
                       c.path, i, L.kv_heads, L.head_dim, L.kv_source, D.kv_heads, D.head_dim);
  }
  return Status::ok();
}

}  // namespace

Result<GemmaNPlan> gemma4_plan(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  OG_TRY(gemma4_require_causal(c));
  if (c.text.contains("intermediate_size") && c.text.at("intermediate_size").is_array())
    return unsupported("{}: field '{}' is a list; Gemma4TextConfig takes one intermediate_size for all layers",
                       c.path, t.field_name("intermediate_size"));
  GemmaNPlan p;
  OG_ASSIGN_OR_RETURN(p.layer_types, layer_types_for(c, 6));
  // Gemma4TextConfig.__post_init__: "Last layer must use `full_attention`" (forced, with a warning).
  if (!p.layer_types.empty()) p.layer_types.back() = "full_attention";
  OG_ASSIGN_OR_RETURN(std::vector<int64_t> source, kv_sources(p.layer_types, c.num_kv_shared_layers, c.path));

  OG_ASSIGN_OR_RETURN(bool k_eq_v, t.get_bool("attention_k_eq_v", false));
  OG_ASSIGN_OR_RETURN(bool double_wide, t.get_bool("use_double_wide_mlp", false));
  const Field ghd = field_state(c, "global_head_dim");
  int64_t global_head_dim = 512;  // Gemma4TextConfig default
  if (ghd.present) {
    if (ghd.null) {
      global_head_dim = 0;
    } else {
      OG_ASSIGN_OR_RETURN(global_head_dim, t.get_int("global_head_dim"));
    }
  }
  OG_ASSIGN_OR_RETURN(std::optional<int64_t> global_kv, t.get_optional_int("num_global_key_value_heads"));
  OG_ASSIGN_OR_RETURN(std::optional<double> window, number_or_null(c, "sliding_window", std::nullopt));
  const bool per_layer_config = t.has("per_layer_config");

  const int64_t L = c.num_hidden_layers;
  const int64_t first_shared = L - c.num_kv_shared_layers;
  for (int64_t i = 0; i < L; ++i) {
    GemmaNLayer layer;
    layer.sliding = p.layer_types[static_cast<size_t>(i)] == "sliding_attention";
    OG_ASSIGN_OR_RETURN(layer.window, window_of(c, static_cast<size_t>(i), layer.sliding, window));
    layer.kv_source = source[static_cast<size_t>(i)];
    layer.k_eq_v = k_eq_v && !layer.sliding;  // use_alternative_attention
    layer.head_dim = c.head_dim;
    layer.kv_heads = c.num_key_value_heads;
    if (!per_layer_config && !layer.sliding) {
      if (global_head_dim > 0) layer.head_dim = global_head_dim;
      if (layer.k_eq_v && global_kv) layer.kv_heads = *global_kv;
    }
    const bool shared = i >= first_shared && first_shared > 0;  // Gemma4TextMLP
    layer.intermediate = c.intermediate_size[static_cast<size_t>(i)] * (double_wide && shared ? 2 : 1);
    p.layers.push_back(layer);
  }
  if (per_layer_config) OG_TRY(apply_per_layer_config(c, p.layers));
  OG_TRY(check_heads(c, p.layers));
  return p;
}

Result<GemmaNPlan> gemma3n_plan(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  OG_TRY(require_causal(c));
  GemmaNPlan p;
  OG_ASSIGN_OR_RETURN(p.layer_types, layer_types_for(c, 5));
  const int64_t L = c.num_hidden_layers;
  // Gemma3nTextConfig's defaults differ from the generic ones ModelConfig applies.
  OG_ASSIGN_OR_RETURN(int64_t head_dim, t.get_int("head_dim"));
  OG_ASSIGN_OR_RETURN(int64_t kv_heads, t.get_int("num_key_value_heads"));
  OG_ASSIGN_OR_RETURN(int64_t num_shared, t.get_int("num_kv_shared_layers"));
  if (num_shared < 0 || num_shared >= L)
    return bad_input("{}: field '{}' = {} (the default when absent is 15) leaves no layer computing k/v for {} "
                     "layers; transformers cannot build this model",
                     c.path, t.field_name("num_kv_shared_layers"), num_shared, L);
  OG_ASSIGN_OR_RETURN(std::vector<int64_t> source, kv_sources(p.layer_types, num_shared, c.path));
  OG_ASSIGN_OR_RETURN(std::optional<double> window, number_or_null(c, "sliding_window", std::nullopt));

  std::vector<double> sparsity(static_cast<size_t>(L), 0.0);
  if (t.has("activation_sparsity_pattern")) {
    if (!c.text.at("activation_sparsity_pattern").is_array())
      return t.invalid("activation_sparsity_pattern", fmt::format("a list of {} numbers", L));
    OG_ASSIGN_OR_RETURN(sparsity, t.get_double_list("activation_sparsity_pattern"));
    if (static_cast<int64_t>(sparsity.size()) != L)
      return t.invalid("activation_sparsity_pattern", fmt::format("a list of {} numbers (one per layer)", L));
    for (double s : sparsity)
      if (!(s >= 0 && s < 1)) return t.invalid("activation_sparsity_pattern", "numbers in [0, 1)");
  } else if (L > 10) {
    for (int64_t i = 0; i < 10; ++i) sparsity[static_cast<size_t>(i)] = 0.95;
  }
  for (int64_t i = 0; i < L; ++i) {
    GemmaNLayer layer;
    layer.sliding = p.layer_types[static_cast<size_t>(i)] == "sliding_attention";
    OG_ASSIGN_OR_RETURN(layer.window, window_of(c, static_cast<size_t>(i), layer.sliding, window));
    layer.kv_source = source[static_cast<size_t>(i)];
    layer.head_dim = head_dim;
    layer.kv_heads = kv_heads;
    layer.intermediate = c.intermediate_size[static_cast<size_t>(i)];
    layer.sparsity = sparsity[static_cast<size_t>(i)];
    p.layers.push_back(layer);
  }
  OG_TRY(check_heads(c, p.layers));
  return p;
}

Mat rms_norm_unit(const Mat& x, double eps, int64_t group) {
  OG_CHECK(group > 0 && x.cols % group == 0);
  Mat y(x.rows, x.cols);
  for (int64_t t = 0; t < x.rows; ++t) {
    for (int64_t g0 = 0; g0 < x.cols; g0 += group) {
      const double* xs = x.row(t) + g0;
      double mean_sq = 0;
      for (int64_t i = 0; i < group; ++i) mean_sq += xs[i] * xs[i];
      mean_sq /= static_cast<double>(group);
      const double inv_rms = 1.0 / std::sqrt(mean_sq + eps);
      for (int64_t i = 0; i < group; ++i) y.row(t)[g0 + i] = xs[i] * inv_rms;
    }
  }
  return y;
}

double gaussian_sparsity_multiplier(double sparsity, DType activation_dtype) {
  OG_CHECK(sparsity > 0 && sparsity < 1);
  // torch.distributions.Normal(0, 1).icdf(v) = 0 + 1 * erfinv(2 v - 1) * sqrt(2), on a float32 v.
  const float v = static_cast<float>(sparsity);
  const float two_v_minus_1 = 2.0f * v - 1.0f;
  const auto e = static_cast<float>(erfinv(static_cast<double>(two_v_minus_1)));
  const auto m = static_cast<float>(static_cast<double>(e) * std::numbers::sqrt2);
  return round_to_dtype(static_cast<double>(m), activation_dtype);
}

void gaussian_topk(Mat& x, double multiplier, const Numerics& numerics) {
  for (int64_t t = 0; t < x.rows; ++t) {
    double* r = x.row(t);
    double mean = 0;
    for (int64_t i = 0; i < x.cols; ++i) mean += r[i];
    mean /= static_cast<double>(x.cols);
    double var = 0;
    for (int64_t i = 0; i < x.cols; ++i) var += (r[i] - mean) * (r[i] - mean);
    var /= static_cast<double>(x.cols);  // unbiased=False
    const double cutoff = numerics.settle(numerics.settle(mean) + numerics.settle(std::sqrt(var)) * multiplier);
    for (int64_t i = 0; i < x.cols; ++i) r[i] = std::max(r[i] - cutoff, 0.0);
  }
  numerics.settle(x);
}

Result<std::vector<double>> gemma_n_logits(const Mat& x, const LogitsHead& h) {
  const int64_t H = h.config.hidden_size;
  OG_ASSIGN_OR_RETURN(std::vector<double> final_norm, vector_f64(h.ckpt, h.norm_prefix + "norm.weight", H));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* head,
                      output_head(h.ckpt, h.config, h.embed, {"lm_head.weight", "language_model.lm_head.weight"}));
  Mat hn = rms_norm(x, final_norm, h.eps, NormStyle::kWeight, H);
  h.numerics.settle(hn);
  Mat logits = linear(hn, *head);  // [T, V]
  h.numerics.settle(logits);
  if (h.final_cap)
    for (double& v : logits.v) v = softcap(v, *h.final_cap);
  h.numerics.settle(logits);
  return std::move(logits.v);
}

std::vector<int64_t> plan_kv_sources(const GemmaNPlan& plan) {
  std::vector<int64_t> s;
  for (const GemmaNLayer& L : plan.layers) s.push_back(L.kv_source);
  return s;
}

std::vector<int64_t> plan_windows(const GemmaNPlan& plan) {
  std::vector<int64_t> w;
  for (const GemmaNLayer& layer : plan.layers) w.push_back(layer.window);
  return w;
}

double float32_constant_in(double value, DType dtype) {
  return round_to_dtype(static_cast<double>(static_cast<float>(value)), dtype);
}

Result<std::string> gemma_n_prefix(const hf::ModelConfig& c, const hf::Checkpoint& ckpt) {
  for (const char* prefix : {"model.language_model.", "language_model.model.", "model."})
    if (ckpt.find(std::string(prefix) + "embed_tokens.weight") != nullptr) return std::string(prefix);
  return bad_input("{}: no embedding tensor for {} (looked for model.language_model.embed_tokens.weight, "
                   "language_model.model.embed_tokens.weight, model.embed_tokens.weight)",
                   ckpt.dir(), c.text_model_type);
}

Result<GemmaNAttentionWeights> load_gemma_n_attention(const hf::Checkpoint& ckpt, const std::string& at,
                                                      const GemmaNLayer& layer, bool own_kv, int64_t heads,
                                                      int64_t hidden, bool bias) {
  const int64_t D = layer.head_dim, q_out = heads * D, kv_out = layer.kv_heads * D;
  GemmaNAttentionWeights w;
  OG_ASSIGN_OR_RETURN(w.q, float_tensor(ckpt, at + "q_proj.weight", {q_out, hidden}));
  OG_ASSIGN_OR_RETURN(w.o, float_tensor(ckpt, at + "o_proj.weight", {hidden, q_out}));
  OG_ASSIGN_OR_RETURN(w.q_norm, vector_f64(ckpt, at + "q_norm.weight", D));
  if (bias) {
    OG_ASSIGN_OR_RETURN(w.q_bias, float_tensor(ckpt, at + "q_proj.bias", {q_out}));
    OG_ASSIGN_OR_RETURN(w.o_bias, float_tensor(ckpt, at + "o_proj.bias", {hidden}));
  }
  if (!own_kv) return w;
  OG_ASSIGN_OR_RETURN(w.k, float_tensor(ckpt, at + "k_proj.weight", {kv_out, hidden}));
  OG_ASSIGN_OR_RETURN(w.k_norm, vector_f64(ckpt, at + "k_norm.weight", D));
  if (bias) { OG_ASSIGN_OR_RETURN(w.k_bias, float_tensor(ckpt, at + "k_proj.bias", {kv_out})); }
  if (!layer.k_eq_v) {
    OG_ASSIGN_OR_RETURN(w.v, float_tensor(ckpt, at + "v_proj.weight", {kv_out, hidden}));
    if (bias) { OG_ASSIGN_OR_RETURN(w.v_bias, float_tensor(ckpt, at + "v_proj.bias", {kv_out})); }
  }
  return w;
}

Mat gemma_n_attention(const Mat& x, const GemmaNAttentionWeights& w, const GemmaNLayer& layer, int64_t l,
                      int64_t heads, std::span<const double> inv_freq, double eps, std::vector<KvState>& kv,
                      const Numerics& n) {
  const int64_t D = layer.head_dim;
  Mat q = linear(x, *w.q, w.q_bias);
  n.settle(q);
  q = rms_norm(q, w.q_norm, eps, NormStyle::kWeight, D);
  n.settle(q);
  apply_rope(q, heads, D, inv_freq);
  n.settle(q);
  if (layer.kv_source == l) {
    OG_CHECK(w.k != nullptr && (w.v != nullptr || layer.k_eq_v));
    Mat k = linear(x, *w.k, w.k_bias);
    n.settle(k);
    // attention_k_eq_v: value_states = key_states as k_proj returns them, before k_norm/RoPE.
    Mat v = w.v != nullptr ? linear(x, *w.v, w.v_bias) : k;
    n.settle(v);
    k = rms_norm(k, w.k_norm, eps, NormStyle::kWeight, D);
    n.settle(k);
    apply_rope(k, layer.kv_heads, D, inv_freq);
    n.settle(k);
    v = rms_norm_unit(v, eps, D);
    n.settle(v);
    kv[static_cast<size_t>(l)] = KvState{std::move(k), std::move(v)};
  }
  const KvState& s = kv[static_cast<size_t>(layer.kv_source)];
  OG_CHECK(s.k.rows == x.rows);  // the donor ran earlier in this forward
  Mat a = attention(q, s.k, s.v,
                    AttentionParams{.n_heads = heads, .n_kv_heads = layer.kv_heads, .head_dim = D, .scale = 1.0,
                                    .softcap = 0, .window = layer.window});
  n.settle(a);
  Mat o = linear(a, *w.o, w.o_bias);
  n.settle(o);
  return o;
}

Result<GemmaNMlpWeights> load_gemma_n_mlp(const hf::Checkpoint& ckpt, const std::string& mlp, int64_t I,
                                          int64_t H) {
  GemmaNMlpWeights w;
  OG_ASSIGN_OR_RETURN(w.gate, float_tensor(ckpt, mlp + "gate_proj.weight", {I, H}));
  OG_ASSIGN_OR_RETURN(w.up, float_tensor(ckpt, mlp + "up_proj.weight", {I, H}));
  OG_ASSIGN_OR_RETURN(w.down, float_tensor(ckpt, mlp + "down_proj.weight", {H, I}));
  return w;
}

Mat gemma_n_mlp(const Mat& x, const GemmaNMlpWeights& w, Activation act, const double* sparsity_multiplier,
                const Numerics& n) {
  Mat gate = linear(x, *w.gate);
  n.settle(gate);
  if (sparsity_multiplier != nullptr) gaussian_topk(gate, *sparsity_multiplier, n);
  for (double& g : gate.v) g = activate(act, g);
  n.settle(gate);
  Mat up = linear(x, *w.up);
  n.settle(up);
  for (size_t i = 0; i < gate.v.size(); ++i) gate.v[i] *= up.v[i];
  n.settle(gate);
  Mat down = linear(gate, *w.down);
  n.settle(down);
  return down;
}

Result<Mat> gemma_n_per_layer_inputs(const hf::Checkpoint& ckpt, const std::string& mp,
                                     std::span<const int32_t> table_tokens, int64_t table_vocab, const Mat& embeds,
                                     int64_t layers, int64_t P, double eps, const PleScales& s, const Numerics& n) {
  const int64_t H = embeds.cols, LP = layers * P;
  OG_ASSIGN_OR_RETURN(const hf::TensorView* table, float_tensor(ckpt, mp + "embed_tokens_per_layer.weight",
                                                                {table_vocab, LP}));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* proj_w,
                      float_tensor(ckpt, mp + "per_layer_model_projection.weight", {LP, H}));
  OG_ASSIGN_OR_RETURN(std::vector<double> norm_w, vector_f64(ckpt, mp + "per_layer_projection_norm.weight", P));
  OG_ASSIGN_OR_RETURN(Mat tok, embed_rows(*table, table_tokens));  // [T, L*P]
  for (double& v : tok.v) v *= s.embed;
  n.settle(tok);
  Mat proj = linear(embeds, *proj_w);  // [T, L*P]
  for (double& v : proj.v) v *= s.projection;
  n.settle(proj);
  proj = rms_norm(proj, norm_w, eps, NormStyle::kWeight, P);
  n.settle(proj);
  for (size_t i = 0; i < proj.v.size(); ++i) proj.v[i] = (proj.v[i] + tok.v[i]) * s.input;
  n.settle(proj);
  return proj;
}

Result<Mat> gemma_n_per_layer_block(const hf::Checkpoint& ckpt, const std::string& pre, const Mat& x,
                                    const Mat& pli, int64_t l, int64_t P, Activation act, double eps,
                                    const Numerics& n) {
  const int64_t H = x.cols;
  OG_ASSIGN_OR_RETURN(const hf::TensorView* gate_w, float_tensor(ckpt, pre + "per_layer_input_gate.weight", {P, H}));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* proj_w, float_tensor(ckpt, pre + "per_layer_projection.weight", {H, P}));
  OG_ASSIGN_OR_RETURN(std::vector<double> norm_w, vector_f64(ckpt, pre + "post_per_layer_input_norm.weight", H));
  Mat g = linear(x, *gate_w);  // [T, P]
  n.settle(g);
  for (double& v : g.v) v = activate(act, v);
  n.settle(g);
  for (int64_t t = 0; t < g.rows; ++t)
    for (int64_t i = 0; i < P; ++i) g.at(t, i) *= pli.at(t, l * P + i);
  n.settle(g);
  Mat p = linear(g, *proj_w);  // [T, H]
  n.settle(p);
  p = rms_norm(p, norm_w, eps, NormStyle::kWeight, H);
  n.settle(p);
  return p;
}

}  // namespace og::reference
