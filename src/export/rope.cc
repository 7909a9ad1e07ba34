#include "export/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace og::exporter {
namespace {

struct RopeParams {
  std::string type = "default";
  double theta = 10000.0;
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  double original_max = 8192.0;
  double partial_rotary_factor = 1.0;
  // yarn
  std::optional<double> yarn_factor;  // absent: max_position_embeddings / original_max
  std::optional<double> attention_factor, mscale, mscale_all_dim;
  double beta_fast = 32.0, beta_slow = 1.0;
  bool truncate = true;
  // longrope: one factor per frequency pair; original_max_position_embeddings may also come
  // from the top level of config.json (one family's spelling), `top_original_max`.
  std::vector<double> short_factor, long_factor;
  std::optional<double> longrope_factor, top_original_max;
  bool original_in_dict = false;
  std::string where;  // field path for messages
};

// LongRoPE's short_factor / long_factor: one positive number per frequency pair.
Result<std::vector<double>> factor_list(const hf::JsonFields& f, const std::string& key) {
  OG_ASSIGN_OR_RETURN(std::vector<double> list, f.get_double_list(key));
  if (std::ranges::any_of(list, [](double x) { return !(x > 0) || !std::isfinite(x); }))
    return f.invalid(key, "a list of positive numbers");
  return list;
}

Status read_scaling(const hf::JsonFields& f, RopeParams& p) {
  OG_ASSIGN_OR_RETURN(std::string type, f.get_string("rope_type", ""));
  if (type.empty()) { OG_ASSIGN_OR_RETURN(type, f.get_string("type", "default")); }
  p.type = type;
  OG_ASSIGN_OR_RETURN(p.theta, f.get_double("rope_theta", p.theta));
  OG_ASSIGN_OR_RETURN(p.partial_rotary_factor, f.get_double("partial_rotary_factor", p.partial_rotary_factor));
  if (type == "default") return Status::ok();
  if (type == "linear") {
    OG_ASSIGN_OR_RETURN(p.factor, f.get_double("factor"));
    return Status::ok();
  }
  if (type == "proportional") {
    OG_ASSIGN_OR_RETURN(p.factor, f.get_double("factor", 1.0));
    return Status::ok();
  }
  if (type == "llama3") {
    OG_ASSIGN_OR_RETURN(p.factor, f.get_double("factor"));
    OG_ASSIGN_OR_RETURN(p.low_freq_factor, f.get_double("low_freq_factor"));
    OG_ASSIGN_OR_RETURN(p.high_freq_factor, f.get_double("high_freq_factor"));
    OG_ASSIGN_OR_RETURN(p.original_max, f.get_double("original_max_position_embeddings", p.original_max));
    if (p.high_freq_factor == p.low_freq_factor) return f.invalid("high_freq_factor", "different from low_freq_factor");
    return Status::ok();
  }
  if (type == "yarn") {
    // transformers' _compute_yarn_parameters (v5): factor, else the context ratio;
    // original_max_position_embeddings, else max_position_embeddings (standardize_rope_params);
    // beta_fast/beta_slow `or` 32/1 (so 0 means the default too); truncate defaults to true.
    OG_ASSIGN_OR_RETURN(p.yarn_factor, f.get_optional_double("factor"));
    OG_ASSIGN_OR_RETURN(p.original_max, f.get_double("original_max_position_embeddings", p.original_max));
    OG_ASSIGN_OR_RETURN(p.attention_factor, f.get_optional_double("attention_factor"));
    OG_ASSIGN_OR_RETURN(p.mscale, f.get_optional_double("mscale"));
    OG_ASSIGN_OR_RETURN(p.mscale_all_dim, f.get_optional_double("mscale_all_dim"));
    OG_ASSIGN_OR_RETURN(p.beta_fast, f.get_double("beta_fast", 32.0));
    OG_ASSIGN_OR_RETURN(p.beta_slow, f.get_double("beta_slow", 1.0));
    if (p.beta_fast == 0) p.beta_fast = 32.0;
    if (p.beta_slow == 0) p.beta_slow = 1.0;
    OG_ASSIGN_OR_RETURN(p.truncate, f.get_bool("truncate", true));
    if (p.yarn_factor && !(*p.yarn_factor > 0)) return f.invalid("factor", "positive");
    if (!(p.original_max > 0)) return f.invalid("original_max_position_embeddings", "positive");
    if (!(p.beta_fast > 0) || !(p.beta_slow > 0)) return f.invalid("beta_fast", "beta_fast and beta_slow positive");
    return Status::ok();
  }
  if (type == "longrope") {
    // transformers' _compute_longrope_parameters (v5): inv_freq_i = 1 / (factor_i theta^(2i/d))
    // with the short or the long factors; the attention factor is attention_factor if given,
    // else sqrt(1 + ln s / ln L) for s > 1 (1 otherwise), with L = original_max_position_embeddings
    // and s = factor, else max_position_embeddings / L.
    OG_ASSIGN_OR_RETURN(p.short_factor, factor_list(f, "short_factor"));
    OG_ASSIGN_OR_RETURN(p.long_factor, factor_list(f, "long_factor"));
    OG_ASSIGN_OR_RETURN(p.longrope_factor, f.get_optional_double("factor"));
    OG_ASSIGN_OR_RETURN(p.attention_factor, f.get_optional_double("attention_factor"));
    OG_ASSIGN_OR_RETURN(std::optional<double> original, f.get_optional_double("original_max_position_embeddings"));
    if (original) {
      p.original_max = *original;
      p.original_in_dict = true;
    }
    if (p.longrope_factor && !(*p.longrope_factor > 0)) return f.invalid("factor", "positive");
    if (p.attention_factor && !(*p.attention_factor > 0)) return f.invalid("attention_factor", "positive");
    return Status::ok();
  }
  return unsupported("{}: field '{}' is '{}': offgraph implements rope types default, linear, llama3, proportional, "
                     "yarn and longrope", f.file(), f.field_name("rope_type"), type);
}

// LongRoPE (arXiv 2402.13753) as transformers computes it; see read_scaling.
Result<RopeTable> longrope_table(const RopeParams& p, const hf::JsonFields& t, int64_t dim,
                                 double max_position_embeddings) {
  const double L = p.original_in_dict ? p.original_max : p.top_original_max.value_or(max_position_embeddings);
  if (!(L >= 1) || L > (1 << 30)) return t.invalid("original_max_position_embeddings", "a positive context length");
  const double s = p.longrope_factor ? *p.longrope_factor : max_position_embeddings / L;
  const double af = p.attention_factor ? *p.attention_factor : s <= 1 ? 1.0 : std::sqrt(1 + std::log(s) / std::log(L));
  const size_t pairs = static_cast<size_t>(dim / 2);
  for (const auto* list : {&p.short_factor, &p.long_factor})
    if (list->size() != pairs)
      return unsupported("{}: rope_scaling.{} has {} entries; the rotary dim {} needs {} (one per frequency pair)",
                         t.file(), list == &p.short_factor ? "short_factor" : "long_factor", list->size(), dim, pairs);
  RopeTable out;
  out.rotary_dim = static_cast<int32_t>(dim);
  out.attention_factor = static_cast<float>(af);
  out.long_from = static_cast<int32_t>(L);
  for (size_t i = 0; i < pairs; ++i) {
    const double base = std::pow(p.theta, static_cast<double>(2 * i) / static_cast<double>(dim));
    out.inv_freq.push_back(static_cast<float>(1.0 / (p.short_factor[i] * base)));
    out.long_inv_freq.push_back(static_cast<float>(1.0 / (p.long_factor[i] * base)));
  }
  return out;
}

// YaRN (arXiv 2309.00071) as transformers' _compute_yarn_parameters computes it, with
// d = rotary dim, b = theta, L = original_max_position_embeddings, s = factor:
//   corr(r) = d ln(L / (2π r)) / (2 ln b)            the dim index that turns r times over L
//   lo = corr(beta_fast), hi = corr(beta_slow)       floor / ceil when truncate
//   lo = max(lo, 0), hi = min(hi, d - 1); hi += 0.001 when lo == hi
//   ramp_i = clamp((i - lo) / (hi - lo), 0, 1)        i < d / 2
//   inv_freq_i = (1 - ramp_i) b^(-2i/d) + ramp_i b^(-2i/d) / s
// attention factor: attention_factor if given, else mscale(s, mscale) / mscale(s, mscale_all_dim)
// when both are set and non-zero, else mscale(s, 1), with mscale(s, m) = 1 for s <= 1 and
// 0.1 m ln(s) + 1 otherwise.
RopeTable yarn_table(const RopeParams& p, int64_t dim, double max_position_embeddings) {
  const double s = p.yarn_factor ? *p.yarn_factor : max_position_embeddings / p.original_max;
  auto mscale = [&](double m) { return s <= 1 ? 1.0 : 0.1 * m * std::log(s) + 1.0; };
  double af = 0;
  if (p.attention_factor) {
    af = *p.attention_factor;
  } else if (p.mscale && p.mscale_all_dim && *p.mscale != 0 && *p.mscale_all_dim != 0) {
    af = mscale(*p.mscale) / mscale(*p.mscale_all_dim);
  } else {
    af = mscale(1.0);
  }
  const double d = static_cast<double>(dim);
  auto corr = [&](double rotations) {
    return d * std::log(p.original_max / (rotations * 2 * std::numbers::pi)) / (2 * std::log(p.theta));
  };
  double lo = corr(p.beta_fast), hi = corr(p.beta_slow);
  if (p.truncate) {
    lo = std::floor(lo);
    hi = std::ceil(hi);
  }
  lo = std::max(lo, 0.0);
  hi = std::min(hi, d - 1);
  if (lo == hi) hi += 0.001;
  RopeTable out;
  out.rotary_dim = static_cast<int32_t>(dim);
  out.attention_factor = static_cast<float>(af);
  if (p.mscale_all_dim && *p.mscale_all_dim != 0) out.mscale_all_dim = mscale(*p.mscale_all_dim);
  for (int64_t i = 0; i < dim / 2; ++i) {
    const double base_freq = 1.0 / std::pow(p.theta, static_cast<double>(2 * i) / d);
    const double ramp = std::clamp((static_cast<double>(i) - lo) / (hi - lo), 0.0, 1.0);
    out.inv_freq.push_back(static_cast<float>((1 - ramp) * base_freq + ramp * base_freq / s));
  }
  return out;
}

}  // namespace

Result<RopeTable> rope_for_layer(const hf::ModelConfig& c, const std::string& layer_type, int64_t head_dim,
                                 std::optional<double> sliding_theta, double default_theta) {
  hf::JsonFields t = c.text_fields();
  RopeParams p;
  OG_ASSIGN_OR_RETURN(p.partial_rotary_factor, t.get_double("partial_rotary_factor", 1.0));
  p.original_max = static_cast<double>(c.max_position_embeddings);
  OG_ASSIGN_OR_RETURN(p.top_original_max, t.get_optional_double("original_max_position_embeddings"));
  // transformers' precedence: the base theta (rope_theta, or rope_local_base_freq
  // for sliding layers), then `rope_parameters` (global, or per layer type), then the older
  // `rope_scaling`, which never applies to those sliding layers.
  const bool local = layer_type == "sliding_attention" && sliding_theta.has_value();
  OG_ASSIGN_OR_RETURN(p.theta, t.get_double("rope_theta", default_theta));
  if (local) p.theta = *sliding_theta;
  if (t.has("rope_parameters")) {
    OG_ASSIGN_OR_RETURN(hf::JsonFields rp, t.get_object("rope_parameters"));
    if (rp.has("full_attention") || rp.has("sliding_attention")) {
      if (rp.has(layer_type)) {
        OG_ASSIGN_OR_RETURN(hf::JsonFields per_type, rp.get_object(layer_type));
        OG_TRY(read_scaling(per_type, p));
      }
    } else {
      OG_TRY(read_scaling(rp, p));
    }
  }
  if (t.has("rope_scaling") && !local) {
    OG_ASSIGN_OR_RETURN(hf::JsonFields rs, t.get_object("rope_scaling"));
    OG_TRY(read_scaling(rs, p));
  }
  if (!(p.theta > 0)) return t.invalid("rope_theta", "positive");
  if (!(p.partial_rotary_factor > 0 && p.partial_rotary_factor <= 1))
    return t.invalid("partial_rotary_factor", "in (0, 1]");
  if (p.type == "proportional") {
    // transformers' _compute_proportional_rope_parameters: the first
    // int(partial * head_dim // 2) frequency pairs rotate with exponents over the whole
    // head_dim; the rest get frequency 0 (cos 1, sin 0) and pass through unchanged.
    RopeTable out;
    out.rotary_dim = static_cast<int32_t>(head_dim);
    const int64_t angles = static_cast<int64_t>(std::floor(p.partial_rotary_factor * static_cast<double>(head_dim) / 2));
    for (int64_t i = 0; i < head_dim / 2; ++i) {
      const double f = i < angles ? 1.0 / std::pow(p.theta, static_cast<double>(2 * i) / static_cast<double>(head_dim)) : 0.0;
      out.inv_freq.push_back(static_cast<float>(f / p.factor));
    }
    return out;
  }
  // transformers: dim = int(head_dim * partial_rotary_factor)
  const int64_t dim = static_cast<int64_t>(static_cast<double>(head_dim) * p.partial_rotary_factor);
  if (dim < 2 || dim % 2 != 0) return t.invalid("partial_rotary_factor", "a factor giving an even rotary dim");
  if (p.type == "yarn") return yarn_table(p, dim, static_cast<double>(c.max_position_embeddings));
  if (p.type == "longrope") return longrope_table(p, t, dim, static_cast<double>(c.max_position_embeddings));
  RopeTable out;
  out.rotary_dim = static_cast<int32_t>(dim);
  for (int64_t i = 0; i < dim / 2; ++i) {
    double f = 1.0 / std::pow(p.theta, static_cast<double>(2 * i) / static_cast<double>(dim));
    if (p.type == "linear") {
      f /= p.factor;
    } else if (p.type == "llama3") {
      const double low_wavelen = p.original_max / p.low_freq_factor;
      const double high_wavelen = p.original_max / p.high_freq_factor;
      const double wavelen = 2 * std::numbers::pi / f;
      if (wavelen > low_wavelen) {
        f /= p.factor;
      } else if (wavelen >= high_wavelen) {  // medium band: smooth between scaled and unscaled
        double smooth = (p.original_max / wavelen - p.low_freq_factor) / (p.high_freq_factor - p.low_freq_factor);
        f = (1 - smooth) * f / p.factor + smooth * f;
      }
    }
    out.inv_freq.push_back(static_cast<float>(f));
  }
  return out;
}

Result<RopeWeights> add_rope_tables(GraphBuilder& g, const std::string& prefix, const RopeTable& rope) {
  RopeWeights w;
  OG_ASSIGN_OR_RETURN(w.inv_freq, g.weight_f32(prefix + "rope.inv_freq", rope.inv_freq,
                                               {static_cast<int64_t>(rope.inv_freq.size())}));
  if (!rope.long_inv_freq.empty()) {
    OG_ASSIGN_OR_RETURN(w.long_inv_freq, g.weight_f32(prefix + "rope.long_inv_freq", rope.long_inv_freq,
                                                      {static_cast<int64_t>(rope.long_inv_freq.size())}));
    w.long_from = rope.long_from;
  }
  return w;
}

}  // namespace og::exporter
