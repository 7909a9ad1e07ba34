// Mistral (MistralConfig): sliding_window, when set, on every layer. Its decoder is the llama-like one (llama_like.cc),
// with these switches. Followed: models/mistral/modeling_mistral.py + configuration_mistral.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "mistral", .sliding = SlidingRule::kEveryLayer};
constexpr ModelType kTypes[] = {{"mistral", false}};

}  // namespace

// MistralConfig's defaults for keys a config.json may omit.
const Family kMistralFamily{"mistral", kTypes, false,
                            R"({"rms_norm_eps": 1e-6, "num_key_value_heads": 8, "sliding_window": 4096})",
                            &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
