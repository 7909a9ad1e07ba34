// RoPE inverse frequencies as transformers computes them (modeling_rope_utils.py), and the
// reading of the rope fields of config.json in both spellings transformers accepts:
// the old `rope_theta` + `rope_scaling` and the v5 `rope_parameters`.
//
// Supported rope types: "default", "linear", "llama3". Everything else ("dynamic", "yarn",
// "longrope", ...) is an unsupported error naming the field, because those change the
// frequencies with the sequence length or the attention scale and are not implemented here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "hf/json_fields.h"
#include "hf/model_config.h"

namespace og::reference {

struct RopeSpec {
  std::string type = "default";  // default | linear | llama3
  double theta = 10000.0;        // rope_theta (the base)
  double factor = 1.0;           // linear, llama3
  double low_freq_factor = 1.0;  // llama3
  double high_freq_factor = 4.0; // llama3
  double original_max_position_embeddings = 8192;  // llama3
};

// inv_freq[i], i < dim / 2:
//   default: 1 / theta^(2i / dim)
//   linear:  default / factor
//   llama3:  with wavelen = 2π / f, lo = orig / low_freq_factor, hi = orig / high_freq_factor:
//            wavelen < hi -> f;  wavelen > lo -> f / factor;
//            otherwise (1 - s) f / factor + s f with s = (orig / wavelen - low) / (high - low).
// `dim` is the rotated width (head_dim, or int(head_dim * partial_rotary_factor)).
std::vector<double> rope_inv_freq(const RopeSpec& spec, int64_t dim);

// Reads one rope parameter object (a `rope_scaling` / `rope_parameters` dict, or one
// per-layer-type entry of it). `params` may be null (no dict: default rope). The base is
// the dict's rope_theta, else `theta_fallback`. llama3's original_max_position_embeddings
// defaults to `max_position_embeddings` as transformers' standardize_rope_params does.
Result<RopeSpec> parse_rope_params(const hf::JsonFields* params, double theta_fallback,
                                   int64_t max_position_embeddings);

// The rope of a family with one rope for all layers (everything but Gemma3). The dict is
// `rope_scaling` if set, else `rope_parameters` (transformers gives rope_scaling priority);
// the base is its rope_theta, else the top-level rope_theta, else `default_theta`.
Result<RopeSpec> parse_uniform_rope(const hf::ModelConfig& config, double default_theta);

// partial_rotary_factor from the top level or from the rope dict (1.0 when absent); both
// present and different is an error, since transformers versions disagree on which wins.
Result<double> parse_partial_rotary_factor(const hf::ModelConfig& config);

// The two rope dicts of a model with one rope per layer type (Gemma3/Gemma3n
// convert_rope_params_to_dict): empty (default rope) or the per-layer-type entries of
// `rope_parameters`, with the old `rope_scaling` merged into the full-attention entry only.
struct LayerTypeRopes {
  hf::Json full = hf::Json::object();
  hf::Json sliding = hf::Json::object();
};
Result<LayerTypeRopes> rope_params_by_layer_type(const hf::ModelConfig& c);

}  // namespace og::reference
