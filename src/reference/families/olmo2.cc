// OLMo 2 (Olmo2Config): no input_layernorm; post_attention_layernorm and
// post_feedforward_layernorm normalize the sublayers' outputs inside the residual; q_norm and
// k_norm over the whole projection. Its decoder is the llama-like one (llama_like.cc), with
// these switches. Followed: models/olmo2/modular_olmo2.py, modeling_olmo2.py +
// configuration_olmo2.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "olmo2", .reads_attention_bias = true, .post_norms = true};
constexpr ModelType kTypes[] = {{"olmo2", false}};

}  // namespace

// Olmo2Config's defaults for keys a config.json may omit.
const Family kOlmo2Family{"olmo2", kTypes, false, R"({"rms_norm_eps": 1e-5})", &llama_like_forward_of<kVariant>,
                          &llama_like_windows_of<kVariant>};

}  // namespace og::reference
