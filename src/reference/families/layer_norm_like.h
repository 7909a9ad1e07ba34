// The decoders of StarCoder2, Phi, StableLM, Cohere, Cohere2 and Nemotron: LayerNorms (mean subtracted,
// a weight and, except Cohere's, a bias) where the llama-like ones have RMSNorm, and the
// parallel block x + attn(n) + mlp(n) of Phi, Cohere (and StableLM's option). transformers
// writes them as separate modules; they share the attention of blocks.h and differ in names,
// biases, the MLP's gate, the rope's pairing, the block's shape and the windows, which the
// Variant holds. Each family's file holds its Variant and its entry.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"
#include "reference/reference.h"

namespace og::reference {

enum class Windows {
  kNone,        // phi, stablelm, cohere: every layer full
  kEveryLayer,  // starcoder2: sliding_window (when set) on every layer
  kPattern,     // cohere2: layer_types, else layer i slides iff (i + 1) % sliding_window_pattern != 0
};

enum class Parallel {
  kNever,   // starcoder2: x += attn(ln1(x)); x += mlp(ln2(x))
  kAlways,  // phi: x = attn(ln1(x)) + mlp(ln1(x)) + x
  kField,   // stablelm: parallel iff use_parallel_residual
};

struct LnVariant {
  const char* family;
  const char* eps_key;             // the LayerNorms' eps field (norm_epsilon, layer_norm_eps)
  const char* o_proj;              // self_attn.NAME: o_proj, dense
  const char* mlp_up = nullptr;    // plain MLP mlp.DOWN(act(mlp.UP x)); null: gated gate/up/down_proj
  const char* mlp_down = nullptr;
  const char* final_norm;          // model.NAME: norm, final_layernorm
  Parallel parallel = Parallel::kNever;
  // Biases: every projection iff the bool field `all_bias_key` (starcoder2 use_bias), or
  // q/k/v only iff `qkv_bias_key` (stablelm use_qkv_bias), or always (phi: every projection
  // and the head).
  // q/k/v/o (not the MLP) iff `attention_bias_key` (cohere: attention_bias).
  const char* all_bias_key = nullptr;
  const char* qkv_bias_key = nullptr;
  const char* attention_bias_key = nullptr;
  const char* mlp_bias_key = nullptr;  // nemotron: the MLP's biases iff this field (default false)
  bool always_bias = false;
  bool norm_bias = true;             // cohere: CohereLayerNorm has a weight only
  double norm_offset = 0;            // nemotron: NemotronLayerNorm1P scales by weight + 1
  Windows windows = Windows::kNone;
  bool rope_pairs = false;           // cohere: the rope rotates interleaved pairs
  bool rope_on_sliding_only = false; // cohere2: full layers apply no rope
  bool head_dim_from_hidden = false; // cohere2: head_dim is hidden_size / heads (a config's head_dim must agree)
  const char* logit_scale_key = nullptr;  // cohere: the logits times logit_scale (default 0.0625)
  bool partial_rotary = false;       // phi, stablelm: partial_rotary_factor
  // phi: qk_layernorm puts LayerNorms over head_dim (q_layernorm, k_layernorm) on q and k
  // before the rotation; stablelm: one per head.
  const char* qk_layernorm_key = nullptr;
  const char* q_norm = "q_layernorm";  // self_attn.NAME
  const char* k_norm = "k_layernorm";
  bool qk_norm_per_head = false;       // cohere: NAME.weight [heads, head_dim], a LayerNorm per head
  const char* qk_norm_heads_list = nullptr;  // stablelm: instead NAME.LIST.{h}.weight [head_dim] per head
};

Result<std::vector<double>> layer_norm_like_forward(const LnVariant& variant, const hf::ModelConfig& c,
                                                    const hf::Checkpoint& ckpt, std::span<const int32_t> tokens);
Result<std::vector<int64_t>> layer_norm_like_windows(const LnVariant& variant, const hf::ModelConfig& c);

template <const LnVariant& V>
Result<std::vector<double>> layer_norm_like_forward_of(const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                                       std::span<const int32_t> tokens, const ForwardOptions&) {
  return layer_norm_like_forward(V, c, ckpt, tokens);
}
template <const LnVariant& V>
Result<std::vector<int64_t>> layer_norm_like_windows_of(const hf::ModelConfig& c) {
  return layer_norm_like_windows(V, c);
}

}  // namespace og::reference
