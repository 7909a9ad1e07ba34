// DeepSeek-V3 (DeepseekV3Config): multi-head latent attention (mla.h) with the pairing from
// rope_interleave, and from first_k_dense_replace on DeepseekV3MoE (the sigmoid router).
// Followed: models/deepseek_v3/modeling_deepseek_v3.py + configuration_deepseek_v3.py.
#include "reference/families/families.h"
#include "reference/families/mla.h"

namespace og::reference {
namespace {

Result<std::vector<double>> deepseek_v3_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt, std::span<const int32_t> tokens,
                                          const ForwardOptions&) {
  return mla_forward(c, ckpt, tokens, MlaVariant{});
}

constexpr ModelType kTypes[] = {{"deepseek_v3", false}, {"kimi_k2", false}};  // Kimi-K2: DeepSeek-V3's classes

}  // namespace

// DeepseekV3Config's defaults for keys a config.json may omit.
const Family kDeepseekV3Family{"deepseek_v3", kTypes, false,
                               R"({"rms_norm_eps": 1e-6, "rope_theta": 10000.0, "num_key_value_heads": 128,
                                   "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_experts_per_tok": 8,
                                   "n_shared_experts": 1, "n_routed_experts": 256, "routed_scaling_factor": 2.5,
                                   "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128,
                                   "qk_nope_head_dim": 128, "n_group": 8, "topk_group": 4, "first_k_dense_replace": 3,
                                   "norm_topk_prob": true, "rope_interleave": true, "attention_bias": false,
                                   "tie_word_embeddings": false})",
                               &deepseek_v3_forward, &mla_windows, nullptr,
                               R"({"qk_rope_head_dim": "head_dim"})"};

}  // namespace og::reference
