// What a family's graph builder works from: the config, the checkpoint, the resolved
// per-layer attention and cache layout, and the GraphBuilder to emit ops into.
#pragma once

#include <string>
#include <vector>

#include "export/graph_builder.h"
#include "export/layout_resolver.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"
#include "program/layout.h"

namespace og::exporter {

struct BuildContext {
  const hf::ModelConfig& config;
  const hf::Checkpoint& ckpt;
  const std::vector<LayerAttention>& layers;
  const program::CacheLayout& layout;
  GraphBuilder& g;
  std::string prefix;   // where the text model's tensors live: "model.", "model.language_model.", ...
  int64_t max_ctx_len = 0;  // the program's (a learned position table must cover it)

  bool has(const std::string& name) const { return ckpt.find(prefix + name) != nullptr; }
  // The tensor prefix+name, checked against the shape config.json implies.
  Result<const hf::TensorView*> tensor(const std::string& name, const std::vector<int64_t>& shape) const {
    return ckpt.get(prefix + name, shape);
  }
  // tensor() added to the program as a weight.
  Result<WeightId> weight(const std::string& name, const std::vector<int64_t>& shape,
                          const WeightOptions& options = {}) const {
    OG_ASSIGN_OR_RETURN(const hf::TensorView* t, tensor(name, shape));
    return g.weight(*t, options);
  }
};

// The text model's tensor prefix in this checkpoint (HF's naming varies across versions
// of the multimodal wrappers), found by locating embed_tokens.
Result<std::string> find_text_prefix(const hf::Checkpoint& ckpt);

}  // namespace og::exporter
