// The decoder of Gemma (1), Gemma2 and Gemma3 (text, and the multimodal wrapper's text
// model); Gemma's entry is at the end of this file, the others' in their own files (gemma2.cc,
// gemma3.cc). Followed: models/gemma/modeling_gemma.py + configuration_gemma.py,
// models/gemma2/modeling_gemma2.py + modular/configuration, models/gemma3/modeling_gemma3.py
// + modular/configuration_gemma3.py, modeling_rope_utils.py, masking_utils.py.
//
// What sets them apart from the llama-like decoders:
//  - embedding multiplied by sqrt(hidden_size) rounded to the weight dtype (see normalizer());
//  - RMSNorm computed as x̂ * (1 + w) (Gemma2RMSNorm / Gemma3RMSNorm);
//  - sandwich norms: post_attention_layernorm on the attention output and
//    pre/post_feedforward_layernorm around the MLP, before each residual add;
//  - scale query_pre_attn_scalar^-0.5, gelu_pytorch_tanh MLP;
//  - Gemma2: attn_logit_softcapping on the scores, alternating sliding/full layers;
//  - Gemma3: per-head q_norm/k_norm (1 + w) before RoPE, rope_theta on full layers and
//    rope_local_base_freq on sliding ones (rope_scaling on full layers only), no attention
//    softcapping (Gemma3Attention never passes it), 5:1 sliding pattern by default;
//  - both: final_logit_softcapping on the logits when set;
//  - Gemma (1): none of the above but the normalizer and the (1 + w) norms: pre-norm layers
//    (input_layernorm, post_attention_layernorm before the MLP), scale head_dim^-0.5, no
//    softcaps, no sliding layers; the activation is hidden_activation, else gelu_pytorch_tanh
//    (transformers 4.38-4.5x ignore hidden_act, which the first configs set to an exact
//    "gelu"; transformers 5 reads hidden_act, so another value there is taken).
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "reference/blocks.h"
#include "reference/families/families.h"
#include "reference/families/gemma.h"
#include "reference/rope.h"
#include "reference/weights.h"

namespace og::reference {
namespace {

struct Plan {
  int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, vocab = 0;
  double eps = 1e-6;
  bool attention_bias = false;
  Activation act = Activation::kGeluTanh;
  double scale = 0;          // query_pre_attn_scalar^-0.5
  double attn_softcap = 0;   // 0 = none
  double final_softcap = 0;  // 0 = none
  std::vector<bool> sliding;
  int64_t window = 0;        // sliding_window for sliding layers
  std::vector<double> inv_freq_full, inv_freq_sliding;
};

// Sliding flags per layer: layer_types when present, else every other layer (Gemma2) or
// all but every sliding_window_pattern-th layer (Gemma3): layer i slides iff (i + 1) % n != 0.
Result<std::vector<bool>> sliding_flags(int version, const hf::ModelConfig& c) {
  if (version == 1) return std::vector<bool>(static_cast<size_t>(c.num_hidden_layers), false);  // GemmaModel: causal only
  OG_ASSIGN_OR_RETURN(std::vector<bool> given, sliding_flags_from_layer_types(c));
  if (!given.empty()) return given;
  int64_t pattern = 2;
  if (version == 3) {
    const hf::JsonFields t = c.text_fields();
    OG_ASSIGN_OR_RETURN(pattern, t.get_int("sliding_window_pattern"));
    if (pattern <= 0) return t.invalid("sliding_window_pattern", "a positive integer");
  }
  std::vector<bool> flags;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) flags.push_back((i + 1) % pattern != 0);
  return flags;
}

// The window of sliding layers: sliding_window (the family table fills 4096 when absent);
// an explicit null leaves nothing to apply, which transformers rejects when a layer slides.
Result<std::vector<int64_t>> windows_for(int version, const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(std::vector<bool> sliding, sliding_flags(version, c));
  OG_ASSIGN_OR_RETURN(std::optional<double> window, number_or_null(c, "sliding_window", std::nullopt));
  std::vector<int64_t> windows;
  for (size_t i = 0; i < sliding.size(); ++i) {
    if (sliding[i] && !window)
      return unsupported("{}: layer {} is sliding_attention but field '{}' is null", c.path, i,
                         c.text_fields().field_name("sliding_window"));
    windows.push_back(sliding[i] ? static_cast<int64_t>(*window) : 0);
  }
  return windows;
}

// Gemma3's two ropes. transformers (Gemma3TextConfig.convert_rope_params_to_dict) starts
// from {full: default, sliding: default} or the per-layer-type `rope_parameters`, merges the
// old `rope_scaling` into the full-attention entry only, and defaults the bases to rope_theta
// (1e6) for full layers and rope_local_base_freq (1e4) for sliding layers.
Result<std::pair<RopeSpec, RopeSpec>> gemma3_ropes(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(double full_theta, t.get_double("rope_theta"));
  OG_ASSIGN_OR_RETURN(double local_theta, t.get_double("rope_local_base_freq"));
  OG_ASSIGN_OR_RETURN(LayerTypeRopes by_type, rope_params_by_layer_type(c));
  const hf::Json& full = by_type.full;
  const hf::Json& sliding = by_type.sliding;
  const hf::JsonFields full_fields(full, c.path, t.field_name("rope_parameters.full_attention."));
  const hf::JsonFields sliding_fields(sliding, c.path, t.field_name("rope_parameters.sliding_attention."));
  OG_ASSIGN_OR_RETURN(RopeSpec f, parse_rope_params(&full_fields, full_theta, c.max_position_embeddings));
  OG_ASSIGN_OR_RETURN(RopeSpec s, parse_rope_params(&sliding_fields, local_theta, c.max_position_embeddings));
  OG_TRY(refuse_yarn(f, c.path, c.text_model_type));
  OG_TRY(refuse_yarn(s, c.path, c.text_model_type));
  return std::make_pair(f, s);
}

Result<Plan> make_plan(int version, const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  OG_TRY(require_causal(c));
  Plan p;
  p.hidden = c.hidden_size;
  p.heads = c.num_attention_heads;
  p.vocab = c.vocab_size;
  p.kv_heads = c.num_key_value_heads;
  p.head_dim = c.head_dim;
  if (p.heads % p.kv_heads != 0)
    return bad_input("{}: num_attention_heads ({}) is not a multiple of num_key_value_heads ({})", c.path, p.heads,
                     p.kv_heads);
  p.eps = c.rms_norm_eps;
  OG_ASSIGN_OR_RETURN(p.attention_bias, t.get_bool("attention_bias", false));
  if (version == 1) {
    std::string key = "hidden_activation", act = "gelu_pytorch_tanh";
    if (t.has("hidden_activation") && !t.raw("hidden_activation").is_null()) {
      OG_ASSIGN_OR_RETURN(act, t.get_string("hidden_activation"));
    } else if (t.has("hidden_act") && !t.raw("hidden_act").is_null()) {
      OG_ASSIGN_OR_RETURN(std::string given, t.get_string("hidden_act"));
      if (given != "gelu") act = given, key = "hidden_act";
    }
    OG_ASSIGN_OR_RETURN(p.act, parse_activation(act, c.path + ": field '" + t.field_name(key) + "'"));
    p.scale = 1.0 / std::sqrt(static_cast<double>(p.head_dim));
  } else {
    OG_ASSIGN_OR_RETURN(std::string act, t.get_string("hidden_activation"));
    OG_ASSIGN_OR_RETURN(p.act, parse_activation(act, c.path + ": field '" + t.field_name("hidden_activation") + "'"));
    OG_ASSIGN_OR_RETURN(double qpas, t.get_double("query_pre_attn_scalar"));
    if (!(qpas > 0)) return t.invalid("query_pre_attn_scalar", "a positive number");
    p.scale = 1.0 / std::sqrt(qpas);
  }
  if (version == 2) {
    OG_ASSIGN_OR_RETURN(std::optional<double> cap, number_or_null(c, "attn_logit_softcapping", std::nullopt));
    p.attn_softcap = cap.value_or(0);
  }
  if (version >= 2) {
    OG_ASSIGN_OR_RETURN(std::optional<double> final_cap,
                        number_or_null(c, "final_logit_softcapping", std::nullopt));
    p.final_softcap = final_cap.value_or(0);
  }
  if (p.attn_softcap < 0) return t.invalid("attn_logit_softcapping", "a positive number or null");
  if (p.final_softcap < 0) return t.invalid("final_logit_softcapping", "a positive number or null");

  OG_ASSIGN_OR_RETURN(p.sliding, sliding_flags(version, c));
  OG_ASSIGN_OR_RETURN(std::vector<int64_t> windows, windows_for(version, c));
  for (int64_t w : windows) p.window = std::max(p.window, w);

  OG_ASSIGN_OR_RETURN(double partial, parse_partial_rotary_factor(c));
  if (partial != 1.0)
    return unsupported("{}: field '{}' = {} is not supported for {} (its attention rotates the whole head)", c.path,
                       t.field_name("partial_rotary_factor"), partial, c.text_model_type);
  if (version <= 2) {
    OG_ASSIGN_OR_RETURN(RopeSpec rope, parse_uniform_rope(c, 10000.0));
    OG_TRY(refuse_yarn(rope, c.path, c.text_model_type));
    p.inv_freq_full = p.inv_freq_sliding = rope_inv_freq(rope, p.head_dim);
  } else {
    OG_ASSIGN_OR_RETURN(auto ropes, gemma3_ropes(c));
    p.inv_freq_full = rope_inv_freq(ropes.first, p.head_dim);
    p.inv_freq_sliding = rope_inv_freq(ropes.second, p.head_dim);
  }
  return p;
}

// sqrt(hidden_size) as transformers multiplies it in: Gemma and Gemma2 build
// torch.tensor(hidden**0.5, dtype=embeds.dtype); Gemma3 registers torch.tensor(hidden**0.5)
// (float32) and casts it with .to(weight.dtype). So in bf16, sqrt(1152) = 33.94 becomes 34.
double normalizer(int version, int64_t hidden, DType weight_dtype) {
  double s = std::sqrt(static_cast<double>(hidden));
  if (version == 3) s = static_cast<double>(static_cast<float>(s));
  return round_to_dtype(s, weight_dtype);
}

// Where the text model's tensors live: Gemma*ForCausalLM saves "model.", the Gemma3
// multimodal wrapper "language_model.model." (before transformers 4.52) or
// "model.language_model." (after).
Result<std::string> weight_prefix(const hf::ModelConfig& c, const hf::Checkpoint& ckpt) {
  for (const char* prefix : {"model.", "language_model.model.", "model.language_model."})
    if (ckpt.find(std::string(prefix) + "embed_tokens.weight") != nullptr) return std::string(prefix);
  return bad_input("{}: no embedding tensor for {} (looked for model.embed_tokens.weight, "
                   "language_model.model.embed_tokens.weight, model.language_model.embed_tokens.weight)",
                   ckpt.dir(), c.text_model_type);
}

Result<std::vector<double>> run(int version, const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                std::span<const int32_t> tokens, const ForwardOptions& options) {
  OG_ASSIGN_OR_RETURN(Plan p, make_plan(version, c));
  const int64_t H = p.hidden, D = p.head_dim;
  OG_ASSIGN_OR_RETURN(std::string mp, weight_prefix(c, ckpt));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* embed, float_tensor(ckpt, mp + "embed_tokens.weight", {p.vocab, H}));
  OG_ASSIGN_OR_RETURN(DType weight_dtype, weight_dtype(c, *embed, options));

  OG_ASSIGN_OR_RETURN(Mat x, embed_rows(*embed, tokens));  // [T, H] residual stream
  const double scale = normalizer(version, H, weight_dtype);
  for (double& e : x.v) e *= scale;

  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string pre = mp + "layers." + std::to_string(i) + ".";
    const std::string at = pre + "self_attn.", mlp = pre + "mlp.";
    const int64_t I = c.intermediate_size[static_cast<size_t>(i)];
    const bool sliding = p.sliding[static_cast<size_t>(i)];
    auto tensor = [&](const std::string& name, std::vector<int64_t> shape) { return float_tensor(ckpt, name, shape); };
    auto norm = [&](const std::string& name) { return vector_f64(ckpt, pre + name + ".weight", H); };

    AttentionWeights aw;
    OG_ASSIGN_OR_RETURN(aw.q, tensor(at + "q_proj.weight", {p.heads * D, H}));
    OG_ASSIGN_OR_RETURN(aw.k, tensor(at + "k_proj.weight", {p.kv_heads * D, H}));
    OG_ASSIGN_OR_RETURN(aw.v, tensor(at + "v_proj.weight", {p.kv_heads * D, H}));
    OG_ASSIGN_OR_RETURN(aw.o, tensor(at + "o_proj.weight", {H, p.heads * D}));
    if (p.attention_bias) {
      OG_ASSIGN_OR_RETURN(aw.q_bias, tensor(at + "q_proj.bias", {p.heads * D}));
      OG_ASSIGN_OR_RETURN(aw.k_bias, tensor(at + "k_proj.bias", {p.kv_heads * D}));
      OG_ASSIGN_OR_RETURN(aw.v_bias, tensor(at + "v_proj.bias", {p.kv_heads * D}));
      OG_ASSIGN_OR_RETURN(aw.o_bias, tensor(at + "o_proj.bias", {H}));
    }
    if (version == 3) {
      OG_ASSIGN_OR_RETURN(aw.q_norm, vector_f64(ckpt, at + "q_norm.weight", D));
      OG_ASSIGN_OR_RETURN(aw.k_norm, vector_f64(ckpt, at + "k_norm.weight", D));
      aw.qk_norm_style = NormStyle::kOnePlusWeight;
      aw.qk_norm_eps = p.eps;
    }
    AttentionShape shape{.attn = {.n_heads = p.heads, .n_kv_heads = p.kv_heads, .head_dim = D, .scale = p.scale,
                                  .softcap = p.attn_softcap, .window = sliding ? p.window : 0},
                         .inv_freq = sliding ? p.inv_freq_sliding : p.inv_freq_full};
    MlpWeights mw{.intermediate = I, .act = p.act};
    OG_ASSIGN_OR_RETURN(mw.gate, tensor(mlp + "gate_proj.weight", {I, H}));
    OG_ASSIGN_OR_RETURN(mw.up, tensor(mlp + "up_proj.weight", {I, H}));
    OG_ASSIGN_OR_RETURN(mw.down, tensor(mlp + "down_proj.weight", {H, I}));
    OG_ASSIGN_OR_RETURN(std::vector<double> input_ln, norm("input_layernorm"));
    OG_ASSIGN_OR_RETURN(std::vector<double> post_attn_ln, norm("post_attention_layernorm"));
    constexpr NormStyle kG = NormStyle::kOnePlusWeight;
    if (version == 1) {  // pre-norm: post_attention_layernorm is the MLP's input norm
      add_inplace(x, self_attention(rms_norm(x, input_ln, p.eps, kG, H), aw, shape));
      add_inplace(x, gated_mlp(rms_norm(x, post_attn_ln, p.eps, kG, H), mw));
      continue;
    }
    OG_ASSIGN_OR_RETURN(std::vector<double> pre_ff_ln, norm("pre_feedforward_layernorm"));
    OG_ASSIGN_OR_RETURN(std::vector<double> post_ff_ln, norm("post_feedforward_layernorm"));

    Mat a = self_attention(rms_norm(x, input_ln, p.eps, kG, H), aw, shape);
    add_inplace(x, rms_norm(a, post_attn_ln, p.eps, kG, H));
    Mat m = gated_mlp(rms_norm(x, pre_ff_ln, p.eps, kG, H), mw);
    add_inplace(x, rms_norm(m, post_ff_ln, p.eps, kG, H));
  }

  OG_ASSIGN_OR_RETURN(std::vector<double> final_norm, vector_f64(ckpt, mp + "norm.weight", H));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* head,
                      output_head(ckpt, c, *embed, {"lm_head.weight", "language_model.lm_head.weight"}));
  Mat logits = linear(rms_norm(x, final_norm, p.eps, NormStyle::kOnePlusWeight, H), *head);  // [T, V]
  for (double& l : logits.v) l = softcap(l, p.final_softcap);
  return logits.v;
}

}  // namespace

Result<std::vector<double>> gemma_forward(int version, const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                          std::span<const int32_t> tokens, const ForwardOptions& options) {
  return run(version, c, ckpt, tokens, options);
}

Result<std::vector<int64_t>> gemma_windows(int version, const hf::ModelConfig& c) { return windows_for(version, c); }

namespace {
constexpr ModelType kGemmaTypes[] = {{"gemma", false}};
}  // namespace

// GemmaConfig's defaults for keys a config.json may omit (hidden_activation: see the top).
const Family kGemmaFamily{"gemma", kGemmaTypes, true, R"({
    "vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576, "num_hidden_layers": 28,
    "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256, "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-6, "rope_theta": 10000.0})", &gemma_forward_of<1>, &gemma_windows_of<1>};

}  // namespace og::reference
