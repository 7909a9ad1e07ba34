// A model family as the exporter sees it: the model_types it reads and how their
// config.json is read (text model under text_config or not, transformers' defaults for
// absent keys, the tying default), how the config maps to per-layer attention (layer types,
// windows, k/v geometry) and how its op graph is built. One file per family under
// families/, one line in families/registry.cc; its reference (reference/families/) and its
// test generator (testgen/families/) are sibling files of the same name. Nothing outside
// export/families, reference/ and testgen/ knows family names.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "hf/model_config.h"

namespace og::hf {
class Checkpoint;
}

namespace og::exporter {

class GraphBuilder;
struct BuildContext;

struct KvGeometry {
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  bool value_is_key = false;  // the layer's v is its k (program::CacheLayout::value_is_key)
};

struct ModelType {
  const char* name;               // config.json's root model_type
  bool text_in_text_config;       // a multimodal wrapper: the text model is under text_config
};

// The rules a family leaves to the config: every layer full attention, the config's own
// k/v geometry and sliding_window, layer types kept as read.
Result<std::vector<std::string>> all_full_attention(const hf::ModelConfig& c);
// Every layer slides when sliding_window is set (the rule of several families' config classes).
Result<std::vector<std::string>> sliding_everywhere_if_set(const hf::ModelConfig& c);
void keep_layer_types(std::vector<std::string>& types);
Result<KvGeometry> config_kv_geometry(const hf::ModelConfig& c, int64_t layer, const std::string& type);
Result<int64_t> config_sliding_window(const hf::ModelConfig& c);
// For a config `derive`: intermediate_size absent or null is 4 × hidden_size (GPT-2's n_inner,
// Falcon's ffn_hidden_size, read under that name through the family's aliases).
Status default_mlp_width(hf::Json& text, const std::string& path);

// A family is data plus its build function (as reference::Family is); the members left out
// of a family's initializer take the config's rules above.
struct Family {
  const char* name = nullptr;
  std::span<const ModelType> model_types;
  // transformers' configuration-class defaults for keys published configs omit, filled into
  // the text model before it is parsed (hf::ConfigReading::defaults); an object.
  hf::Json config_defaults = hf::Json::object();
  // Fields the config class also reads under another name (hf::ConfigReading::aliases).
  hf::Json config_aliases = hf::Json::object();
  // Fields the config class computes from others (hf::ConfigReading::derive); null: none.
  Status (*derive_config)(hf::Json& text, const std::string& path) = nullptr;
  bool tie_word_embeddings_default = false;
  // Layer types ("full_attention" / "sliding_attention") by the family's documented rule,
  // used only when config.json has no `layer_types`.
  Result<std::vector<std::string>> (*default_layer_types)(const hf::ModelConfig& c) = all_full_attention;
  // Adjusts the layer types after reading them (one family forces its last layer to full).
  void (*finalize_layer_types)(std::vector<std::string>& types) = keep_layer_types;
  // The k/v geometry of a layer of the given type.
  Result<KvGeometry> (*kv_geometry)(const hf::ModelConfig& c, int64_t layer, const std::string& type) =
      config_kv_geometry;
  // Window of the family's sliding layers (0: none).
  Result<int64_t> (*sliding_window)(const hf::ModelConfig& c) = config_sliding_window;
  // Adds the family's ops and weights to the program being built.
  Status (*build)(BuildContext& ctx) = nullptr;
  // Where the text model's tensors live when the family names it ("NAME."); null: found by
  // find_text_prefix (embed_tokens under model., model.language_model., ...).
  const char* text_prefix = nullptr;
  // Where the text model's tensors live when the family's checkpoints differ in it (GPT-2's
  // transformer. or none); null: text_prefix.
  Result<std::string> (*find_prefix)(const hf::Checkpoint& ckpt) = nullptr;
  // Checkpoint tensors that are buffers, not weights (an old causal-mask buffer saved with
  // the weights): the export ignores them instead of refusing them as an unused feature.
  bool (*is_buffer)(const std::string& tensor) = nullptr;
};

// Every family, in registry order (families/registry.cc).
std::span<const Family* const> all_families();

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
