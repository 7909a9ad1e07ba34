// The pre-norm decoder most families share, parameterized by what differs between them:
// RMSNorm or LayerNorm, norm offset (a 1 + w RMSNorm), sandwich or post-only norms, q/k
// norms, biases, fused projections, a parallel block, a gated or plain MLP, attention scale
// and softcap, activation, embedding, residual and logit scales and final softcap.
// A family file fills DecoderOptions from its config and calls build_decoder().
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <vector>

#include "export/build_context.h"

namespace og::exporter {

struct DecoderOptions {
  // torch's LayerNorm (mean subtracted; weight and bias, each NAME.weight / NAME.bias) in
  // place of RMSNorm, for every norm; its eps is the config's rms_norm_eps (the family
  // aliases its own eps field to it).
  bool layer_norm = false;
  bool layer_norm_bias = true;     // with layer_norm: NAME.bias exists (false: weight only)
  float norm_offset = 0.0f;        // 1.0: a (1 + w) RMSNorm, folded into the weight
  bool sandwich_norms = false;     // post-attention, pre- and post-feedforward norms
  // Their names (these defaults, or a family's own: post_self_attn_layernorm,
  // post_attention_layernorm and post_mlp_layernorm in another).
  const char* post_attn_norm_name = "post_attention_layernorm";
  // The pre-norm block's two norms (another family's: attention_layernorm, feedforward_layernorm).
  const char* input_norm_name = "input_layernorm";
  const char* ff_norm_name = "post_attention_layernorm";
  const char* pre_ff_norm_name = "pre_feedforward_layernorm";
  const char* post_ff_norm_name = "post_feedforward_layernorm";
  // Norms on the sublayers' outputs only (post_attention_layernorm, post_feedforward_layernorm)
  // inside the residual: no input_layernorm, and the MLP reads the residual stream itself.
  bool post_norms_only = false;
  bool qk_norm = false;            // RMSNorm over head_dim of q and k
  bool qk_norm_whole = false;      // with qk_norm: over all of q's (k's) features, before the head split
  bool qk_norm_after_rope = false; // with qk_norm: the norms on the rotated q and k, not before
  // With qk_norm and layer_norm: NAME.weight is [heads, head_dim], a LayerNorm of its own per
  // head (stored flat; the layer_norm op's per-group weights).
  bool qk_norm_per_head = false;
  // With qk_norm_per_head: each head's weight is a tensor of its own, NAME.LIST.{h}.weight [head_dim]
  // (a ModuleList of weight-only LayerNorms), gathered into the [heads, head_dim] weight.
  const char* qk_norm_heads_list = nullptr;
  const char* q_norm_name = "q_norm";  // self_attn.NAME.weight (and .bias with layer_norm)
  const char* k_norm_name = "k_norm";
  // Attention and MLP both read input_layernorm's output and join the residual together,
  // x + attn(n) + mlp(n) (no post_attention_layernorm).
  bool parallel = false;
  // With parallel: the MLP reads ff_norm_name(x) instead, x + attn(n1) + mlp(n2).
  bool parallel_two_norms = false;
  bool qkv_bias = false;           // biases on q, k, v projections
  bool o_bias = false;
  bool mlp_bias = false;
  bool fused_qkv = false;          // one qkv_proj (rows q, k, v)
  const char* fused_qkv_name = "qkv_proj";
  // With fused_qkv: the rows are per head, [q_h; k_h; v_h] for h = 0, 1, ... (no GQA), as a
  // view(..., heads, 3 * head_dim) splits them; with qkv_bias its bias is split alike.
  bool fused_qkv_per_head = false;
  // With fused_qkv: the rows are per kv head, [q of its Hq / Hkv heads; k; v] for each kv head in
  // turn (Falcon's new_decoder_architecture); with qkv_bias its bias is split alike.
  bool fused_qkv_grouped = false;
  bool fused_gate_up = false;      // one gate_up_proj (gate first)
  // A plain MLP, mlp.DOWN(act(mlp.UP(h))), when both are set (their biases with mlp_bias);
  // else the gated one, down_proj(act(gate_proj h) * up_proj h).
  const char* plain_mlp_up = nullptr;
  const char* plain_mlp_down = nullptr;
  const char* embed_name = "embed_tokens";  // the text model's NAME.weight
  const char* layers_name = "layers";        // the text model's NAME.N.* per layer (GPT-2: h)
  // A learned position table NAME.weight [n, H] (GPT-2's wpe), its row at each token's position
  // added to the token embedding; n must cover the program's max_ctx_len. Null: none.
  const char* position_embed_name = nullptr;
  bool no_rope = false;            // no rotary embedding at all (and no rope fields read)
  // Every linear's weight stored [in, out] (GPT-2's Conv1D, y = x W + b) and read transposed.
  bool conv1d = false;
  bool attn_scale_by_inverse_layer = false;  // layer l's attention scale divided by l + 1
  const char* attention_name = "self_attn";  // layers.N.NAME.q_proj, ...
  const char* o_name = "o_proj";   // the attention's output projection, self_attn.NAME
  const char* head_name = "lm_head";  // NAME.weight (at the checkpoint's top level), unless tied
  const char* final_norm_name = "norm";
  bool lm_head_bias = false;       // lm_head.bias [V]
  float attn_scale = 0.0f;         // 0: head_dim^-0.5
  float attn_softcap = 0.0f;
  fb::Activation activation = fb::Activation::Silu;
  float embed_scale = 1.0f;
  float residual_scale = 1.0f;     // each sublayer's output times this before it joins the residual
  float logits_scale = 1.0f;       // logits times this (before the final softcap)
  float final_softcap = 0.0f;
  std::optional<double> sliding_rope_theta;  // rope_local_base_freq: sliding layers' own base
  // The rope rotates interleaved pairs (2i, 2i+1) of each head's rotary dims (a GPT-J-style
  // rope): q's and k's rows (weights, biases, q/k norm weights) are stored in rotate-half
  // order (WeightOptions::pairs_block), and the rope kernel's rotate-half then computes it.
  bool rope_interleaved = false;
  // Layers whose q and k get no rotary embedding (NoPE layers): no rope op is
  // emitted for layer l when skip_rope[l]. Empty: every layer applies rope.
  std::vector<bool> skip_rope;
  // A layer's feed-forward block in place of the gated MLP (a mixture of experts): given the
  // layer and its normed input [T, H], the block's output [T, H], or kNoValue for the gated
  // MLP (the layers a MoE family keeps dense).
  std::function<Result<ValueId>(BuildContext& ctx, int64_t layer, ValueId h)> mlp;
  // A layer's attention sublayer in place of the q/k/v/o one (multi-head latent attention):
  // given the layer and its normed input [T, H], the sublayer's output [T, H], its cache the
  // layout's for that layer. The norms and the residual around it stay the decoder's.
  std::function<Result<ValueId>(BuildContext& ctx, int64_t layer, ValueId h)> attention;
  // Each layer's self_attn.sinks [Hq] (kept f32) joins its attention's softmax
  // denominator (program.fbs AttendAttrs.sinks).
  bool attention_sinks = false;
};

inline constexpr ValueId kNoValue = -1;

Status build_decoder(BuildContext& ctx, const DecoderOptions& o);

// A mixture's experts stored one tensor per expert: `prefix`E.`names`[0..2].weight, the gate
// and up projections [inter, hidden] and the down projection [hidden, inter], for E in
// [0, n), appended to spec's gate, up and down lists.
Status read_experts(BuildContext& ctx, const std::string& prefix, int64_t n, int64_t inter,
                    const std::array<const char*, 3>& names, MoeSpec& spec);
// transformers 5's in-memory fused experts (`prefix`experts.gate_up_proj) refused, naming the
// tensor: offgraph reads checkpoints with one tensor per expert.
Status refuse_fused_experts(const BuildContext& ctx, const std::string& prefix);
// A mixture's shared expert `prefix`{gate,up,down}_proj.weight ([inter, hidden] twice, then
// [hidden, inter]) into spec's shared_gate/up/down.
Status read_shared_expert(BuildContext& ctx, const std::string& prefix, int64_t inter, MoeSpec& spec);
// Marks the tensors of the n layers after the last (layers.N.* for N in [L, L + n)) as read,
// so the export skips them: the multi-token-prediction layers checkpoints carry and
// transformers does not load.
void skip_layers_past_last(BuildContext& ctx, int64_t n);

// logits = x head^T (times logits_scale, then the final softcap): the head is tied to `embed` when the config says so,
// else lm_head.weight (or the wrapper's language_model.lm_head.weight) must exist.
Status build_lm_head(BuildContext& ctx, ValueId x, WeightId embed, float final_softcap, float logits_scale = 1.0f,
                     bool head_bias = false, const std::string& head_name = "lm_head");

// hidden_activation / hidden_act as an op activation; unknown names are an error naming the field.
Result<fb::Activation> activation_from_config(const hf::ModelConfig& c);
// The biases of a q/k/v/o attention and a gate/up/down (or up/down) MLP as most config classes
// declare them: on q, k, v and o iff attention_bias, on the MLP iff mlp_bias (both false when
// absent); with read_mlp_bias false the MLP never has them (a class that hard-codes bias=False).
Status read_attention_and_mlp_biases(const hf::JsonFields& t, DecoderOptions& o, bool read_mlp_bias = true);
// An activation name read from config field `key` (named in the error when unknown).
Result<fb::Activation> activation_named(const hf::ModelConfig& c, const std::string& key, const std::string& act);

// A float config field rounded to a tensor dtype, as torch.tensor(x, dtype=w.dtype) does.
float round_to_dtype(double x, DType dtype);

// The dtype transformers loads the weights in (from_pretrained(dtype="auto")): config.json's
// torch_dtype / dtype, else the checkpoint's own.
Result<DType> loaded_weight_dtype(const hf::ModelConfig& c, DType checkpoint_dtype);


}  // namespace og::exporter
