// Cohere (CohereConfig): the parallel block from one weight-only LayerNorm (eps
// layer_norm_eps), q/k/v/o biases iff attention_bias, Llama's gated MLP, a rope on
// interleaved pairs, logits times logit_scale; with use_qk_norm (Command R+) q and k LayerNormed
// per head (weight [heads, head_dim], no bias) before the rope.
// Its decoder is layer_norm_like.cc's. Followed: models/cohere/modular_cohere.py + configuration.
#include "reference/families/families.h"
#include "reference/families/layer_norm_like.h"

namespace og::reference {
namespace {

constexpr LnVariant kVariant{.family = "cohere", .eps_key = "layer_norm_eps", .o_proj = "o_proj", .final_norm = "norm",
                             .parallel = Parallel::kAlways, .attention_bias_key = "attention_bias", .norm_bias = false,
                             .rope_pairs = true, .logit_scale_key = "logit_scale", .qk_layernorm_key = "use_qk_norm",
                             .q_norm = "q_norm", .k_norm = "k_norm",
                             .qk_norm_per_head = true};
constexpr ModelType kTypes[] = {{"cohere", false}};

}  // namespace

// CohereConfig's defaults for keys a config.json may omit (tie_word_embeddings=True).
const Family kCohereFamily{"cohere", kTypes, true,
                           R"({"layer_norm_eps": 1e-5, "hidden_act": "silu", "rope_theta": 10000.0, "logit_scale": 0.0625})",
                           &layer_norm_like_forward_of<kVariant>, &layer_norm_like_windows_of<kVariant>};

}  // namespace og::reference
