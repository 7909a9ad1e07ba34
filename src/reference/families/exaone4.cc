// EXAONE 4.0 (Exaone4Config): OLMo 2's block (norms on the sublayers' outputs only, no
// input_layernorm) with q_norm/k_norm over each head before the rope (Exaone4Attention), no
// biases; sliding layers from layer_types, else every layer but each sliding_window_pattern-th
// when sliding_window is set; then only the sliding layers apply the rope (global NoPE). Its
// decoder is the llama-like one (llama_like.cc). Followed: models/exaone4/modular_exaone4.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "exaone4",
                           .sliding = SlidingRule::kExaone4,
                           .qk_norm = true,
                           .post_norms = true,
                           .post_norms_head_qk = true,
                           .nope_full_if_sliding = true};
constexpr ModelType kTypes[] = {{"exaone4", false}};

}  // namespace

// Exaone4Config's defaults for keys a config.json may omit.
const Family kExaone4Family{"exaone4", kTypes, false,
                            R"({"rms_norm_eps": 1e-5, "rope_theta": 10000.0, "num_key_value_heads": 32,
                                "sliding_window": 4096, "sliding_window_pattern": 4, "tie_word_embeddings": false})",
                            &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
