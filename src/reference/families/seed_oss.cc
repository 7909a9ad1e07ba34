// Seed-OSS (SeedOssConfig): Llama's pre-norm decoder with biases on q, k and v iff
// attention_bias (default true), on o_proj iff attention_out_bias and on the MLP iff mlp_bias;
// residual_dropout is training-only. Its decoder is the llama-like one (llama_like.cc).
// Followed: models/seed_oss/modular_seed_oss.py + configuration_seed_oss.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "seed_oss", .reads_mlp_bias = true, .reads_attention_out_bias = true};
constexpr ModelType kTypes[] = {{"seed_oss", false}};

}  // namespace

// SeedOssConfig's defaults for keys a config.json may omit.
const Family kSeedOssFamily{"seed_oss", kTypes, false,
                            R"({"rms_norm_eps": 1e-6, "rope_theta": 10000.0, "head_dim": 128,
                                "num_key_value_heads": 8, "attention_bias": true, "attention_out_bias": false,
                                "mlp_bias": false, "tie_word_embeddings": false})",
                            &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
