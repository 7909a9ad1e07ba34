// What the LayerNorm-decoder generators share (starcoder2.cc, phi.cc, stablelm.cc):
// model.embed_tokens, model.layers.N.{self_attn, mlp, input_layernorm and, unless the block is
// parallel, post_attention_layernorm}, the final norm and lm_head unless tied; every norm a
// LayerNorm (weight and, unless norm_bias is off, bias).
#pragma once

#include <vector>

#include "testgen/family.h"

namespace og::testgen {

struct LayerNormShape {
  bool qkv_bias = false;
  bool o_bias = false;                 // the attention's output projection
  bool other_bias = false;             // the MLP and (head_bias) the head
  const char* o_proj = "o_proj";
  const char* mlp_up = nullptr;        // plain MLP names; null: gate_proj/up_proj/down_proj
  const char* mlp_down = nullptr;
  const char* final_norm = "norm";
  bool parallel = false;               // no post_attention_layernorm
  bool qk_layernorm = false;           // self_attn.q_layernorm / k_layernorm over head_dim
  // With qk_layernorm: a weight-only LayerNorm per head instead, q_layernorm.LIST.{h}.weight.
  const char* qk_norm_heads_list = nullptr;
  bool head_bias = false;
  bool norm_bias = true;               // false: LayerNorms with a weight only (Cohere)
};

Result<std::vector<TensorSpec>> layer_norm_tensors(const Json& text, const FamilyContext& ctx, const LayerNormShape& shape);

}  // namespace og::testgen
