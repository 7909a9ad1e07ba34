// What Gemma-4 and Gemma-3n share, in the reference's float64 terms: the per-layer attention
// plan (layer types, head geometry, KV sharing donors, windows, MLP widths), proportional RoPE,
// the weightless RMSNorm, the gaussian top-k activation sparsity, per-layer inputs (PLE) and the
// attention sublayer whose k/v a KV-shared layer takes from its donor.
//
// Followed (transformers, read from public snapshots of huggingface/transformers):
//  - models/gemma4/modeling_gemma4.py: Gemma4RMSNorm, Gemma4TextRotaryEmbedding,
//    Gemma4TextAttention, Gemma4TextMLP, Gemma4TextDecoderLayer, Gemma4TextModel
//    (get_per_layer_inputs, project_per_layer_inputs), Gemma4Model.forward,
//    Gemma4ForConditionalGeneration.forward; configuration_gemma4.py (Gemma4TextConfig);
//  - modeling_rope_utils.py: _compute_proportional_rope_parameters;
//  - models/gemma3n/modeling_gemma3n.py + modular_gemma3n.py: Gemma3nRMSNorm,
//    Gemma3nTextMLP._gaussian_topk, Gemma3nTextAltUp, Gemma3nTextLaurelBlock,
//    Gemma3nTextAttention, Gemma3nTextDecoderLayer, Gemma3nTextModel, Gemma3nModel.forward;
//    configuration_gemma3n.py (Gemma3nTextConfig, Gemma3nVisionConfig, Gemma3nAudioConfig).
// Versions read: modeling_gemma4.py @ 0246b4f3 and @ c308a309 (same semantics; the later one keys
// shared_kv_states by donor index instead of layer type), configuration_gemma4.py @ 008e5743 (the
// per_layer_config one), modeling_gemma3n.py @ 00aa0f5d, configuration_gemma3n.py @ 01854809, a
// later modular_gemma3n.py (KV sharing without a cache, see below).
//
// ---- What is computed (the semantics an exporter must match) ----
// Notation: T tokens at positions 0..T-1; RMSNorm(x; w) = x / sqrt(mean(x²) + eps) * w (both
// families; Gemma4RMSNorm, Gemma3nRMSNorm); "unit norm" = the same without w. wdt = the weight
// dtype; "f32->wdt" = a constant held as a float32 tensor and cast to wdt before use.
//
// Embedding (Gemma4TextScaledWordEmbedding / Gemma3nTextScaledWordEmbedding):
//   e = embed_tokens[id] * (f32->wdt)(sqrt(hidden)).
// Per-layer inputs, P = hidden_size_per_layer_input (Gemma4TextModel.get_per_layer_inputs /
// project_per_layer_inputs; Gemma3nTextModel the same):
//   tok  = embed_tokens_per_layer[id'] * (f32->wdt)(sqrt(P))            [T, L, P]
//   proj = RMSNorm(reshape(per_layer_model_projection(e) * s_proj); per_layer_projection_norm)  (over each P)
//   pli  = (proj + tok) * s_in
//   gemma4: s_proj = hidden^-0.5 and s_in = 2^-0.5 are Python floats (exact);
//   gemma3n: registered float32 buffers, cast to wdt: s_proj = (f32->wdt)(hidden^-0.5),
//            s_in = (f32->wdt)(rsqrt(2.0)). e here is the final input embedding (gemma3n wrapper:
//            after the vision/audio replacement below).
//   id' : gemma4 = id (ids >= vocab_size_per_layer_input: IndexError in transformers -> bad_input);
//         gemma3n wrapper (Gemma3nModel.forward) = id if 0 <= id < vocab_size_per_layer_input else 0;
//         gemma3n text model (Gemma3nForCausalLM) = id (out of range: bad_input).
// Wrapper token handling:
//   gemma4 (Gemma4Model.forward): ids equal to image_token_id / video_token_id / audio_token_id
//     (root config; defaults 258880 / 258884 / 258881) become pad_token_id (default 0) for BOTH
//     embeddings (llm_input_ids).
//   gemma3n (Gemma3nModel.forward): ids in [vision.vocab_offset, audio.vocab_offset) get
//     e = embed_vision(id), ids >= audio.vocab_offset get e = embed_audio(id), where
//     embed_X(id) = unit_norm(embedding_projection(RMSNorm(embedding[id - offset]; hard_embedding_norm)))
//     with eps = X_config.rms_norm_eps (no sqrt(hidden) scale). Offsets default 262144 / 262272.
//     A checkpoint without a tower's embed_X tensors (saved text-only) keeps the text
//     table's row for those ids, as Gemma3nForCausalLM does (and as the exporter does).
// Attention (Gemma4TextAttention / Gemma3nTextAttention), per head, D = the layer's head_dim:
//   q = RoPE(RMSNorm(q_proj(h); q_norm))             q_norm over D, weight [D]
//   own k/v: k = RoPE(RMSNorm(k_proj(h); k_norm)),   v = unit_norm(v_proj(h))   (v_norm has no weight)
//            gemma4 k_eq_v (attention_k_eq_v on a full layer): no v_proj, v = unit_norm(k_proj(h)),
//            i.e. the raw k_proj output BEFORE k_norm and RoPE.
//   KV-shared layer (l >= first = L - num_kv_shared_layers, first > 0): no k/v projections; it
//            attends with exactly its donor's k and v as the donor attended with them, i.e. k AFTER
//            k_norm and RoPE and v AFTER v_norm (shared_kv_states stores the post-processing
//            tensors). Donor = the last layer < first of the same layer type (kv_sources()).
//            Gemma3n: the official modeling file @00aa0f5 shares only when a cache exists
//            (use_cache=True, the default; shared layers then still own unused k_proj/v_proj);
//            later versions share always and create no k/v tensors: same logits with a cache.
//   scores = q . k (scale 1.0, no attention softcap), causal + window mask (query p sees key j iff
//   j <= p and, on sliding layers, j > p - sliding_window), softmax, GQA (q head h reads kv head
//   h / (heads / kv_heads)), heads concatenated, o_proj.
// RoPE (rotate_half: dims i and i + D/2 rotate by t * inv_freq[i]):
//   gemma4 sliding: rope_parameters.sliding_attention (default {default, theta 1e4}); "default" is
//     theta^(-2i/head_dim), i < head_dim/2 (partial_rotary_factor not read).
//   gemma4 full: rope_parameters.full_attention (default {proportional, 0.25, theta 1e6}),
//     proportional over global_head_dim: see proportional_inv_freq() — for E2B (512, 0.25) the
//     first 64 of 256 frequency pairs rotate (theta^(-2i/512)), the other 192 pairs pass through.
//   gemma3n: default RoPE over head_dim with rope_theta (1e6) on full layers, rope_local_base_freq
//     (1e4) on sliding layers (rope_parameters keyed by layer type also read; rope_scaling merges
//     into the full one).
// Gemma-4 decoder layer (Gemma4TextDecoderLayer.forward):
//   x = x + RMSNorm(attn(RMSNorm(x; input_layernorm)); post_attention_layernorm)
//   x = x + RMSNorm(mlp(RMSNorm(x; pre_feedforward_layernorm)); post_feedforward_layernorm)
//   if P: x = x + RMSNorm(per_layer_projection(act(per_layer_input_gate(x)) * pli[l]); post_per_layer_input_norm)
//   x = x * layer_scalar          (the whole stream, residual included, after the per-layer block;
//                                  a [1] buffer, 1 when absent from the checkpoint)
//   mlp = down(act(gate(h)) * up(h)), width intermediate_size, doubled (2 * intermediate_size) on
//   KV-shared layers when use_double_wide_mlp (Gemma4TextMLP).
// Gemma-3n decoder layer (Gemma3nTextDecoderLayer.forward) on n = altup_num_inputs streams s[0..n-1],
// a = altup_active_idx:
//   AltUp predict: m = tanh(modality_router(RMSNorm(s[a]; router_norm) * (f32->wdt)(1/hidden)))  [T, n]
//                  c = prediction_coefs(m) [T, n*n];  pred[j] = s[j] + sum_i c[j*n + i] * s[i]
//                  (altup_coef_clip clamps prediction_coefs only in training)
//   h = RMSNorm(pred[a]; input_layernorm)
//   LAuReL: laurel = h + RMSNorm(linear_right(linear_left(h)); post_laurel_norm)
//   y = (pred[a] + RMSNorm(attn(h); post_attention_layernorm) + laurel) / sqrt(2)
//   y = y + RMSNorm(mlp(RMSNorm(y; pre_feedforward_layernorm)); post_feedforward_layernorm)
//   AltUp correct: m' = router modalities of y (as above);
//                  k = clamp(correction_coefs.weight, ±altup_coef_clip) m' + 1   [T, n]
//                  out[i] = pred[i] + (y - pred[a]) * k[i]
//                  (the clamp as modeling_gemma3n.py @00aa0f5 applies it at inference; a later
//                  modular_gemma3n.py clamps only in training: the same unless |w| > clip)
//   f = out[a] * correct_output_scale (if altup_correct_scale)
//   f = RMSNorm(per_layer_projection(act(per_layer_input_gate(f)) * pli[l]); post_per_layer_input_norm)
//   out[1..n-1] += f   (streams 1.., whatever altup_active_idx is);  s = out
//   sparse MLP (activation_sparsity_pattern[l] = p > 0): g = gate(h);
//     g = relu(g - (mean(g) + std(g) * z)), mean/std per token over the intermediate dim, std the
//     population one, z = icdf_N(0,1)(p) computed in float32 then cast to wdt
//     (gaussian_sparsity_multiplier); then down(act(g) * up(h)).
// Gemma-3n streams in/out (Gemma3nTextModel.forward):
//   s[0] = e; s[i] = P_i(e) * rms(e) / sqrt(max(mean(P_i(e)²), eps5))
//   with P_i = altup_projections[i-1], rms(e) = sqrt(mean(e²)) (no eps), eps5 = (f32->wdt)(1e-5);
//   at the end u[0] = s[0], u[i] = U_i(s[i]) rescaled the same way to rms(s[0]) (U_i =
//   altup_unembed_projections[i-1]); x = mean_i u[i].
// Logits: RMSNorm(x; norm) . headᵀ (head = embed_tokens when tied), then
//   final_logit_softcapping c (gemma4 default none, gemma3n default 30): c * tanh(logits / c).
//
// Internal to og_reference (tests include it to pin the pieces down); not a public API.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"
#include "reference/reference.h"
#include "reference/toolkit.h"

namespace og::reference {

// ForwardOptions::float32_activations: every intermediate activation (each tensor a module
// returns: projections, norms, activations, rotated q/k, attention outputs, residual sums,
// AltUp streams) is rounded to float32; dot products still accumulate exactly.
struct Numerics {
  bool f32 = false;
  void settle(Mat& m) const {
    if (f32)
      for (double& x : m.v) x = static_cast<double>(static_cast<float>(x));
  }
  double settle(double x) const { return f32 ? static_cast<double>(static_cast<float>(x)) : x; }
};

// Proportional RoPE (modeling_rope_utils._compute_proportional_rope_parameters): head_dim / 2
// frequencies, of which the first rope_angles = int(partial_rotary_factor * head_dim // 2) are
// theta^(-2i / head_dim) (note: the divisor is the whole head_dim) and the rest 0, all divided
// by `factor`. In the rotate_half convention dims i and i + head_dim/2 pair up, so the pairs
// with a 0 frequency are left as they are.
std::vector<double> proportional_inv_freq(double theta, int64_t head_dim, double partial_rotary_factor,
                                          double factor = 1.0);

// KV sharing: with first = L - num_kv_shared_layers, layer l >= first (when first > 0) reads the
// k/v of the last layer < first of the same type; every other layer reads its own.
// source[l] == l for a layer computing its own k/v. A shared layer with no donor of its type
// is a bad_input error (transformers' list.index raises). `what` names the config in messages.
Result<std::vector<int64_t>> kv_sources(const std::vector<std::string>& layer_types, int64_t num_kv_shared_layers,
                                        const std::string& what);

// One decoder layer's attention and MLP geometry, resolved from config.json.
struct GemmaNLayer {
  bool sliding = false;
  int64_t window = 0;        // sliding_window on sliding layers, 0 = full causal history
  int64_t head_dim = 0;
  int64_t kv_heads = 0;
  int64_t kv_source = 0;     // == this layer's index when it computes k/v (see kv_sources)
  bool k_eq_v = false;       // gemma4 attention_k_eq_v on a full layer: v = v_norm(k_proj(x)), no v_proj
  int64_t intermediate = 0;  // MLP width, gemma4's double-wide MLP included
  double sparsity = 0;       // gemma3n activation_sparsity_pattern[l]
};

struct GemmaNPlan {
  std::vector<std::string> layer_types;  // after transformers' defaults (gemma4: last layer forced full)
  std::vector<GemmaNLayer> layers;
};

// Gemma4TextConfig: layer_types (default: full iff (i+1) % 6 == 0), the last layer forced to
// full_attention; sliding layers head_dim / num_key_value_heads; full layers global_head_dim
// (absent: 512; null: head_dim) and, with attention_k_eq_v, num_global_key_value_heads (null:
// num_key_value_heads), or per_layer_config overrides of head_dim / num_key_value_heads when the
// config has per_layer_config (transformers >= 5.15 then ignores global_head_dim); MLP width
// intermediate_size, doubled on KV-shared layers with use_double_wide_mlp.
Result<GemmaNPlan> gemma4_plan(const hf::ModelConfig& config);
// Gemma3nTextConfig: layer_types (default: full iff (i+1) % 5 == 0), one head geometry
// (head_dim default 256, num_key_value_heads default 2), num_kv_shared_layers (default 15),
// intermediate_size per layer, activation_sparsity_pattern (default 0.95 on the first 10
// layers when there are more than 10, else none).
Result<GemmaNPlan> gemma3n_plan(const hf::ModelConfig& config);

// x / sqrt(mean(x²) + eps) over each group of `group` values: Gemma4RMSNorm / Gemma3nRMSNorm
// with_scale=False (v_norm, gemma3n's multimodal embedding_post_projection_norm).
Mat rms_norm_unit(const Mat& x, double eps, int64_t group);

// Gemma3nTextMLP._gaussian_topk's std multiplier: Normal(0, 1).icdf(sparsity) evaluated on a
// float32 tensor (so float32: icdf(0.95) = 1.64485359...), then cast to the activation dtype.
// `sparsity` must be in (0, 1).
double gaussian_sparsity_multiplier(double sparsity, DType activation_dtype);
// relu(x - (mean + std * multiplier)) over each row, std the population one (unbiased=False).
void gaussian_topk(Mat& x, double multiplier, const Numerics& numerics);

// ---- Pieces both forward passes are built from (families/gemma4.cc, families/gemma3n.cc). ----

// The model's head on the residual stream x [T, H]: the final RMSNorm (x̂ · w, weight
// "<norm_prefix>norm.weight"), lm_head or the tied embedding, then the optional final softcap.
// Returns logits [T, V] row-major.
struct LogitsHead {
  const hf::Checkpoint& ckpt;
  const hf::ModelConfig& config;
  const hf::TensorView& embed;
  std::string norm_prefix;
  double eps = 1e-6;
  std::optional<double> final_cap;
  Numerics numerics;
};
Result<std::vector<double>> gemma_n_logits(const Mat& x, const LogitsHead& head);
// The attention window of each layer of a plan (0: full history).
std::vector<int64_t> plan_windows(const GemmaNPlan& plan);
// The layer whose k/v each layer attends with (itself unless KV-shared), per layer.
std::vector<int64_t> plan_kv_sources(const GemmaNPlan& plan);
// A constant transformers holds as a float32 tensor and casts to `dtype` before use
// (embed_scale buffers, gemma3n's per-layer and router scales).
double float32_constant_in(double value, DType dtype);
// Where the text model's tensors live: "model." (…ForCausalLM), "model.language_model."
// (…ForConditionalGeneration), or "language_model.model." (older wrapper saves).
Result<std::string> gemma_n_prefix(const hf::ModelConfig& config, const hf::Checkpoint& ckpt);

// The k/v a layer attends with: k after k_norm and RoPE, v after v_norm (exactly what
// transformers stores in shared_kv_states for the KV-shared layers), [T, kv_heads * head_dim].
struct KvState {
  Mat k, v;
};

struct GemmaNAttentionWeights {
  const hf::TensorView* q = nullptr;  // [heads * D, hidden]
  const hf::TensorView* k = nullptr;  // [kv_heads * D, hidden]; null on KV-shared layers
  const hf::TensorView* v = nullptr;  // null on KV-shared layers and with k_eq_v
  const hf::TensorView* o = nullptr;  // [hidden, heads * D]
  const hf::TensorView* q_bias = nullptr;
  const hf::TensorView* k_bias = nullptr;
  const hf::TensorView* v_bias = nullptr;
  const hf::TensorView* o_bias = nullptr;
  std::vector<double> q_norm, k_norm;  // [D], x * w
};

// Loads layer `l`'s attention tensors under `prefix` ("...layers.l.self_attn."), checking
// shapes; a KV-shared layer needs no k/v tensors (transformers creates none and ignores any).
Result<GemmaNAttentionWeights> load_gemma_n_attention(const hf::Checkpoint& ckpt, const std::string& prefix,
                                                      const GemmaNLayer& layer, bool own_kv, int64_t heads,
                                                      int64_t hidden, bool bias);

// Self-attention of layer `l` on the normed input x [T, hidden]: q = RoPE(q_norm(q_proj x));
// if the layer computes k/v: k = RoPE(k_norm(k_proj x)), v = v_norm(v_proj x) (or
// v_norm(k_proj x) with k_eq_v), published in kv[l]; else kv[layer.kv_source] is used as it is.
// Scores q·k with scale 1.0, no softcap, the layer's window. Returns o_proj(...) [T, hidden].
Mat gemma_n_attention(const Mat& x, const GemmaNAttentionWeights& w, const GemmaNLayer& layer, int64_t l,
                      int64_t heads, std::span<const double> inv_freq, double eps, std::vector<KvState>& kv,
                      const Numerics& numerics);

// down(act(g) * up(x)) with g = gate(x), through gaussian_topk first when multiplier is set.
struct GemmaNMlpWeights {
  const hf::TensorView* gate = nullptr;
  const hf::TensorView* up = nullptr;
  const hf::TensorView* down = nullptr;
};
Result<GemmaNMlpWeights> load_gemma_n_mlp(const hf::Checkpoint& ckpt, const std::string& prefix,
                                          int64_t intermediate, int64_t hidden);
Mat gemma_n_mlp(const Mat& x, const GemmaNMlpWeights& w, Activation act, const double* sparsity_multiplier,
                const Numerics& numerics);

// Per-layer inputs [T, L * P] (get_per_layer_inputs + project_per_layer_inputs):
//   tok  = embed_tokens_per_layer[table_tokens] * embed_scale
//   proj = per_layer_projection_norm(per_layer_model_projection(embeds) * projection_scale)  (norm over each P)
//   out  = (proj + tok) * input_scale
// `embeds` are the model's input embeddings (already scaled by the normalizer).
struct PleScales {
  double embed = 1, projection = 1, input = 1;
};
Result<Mat> gemma_n_per_layer_inputs(const hf::Checkpoint& ckpt, const std::string& prefix,
                                     std::span<const int32_t> table_tokens, int64_t table_vocab, const Mat& embeds,
                                     int64_t layers, int64_t per_layer, double eps, const PleScales& scales,
                                     const Numerics& numerics);
// The per-layer input block of layer l on x [T, hidden]:
//   post_per_layer_input_norm(per_layer_projection(act(per_layer_input_gate(x)) * pli[:, l]))
// (the caller adds it to the residual stream).
Result<Mat> gemma_n_per_layer_block(const hf::Checkpoint& ckpt, const std::string& prefix, const Mat& x,
                                    const Mat& per_layer_inputs, int64_t l, int64_t per_layer, Activation act,
                                    double eps, const Numerics& numerics);

}  // namespace og::reference
