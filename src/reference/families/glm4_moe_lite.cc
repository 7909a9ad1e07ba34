// GLM-4.7-Flash (Glm4MoeLiteConfig): multi-head latent attention (mla.h) with the pairing from
// rope_interleave, and on mlp_layer_types' "sparse" layers (default all but the first)
// Glm4MoeLiteMoE: the sigmoid router of GLM-4.5 with its shared experts.
// Followed: models/glm4_moe_lite/modeling_glm4_moe_lite.py + configuration_glm4_moe_lite.py.
#include "reference/families/families.h"
#include "reference/families/mla.h"

namespace og::reference {
namespace {

Result<std::vector<double>> glm4_moe_lite_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt, std::span<const int32_t> tokens,
                                          const ForwardOptions&) {
  return mla_forward(c, ckpt, tokens, MlaVariant{.mlp_layer_types = true});
}

constexpr ModelType kTypes[] = {{"glm4_moe_lite", false}};

}  // namespace

// Glm4MoeLiteConfig's defaults for keys a config.json may omit.
const Family kGlm4MoeLiteFamily{"glm4_moe_lite", kTypes, false,
                                R"({"rms_norm_eps": 1e-5, "rope_theta": 10000.0, "num_key_value_heads": 20,
                                    "intermediate_size": 10240, "moe_intermediate_size": 1536, "num_experts_per_tok": 4,
                                    "n_shared_experts": 1, "n_routed_experts": 64, "routed_scaling_factor": 1.8,
                                    "kv_lora_rank": 512, "q_lora_rank": 768, "qk_rope_head_dim": 64, "v_head_dim": 256,
                                    "qk_nope_head_dim": 192, "n_group": 1, "topk_group": 1, "norm_topk_prob": true,
                                    "rope_interleave": true, "attention_bias": false, "tie_word_embeddings": false})",
                                &glm4_moe_lite_forward, &mla_windows, nullptr,
                               R"({"qk_rope_head_dim": "head_dim"})"};

}  // namespace og::reference
