// config.json of a HuggingFace causal LM, reduced to the text model.
//
// This layer knows no model family: it parses what config.json says. The caller (the
// exporter's or the reference's family table) says, per model_type, whether the text model
// sits under `text_config` (multimodal wrappers), which defaults fill absent keys (the
// values of transformers' configuration class) and how tying defaults. `text` points at
// the text model, `root` at the whole file. Fields every family reads are parsed into
// typed members with HF's names; family-specific fields are read from `text_fields()`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "hf/json_fields.h"

namespace og::hf {

struct ModelConfig {
  std::string path;              // the config.json read
  std::string model_type;        // root model_type, as written
  std::string text_model_type;   // model_type of the text model (same as model_type if unwrapped)
  Json root;
  Json text;                     // == root for unwrapped configs

  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;                      // hidden_size / num_attention_heads when absent
  std::vector<int64_t> intermediate_size;    // one per layer (a scalar is broadcast)
  double rms_norm_eps = 1e-6;
  int64_t max_position_embeddings = 0;
  std::optional<int64_t> sliding_window;
  std::vector<std::string> layer_types;      // empty when config.json has none
  int64_t num_kv_shared_layers = 0;
  bool tie_word_embeddings = false;
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;
  std::string torch_dtype;                   // "bfloat16", "float32", ... or empty

  JsonFields text_fields() const { return JsonFields(text, path, text_prefix()); }
  JsonFields root_fields() const { return JsonFields(root, path); }
  std::string text_prefix() const { return is_wrapped ? "text_config." : ""; }

  bool is_wrapped = false;       // text model read from text_config
};

// How to read the config.json of one model_type; decided outside hf.
struct ConfigReading {
  bool text_in_text_config = false;        // the text model is the object under `text_config`
  bool tie_word_embeddings_default = false;
  // Keys the text model takes when it lacks them (an explicit null stays null); an object,
  // or null for none.
  Json defaults;
  // {"other_name": "name"}: a text config without `name` but with `other_name` takes its
  // value (a field a later transformers renamed on save, read as the class reads both);
  // applied before the defaults. An object, or null for none.
  Json aliases;
  // Fields the config class computes from others (e.g. a rotary fraction from a rotary width),
  // set on the text model after the defaults; null for none.
  Status (*derive)(Json& text, const std::string& path) = nullptr;
};

// Given the root model_type, the reading for it, or the caller's error (e.g. unsupported
// model_type, naming the ones there are). `path` is the config.json, for messages.
using ConfigReadingFor = std::function<Result<ConfigReading>(const std::string& model_type, const std::string& path)>;

// Parses config.json text: the root and its model_type, then `reading_for(model_type)`
// decides how the text model is read. `path` is used in messages.
Result<ModelConfig> parse_model_config(const std::string& json_text, const std::string& path,
                                       const ConfigReadingFor& reading_for);
Result<ModelConfig> load_model_config(const std::string& path, const ConfigReadingFor& reading_for);

}  // namespace og::hf
