// A model family as the exporter sees it: how its config.json maps to per-layer attention
// (layer types, windows, k/v geometry) and how its op graph is built. One file per family
// under families/, one line in family_registry.cc. Nothing outside export/ and reference/
// knows family names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "hf/model_config.h"

namespace og::exporter {

class GraphBuilder;
struct BuildContext;

struct KvGeometry {
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
};

class Family {
 public:
  virtual ~Family() = default;
  virtual const char* name() const = 0;
  // Layer types ("full_attention" / "sliding_attention") by the family's documented rule,
  // used only when config.json has no `layer_types`.
  virtual Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) const;
  // Adjusts the layer types after reading them (Gemma-4 forces its last layer to full).
  virtual void finalize_layer_types(std::vector<std::string>& types) const {}
  // The k/v geometry of a layer of the given type.
  virtual Result<KvGeometry> kv_geometry(const hf::ModelConfig& c, int64_t layer, const std::string& type) const {
    return KvGeometry{c.num_key_value_heads, c.head_dim};
  }
  // Window of the family's sliding layers (0: none).
  virtual Result<int64_t> sliding_window(const hf::ModelConfig& c) const { return c.sliding_window.value_or(0); }
  // Adds the family's ops and weights to the program being built.
  virtual Status build(BuildContext& ctx) const = 0;
};

// The family for config.family, or nullptr.
const Family* find_family(const std::string& family);

}  // namespace og::exporter
