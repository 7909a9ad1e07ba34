// A model family as the exporter sees it: the model_types it reads and how their
// config.json is read (text model under text_config or not, transformers' defaults for
// absent keys, the tying default), how the config maps to per-layer attention (layer types,
// windows, k/v geometry) and how its op graph is built. One file per family under
// families/, one line in family_registry.cc. Nothing outside export/ and reference/ knows
// family names.
#pragma once

#include <cstdint>
#include <span>
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

struct ModelType {
  const char* name;               // config.json's root model_type
  bool text_in_text_config;       // a multimodal wrapper: the text model is under text_config
};

class Family {
 public:
  virtual ~Family() = default;
  virtual const char* name() const = 0;
  virtual std::span<const ModelType> model_types() const = 0;
  // transformers' configuration-class defaults for keys published configs omit, filled into
  // the text model before it is parsed (hf::ConfigReading::defaults).
  virtual const hf::Json& config_defaults() const;
  // Fields the config class also reads under another name (hf::ConfigReading::aliases).
  virtual const hf::Json& config_aliases() const;
  virtual bool tie_word_embeddings_default() const { return false; }
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

// The family that reads a root model_type, or nullptr.
const Family* find_family(const std::string& model_type);
// The family of a config read by load_model_config (by its model_type); never null there.
const Family* family_of(const hf::ModelConfig& config);
// Every model_type the exporter reads, comma-separated, for messages.
std::string supported_model_types();

// config.json read as its family says (hf::ConfigReading): an unknown model_type is an
// unsupported error naming the supported ones.
Result<hf::ModelConfig> parse_model_config(const std::string& json_text, const std::string& path);
Result<hf::ModelConfig> load_model_config(const std::string& path);

}  // namespace og::exporter
