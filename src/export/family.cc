// Looking families up by model_type and reading a config.json as its family says; the
// rules a family leaves to the config.
#include "export/family.h"

#include <array>

namespace og::exporter {

namespace {

const ModelType* find_model_type(const std::string& model_type, const Family** family) {
  for (const Family* f : all_families())
    for (const ModelType& t : f->model_types)
      if (model_type == t.name) {
        *family = f;
        return &t;
      }
  return nullptr;
}

Result<hf::ConfigReading> reading_for(const std::string& model_type, const std::string& path) {
  const Family* family = nullptr;
  const ModelType* type = find_model_type(model_type, &family);
  if (type == nullptr)
    return unsupported("{}: unsupported model_type '{}' (supported: {})", path, model_type, supported_model_types());
  return hf::ConfigReading{.text_in_text_config = type->text_in_text_config,
                           .tie_word_embeddings_default = family->tie_word_embeddings_default,
                           .defaults = family->config_defaults,
                           .aliases = family->config_aliases,
                           .derive = family->derive_config};
}

}  // namespace

const Family* find_family(const std::string& model_type) {
  const Family* family = nullptr;
  find_model_type(model_type, &family);
  return family;
}

const Family* family_of(const hf::ModelConfig& config) { return find_family(config.model_type); }

std::string supported_model_types() {
  std::string out;
  for (const Family* f : all_families())
    for (const ModelType& t : f->model_types) out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

Result<hf::ModelConfig> parse_model_config(const std::string& json_text, const std::string& path) {
  return hf::parse_model_config(json_text, path, reading_for);
}

Result<hf::ModelConfig> load_model_config(const std::string& path) { return hf::load_model_config(path, reading_for); }

Result<std::vector<std::string>> all_full_attention(const hf::ModelConfig& c) {
  return std::vector<std::string>(static_cast<size_t>(c.num_hidden_layers), "full_attention");
}

Result<std::vector<std::string>> sliding_everywhere_if_set(const hf::ModelConfig& c) {
  return std::vector<std::string>(static_cast<size_t>(c.num_hidden_layers),
                                  c.sliding_window ? "sliding_attention" : "full_attention");
}

void keep_layer_types(std::vector<std::string>&) {}

Result<KvGeometry> config_kv_geometry(const hf::ModelConfig& c, int64_t, const std::string&) {
  return KvGeometry{c.num_key_value_heads, c.head_dim};
}

Result<int64_t> config_sliding_window(const hf::ModelConfig& c) { return c.sliding_window.value_or(0); }

Status default_mlp_width(hf::Json& text, const std::string& path) {
  if (text.contains("intermediate_size") && !text["intermediate_size"].is_null()) return Status::ok();
  OG_ASSIGN_OR_RETURN(const int64_t hidden, hf::JsonFields(text, path).get_int("hidden_size"));
  text["intermediate_size"] = 4 * hidden;
  return Status::ok();
}

}  // namespace og::exporter
