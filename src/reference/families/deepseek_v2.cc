// DeepSeek-V2 (DeepseekV2Config): multi-head latent attention (mla.h) with the rope always on
// interleaved pairs (apply_rotary_emb's view_as_complex), and from first_k_dense_replace on
// DeepseekV2Moe: softmax probabilities, topk_method greedy or group_limited_greedy, never
// renormalized, times routed_scaling_factor, plus the shared experts.
// Followed: models/deepseek_v2/modeling_deepseek_v2.py + configuration_deepseek_v2.py.
#include "reference/families/families.h"
#include "reference/families/mla.h"

namespace og::reference {
namespace {

Result<std::vector<double>> deepseek_v2_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt, std::span<const int32_t> tokens,
                                          const ForwardOptions&) {
  return mla_forward(c, ckpt, tokens, MlaVariant{.rope_interleave_field = false, .softmax_router = true});
}

constexpr ModelType kTypes[] = {{"deepseek_v2", false}};

}  // namespace

// DeepseekV2Config's defaults for keys a config.json may omit.
const Family kDeepseekV2Family{"deepseek_v2", kTypes, false,
                               R"({"rms_norm_eps": 1e-6, "rope_theta": 10000.0, "intermediate_size": 11008,
                                   "moe_intermediate_size": 1407, "n_shared_experts": 2, "n_routed_experts": 64,
                                   "routed_scaling_factor": 1.0, "kv_lora_rank": 512, "q_lora_rank": 1536,
                                   "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
                                   "first_k_dense_replace": 0, "topk_method": "greedy", "norm_topk_prob": false,
                                   "attention_bias": false, "tie_word_embeddings": false})",
                               &deepseek_v2_forward, &mla_windows, nullptr,
                               R"({"qk_rope_head_dim": "head_dim"})"};

}  // namespace og::reference
