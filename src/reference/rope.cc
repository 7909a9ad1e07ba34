#include "reference/rope.h"

#include <cmath>
#include <numbers>

namespace og::reference {

std::vector<double> rope_inv_freq(const RopeSpec& spec, int64_t dim) {
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
  }
  return inv;
}

namespace {

Result<double> positive_number(const hf::JsonFields& f, const std::string& key) {
  OG_ASSIGN_OR_RETURN(double v, f.get_double(key));
  if (!(v > 0)) return f.invalid(key, "a positive number");
  return v;
}

}  // namespace

Result<RopeSpec> parse_rope_params(const hf::JsonFields* params, double theta_fallback,
                                   int64_t max_position_embeddings) {
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
  return unsupported("{}: field '{}' = '{}' is not supported by the reference (supported: default, linear, llama3)",
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
  return parse_rope_params(dict ? &*dict : nullptr, theta, config.max_position_embeddings);
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
