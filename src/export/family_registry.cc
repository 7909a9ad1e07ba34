// The registry: one line per family. A new family is a file under families/ plus a line here.
#include "export/family.h"

#include <array>

namespace og::exporter {

const Family& llama_family();
const Family& mistral_family();
const Family& qwen2_family();
const Family& qwen3_family();
const Family& phi3_family();
const Family& gemma2_family();
const Family& gemma3_family();
const Family& gemma3n_family();
const Family& gemma4_family();

const Family* find_family(const std::string& family) {
  static const std::array<const Family*, 9> kFamilies = {
      &llama_family(), &mistral_family(), &qwen2_family(), &qwen3_family(), &phi3_family(),
      &gemma2_family(), &gemma3_family(), &gemma3n_family(), &gemma4_family(),
  };
  for (const Family* f : kFamilies)
    if (family == f->name()) return f;
  return nullptr;
}

Result<std::vector<std::string>> Family::default_layer_types(const hf::ModelConfig& c) const {
  return std::vector<std::string>(static_cast<size_t>(c.num_hidden_layers), "full_attention");
}

}  // namespace og::exporter
