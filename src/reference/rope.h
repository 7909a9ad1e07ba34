// RoPE inverse frequencies as transformers computes them (modeling_rope_utils.py), and the
// reading of the rope fields of config.json in both spellings transformers accepts:
// the old `rope_theta` + `rope_scaling` and the v5 `rope_parameters`.
//
// Supported rope types: "default", "linear", "llama3", "yarn", "longrope" (llama-like
// families: the Gemma families refuse yarn and longrope). Everything else ("dynamic", ...)
// is an unsupported error naming the field: it changes the frequencies with the sequence
// length.
//
// LongRoPE's two tables: transformers rotates a whole forward with the long factors once its
// sequence is longer than original_max_position_embeddings L (longrope_frequency_update), so
// its generation rotates each token decoded at position >= L with them while the cached
// earlier ones keep the short factors. The reference follows that per position: position t
// uses the long factors iff t >= L. For sequences of at most L tokens this is transformers'
// forward exactly; a single forward over more than L tokens in transformers would rotate its
// first L positions with the long factors too, a rotation no cache could keep.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
  double original_max_position_embeddings = 8192;  // llama3, yarn
  // yarn (factor above: the dict's, else max_position_embeddings / original)
  double beta_fast = 32, beta_slow = 1;
  bool truncate = true;
  double attention_factor = 1.0;  // resolved at parse time (attention_factor, mscale, or 0.1 ln(factor) + 1)
  // longrope (original_max_position_embeddings above is L; attention_factor resolved)
  std::vector<double> short_factor, long_factor;
};

// inv_freq[i], i < dim / 2:
//   default: 1 / theta^(2i / dim)
//   linear:  default / factor
//   llama3:  with wavelen = 2π / f, lo = orig / low_freq_factor, hi = orig / high_freq_factor:
//            wavelen < hi -> f;  wavelen > lo -> f / factor;
//            otherwise (1 - s) f / factor + s f with s = (orig / wavelen - low) / (high - low).
//   yarn:    the pair index n(r) at which a frequency turns r times over the original context
//            L (b^(2n/dim) = L / (2π r), so n(r) = (dim / 2) log_b(L / (2π r))) bounds a ramp
//            from lo = n(beta_fast) to hi = n(beta_slow) (floor/ceil when truncate, clipped
//            to [0, dim - 1], hi + 0.001 if equal): pairs below lo keep f, pairs above hi get
//            f / factor, and in between w = (i - lo) / (hi - lo) mixes them: (1 - w) f + w f / factor.
//   longrope: 1 / (short_factor[i] theta^(2i / dim)) (rope_long_inv_freq: long_factor[i]).
// `dim` is the rotated width (head_dim, or int(head_dim * partial_rotary_factor)).
std::vector<double> rope_inv_freq(const RopeSpec& spec, int64_t dim);
// LongRoPE's long table (empty for the other types); positions >= original_max_position_embeddings.
std::vector<double> rope_long_inv_freq(const RopeSpec& spec, int64_t dim);
// The rope's factor lists have one entry per frequency pair of a rotary width `dim`.
Status check_rope_width(const RopeSpec& spec, int64_t dim, const std::string& path);

// Families whose reference does not apply YaRN's attention factor nor LongRoPE's second
// table (the Gemma ones) refuse yarn and longrope with an unsupported error naming the family.
Status refuse_yarn(const RopeSpec& spec, const std::string& path, std::string_view family);

// Reads one rope parameter object (a `rope_scaling` / `rope_parameters` dict, or one
// per-layer-type entry of it). `params` may be null (no dict: default rope). The base is
// the dict's rope_theta, else `theta_fallback`. llama3's original_max_position_embeddings
// defaults to `max_position_embeddings` as transformers' standardize_rope_params does;
// longrope's to the top-level `original_max_position_embeddings` (Phi-3's spelling), then to
// max_position_embeddings.
Result<RopeSpec> parse_rope_params(const hf::JsonFields* params, double theta_fallback,
                                   int64_t max_position_embeddings,
                                   std::optional<double> top_original_max_position_embeddings = std::nullopt);

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
