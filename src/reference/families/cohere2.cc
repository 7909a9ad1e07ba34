// Cohere2 (Cohere2Config): Cohere's block; layer_types, else sliding unless (i + 1) %
// sliding_window_pattern == 0 (default 4); the rope on sliding layers only; head_dim always
// hidden_size / heads. Its decoder is layer_norm_like.cc's. Followed: models/cohere2/modular_cohere2.py.
#include "reference/families/families.h"
#include "reference/families/layer_norm_like.h"

namespace og::reference {
namespace {

constexpr LnVariant kVariant{.family = "cohere2", .eps_key = "layer_norm_eps", .o_proj = "o_proj", .final_norm = "norm",
                             .parallel = Parallel::kAlways, .attention_bias_key = "attention_bias", .norm_bias = false,
                             .windows = Windows::kPattern, .rope_pairs = true, .rope_on_sliding_only = true,
                             .head_dim_from_hidden = true, .logit_scale_key = "logit_scale"};
constexpr ModelType kTypes[] = {{"cohere2", false}};

}  // namespace

// Cohere2Config's defaults for keys a config.json may omit (tie_word_embeddings=True).
const Family kCohere2Family{"cohere2", kTypes, true,
                            R"({"layer_norm_eps": 1e-5, "hidden_act": "silu", "rope_theta": 10000.0, "logit_scale": 0.0625,
                                "sliding_window": 4096})",
                            &layer_norm_like_forward_of<kVariant>, &layer_norm_like_windows_of<kVariant>};

}  // namespace og::reference
