#include "reference/rope.h"

#include <cmath>
#include <numbers>
#include <optional>

namespace og::reference {

namespace {

// 1 / (factors[i] theta^(2i / dim)): LongRoPE's rescaled frequencies.
std::vector<double> longrope_inv_freq(const RopeSpec& spec, const std::vector<double>& factors, int64_t dim) {
  std::vector<double> inv(static_cast<size_t>(dim / 2));
  for (size_t i = 0; i < inv.size() && i < factors.size(); ++i)
    inv[i] = 1.0 / (factors[i] * std::pow(spec.theta, static_cast<double>(2 * i) / static_cast<double>(dim)));
  return inv;
}

}  // namespace

std::vector<double> rope_long_inv_freq(const RopeSpec& spec, int64_t dim) {
  return spec.type == "longrope" ? longrope_inv_freq(spec, spec.long_factor, dim) : std::vector<double>{};
}

Status check_rope_width(const RopeSpec& spec, int64_t dim, const std::string& path) {
  if (spec.type != "longrope") return Status::ok();
  for (const auto& [name, list] : {std::pair{"short_factor", &spec.short_factor}, std::pair{"long_factor", &spec.long_factor}})
    if (static_cast<int64_t>(list->size()) != dim / 2)
      return unsupported("{}: longrope's {} has {} entries, the rotary width {} needs {}", path, name, list->size(),
                         dim, dim / 2);
  return Status::ok();
}

std::vector<double> rope_inv_freq(const RopeSpec& spec, int64_t dim) {
  if (spec.type == "longrope") return longrope_inv_freq(spec, spec.short_factor, dim);
  std::vector<double> inv(static_cast<size_t>(dim / 2));
  for (int64_t i = 0; i < dim / 2; ++i)
    inv[static_cast<size_t>(i)] = 1.0 / std::pow(spec.theta, static_cast<double>(2 * i) / static_cast<double>(dim));
  if (spec.type == "linear") {
    for (double& f : inv) f /= spec.factor;
  } else if (spec.type == "llama3") {
    const double orig = spec.original_max_position_embeddings;
    const double low_freq_wavelen = orig / spec.low_freq_factor;
    const double high_freq_wavelen = orig / spec.high_freq_factor;
    for (double& f : inv) {
      const double wavelen = 2.0 * std::numbers::pi / f;
      if (wavelen < high_freq_wavelen) continue;  // high frequencies: unchanged
      if (wavelen > low_freq_wavelen) {           // low frequencies: scaled down by factor
        f /= spec.factor;
        continue;
      }
      // Medium band: interpolate between the scaled and unscaled frequency.
      const double smooth =
          (orig / wavelen - spec.low_freq_factor) / (spec.high_freq_factor - spec.low_freq_factor);
      f = (1.0 - smooth) * f / spec.factor + smooth * f;
    }
  } else if (spec.type == "yarn") {
    const double L = spec.original_max_position_embeddings;
    auto pair_index = [&](double rotations) {  // (dim / 2) log_theta(L / (2π r))
      return 0.5 * static_cast<double>(dim) * std::log(L / (2.0 * std::numbers::pi * rotations)) / std::log(spec.theta);
    };
    double lo = pair_index(spec.beta_fast), hi = pair_index(spec.beta_slow);
    if (spec.truncate) {
      lo = std::floor(lo);
      hi = std::ceil(hi);
    }
    if (lo < 0) lo = 0;
    if (hi > static_cast<double>(dim - 1)) hi = static_cast<double>(dim - 1);
    if (lo == hi) hi += 0.001;
    for (size_t i = 0; i < inv.size(); ++i) {
      const double pos = static_cast<double>(i);
      const double w = pos <= lo ? 0.0 : pos >= hi ? 1.0 : (pos - lo) / (hi - lo);
      inv[i] = (1.0 - w) * inv[i] + w * inv[i] / spec.factor;
    }
  }
  return inv;
}

Status refuse_yarn(const RopeSpec& spec, const std::string& path, std::string_view family) {
  if (spec.type == "yarn" || spec.type == "longrope")
    return unsupported("{}: rope type '{}' is not supported by the reference for {}", path, spec.type, family);
  return Status::ok();
}

namespace {

Result<double> positive_number(const hf::JsonFields& f, const std::string& key) {
  OG_ASSIGN_OR_RETURN(double v, f.get_double(key));
  if (!(v > 0)) return f.invalid(key, "a positive number");
  return v;
}

}  // namespace

Result<std::vector<double>> positive_list(const hf::JsonFields& f, const std::string& key) {
  OG_ASSIGN_OR_RETURN(std::vector<double> list, f.get_double_list(key));
  for (double x : list)
    if (!(x > 0) || !std::isfinite(x)) return f.invalid(key, "a list of positive numbers (longrope's factors)");
  return list;
}

Result<RopeSpec> parse_rope_params(const hf::JsonFields* params, double theta_fallback,
                                   int64_t max_position_embeddings,
                                   std::optional<double> top_original_max_position_embeddings) {
  RopeSpec spec;
  spec.theta = theta_fallback;
  if (params == nullptr) return spec;
  const hf::JsonFields& p = *params;
  // "type" is the pre-4.45 spelling of "rope_type".
  const std::string type_key = p.has("rope_type") ? "rope_type" : "type";
  OG_ASSIGN_OR_RETURN(spec.type, p.get_string(type_key, "default"));
  if (p.has("rope_theta")) {
    OG_ASSIGN_OR_RETURN(spec.theta, positive_number(p, "rope_theta"));
  }
  if (!(spec.theta > 0)) return p.invalid("rope_theta", "a positive number");
  if (spec.type == "default") return spec;
  if (spec.type == "linear") {
    OG_ASSIGN_OR_RETURN(spec.factor, positive_number(p, "factor"));
    return spec;
  }
  if (spec.type == "llama3") {
    OG_ASSIGN_OR_RETURN(spec.factor, positive_number(p, "factor"));
    OG_ASSIGN_OR_RETURN(spec.low_freq_factor, positive_number(p, "low_freq_factor"));
    OG_ASSIGN_OR_RETURN(spec.high_freq_factor, positive_number(p, "high_freq_factor"));
    if (!(spec.high_freq_factor > spec.low_freq_factor))
      return p.invalid("high_freq_factor", "greater than low_freq_factor");
    if (p.has("original_max_position_embeddings")) {
      OG_ASSIGN_OR_RETURN(spec.original_max_position_embeddings,
                          positive_number(p, "original_max_position_embeddings"));
    } else {
      spec.original_max_position_embeddings = static_cast<double>(max_position_embeddings);
    }
    return spec;
  }
  if (spec.type == "yarn") {
    // transformers v5 _compute_yarn_parameters; standardize_rope_params fills
    // original_max_position_embeddings from max_position_embeddings.
    if (p.has("original_max_position_embeddings")) {
      OG_ASSIGN_OR_RETURN(spec.original_max_position_embeddings, positive_number(p, "original_max_position_embeddings"));
    } else {
      spec.original_max_position_embeddings = static_cast<double>(max_position_embeddings);
    }
    if (p.has("factor")) {
      OG_ASSIGN_OR_RETURN(spec.factor, positive_number(p, "factor"));
    } else {
      spec.factor = static_cast<double>(max_position_embeddings) / spec.original_max_position_embeddings;
    }
    // `rope_parameters.get("beta_fast") or 32`: absent, null and 0 all mean the default.
    OG_ASSIGN_OR_RETURN(double fast, p.get_double("beta_fast", 0.0));
    OG_ASSIGN_OR_RETURN(double slow, p.get_double("beta_slow", 0.0));
    spec.beta_fast = fast != 0 ? fast : 32.0;
    spec.beta_slow = slow != 0 ? slow : 1.0;
    if (!(spec.beta_fast > 0)) return p.invalid("beta_fast", "a positive number");
    if (!(spec.beta_slow > 0)) return p.invalid("beta_slow", "a positive number");
    OG_ASSIGN_OR_RETURN(spec.truncate, p.get_bool("truncate", true));
    auto get_mscale = [&](double m) { return spec.factor <= 1 ? 1.0 : 1.0 + 0.1 * m * std::log(spec.factor); };
    OG_ASSIGN_OR_RETURN(std::optional<double> given, p.get_optional_double("attention_factor"));
    OG_ASSIGN_OR_RETURN(std::optional<double> ms, p.get_optional_double("mscale"));
    OG_ASSIGN_OR_RETURN(std::optional<double> ms_all, p.get_optional_double("mscale_all_dim"));
    if (given) {
      spec.attention_factor = *given;
    } else if (ms.value_or(0) != 0 && ms_all.value_or(0) != 0) {  // `if mscale and mscale_all_dim`
      spec.attention_factor = get_mscale(*ms) / get_mscale(*ms_all);
    } else {
      spec.attention_factor = get_mscale(1.0);
    }
    return spec;
  }
  if (spec.type == "longrope") {
    // transformers v5 _compute_longrope_parameters: L = original_max_position_embeddings,
    // s = factor, else max_position_embeddings / L; attention factor given, else
    // sqrt(1 + ln s / ln L) when s > 1, else 1.
    OG_ASSIGN_OR_RETURN(spec.short_factor, positive_list(p, "short_factor"));
    OG_ASSIGN_OR_RETURN(spec.long_factor, positive_list(p, "long_factor"));
    if (p.has("original_max_position_embeddings")) {
      OG_ASSIGN_OR_RETURN(spec.original_max_position_embeddings, positive_number(p, "original_max_position_embeddings"));
    } else {
      spec.original_max_position_embeddings =
          top_original_max_position_embeddings.value_or(static_cast<double>(max_position_embeddings));
    }
    const double L = spec.original_max_position_embeddings;
    if (!(L >= 1)) return p.invalid("original_max_position_embeddings", "a positive context length");
    if (p.has("factor")) {
      OG_ASSIGN_OR_RETURN(spec.factor, positive_number(p, "factor"));
    } else {
      spec.factor = static_cast<double>(max_position_embeddings) / L;
    }
    OG_ASSIGN_OR_RETURN(std::optional<double> given, p.get_optional_double("attention_factor"));
    spec.attention_factor = given ? *given : spec.factor <= 1 ? 1.0 : std::sqrt(1.0 + std::log(spec.factor) / std::log(L));
    return spec;
  }
  return unsupported(
      "{}: field '{}' = '{}' is not supported by the reference (supported: default, linear, llama3, yarn, longrope)",
      p.file(), p.field_name(type_key), spec.type);
}

namespace {

// The rope dict of a uniform-rope family, or nullopt; the name of the field it came from.
Result<std::optional<hf::JsonFields>> rope_dict(const hf::ModelConfig& config) {
  const hf::JsonFields t = config.text_fields();
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    if (!t.has(key)) continue;
    OG_ASSIGN_OR_RETURN(hf::JsonFields dict, t.get_object(key));
    return std::optional<hf::JsonFields>(dict);
  }
  return std::optional<hf::JsonFields>();
}

}  // namespace

Result<RopeSpec> parse_uniform_rope(const hf::ModelConfig& config, double default_theta) {
  const hf::JsonFields t = config.text_fields();
  OG_ASSIGN_OR_RETURN(double theta, t.get_double("rope_theta", default_theta));
  if (!(theta > 0)) return t.invalid("rope_theta", "a positive number");
  OG_ASSIGN_OR_RETURN(std::optional<hf::JsonFields> dict, rope_dict(config));
  OG_ASSIGN_OR_RETURN(std::optional<double> top_original, t.get_optional_double("original_max_position_embeddings"));
  return parse_rope_params(dict ? &*dict : nullptr, theta, config.max_position_embeddings, top_original);
}

Result<double> parse_partial_rotary_factor(const hf::ModelConfig& config) {
  const hf::JsonFields t = config.text_fields();
  OG_ASSIGN_OR_RETURN(std::optional<double> top, t.get_optional_double("partial_rotary_factor"));
  OG_ASSIGN_OR_RETURN(std::optional<hf::JsonFields> dict, rope_dict(config));
  std::optional<double> nested;
  if (dict) {
    OG_ASSIGN_OR_RETURN(nested, dict->get_optional_double("partial_rotary_factor"));
  }
  if (top && nested && *top != *nested)
    return unsupported("{}: '{}' ({}) and '{}' ({}) disagree", config.path, t.field_name("partial_rotary_factor"),
                       *top, dict->field_name("partial_rotary_factor"), *nested);
  const double f = top ? *top : nested ? *nested : 1.0;
  if (!(f > 0 && f <= 1)) return t.invalid("partial_rotary_factor", "a number in (0, 1]");
  return f;
}

Result<LayerTypeRopes> rope_params_by_layer_type(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  LayerTypeRopes r;
  if (t.has("rope_parameters")) {
    OG_ASSIGN_OR_RETURN(hf::JsonFields rp, t.get_object("rope_parameters"));
    for (const auto& [key, value] : c.text.at("rope_parameters").items()) {
      if (key != "full_attention" && key != "sliding_attention")
        return unsupported("{}: field '{}' must be keyed by layer type (full_attention, sliding_attention) "
                           "for {}, found key '{}'",
                           c.path, t.field_name("rope_parameters"), c.text_model_type, key);
      if (value.is_null()) continue;
      if (!value.is_object()) return rp.invalid(key, "an object");
      (key == "full_attention" ? r.full : r.sliding) = value;
    }
  }
  if (t.has("rope_scaling")) {
    OG_TRY(t.get_object("rope_scaling"));
    r.full.update(c.text.at("rope_scaling"));
  }
  return r;
}

}  // namespace og::reference
