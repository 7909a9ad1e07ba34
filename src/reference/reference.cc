// The registry: one line per family, dispatching on the config's model_type. The reference
// reads config.json with its own families' model types and defaults (families/*.cc).
#include "reference/reference.h"

#include <algorithm>
#include <array>
#include <string>

#include "reference/families/families.h"
#include "reference/toolkit.h"

namespace og::reference {

namespace {
constexpr const Family* kFamilies[] = {
    &kLlamaFamily, &kMistralFamily, &kMixtralFamily, &kQwen2Family, &kQwen3Family, &kQwen3MoeFamily, &kQwen2MoeFamily, &kGraniteFamily, &kGraniteMoeFamily, &kGraniteMoeSharedFamily, &kOlmo2Family, &kOlmo3Family, &kOlmoeFamily, &kPhi3Family, &kGemmaFamily, &kGemma2Family, &kGemma3Family,
    &kGemma4Family, &kGemma3nFamily, &kSmolLM3Family, &kGptOssFamily, &kStarcoder2Family, &kPhiFamily, &kStableLmFamily, &kCohereFamily, &kCohere2Family, &kGlmFamily, &kGlm4Family, &kGlm4MoeFamily, &kErnie45Family, &kErnie45MoeFamily, &kDeepseekV3Family, &kDeepseekV2Family, &kGlm4MoeLiteFamily, &kMiniMaxM2Family, &kDots1Family, &kSeedOssFamily, &kArceeFamily, &kNemotronFamily, &kHunYuanDenseFamily, &kApertusFamily, &kExaone4Family, &kGptNeoxFamily, &kGpt2Family, &kGptBigCodeFamily, &kFalconFamily,
};
}  // namespace

std::span<const Family* const> all_families() { return kFamilies; }

namespace {

const ModelType* find_model_type(std::string_view model_type, const Family** family) {
  for (const Family* f : kFamilies)
    for (const ModelType& t : f->model_types)
      if (t.name == model_type) {
        *family = f;
        return &t;
      }
  return nullptr;
}

std::string model_type_names() {
  std::string names;
  for (const Family* f : kFamilies)
    for (const ModelType& t : f->model_types) names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}

Result<hf::ConfigReading> reading_for(const std::string& model_type, const std::string& path) {
  const Family* family = nullptr;
  const ModelType* type = find_model_type(model_type, &family);
  if (type == nullptr)
    return unsupported("{}: model_type '{}' has no reference forward pass (have: {})", path, model_type,
                       model_type_names());
  OG_ASSIGN_OR_RETURN(hf::Json defaults, hf::parse_json(std::string(family->config_defaults), "reference defaults"));
  OG_ASSIGN_OR_RETURN(hf::Json aliases, hf::parse_json(std::string(family->config_aliases), "reference aliases"));
  return hf::ConfigReading{.text_in_text_config = type->text_in_text_config,
                           .tie_word_embeddings_default = family->tie_word_embeddings_default,
                           .defaults = std::move(defaults),
                           .aliases = std::move(aliases),
                           .derive = family->derive_config};
}

}  // namespace

Result<const Family*> find_family(const hf::ModelConfig& config) {
  const Family* family = nullptr;
  if (find_model_type(config.model_type, &family) == nullptr)
    return unsupported("{}: model_type '{}' has no reference forward pass (have: {})", config.path, config.model_type,
                       model_type_names());
  return family;
}

Result<hf::ModelConfig> parse_model_config(const std::string& json_text, const std::string& path) {
  return hf::parse_model_config(json_text, path, reading_for);
}

Result<hf::ModelConfig> load_model_config(const std::string& path) { return hf::load_model_config(path, reading_for); }

Result<std::vector<double>> forward(const hf::ModelConfig& config, const hf::Checkpoint& ckpt,
                                    std::span<const int32_t> tokens, const ForwardOptions& options) {
  if (tokens.empty()) return bad_input("reference forward: no tokens given");
  OG_ASSIGN_OR_RETURN(const Family* family, find_family(config));
  if (options.float32_activations && family != &kGemma4Family && family != &kGemma3nFamily)
    return unsupported("ForwardOptions.float32_activations is implemented for gemma4 and gemma3n only, not {}",
                       family->name);
  if (options.int8_linear_inputs.empty() && options.bf16_linear_inputs.empty())
    return family->forward(config, ckpt, tokens, options);
  std::vector<int64_t> other_way = options.int8_round_other_way;
  std::sort(other_way.begin(), other_way.end());
  Int8Inputs state{.weights = &options.int8_linear_inputs, .tie_window = options.int8_tie_window,
                   .near_ties = options.int8_near_ties, .round_other_way = &other_way,
                   .bf16_weights = &options.bf16_linear_inputs};
  set_int8_linear_inputs(&state);
  auto out = family->forward(config, ckpt, tokens, options);
  set_int8_linear_inputs(nullptr);
  return out;
}

Result<std::vector<double>> forward(const hf::ModelConfig& config, const hf::Checkpoint& ckpt,
                                    std::span<const int32_t> tokens) {
  return forward(config, ckpt, tokens, ForwardOptions{});
}

Result<std::vector<int64_t>> layer_windows(const hf::ModelConfig& config) {
  OG_ASSIGN_OR_RETURN(const Family* family, find_family(config));
  return family->windows(config);
}

Result<std::vector<int64_t>> layer_kv_sources(const hf::ModelConfig& config) {
  OG_ASSIGN_OR_RETURN(const Family* family, find_family(config));
  if (family->kv_sources) return family->kv_sources(config);
  std::vector<int64_t> own;
  for (int64_t l = 0; l < config.num_hidden_layers; ++l) own.push_back(l);
  return own;
}

}  // namespace og::reference
