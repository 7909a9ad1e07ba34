// What the llama-shaped generators share (LlamaForCausalLM's layout: model.embed_tokens,
// model.layers.N.{self_attn,mlp,input_layernorm,post_attention_layernorm}, model.norm,
// lm_head unless tied), with the switches by which their modules differ.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "testgen/family.h"

namespace og::testgen {

struct LlamaShape {
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  bool qk_norm = false;  // Qwen3: self_attn.q_norm / k_norm over head_dim, x * w
  bool qk_norm_whole = false;  // with qk_norm, OLMoE: over the whole q (k) projection instead
  bool fused = false;    // Phi-3: self_attn.qkv_proj and mlp.gate_up_proj
  bool fused_gate_up = false;  // GLM: mlp.gate_up_proj beside separate q/k/v projections
  bool glm4_norms = false;     // GLM-4-0414: post_self_attn_layernorm and post_mlp_layernorm too
  bool plain_mlp = false;      // Arcee: mlp.up_proj and mlp.down_proj only (no gate)
  const char* q_norm = "q_norm";  // with qk_norm: self_attn.NAME (HunYuan: query_layernorm, key_layernorm)
  const char* k_norm = "k_norm";
  const char* input_norm = "input_layernorm";        // Apertus: attention_layernorm
  const char* ff_norm = "post_attention_layernorm";  // Apertus: feedforward_layernorm
};

Result<std::vector<TensorSpec>> llama_shaped_tensors(const Json& text, const FamilyContext& ctx,
                                                      const LlamaShape& shape);

Result<bool> flag(const Json& text, const FamilyContext& ctx, const char* key);

// LlamaAttention: bias=config.attention_bias on q/k/v/o; LlamaMLP: bias=config.mlp_bias.
Result<std::vector<TensorSpec>> llama_tensors(const Json& text, const FamilyContext& ctx);

// `dense` with the MLP of each layer `sparse` picks replaced, where its gate_proj stood, by the
// tensors `block` lists for that layer (a sparse mixture of experts).
std::vector<TensorSpec> replace_mlps(std::vector<TensorSpec> dense, const std::function<bool(int64_t)>& sparse,
                                     const std::function<void(int64_t, SpecList&)>& block);

// A Qwen MoE decoder's tensors (qwen3_moe.cc): the llama-shaped ones with the sparse layers'
// MLP replaced by the router and experts, and with `shared_expert` Qwen2-MoE's shared expert.
Result<std::vector<TensorSpec>> qwen_moe_tensors(const Json& text, const FamilyContext& ctx, const LlamaShape& shape,
                                                 bool shared_expert);

// Granite MoE's tensors (granitemoe.cc): the llama-shaped attention and norms with JetMoE's
// fused experts on every layer, and with `shared_mlp` GraniteMoeShared's shared expert.
Result<std::vector<TensorSpec>> granite_moe_tensors(const Json& text, const FamilyContext& ctx, bool shared_mlp);
// granite-3.1-3b-a800m's tiny field set (granitemoe.cc), which GraniteMoeShared's extends.
Json granitemoe_config();

// OLMo 2's and OLMo 3's decoder (olmo2.cc): output-only norms, q/k norms over the whole projection.
Result<std::vector<TensorSpec>> olmo_tensors(const Json& text, const FamilyContext& ctx);
// OLMo-2-0425-1B's tiny field set (olmo2.cc), which OLMo 3's extends.
Json olmo2_config();

// Qwen3-0.6B's tiny field set (qwen3.cc), which Qwen3-MoE's extends.
Json qwen3_config();

}  // namespace og::testgen
