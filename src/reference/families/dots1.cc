// dots.llm1 (Dots1Config): Qwen3's attention (q_norm/k_norm over head_dim before RoPE, biases on
// q/k/v/o iff attention_bias, sliding layers by Dots1Config's rule) with DeepSeek-V3's mixture
// from first_k_dense_replace on: the sigmoid router with e_score_correction_bias and expert
// groups, experts mlp.experts.E.*, the ungated shared experts (blocks.h sparse_moe). Its decoder
// is the llama-like one (llama_like.cc). Followed: models/dots1/modular_dots1.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "dots1",
                           .sliding = SlidingRule::kDots1,
                           .qk_norm = true,
                           .reads_attention_bias = true,
                           .moe = MoeKind::kGlm4Moe};
constexpr ModelType kTypes[] = {{"dots1", false}};

}  // namespace

// Dots1Config's defaults for keys a config.json may omit.
const Family kDots1Family{"dots1", kTypes, false,
                          R"({"rms_norm_eps": 1e-6, "rope_theta": 10000.0, "num_key_value_heads": 32,
                              "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_group": 1, "topk_group": 1,
                              "first_k_dense_replace": 0, "norm_topk_prob": false, "routed_scaling_factor": 1.0,
                              "sliding_window": 4096, "max_window_layers": 62, "attention_bias": false,
                              "tie_word_embeddings": false})",
                          &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>, nullptr};

}  // namespace og::reference
