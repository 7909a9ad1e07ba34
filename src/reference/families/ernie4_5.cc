// ERNIE 4.5 dense (Ernie4_5Config): Llama's decoder, biases on q/k/v/o and the MLP iff
// use_bias, the rope on interleaved pairs of the whole head. Its decoder is the llama-like one
// (llama_like.cc). Followed: models/ernie4_5/modular_ernie4_5.py + configuration_ernie4_5.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "ernie4_5", .reads_use_bias = true, .rope_pairs = true};
constexpr ModelType kTypes[] = {{"ernie4_5", false}};

}  // namespace

// Ernie4_5Config's defaults for keys a config.json may omit (tie_word_embeddings=True).
const Family kErnie45Family{"ernie4_5", kTypes, true,
                            R"({"rms_norm_eps": 1e-5, "rope_theta": 500000.0, "num_key_value_heads": 2, "head_dim": 128})",
                            &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
