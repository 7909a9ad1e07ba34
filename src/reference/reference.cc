// The registry: one line per family, dispatching on ModelConfig::family.
#include "reference/reference.h"

#include <algorithm>
#include <array>
#include <string>

#include "reference/families/families.h"
#include "reference/toolkit.h"

namespace og::reference {

namespace {
constexpr std::array<const Family*, 9> kFamilies{
    &kLlamaFamily, &kMistralFamily, &kQwen2Family, &kQwen3Family, &kPhi3Family, &kGemma2Family, &kGemma3Family,
    &kGemma4Family, &kGemma3nFamily,
};
}  // namespace

Result<const Family*> find_family(const hf::ModelConfig& config) {
  std::string names;
  for (const Family* f : kFamilies) {
    if (f->name == config.family) return f;
    names += (names.empty() ? "" : ", ") + std::string(f->name);
  }
  return unsupported("{}: model family '{}' (model_type '{}') has no reference forward pass (have: {})", config.path,
                     config.family, config.model_type, names);
}

Result<std::vector<double>> forward(const hf::ModelConfig& config, const hf::Checkpoint& ckpt,
                                    std::span<const int32_t> tokens, const ForwardOptions& options) {
  if (tokens.empty()) return bad_input("reference forward: no tokens given");
  OG_ASSIGN_OR_RETURN(const Family* family, find_family(config));
  if (options.float32_activations && family != &kGemma4Family && family != &kGemma3nFamily)
    return unsupported("ForwardOptions.float32_activations is implemented for gemma4 and gemma3n only, not {}",
                       config.family);
  if (options.int8_linear_inputs.empty()) return family->forward(config, ckpt, tokens, options);
  std::vector<int64_t> other_way = options.int8_round_other_way;
  std::sort(other_way.begin(), other_way.end());
  Int8Inputs state{.weights = &options.int8_linear_inputs, .tie_window = options.int8_tie_window,
                   .near_ties = options.int8_near_ties, .round_other_way = &other_way};
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
