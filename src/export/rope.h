// RoPE parameters from config.json and the inverse frequencies they imply, computed as
// transformers' modeling_rope_utils does (default, linear, llama3, proportional, yarn,
// longrope), in float64 at export.
// The runtime only sees the table: one rope kernel serves every scaling scheme.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "export/graph_builder.h"
#include "hf/model_config.h"

namespace og::exporter {

struct RopeTable {
  std::vector<float> inv_freq;  // [rotary_dim / 2]
  int32_t rotary_dim = 0;
  float attention_factor = 1.0f;  // cos and sin times this (YaRN, LongRoPE; 1 for the other types)
  // YaRN with mscale_all_dim set: mscale(factor, mscale_all_dim) (1 otherwise), whose square
  // multiplies the softmax scale of the multi-head latent attention.
  double mscale_all_dim = 1.0;
  // LongRoPE: the long factors' table [rotary_dim / 2] (inv_freq holds the short ones) and
  // the first position that uses it: original_max_position_embeddings. transformers switches
  // a forward to the long table when its sequence passes that length (longrope_frequency_update),
  // which is what its generation does for each token decoded past it; the program applies the
  // same rule per position, so every position's rotation is fixed once it is cached.
  std::vector<float> long_inv_freq;  // empty: none
  int32_t long_from = 0;
};

// RoPE of a layer of `layer_type` with head dim `head_dim`: rope_theta, overridden by
// `rope_parameters` (global or per layer type), then by `rope_scaling`. `sliding_theta`
// (rope_local_base_freq) is the base of sliding layers, which rope_scaling never
// touches. `default_theta` is rope_theta when config.json has none (a family's class default).
Result<RopeTable> rope_for_layer(const hf::ModelConfig& c, const std::string& layer_type, int64_t head_dim,
                                 std::optional<double> sliding_theta = std::nullopt, double default_theta = 10000.0);

// The table(s) of `rope` added to the program as weights named prefix + "rope.inv_freq" and
// (LongRoPE) "rope.long_inv_freq", kept even where max_ctx_len stops short of long_from: no
// program tensor depends on max_ctx_len.
Result<RopeWeights> add_rope_tables(GraphBuilder& g, const std::string& prefix, const RopeTable& rope);

}  // namespace og::exporter
