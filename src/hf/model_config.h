// config.json of a HuggingFace causal LM, reduced to the text model.
//
// Multimodal wrappers (gemma3, gemma3n, gemma4) keep the text model under `text_config`;
// `text` points there, `root` at the whole file. Fields every family reads are parsed
// into typed members with HF's names; family-specific fields are read by the family's
// builder from `text_fields()`.
#pragma once

#include <cstdint>
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
  std::string family;            // canonical: llama mistral qwen2 qwen3 phi3 gemma2 gemma3 gemma3n gemma4
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

// The model_type values offgraph reads, as a comma-separated list for messages.
std::string supported_model_types();

// Parses config.json text. `path` is used in messages.
Result<ModelConfig> parse_model_config(const std::string& json_text, const std::string& path);
Result<ModelConfig> load_model_config(const std::string& path);

}  // namespace og::hf
