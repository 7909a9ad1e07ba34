// Granite (GraniteConfig): Llama's decoder with embedding_multiplier on the embeddings,
// attention_multiplier as the score scale, residual_multiplier on each sublayer's output and
// the logits divided by logits_scaling. Its decoder is the llama-like one (llama_like.cc),
// with these switches. Followed: models/granite/modular_granite.py, modeling_granite.py +
// configuration_granite.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "granite", .reads_attention_bias = true, .reads_mlp_bias = true, .multipliers = true};
constexpr ModelType kTypes[] = {{"granite", false}};

}  // namespace

// GraniteConfig's defaults for keys a config.json may omit (the multipliers' 1.0 are read
// where they are used).
const Family kGraniteFamily{"granite", kTypes, false, R"({"rms_norm_eps": 1e-6})", &llama_like_forward_of<kVariant>,
                            &llama_like_windows_of<kVariant>};

}  // namespace og::reference
