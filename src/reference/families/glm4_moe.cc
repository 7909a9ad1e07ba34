// GLM-4.5 (Glm4MoeConfig): Llama's pre-norm block with q/k/v biases iff attention_bias,
// q_norm/k_norm over head_dim iff use_qk_norm, the rope in rotate-half order on the first
// int(head_dim * partial_rotary_factor) dims, dense MLPs on the first first_k_dense_replace
// layers and Glm4MoeMoE after them: the sigmoid router with e_score_correction_bias and
// expert groups, experts mlp.experts.E.*, the ungated shared experts (blocks.h sparse_moe).
// The multi-token-prediction layers after the last are not read. Its decoder is the
// llama-like one (llama_like.cc), with these switches. Followed:
// models/glm4_moe/modeling_glm4_moe.py + configuration_glm4_moe.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "glm4_moe",
                           .reads_use_qk_norm = true,
                           .reads_attention_bias_qkv_only = true,
                           .partial_rotary = true,
                           .moe = MoeKind::kGlm4Moe};
constexpr ModelType kTypes[] = {{"glm4_moe", false}};

}  // namespace

// Glm4MoeConfig's defaults for keys a config.json may omit.
const Family kGlm4MoeFamily{"glm4_moe", kTypes, false,
                            R"({"rms_norm_eps": 1e-5, "partial_rotary_factor": 0.5, "rope_theta": 10000.0,
                                "num_key_value_heads": 8, "intermediate_size": 10944, "moe_intermediate_size": 1408,
                                "num_experts_per_tok": 8, "n_shared_experts": 1, "n_routed_experts": 128,
                                "routed_scaling_factor": 1.0, "n_group": 1, "topk_group": 1,
                                "first_k_dense_replace": 1, "norm_topk_prob": true, "use_qk_norm": false,
                                "attention_bias": false, "tie_word_embeddings": false})",
                            &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>, nullptr};

}  // namespace og::reference
