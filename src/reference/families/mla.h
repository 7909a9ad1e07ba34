// The families with DeepSeek's multi-head latent attention (deepseek_v2, deepseek_v3,
// glm4_moe_lite): Llama's pre-norm block whose attention per head h, as DeepseekV2Attention /
// DeepseekV3Attention compute it, is
//   q = q_b_proj(q_a_layernorm(q_a_proj x)) (q_proj x when q_lora_rank is null), split per head
//   into q_nope [qk_nope_head_dim] and q_pe [qk_rope_head_dim];
//   [ckv | k_pe] = kv_a_proj_with_mqa x; [k_nope | v] per head = kv_b_proj(kv_a_layernorm ckv);
//   the rope on q_pe and the one k_pe (pairs (2i, 2i+1) when rope_interleave, or always for
//   DeepSeek-V2's complex-number rope; else rotate_half);
//   scores = (q_nope·k_nope + q_pe·k_pe) · scaling, scaling = (dn + dr)^-0.5 times
//   yarn_get_mscale(factor, mscale_all_dim)² under a scaled rope; causal softmax; Σ p v;
//   o_proj. The two latent norms use RMSNorm's default eps 1e-6. The MLP: the dense one, or
// the mixture with shared experts (blocks.h sparse_moe) routed by the sigmoid router
// (e_score_correction_bias, n_group / topk_group) or DeepSeek-V2's softmax (greedy or
// group_limited_greedy, never renormalized), times routed_scaling_factor. Layers past the last
// (num_nextn_predict_layers) are not read.
#pragma once
#include <span>
#include <vector>

#include "reference/families/families.h"

namespace og::reference {

struct MlaVariant {
  bool rope_interleave_field = true;  // the pairing from rope_interleave; false: always pairs
  bool softmax_router = false;        // DeepseekV2Moe; else the sigmoid router
  bool mlp_layer_types = false;       // the mixture's layers from mlp_layer_types; else first_k_dense_replace
};

Result<std::vector<double>> mla_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt, std::span<const int32_t> tokens,
                                        const MlaVariant& var);
// Every layer full.
Result<std::vector<int64_t>> mla_windows(const hf::ModelConfig& c);

}  // namespace og::reference
