// StarCoder2, Phi, StableLM, Cohere and Cohere2 as transformers computes them. Followed:
// models/{starcoder2,phi,stablelm,cohere,cohere2}/modeling_*.py (modular_cohere*.py) and
// their configuration_*.py.
#include "reference/families/layer_norm_like.h"

#include <cmath>
#include <string>

#include "reference/blocks.h"
#include "reference/rope.h"
#include "reference/weights.h"

namespace og::reference {
namespace {

struct LayerNormWeights {
  std::vector<double> w, b;
};

Result<LayerNormWeights> read_layer_norm(const hf::Checkpoint& ckpt, const std::string& name, int64_t n, bool bias,
                                          double offset = 0) {
  LayerNormWeights ln;
  OG_ASSIGN_OR_RETURN(ln.w, vector_f64(ckpt, name + ".weight", n));
  for (double& w : ln.w) w += offset;
  if (bias) { OG_ASSIGN_OR_RETURN(ln.b, vector_f64(ckpt, name + ".bias", n)); }
  return ln;
}

}  // namespace

Result<std::vector<int64_t>> layer_norm_like_windows(const LnVariant& var, const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(std::vector<bool> given, sliding_flags_from_layer_types(c));
  if (var.windows == Windows::kPattern) {  // Cohere2Config's layer_types rule
    if (given.empty()) {
      OG_ASSIGN_OR_RETURN(int64_t pattern, t.get_int("sliding_window_pattern", 4));
      if (pattern < 1) return t.invalid("sliding_window_pattern", "a positive integer");
      for (int64_t i = 0; i < c.num_hidden_layers; ++i) given.push_back((i + 1) % pattern != 0);
    }
    std::vector<int64_t> windows;
    for (bool sliding : given) {
      if (sliding && c.sliding_window.value_or(0) <= 0)
        return unsupported("{}: sliding layers but no '{}'", c.path, t.field_name("sliding_window"));
      windows.push_back(sliding ? *c.sliding_window : 0);
    }
    return windows;
  }
  const int64_t window = var.windows == Windows::kEveryLayer ? c.sliding_window.value_or(0) : 0;
  for (size_t i = 0; i < given.size(); ++i)
    if (given[i] != (window > 0))
      return unsupported("{}: '{}[{}]' disagrees with what transformers applies to {} (sliding window {} on every layer)",
                         c.path, t.field_name("layer_types"), i, var.family, window > 0 ? std::to_string(window) : "none");
  return std::vector<int64_t>(static_cast<size_t>(c.num_hidden_layers), window);
}

Result<std::vector<double>> layer_norm_like_forward(const LnVariant& var, const hf::ModelConfig& c,
                                                    const hf::Checkpoint& ckpt, std::span<const int32_t> tokens) {
  const hf::JsonFields t = c.text_fields();
  OG_TRY(require_causal(c));
  const int64_t H = c.hidden_size, Hq = c.num_attention_heads, Hkv = c.num_key_value_heads, D = c.head_dim;
  OG_ASSIGN_OR_RETURN(double eps, t.get_double(var.eps_key, 1e-5));
  bool qkv_bias = var.always_bias, other_bias = var.always_bias;
  if (var.all_bias_key != nullptr) {
    OG_ASSIGN_OR_RETURN(qkv_bias, t.get_bool(var.all_bias_key, true));
    other_bias = qkv_bias;
  }
  if (var.qkv_bias_key != nullptr) { OG_ASSIGN_OR_RETURN(qkv_bias, t.get_bool(var.qkv_bias_key, false)); }
  bool o_bias = other_bias;
  if (var.attention_bias_key != nullptr) {
    OG_ASSIGN_OR_RETURN(qkv_bias, t.get_bool(var.attention_bias_key, false));
    o_bias = qkv_bias;
  }
  if (var.mlp_bias_key != nullptr) { OG_ASSIGN_OR_RETURN(other_bias, t.get_bool(var.mlp_bias_key, false)); }
  double logit_scale = 1.0;
  if (var.logit_scale_key != nullptr) { OG_ASSIGN_OR_RETURN(logit_scale, t.get_double(var.logit_scale_key, 0.0625)); }
  if (var.head_dim_from_hidden && D * Hq != H)
    return unsupported("{}: head_dim {} is not hidden_size / num_attention_heads, which {} always uses", c.path, D, var.family);
  bool parallel = var.parallel == Parallel::kAlways;
  if (var.parallel == Parallel::kField) { OG_ASSIGN_OR_RETURN(parallel, t.get_bool("use_parallel_residual", false)); }
  bool qk_layernorm = false;
  if (var.qk_layernorm_key != nullptr) { OG_ASSIGN_OR_RETURN(qk_layernorm, t.get_bool(var.qk_layernorm_key, false)); }
  OG_ASSIGN_OR_RETURN(std::string act_name, t.get_string("hidden_act"));
  OG_ASSIGN_OR_RETURN(Activation act, parse_activation(act_name, c.path + ": field '" + t.field_name("hidden_act") + "'"));
  OG_ASSIGN_OR_RETURN(std::vector<int64_t> windows, layer_norm_like_windows(var, c));

  OG_ASSIGN_OR_RETURN(RopeSpec rope, parse_uniform_rope(c, 10000.0));
  OG_ASSIGN_OR_RETURN(double partial, parse_partial_rotary_factor(c));
  if (partial != 1.0 && !var.partial_rotary)
    return unsupported("{}: field 'partial_rotary_factor' = {} is not supported for {}", c.path, partial, var.family);
  // PhiAttention / StableLmAttention: rotary_ndims = int(head_dim * partial_rotary_factor).
  const int64_t rotary_dim = static_cast<int64_t>(static_cast<double>(D) * partial);
  if (rotary_dim <= 0 || rotary_dim % 2 != 0)
    return unsupported("{}: rotary width int(head_dim {} * partial_rotary_factor {}) = {} is not positive and even",
                       c.path, D, partial, rotary_dim);
  OG_TRY(check_rope_width(rope, rotary_dim, c.path));
  const std::vector<double> inv_freq = rope_inv_freq(rope, rotary_dim);
  const std::vector<double> long_inv_freq = rope_long_inv_freq(rope, rotary_dim);
  if (var.rope_pairs && !long_inv_freq.empty())
    return unsupported("{}: rope type '{}' is not supported for {}", c.path, rope.type, var.family);

  auto tensor = [&](const std::string& name, std::vector<int64_t> shape) { return float_tensor(ckpt, name, shape); };
  auto maybe = [&](bool want, const std::string& name, int64_t n) -> Result<const hf::TensorView*> {
    if (!want) return static_cast<const hf::TensorView*>(nullptr);
    return tensor(name, {n});
  };
  OG_ASSIGN_OR_RETURN(const hf::TensorView* embed, tensor("model.embed_tokens.weight", {c.vocab_size, H}));
  OG_ASSIGN_OR_RETURN(Mat x, embed_rows(*embed, tokens));  // [T, H] residual stream

  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string pre = "model.layers." + std::to_string(i) + ".", at = pre + "self_attn.", mlp = pre + "mlp.";
    const int64_t I = c.intermediate_size[static_cast<size_t>(i)];
    AttentionWeights aw;
    OG_ASSIGN_OR_RETURN(aw.q, tensor(at + "q_proj.weight", {Hq * D, H}));
    OG_ASSIGN_OR_RETURN(aw.k, tensor(at + "k_proj.weight", {Hkv * D, H}));
    OG_ASSIGN_OR_RETURN(aw.v, tensor(at + "v_proj.weight", {Hkv * D, H}));
    OG_ASSIGN_OR_RETURN(aw.q_bias, maybe(qkv_bias, at + "q_proj.bias", Hq * D));
    OG_ASSIGN_OR_RETURN(aw.k_bias, maybe(qkv_bias, at + "k_proj.bias", Hkv * D));
    OG_ASSIGN_OR_RETURN(aw.v_bias, maybe(qkv_bias, at + "v_proj.bias", Hkv * D));
    OG_ASSIGN_OR_RETURN(aw.o, tensor(at + var.o_proj + ".weight", {H, Hq * D}));
    OG_ASSIGN_OR_RETURN(aw.o_bias, maybe(o_bias, at + var.o_proj + ".bias", H));
    if (qk_layernorm) {
      aw.qk_layer_norm = true;
      aw.qk_norm_eps = eps;
      LayerNormWeights qn, kn;
      if (var.qk_norm_heads_list != nullptr) {  // weight-only, one [D] tensor per head
        const auto heads = [&](const char* name, int64_t n) -> Result<std::vector<double>> {
          std::vector<double> w;
          for (int64_t h = 0; h < n; ++h) {
            OG_ASSIGN_OR_RETURN(const hf::TensorView* t,
                                tensor(at + name + "." + var.qk_norm_heads_list + "." + std::to_string(h) + ".weight", {D}));
            const std::vector<double> v = hf::to_f64(*t);
            w.insert(w.end(), v.begin(), v.end());
          }
          return w;
        };
        OG_ASSIGN_OR_RETURN(qn.w, heads(var.q_norm, Hq));
        OG_ASSIGN_OR_RETURN(kn.w, heads(var.k_norm, Hkv));
      } else if (var.qk_norm_per_head) {  // weight-only, [heads, D]
        OG_ASSIGN_OR_RETURN(const hf::TensorView* qw, tensor(at + var.q_norm + ".weight", {Hq, D}));
        OG_ASSIGN_OR_RETURN(const hf::TensorView* kw, tensor(at + var.k_norm + ".weight", {Hkv, D}));
        qn.w = hf::to_f64(*qw), kn.w = hf::to_f64(*kw);
      } else {
        OG_ASSIGN_OR_RETURN(qn, read_layer_norm(ckpt, at + var.q_norm, D, var.norm_bias));
        OG_ASSIGN_OR_RETURN(kn, read_layer_norm(ckpt, at + var.k_norm, D, var.norm_bias));
      }
      aw.q_norm = qn.w, aw.q_norm_bias = qn.b, aw.k_norm = kn.w, aw.k_norm_bias = kn.b;
    }
    const int64_t window = windows[static_cast<size_t>(i)];
    const bool rotates = !var.rope_on_sliding_only || window > 0;
    const AttentionShape shape{.attn = {.n_heads = Hq, .n_kv_heads = Hkv, .head_dim = D,
                                        .scale = 1.0 / std::sqrt(static_cast<double>(D)), .softcap = 0,
                                        .window = window},
                               .inv_freq = rotates ? inv_freq : std::vector<double>{},
                               .rope_attention_factor = rope.attention_factor,
                               .long_inv_freq = long_inv_freq,
                               .long_from = static_cast<int64_t>(rope.original_max_position_embeddings),
                               .rope_pairs = var.rope_pairs};
    MlpWeights mw{.intermediate = I, .act = act};
    if (var.mlp_up != nullptr) {
      OG_ASSIGN_OR_RETURN(mw.up, tensor(mlp + var.mlp_up + ".weight", {I, H}));
      OG_ASSIGN_OR_RETURN(mw.up_bias, maybe(other_bias, mlp + var.mlp_up + ".bias", I));
      OG_ASSIGN_OR_RETURN(mw.down, tensor(mlp + var.mlp_down + ".weight", {H, I}));
      OG_ASSIGN_OR_RETURN(mw.down_bias, maybe(other_bias, mlp + var.mlp_down + ".bias", H));
    } else {
      OG_ASSIGN_OR_RETURN(mw.gate, tensor(mlp + "gate_proj.weight", {I, H}));
      OG_ASSIGN_OR_RETURN(mw.up, tensor(mlp + "up_proj.weight", {I, H}));
      OG_ASSIGN_OR_RETURN(mw.down, tensor(mlp + "down_proj.weight", {H, I}));
    }
    auto feed_forward = [&](const Mat& h) { return var.mlp_up != nullptr ? plain_mlp(h, mw) : gated_mlp(h, mw); };

    OG_ASSIGN_OR_RETURN(LayerNormWeights ln1, read_layer_norm(ckpt, pre + "input_layernorm", H, var.norm_bias, var.norm_offset));
    const Mat n = layer_norm(x, ln1.w, ln1.b, eps, H);
    if (parallel) {
      Mat sum = self_attention(n, aw, shape);
      add_inplace(sum, feed_forward(n));
      add_inplace(x, sum);
      continue;
    }
    add_inplace(x, self_attention(n, aw, shape));
    OG_ASSIGN_OR_RETURN(LayerNormWeights ln2, read_layer_norm(ckpt, pre + "post_attention_layernorm", H, var.norm_bias, var.norm_offset));
    add_inplace(x, feed_forward(layer_norm(x, ln2.w, ln2.b, eps, H)));
  }

  OG_ASSIGN_OR_RETURN(LayerNormWeights final_norm, read_layer_norm(ckpt, std::string("model.") + var.final_norm, H, var.norm_bias, var.norm_offset));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* head, output_head(ckpt, c, *embed, {"lm_head.weight"}));
  const hf::TensorView* head_bias = nullptr;
  if (var.always_bias) { OG_ASSIGN_OR_RETURN(head_bias, tensor("lm_head.bias", {c.vocab_size})); }
  Mat logits = linear(layer_norm(x, final_norm.w, final_norm.b, eps, H), *head, head_bias);  // [T, V]
  if (logit_scale != 1.0)
    for (double& v : logits.v) v *= logit_scale;
  return logits.v;
}

}  // namespace og::reference
