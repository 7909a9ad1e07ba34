// The two sublayers every supported family is built from, with their weights as found in
// the checkpoint: self-attention (projections, optional per-head q/k norm, RoPE, masked
// attention, output projection) and the gated MLP down(act(gate(x)) * up(x)).
// The families decide names, norms around the sublayers and which options are on.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "hf/safetensors.h"
#include "reference/toolkit.h"

namespace og::reference {

struct AttentionWeights {
  // Separate projections q [Hq*D, hidden], k and v [Hkv*D, hidden] ...
  const hf::TensorView* q = nullptr;
  const hf::TensorView* k = nullptr;
  const hf::TensorView* v = nullptr;
  // ... or phi3's fused qkv_proj [Hq*D + 2*Hkv*D, hidden], rows in q, k, v order.
  const hf::TensorView* qkv = nullptr;
  const hf::TensorView* q_bias = nullptr;  // optional biases [out]
  const hf::TensorView* k_bias = nullptr;
  const hf::TensorView* v_bias = nullptr;
  const hf::TensorView* o = nullptr;       // [hidden, Hq*D]
  const hf::TensorView* o_bias = nullptr;
  // Per-head RMSNorm over head_dim applied to q and k before RoPE (qwen3, gemma3); empty = none.
  std::vector<double> q_norm, k_norm;
  NormStyle qk_norm_style = NormStyle::kWeight;
  double qk_norm_eps = 1e-6;
  bool qk_norm_whole = false;  // olmo2: over all of q's (k's) features, weights [Hq*D] ([Hkv*D])
  bool qk_norm_after_rope = false;  // hunyuan_v1_dense: the norms on the rotated q and k
  // phi: q_norm/k_norm are torch LayerNorms over head_dim with these biases [D].
  bool qk_layer_norm = false;
  std::vector<double> q_norm_bias, k_norm_bias;
};

struct AttentionShape {
  AttentionParams attn;         // heads, head_dim, scale, softcap, window
  std::vector<double> inv_freq; // rotary frequencies; 2 * size() dims of each head rotate
  double rope_attention_factor = 1.0;  // YaRN, LongRoPE: cos and sin times this
  std::vector<double> long_inv_freq;   // LongRoPE: positions >= long_from rotate with these
  int64_t long_from = 0;
  bool rope_pairs = false;             // Cohere, GLM: rotate interleaved pairs (apply_rope_pairs)
};

// x [T, hidden] (already normalized) -> o_proj(attention) [T, hidden].
Mat self_attention(const Mat& x, const AttentionWeights& w, const AttentionShape& s);

struct MlpWeights {
  const hf::TensorView* gate = nullptr;     // [I, hidden]
  const hf::TensorView* up = nullptr;       // [I, hidden]
  const hf::TensorView* gate_up = nullptr;  // phi3: [2I, hidden], gate rows first, then up
  const hf::TensorView* down = nullptr;     // [hidden, I]
  const hf::TensorView* gate_bias = nullptr;
  const hf::TensorView* up_bias = nullptr;
  const hf::TensorView* down_bias = nullptr;
  int64_t intermediate = 0;
  Activation act = Activation::kSilu;
  // plain_mlp with XIELUActivation instead of act: its stored alpha_p, alpha_n, beta, eps.
  bool has_xielu = false;
  std::array<double, 4> xielu{};
};

// x [T, hidden] (already normalized) -> down(act(gate(x)) * up(x)) [T, hidden].
Mat gated_mlp(const Mat& x, const MlpWeights& w);

// x [T, hidden] (already normalized) -> down(act(up(x) + up_bias)) + down_bias [T, hidden]:
// the MLP without a gate (StarCoder2's c_fc/c_proj, Phi's fc1/fc2); w.gate unused.
Mat plain_mlp(const Mat& x, const MlpWeights& w);

// A sparse mixture-of-experts block as transformers' Mixtral/Qwen-MoE blocks compute it:
// router logits = x router^T [T, n_experts]; probabilities = softmax over all experts; each
// token takes its top_k experts by probability (ties: the lower expert index first), their
// probabilities renormalized to sum 1 when `normalize`; the output is the sum over the chosen
// experts of probability * expert(x), each expert a gated MLP. With a shared expert (Qwen2-MoE)
// the output adds sigmoid(x shared_gate^T) * shared(x) for every token.
// With `sigmoid` (DeepseekV3TopkRouter, Glm4MoeTopkRouter) the router logits (f32 in
// transformers) go through a sigmoid instead: the experts are chosen by sigmoid + choice_bias
// within the topk_group groups (of n_group) whose two best choice scores sum highest, choice
// scores outside them read as 0; the weights are the chosen sigmoids, over their sum + 1e-20
// when `normalize`, times routed_scale.
struct MoeWeights {
  const hf::TensorView* router = nullptr;  // [n_experts, hidden]
  std::vector<MlpWeights> experts;         // [n_experts]
  int64_t top_k = 1;
  bool normalize = false;
  std::optional<MlpWeights> shared;             // the always-on expert
  const hf::TensorView* shared_gate = nullptr;  // [1, hidden]; none: the shared expert is ungated
  bool sigmoid = false;
  // [n_experts] or empty: added to the sigmoids (with `sigmoid`) or to the probabilities (ERNIE
  // 4.5 MoE's Ernie4_5_MoeStatics) that pick the experts, not to their weights.
  std::vector<double> choice_bias;
  double norm_min = 0;  // softmax with normalize: the weights over max(their sum, norm_min)
  // Expert groups: the sigmoid router's (a group scored by its two best choices, the others'
  // never picked) or, under the softmax, DeepSeek-V2's group-limited one (scored by its best,
  // the others' probabilities read 0).
  int64_t n_group = 1, topk_group = 1;
  double routed_scale = 1.0;
  // Views into fused expert tensors ([E, R, C] sliced to each expert's [R, C]) that
  // `experts` points at, when the checkpoint stores them so (a deque: stable addresses).
  std::shared_ptr<std::deque<hf::TensorView>> slices;
};
Mat sparse_moe(const Mat& x, const MoeWeights& w);

}  // namespace og::reference
