// Resolves the cache layout (DESIGN.md §3) from config.json alone.
//
// Layer types come from `layer_types` when present, else the family's rule. A KV-shared
// tail (num_kv_shared_layers > 0) reads, per layer, the cache of the last layer before the
// tail with the same type (transformers' rule). Layer types other than full and sliding
// attention are rejected with the layer and type named.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "hf/model_config.h"
#include "program/layout.h"

namespace og::exporter {

struct LayerAttention {
  std::string type;       // full_attention | sliding_attention
  int64_t window = 0;     // 0 = full history
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  bool value_is_key = false;
  int64_t donor = -1;     // layer whose cache this KV-shared layer reads; -1 = computes its own
};

Result<std::vector<LayerAttention>> resolve_layer_attention(const hf::ModelConfig& config);
Result<program::CacheLayout> resolve_layout(const hf::ModelConfig& config);

// The layout of a model named as `offgraph layout` takes it: a directory, a config.json, or a
// hub id in the local HF cache.
struct ModelLayout {
  std::string model_id, model_type;
  program::CacheLayout layout;
};
Result<ModelLayout> resolve_model_layout(const std::string& model);

}  // namespace og::exporter
