// Gemma 4 text models: Gemma4ForCausalLM (model_type gemma4_text, tensors under "model.") and
// the language model of Gemma4ForConditionalGeneration (model_type gemma4, text_config, tensors
// under "model.language_model."). Followed: models/gemma4/modeling_gemma4.py and
// configuration_gemma4.py, modeling_rope_utils.py (_compute_proportional_rope_parameters),
// masking_utils.py.
// The semantics an exporter must match, with the places in those files: reference/gemma_n.h.
//
// Per layer (Gemma4TextDecoderLayer.forward), every RMSNorm x̂ * w (Gemma4RMSNorm):
//   x = x + post_attention_layernorm(attn(input_layernorm(x)))
//   x = x + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(x)))
//   x = x + post_per_layer_input_norm(per_layer_projection(act(per_layer_input_gate(x)) * pli[l]))
//   x = x * layer_scalar
// With enable_moe_block (docs/moe_families.md §1.2) the MLP line becomes, on the same x:
//   dense = post_feedforward_layernorm_1(mlp(pre_feedforward_layernorm(x)))
//   r = router.proj(rms(x) * router.scale * hidden^-0.5); p = softmax(r); top_k_experts of p,
//   renormalized, times router.per_expert_scale[e]
//   moe = post_feedforward_layernorm_2(sum_j w_j down[e_j](act(G h2) * U h2)),
//         h2 = pre_feedforward_layernorm_2(x), G/U = rows [0, I) / [I, 2I) of gate_up_proj[e]
//   x = x + post_feedforward_layernorm(dense + moe)
// computed from the fused 3-D parameters as Gemma4TextRouter / Gemma4TextExperts hold them.
// attention: q/k norms x̂ * w per head, weightless v_norm, scale 1.0, per-layer-type head_dim and
// RoPE, KV-shared layers reading their donor's k/v (gemma_n.h). Logits: final norm, tied head,
// final_logit_softcapping.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include "reference/families/families.h"
#include "reference/gemma_n.h"
#include "reference/weights.h"

namespace og::reference {
namespace {

struct Ropes {
  std::vector<double> sliding, full;  // inv_freq of each layer type present
};

// The head_dim every layer of `type` has (one RoPE per layer type).
Result<int64_t> head_dim_of_type(const hf::ModelConfig& c, const GemmaNPlan& p, bool sliding) {
  int64_t d = 0;
  for (const GemmaNLayer& L : p.layers) {
    if (L.sliding != sliding) continue;
    if (d != 0 && L.head_dim != d)
      return unsupported("{}: {} layers have different head_dim ({} and {}), but transformers builds one rotary "
                         "embedding per layer type",
                         c.path, sliding ? "sliding_attention" : "full_attention", d, L.head_dim);
    d = L.head_dim;
  }
  return d;
}

// Gemma4TextRotaryEmbedding: rope_parameters[layer_type] (default: sliding {default, 1e4},
// full {proportional, partial_rotary_factor 0.25, 1e6}). "default" uses
// Gemma4TextRotaryEmbedding.compute_default_rope_parameters (dim = config.head_dim, the sliding
// one; partial_rotary_factor is not read); "proportional" uses head_dim_key="global_head_dim"
// on full layers. The old rope_theta / rope_scaling fields are not read by Gemma4 (its
// convert_rope_params_to_dict keeps no backward compatibility).
Result<Ropes> gemma4_ropes(const hf::ModelConfig& c, const GemmaNPlan& p) {
  const hf::JsonFields t = c.text_fields();
  hf::Json params = {
      {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}},
      {"full_attention", {{"rope_type", "proportional"}, {"partial_rotary_factor", 0.25}, {"rope_theta", 1000000.0}}},
  };
  if (t.has("rope_parameters")) {
    const hf::Json& rp = c.text.at("rope_parameters");
    if (!rp.is_object() || !(rp.contains("sliding_attention") || rp.contains("full_attention")))
      return unsupported("{}: field '{}' must be keyed by layer type (full_attention, sliding_attention) for gemma4",
                         c.path, t.field_name("rope_parameters"));
    params = rp;
  }
  bool has_per_layer_config = t.has("per_layer_config");
  Ropes ropes;
  for (bool sliding : {true, false}) {
    OG_ASSIGN_OR_RETURN(int64_t head_dim, head_dim_of_type(c, p, sliding));
    if (head_dim == 0) continue;  // no layer of this type
    const std::string type = sliding ? "sliding_attention" : "full_attention";
    const std::string where = t.field_name("rope_parameters." + type);
    if (!params.contains(type) || !params.at(type).is_object())
      return bad_input("{}: field '{}' is missing (an object with rope_type and rope_theta)", c.path, where);
    const hf::JsonFields f(params.at(type), c.path, where + ".");
    OG_ASSIGN_OR_RETURN(std::string rope_type, f.get_string("rope_type", "default"));
    OG_ASSIGN_OR_RETURN(double theta, f.get_double("rope_theta"));
    if (!(theta > 0)) return f.invalid("rope_theta", "a positive number");
    std::vector<double> inv;
    if (rope_type == "default") {
      if (c.head_dim != head_dim)
        return unsupported("{}: '{}' is default RoPE, which transformers computes for head_dim {} while these layers "
                           "have head_dim {}",
                           c.path, where, c.head_dim, head_dim);
      inv.resize(static_cast<size_t>(head_dim / 2));
      for (int64_t i = 0; i < head_dim / 2; ++i)
        inv[static_cast<size_t>(i)] = 1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(head_dim));
    } else if (rope_type == "proportional") {
      int64_t dim = c.head_dim;  // head_dim_key "head_dim"
      if (!sliding && !has_per_layer_config) {
        // head_dim_key="global_head_dim": getattr(config, "global_head_dim", None) or hidden // heads
        dim = 512;
        if (c.text.contains("global_head_dim")) {
          if (c.text.at("global_head_dim").is_null()) {
            dim = 0;
          } else {
            OG_ASSIGN_OR_RETURN(dim, t.get_int("global_head_dim"));
          }
        }
        if (dim == 0) dim = c.hidden_size / c.num_attention_heads;
      } else if (!sliding) {
        dim = head_dim;  // per_layer_config: the full layers' own head_dim
      }
      if (dim != head_dim)
        return unsupported("{}: '{}' is proportional RoPE over {} dims while these layers have head_dim {}", c.path,
                           where, dim, head_dim);
      OG_ASSIGN_OR_RETURN(double partial, f.get_double("partial_rotary_factor", 1.0));
      OG_ASSIGN_OR_RETURN(double factor, f.get_double("factor", 1.0));
      if (!(partial >= 0 && partial <= 1)) return f.invalid("partial_rotary_factor", "a number in [0, 1]");
      if (!(factor > 0)) return f.invalid("factor", "a positive number");
      inv = proportional_inv_freq(theta, head_dim, partial, factor);
    } else {
      return unsupported("{}: field '{}' = '{}' is not supported by the reference for gemma4 (supported: default, "
                         "proportional)",
                         c.path, f.field_name("rope_type"), rope_type);
    }
    (sliding ? ropes.sliding : ropes.full) = std::move(inv);
  }
  return ropes;
}

// Gemma4Model.forward (the wrapper): image/video/audio placeholder ids are replaced by
// pad_token_id before both embeddings (no pixel values are ever given here).
Result<std::vector<int32_t>> wrapper_token_ids(const hf::ModelConfig& c, std::span<const int32_t> tokens) {
  std::vector<int32_t> ids(tokens.begin(), tokens.end());
  if (!c.is_wrapped) return ids;
  const hf::JsonFields r = c.root_fields();
  std::vector<int64_t> placeholders;
  for (auto [key, fallback] : {std::pair{"image_token_id", 258880}, std::pair{"video_token_id", 258884},
                               std::pair{"audio_token_id", 258881}}) {
    if (c.root.contains(key) && c.root.at(key).is_null()) continue;
    OG_ASSIGN_OR_RETURN(int64_t id, r.get_int(key, fallback));
    placeholders.push_back(id);
  }
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(std::optional<int64_t> pad, t.get_optional_int("pad_token_id"));
  if (!c.text.contains("pad_token_id")) pad = 0;  // Gemma4TextConfig default
  for (size_t i = 0; i < ids.size(); ++i) {
    if (std::find(placeholders.begin(), placeholders.end(), ids[i]) == placeholders.end()) continue;
    if (!pad)
      return bad_input("token {} (position {}) is a multimodal placeholder, which Gemma4Model replaces by "
                       "pad_token_id, but '{}' is null",
                       ids[i], i, t.field_name("pad_token_id"));
    ids[i] = static_cast<int32_t>(*pad);
  }
  return ids;
}

struct MoeConfig {
  bool enabled = false;
  int64_t n = 0, top_k = 0, inter = 0;
};

Result<MoeConfig> read_moe(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  MoeConfig m;
  OG_ASSIGN_OR_RETURN(m.enabled, t.get_bool("enable_moe_block", false));
  if (!m.enabled) return m;
  for (auto [key, out] : {std::pair{"num_experts", &m.n}, std::pair{"top_k_experts", &m.top_k},
                          std::pair{"moe_intermediate_size", &m.inter}}) {
    if (!c.text.contains(key) || c.text.at(key).is_null()) return t.invalid(key, "an integer (enable_moe_block)");
    OG_ASSIGN_OR_RETURN(*out, t.get_int(key));
  }
  if (m.n < 1) return t.invalid("num_experts", "a positive integer");
  if (m.top_k < 1 || m.top_k > m.n) return t.invalid("top_k_experts", "in [1, num_experts]");
  if (m.inter < 1) return t.invalid("moe_intermediate_size", "a positive integer");
  return m;
}

// Gemma4TextRouter + Gemma4TextExperts on the residual x [T, H] (before
// post_feedforward_layernorm_2): [T, H].
Result<Mat> gemma4_moe(const hf::Checkpoint& ck, const std::string& pre, const MoeConfig& m, const Mat& x, double eps,
                       Activation act, const Numerics& nu) {
  const int64_t T = x.rows, H = x.cols, E = m.n, I = m.inter;
  OG_ASSIGN_OR_RETURN(std::vector<double> scale, vector_f64(ck, pre + "router.scale", H));
  OG_ASSIGN_OR_RETURN(std::vector<double> per_expert, vector_f64(ck, pre + "router.per_expert_scale", E));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* proj, float_tensor(ck, pre + "router.proj.weight", {E, H}));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* gate_up, float_tensor(ck, pre + "experts.gate_up_proj", {E, 2 * I, H}));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* down, float_tensor(ck, pre + "experts.down_proj", {E, H, I}));
  OG_ASSIGN_OR_RETURN(std::vector<double> pre2, vector_f64(ck, pre + "pre_feedforward_layernorm_2.weight", H));

  // Router: weightless norm, then * scale, then * hidden^-0.5 (scalar_root_size), then proj.
  Mat r = rms_norm_unit(x, eps, H);
  const double root = 1.0 / std::sqrt(static_cast<double>(H));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < H; ++c) r.at(t, c) = r.at(t, c) * scale[static_cast<size_t>(c)] * root;
  nu.settle(r);
  const Mat logits = linear(r, *proj);  // [T, E]
  Mat h2 = rms_norm(x, pre2, eps, NormStyle::kWeight, H);
  nu.settle(h2);

  Mat out(T, H);
  std::vector<double> a(static_cast<size_t>(2 * I)), y(static_cast<size_t>(H));
  for (int64_t t = 0; t < T; ++t) {
    // softmax over all experts, top-k by probability (ties: lower index), renormalized
    double top = logits.at(t, 0);
    for (int64_t e = 1; e < E; ++e) top = std::max(top, logits.at(t, e));
    std::vector<double> prob(static_cast<size_t>(E));
    double z = 0;
    for (int64_t e = 0; e < E; ++e) z += prob[static_cast<size_t>(e)] = std::exp(logits.at(t, e) - top);
    for (double& p : prob) p /= z;
    std::vector<int64_t> idx(static_cast<size_t>(E));
    std::iota(idx.begin(), idx.end(), int64_t{0});
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t u, int64_t v) { return prob[u] > prob[v]; });
    double sum = 0;
    for (int64_t j = 0; j < m.top_k; ++j) sum += prob[static_cast<size_t>(idx[static_cast<size_t>(j)])];
    for (int64_t j = 0; j < m.top_k; ++j) {
      const int64_t e = idx[static_cast<size_t>(j)];
      const double w = prob[static_cast<size_t>(e)] / sum * per_expert[static_cast<size_t>(e)];
      // gate, up = linear(h2, gate_up_proj[e]).chunk(2): outputs [0, I) gate, [I, 2I) up
      for (int64_t o = 0; o < 2 * I; ++o) {
        double acc = 0;
        for (int64_t c = 0; c < H; ++c) acc += gate_up->get((e * 2 * I + o) * H + c) * h2.at(t, c);
        a[static_cast<size_t>(o)] = acc;
      }
      for (int64_t i = 0; i < I; ++i)
        a[static_cast<size_t>(i)] = activate(act, a[static_cast<size_t>(i)]) * a[static_cast<size_t>(I + i)];
      for (int64_t o = 0; o < H; ++o) {
        double acc = 0;
        for (int64_t i = 0; i < I; ++i) acc += down->get((e * H + o) * I + i) * a[static_cast<size_t>(i)];
        out.at(t, o) += w * acc;
      }
    }
  }
  nu.settle(out);
  return out;
}

Result<std::vector<double>> gemma4_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                           std::span<const int32_t> tokens, const ForwardOptions& options) {
  OG_ASSIGN_OR_RETURN(GemmaNPlan plan, gemma4_plan(c));
  OG_ASSIGN_OR_RETURN(Ropes ropes, gemma4_ropes(c, plan));
  OG_ASSIGN_OR_RETURN(const MoeConfig moe, read_moe(c));
  const hf::JsonFields t = c.text_fields();
  const int64_t H = c.hidden_size, heads = c.num_attention_heads, V = c.vocab_size, L = c.num_hidden_layers;
  const double eps = c.rms_norm_eps;
  OG_ASSIGN_OR_RETURN(std::string act_name, t.get_string("hidden_activation"));
  OG_ASSIGN_OR_RETURN(Activation act,
                      parse_activation(act_name, c.path + ": field '" + t.field_name("hidden_activation") + "'"));
  OG_ASSIGN_OR_RETURN(bool bias, t.get_bool("attention_bias", false));
  OG_ASSIGN_OR_RETURN(std::optional<double> P_field, number_or_null(c, "hidden_size_per_layer_input", std::nullopt));
  const auto P = static_cast<int64_t>(P_field.value_or(0));  // 0 / null: no per-layer inputs
  if (P < 0) return t.invalid("hidden_size_per_layer_input", "a positive integer, 0 or null");
  OG_ASSIGN_OR_RETURN(int64_t vps, t.get_int("vocab_size_per_layer_input"));
  if (vps <= 0) return t.invalid("vocab_size_per_layer_input", "a positive integer");
  OG_ASSIGN_OR_RETURN(std::optional<double> final_cap, number_or_null(c, "final_logit_softcapping", std::nullopt));
  if (final_cap && !(*final_cap > 0)) return t.invalid("final_logit_softcapping", "a positive number or null");

  OG_ASSIGN_OR_RETURN(std::string mp, gemma_n_prefix(c, ckpt));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* embed, float_tensor(ckpt, mp + "embed_tokens.weight", {V, H}));
  OG_ASSIGN_OR_RETURN(DType wdt, weight_dtype(c, *embed, options));
  const Numerics nu{options.float32_activations};

  OG_ASSIGN_OR_RETURN(std::vector<int32_t> ids, wrapper_token_ids(c, tokens));
  // Gemma4TextScaledWordEmbedding: embed_scale = torch.tensor(hidden**0.5) (float32) .to(weight dtype).
  OG_ASSIGN_OR_RETURN(Mat x, embed_rows(*embed, ids));  // [T, H] residual stream
  const double normalizer = float32_constant_in(std::sqrt(static_cast<double>(H)), wdt);
  for (double& v : x.v) v *= normalizer;
  nu.settle(x);

  Mat pli;  // [T, L * P]
  if (P > 0) {
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] >= vps)
        return bad_input("token {} (position {}) is outside the per-layer embedding table [0, {}) "
                         "(vocab_size_per_layer_input)",
                         ids[i], i, vps);
    // per_layer_model_projection_scale = hidden**-0.5 and per_layer_input_scale = 2**-0.5 are
    // Python floats in Gemma4TextModel (not float32 buffers as in Gemma3n).
    const PleScales scales{.embed = float32_constant_in(std::sqrt(static_cast<double>(P)), wdt),
                           .projection = 1.0 / std::sqrt(static_cast<double>(H)),
                           .input = 1.0 / std::sqrt(2.0)};
    OG_ASSIGN_OR_RETURN(pli, gemma_n_per_layer_inputs(ckpt, mp, ids, vps, x, L, P, eps, scales, nu));
  }

  std::vector<KvState> kv(static_cast<size_t>(L));
  for (int64_t l = 0; l < L; ++l) {
    const GemmaNLayer& layer = plan.layers[static_cast<size_t>(l)];
    const std::string pre = mp + "layers." + std::to_string(l) + ".";
    auto norm = [&](const char* name) { return vector_f64(ckpt, pre + name + ".weight", H); };
    OG_ASSIGN_OR_RETURN(GemmaNAttentionWeights aw, load_gemma_n_attention(ckpt, pre + "self_attn.", layer,
                                                                          layer.kv_source == l, heads, H, bias));
    OG_ASSIGN_OR_RETURN(GemmaNMlpWeights mw, load_gemma_n_mlp(ckpt, pre + "mlp.", layer.intermediate, H));
    OG_ASSIGN_OR_RETURN(std::vector<double> input_ln, norm("input_layernorm"));
    OG_ASSIGN_OR_RETURN(std::vector<double> post_attn_ln, norm("post_attention_layernorm"));
    OG_ASSIGN_OR_RETURN(std::vector<double> pre_ff_ln, norm("pre_feedforward_layernorm"));
    OG_ASSIGN_OR_RETURN(std::vector<double> post_ff_ln, norm("post_feedforward_layernorm"));
    // layer_scalar: a persistent buffer [1]; transformers initializes a missing one to 1.
    double layer_scalar = 1.0;
    if (ckpt.find(pre + "layer_scalar") != nullptr) {
      OG_ASSIGN_OR_RETURN(const hf::TensorView* s, float_tensor(ckpt, pre + "layer_scalar", {1}));
      layer_scalar = s->get(0);
    }
    constexpr NormStyle kW = NormStyle::kWeight;
    const std::vector<double>& inv_freq = layer.sliding ? ropes.sliding : ropes.full;

    Mat h = rms_norm(x, input_ln, eps, kW, H);
    nu.settle(h);
    Mat a = gemma_n_attention(h, aw, layer, l, heads, inv_freq, eps, kv, nu);
    a = rms_norm(a, post_attn_ln, eps, kW, H);
    nu.settle(a);
    add_inplace(x, a);
    nu.settle(x);

    h = rms_norm(x, pre_ff_ln, eps, kW, H);
    nu.settle(h);
    Mat m = gemma_n_mlp(h, mw, act, nullptr, nu);
    if (moe.enabled) {
      OG_ASSIGN_OR_RETURN(std::vector<double> post1, norm("post_feedforward_layernorm_1"));
      OG_ASSIGN_OR_RETURN(std::vector<double> post2, norm("post_feedforward_layernorm_2"));
      m = rms_norm(m, post1, eps, kW, H);
      nu.settle(m);
      OG_ASSIGN_OR_RETURN(Mat e, gemma4_moe(ckpt, pre, moe, x, eps, act, nu));
      e = rms_norm(e, post2, eps, kW, H);
      nu.settle(e);
      add_inplace(m, e);
      nu.settle(m);
    }
    m = rms_norm(m, post_ff_ln, eps, kW, H);
    nu.settle(m);
    add_inplace(x, m);
    nu.settle(x);

    if (P > 0) {
      OG_ASSIGN_OR_RETURN(Mat e, gemma_n_per_layer_block(ckpt, pre, x, pli, l, P, act, eps, nu));
      add_inplace(x, e);
      nu.settle(x);
    }
    for (double& v : x.v) v *= layer_scalar;  // the whole residual stream, after the PLE block
    nu.settle(x);
  }

  return gemma_n_logits(x, {.ckpt = ckpt, .config = c, .embed = *embed, .norm_prefix = mp, .eps = eps,
                            .final_cap = final_cap, .numerics = nu});
}

Result<std::vector<int64_t>> gemma4_windows(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(GemmaNPlan plan, gemma4_plan(c));
  return plan_windows(plan);
}

Result<std::vector<int64_t>> gemma4_kv_sources(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(GemmaNPlan plan, gemma4_plan(c));
  return plan_kv_sources(plan);
}

}  // namespace

// Model types and transformers' Gemma4TextConfig defaults for keys a text_config may omit.
constexpr ModelType kGemma4Types[] = {{"gemma4", true}, {"gemma4_text", false}};
const Family kGemma4Family{"gemma4", kGemma4Types, true, R"({
    "vocab_size": 262144, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 30,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-6, "sliding_window": 512,
    "hidden_size_per_layer_input": 256, "vocab_size_per_layer_input": 262144})",
                           &gemma4_forward, &gemma4_windows, &gemma4_kv_sources};

}  // namespace og::reference
