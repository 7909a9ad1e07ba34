// The llama-like decoder the reference families llama, mistral, mixtral, qwen2, qwen2_moe,
// qwen3, qwen3_moe, phi3, smollm3, granite, olmo2, olmo3, olmoe, granitemoe, glm, glm4, glm4_moe
// and ernie4_5 share, with the switches by which they differ (transformers generates
// them from the same modules). Each family's file holds its Variant and its entry.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"
#include "reference/reference.h"

namespace og::reference {

enum class SlidingRule {
  kNone,        // llama: LlamaModel only ever builds a causal mask
  kEveryLayer,  // mistral, phi3: sliding_window (when not null) on every layer
  kQwen,        // qwen2/3: sliding iff use_sliding_window and layer >= max_window_layers
  kSmolLM3,     // smollm3: sliding iff use_sliding_window, sliding_window set and a NoPE layer
  kOlmo3,       // olmo3: layer_types, else every layer but each fourth ((i + 1) % 4 != 0) slides
  kDots1,       // dots1: layer_types, else sliding iff sliding_window is set and layer >= max_window_layers
  kExaone4,     // exaone4: layer_types, else none without sliding_window, else (i + 1) % sliding_window_pattern != 0
};

// Which sparse mixture-of-experts block replaces the MLP, and how its config and tensors are named.
enum class MoeKind {
  kNone,
  kQwen3,    // qwen3_moe: mlp.gate, mlp.experts.E.{gate,up,down}_proj on the sparse layers,
             // renormalized iff norm_topk_prob
  kQwen2,    // qwen2_moe: kQwen3's block plus mlp.shared_expert.{gate,up,down}_proj scaled by
             // sigmoid(mlp.shared_expert_gate(x))
  kMixtral,  // mixtral: block_sparse_moe.gate, block_sparse_moe.experts.E.{w1,w3,w2} (gate,
             // up, down) on every layer, always renormalized
  kOlmoe,    // olmoe: kQwen3's block on every layer, the experts intermediate_size wide
  kGraniteMoe,  // granitemoe: block_sparse_moe.router.layer, the top-k logits softmaxed, experts
                // fused in block_sparse_moe.input_linear [E, 2I, H] (gate rows, then up) and
                // output_linear [E, H, I], on every layer
  kGlm4Moe,  // glm4_moe: from layer first_k_dense_replace on, mlp.gate (+ e_score_correction_bias)
             // as a sigmoid router over n_routed_experts in n_group groups, experts
             // mlp.experts.E.{gate,up,down}_proj and the ungated mlp.shared_experts
             // (moe_intermediate_size * n_shared_experts)
  kMiniMaxM2,  // minimax_m2: kMixtral's names on every layer, the router a sigmoid whose
               // experts are picked by sigmoid + block_sparse_moe.e_score_correction_bias,
               // weighted by their sigmoids renormalized to sum 1
  kErnie45Moe,  // ernie4_5_moe: on layers (l + 1) % moe_layer_interval == 0 within
                // [moe_layer_start_index, moe_layer_end_index], mlp.gate softmaxed, experts picked
                // by probability + mlp.moe_statics.e_score_correction_bias, renormalized over
                // max(sum, moe_norm_min), experts mlp.experts.E.*, ungated mlp.shared_experts
};

struct Variant {
  const char* family;
  SlidingRule sliding = SlidingRule::kNone;
  bool fused = false;                 // phi3: qkv_proj and gate_up_proj
  bool qk_norm = false;               // qwen3: q_norm/k_norm over head_dim before RoPE
  // hunyuan_v1_dense: with qk_norm, query_layernorm/key_layernorm over head_dim after RoPE.
  bool qk_norm_after_rope = false;
  bool reads_use_qk_norm = false;     // glm4_moe: qk_norm iff use_qk_norm
  bool qkv_bias = false;              // qwen2: q/k/v always biased, o_proj never
  bool reads_qkv_bias = false;        // qwen2_moe: q/k/v biased iff qkv_bias (default true), o_proj never
  // glm, glm4: q/k/v biased iff attention_bias (default true), o_proj never.
  bool reads_attention_bias_qkv_only = false;
  bool reads_use_bias = false;        // ernie4_5: q/k/v/o and the MLP biased iff use_bias (default false)
  bool fused_gate_up = false;         // glm, glm4: gate_up_proj with separate q/k/v projections
  bool rope_pairs = false;            // glm, glm4, ernie4_5: the rope turns interleaved pairs (apply_rope_pairs)
  // glm4: x += post_self_attn_layernorm(attn(input_layernorm(x)));
  //       x += post_mlp_layernorm(mlp(post_attention_layernorm(x))).
  bool glm4_norms = false;
  bool reads_attention_bias = false;  // llama, qwen3: attention_bias on q, k, v and o
  bool reads_mlp_bias = false;        // llama: mlp_bias on gate, up and down
  bool plain_mlp = false;             // arcee: the ungated down_proj(act(up_proj x))
  bool xielu_mlp = false;             // apertus: with plain_mlp, act = each layer's xIELU (mlp.act_fn.*)
  const char* input_norm = "input_layernorm";        // apertus: attention_layernorm
  const char* ff_norm = "post_attention_layernorm";  // apertus: feedforward_layernorm
  // seed_oss: q/k/v biased iff attention_bias (default true), o_proj iff attention_out_bias.
  bool reads_attention_out_bias = false;
  bool partial_rotary = false;        // phi3: partial_rotary_factor
  bool default_rope_only = false;     // phi3: Phi3Config accepts only default (and longrope)
  bool nope_layers = false;           // smollm3: no_rope_layers / no_rope_layer_interval
  MoeKind moe = MoeKind::kNone;
  // granite: embedding_multiplier, attention_multiplier (the score scale), residual_multiplier
  // (on each sublayer's output) and logits_scaling (the logits' divisor), each 1.0 when absent.
  bool multipliers = false;
  // olmo2: no input_layernorm; post_attention_layernorm and post_feedforward_layernorm on the
  // sublayers' outputs inside the residual; q_norm/k_norm over the whole projection.
  bool post_norms = false;
  bool qk_norm_whole = false;         // olmoe: q_norm/k_norm over the whole projection, pre-norm block
  bool post_norms_head_qk = false;    // exaone4: post_norms with q_norm/k_norm per head (qwen3's)
  bool nope_full_if_sliding = false;  // exaone4: with a sliding_window, the full layers skip the rope
  bool shared_mlp = false;            // granitemoeshared: kGraniteMoe's block plus shared_mlp (shared_intermediate_size)
  // olmo3: sliding layers rotate with the default rope of rope_theta, full layers with the
  // configured rope (rope_scaling, or rope_parameters' per-layer-type entries).
  bool rope_by_layer_type = false;
};

Result<std::vector<double>> llama_like_forward(const Variant& variant, const hf::ModelConfig& c,
                                               const hf::Checkpoint& ckpt, std::span<const int32_t> tokens);
Result<std::vector<int64_t>> llama_like_windows(const Variant& variant, const hf::ModelConfig& c);

// A family's Family::forward and Family::windows: the decoder with its Variant.
template <const Variant& V>
Result<std::vector<double>> llama_like_forward_of(const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                                  std::span<const int32_t> tokens, const ForwardOptions&) {
  return llama_like_forward(V, c, ckpt, tokens);
}
template <const Variant& V>
Result<std::vector<int64_t>> llama_like_windows_of(const hf::ModelConfig& c) {
  return llama_like_windows(V, c);
}

}  // namespace og::reference
