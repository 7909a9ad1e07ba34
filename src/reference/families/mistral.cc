// Mistral (MistralConfig): sliding_window, when set, on every layer. Its decoder is the llama-like one (llama_like.cc),
// with these switches. Followed: models/mistral/modeling_mistral.py + configuration_mistral.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "mistral", .sliding = SlidingRule::kEveryLayer};
constexpr ModelType kTypes[] = {{"mistral", false}};

Result<std::vector<double>> this_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                    std::span<const int32_t> tokens, const ForwardOptions&) {
  return llama_like_forward(kVariant, c, ckpt, tokens);
}

Result<std::vector<int64_t>> this_windows(const hf::ModelConfig& c) { return llama_like_windows(kVariant, c); }

}  // namespace

// MistralConfig's defaults for keys a config.json may omit.
const Family kMistralFamily{"mistral", kTypes, false,
                            R"({"rms_norm_eps": 1e-6, "num_key_value_heads": 8, "sliding_window": 4096})",
                            &this_forward, &this_windows};

}  // namespace og::reference
