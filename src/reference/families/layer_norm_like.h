// The decoders of StarCoder2, Phi and StableLM: torch LayerNorms (mean subtracted, weight and
// bias) where the llama-like ones have RMSNorm, and Phi's (and StableLM's optional) parallel
// block x + attn(n) + mlp(n). transformers writes them as separate modules; they share the
// attention of blocks.h and differ in names, biases, the MLP's gate and the block's shape,
// which the Variant holds. Each family's file holds its Variant and its entry.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"
#include "reference/reference.h"

namespace og::reference {

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
  const char* all_bias_key = nullptr;
  const char* qkv_bias_key = nullptr;
  bool always_bias = false;
  bool sliding_every_layer = false;  // starcoder2: sliding_window (when set) on every layer
  bool partial_rotary = false;       // phi, stablelm: partial_rotary_factor
  // phi: qk_layernorm puts LayerNorms over head_dim (q_layernorm, k_layernorm) on q and k
  // before the rotation; stablelm: its per-head form is refused.
  const char* qk_layernorm_key = nullptr;
  bool qk_layernorm_supported = false;
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
