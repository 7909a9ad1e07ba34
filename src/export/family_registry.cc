// The registry: one line per family. A new family is a file under families/ plus a line here.
#include "export/family.h"

#include <array>

namespace og::exporter {

const Family& llama_family();
const Family& mistral_family();
const Family& qwen2_family();
const Family& qwen3_family();
const Family& qwen3_moe_family();
const Family& phi3_family();
const Family& gemma2_family();
const Family& gemma3_family();
const Family& gemma3n_family();
const Family& gemma4_family();
const Family& smollm3_family();
const Family& gpt_oss_family();

namespace {

std::span<const Family* const> families() {
  static const std::array<const Family*, 12> kFamilies = {
      &llama_family(), &mistral_family(), &qwen2_family(), &qwen3_family(), &qwen3_moe_family(), &phi3_family(),
      &gemma2_family(), &gemma3_family(), &gemma3n_family(), &gemma4_family(), &smollm3_family(),
      &gpt_oss_family(),
  };
  return kFamilies;
}

const ModelType* find_model_type(const std::string& model_type, const Family** family) {
  for (const Family* f : families())
    for (const ModelType& t : f->model_types())
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
                           .tie_word_embeddings_default = family->tie_word_embeddings_default(),
                           .defaults = family->config_defaults(),
                           .aliases = family->config_aliases()};
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
  for (const Family* f : families())
    for (const ModelType& t : f->model_types()) out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

Result<hf::ModelConfig> parse_model_config(const std::string& json_text, const std::string& path) {
  return hf::parse_model_config(json_text, path, reading_for);
}

Result<hf::ModelConfig> load_model_config(const std::string& path) { return hf::load_model_config(path, reading_for); }

const hf::Json& Family::config_defaults() const {
  static const hf::Json kNone = hf::Json::object();
  return kNone;
}

const hf::Json& Family::config_aliases() const {
  static const hf::Json kNone = hf::Json::object();
  return kNone;
}

Result<std::vector<std::string>> Family::default_layer_types(const hf::ModelConfig& c) const {
  return std::vector<std::string>(static_cast<size_t>(c.num_hidden_layers), "full_attention");
}

}  // namespace og::exporter
