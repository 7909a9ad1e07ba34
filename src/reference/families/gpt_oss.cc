// gpt-oss (transformers models/gpt_oss/modular_gpt_oss.py, configuration_gpt_oss.py,
// integrations/mxfp4.py; docs/moe_families.md §2): pre-norm layers
//   x += o(attention(input_layernorm(x)))   q/k/v/o biased (attention_bias), a sink logit per
//                                           query head, yarn rope, sliding/full layers
//   x += moe(post_attention_layernorm(x))
// with, per token h:  r = W_r h + b_r; e_1..e_k = top-k of r; w = softmax(r_e1..r_ek);
//   a = gate_up_proj[e] h + gate_up_proj_bias[e]   ([2I], gate = a[0::2], up = a[1::2])
//   g = min(gate, L); u = clamp(up, -L, L); y_e = down_proj[e] ((u + 1) g sigmoid(alpha g)) + down_proj_bias[e]
//   moe(h) = sum_j w_j y_{e_j}
// The experts are read as transformers holds them: fused and interleaved, from MXFP4
// `_blocks`/`_scales` when quantization_config says mxfp4, else from the float parameters
// gate_up_proj [E, H, 2I] and down_proj [E, I, H] (input-major).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "reference/blocks.h"
#include "reference/families/families.h"
#include "reference/mxfp4.h"
#include "reference/rope.h"
#include "reference/weights.h"

namespace og::reference {
namespace {

struct Experts {
  int64_t n = 0, top_k = 0;
  double alpha = 1.702, limit = 7.0;
  bool mxfp4 = false;
};

Result<Experts> read_experts(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  Experts x;
  OG_ASSIGN_OR_RETURN(x.n, t.get_int("num_local_experts"));
  OG_ASSIGN_OR_RETURN(x.top_k, t.get_int("num_experts_per_tok"));
  OG_ASSIGN_OR_RETURN(x.alpha, t.get_double("swiglu_alpha"));
  OG_ASSIGN_OR_RETURN(x.limit, t.get_double("swiglu_limit"));
  if (x.n < 1) return t.invalid("num_local_experts", "positive");
  if (x.top_k < 1 || x.top_k > x.n) return t.invalid("num_experts_per_tok", "in [1, num_local_experts]");
  if (t.has("quantization_config")) {
    OG_ASSIGN_OR_RETURN(hf::JsonFields q, t.get_object("quantization_config"));
    OG_ASSIGN_OR_RETURN(std::string method, q.get_string("quant_method"));
    if (method != "mxfp4") return q.invalid("quant_method", "\"mxfp4\"");
    x.mxfp4 = true;
  }
  return x;
}

// One expert as transformers computes it, in float64: gate_up [2I, H] out-major.
struct Expert {
  Mat gate_up;  // [2I, H]
  Mat down;     // [H, I]
  std::vector<double> gate_up_bias, down_bias;  // [2I], [H]
};

Mat transposed(const hf::TensorView& t, int64_t e) {  // t [E, A, B] -> expert e's [B, A]
  const int64_t A = t.shape[1], B = t.shape[2];
  Mat m(B, A);
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b) m.at(b, a) = t.get((e * A + a) * B + b);
  return m;
}

Result<Expert> load_expert(const hf::Checkpoint& ck, const std::string& p, const Experts& x, int64_t e, int64_t H,
                           int64_t I) {
  Expert ex;
  if (x.mxfp4) {
    OG_ASSIGN_OR_RETURN(const hf::TensorView* gb, ck.get(p + "gate_up_proj_blocks"));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* gs, ck.get(p + "gate_up_proj_scales"));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* db, ck.get(p + "down_proj_blocks"));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* ds, ck.get(p + "down_proj_scales"));
    OG_ASSIGN_OR_RETURN(ex.gate_up, mxfp4_dequantize(*gb, *gs, e));
    OG_ASSIGN_OR_RETURN(ex.down, mxfp4_dequantize(*db, *ds, e));
    if (ex.gate_up.rows != 2 * I || ex.gate_up.cols != H || ex.down.rows != H || ex.down.cols != I)
      return bad_input("reference: MXFP4 experts under '{}' do not decode to [{}, {}] and [{}, {}]", p, 2 * I, H, H, I);
  } else {
    OG_ASSIGN_OR_RETURN(const hf::TensorView* gu, float_tensor(ck, p + "gate_up_proj", {x.n, H, 2 * I}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* d, float_tensor(ck, p + "down_proj", {x.n, I, H}));
    ex.gate_up = transposed(*gu, e);
    ex.down = transposed(*d, e);
  }
  OG_ASSIGN_OR_RETURN(const hf::TensorView* gub, float_tensor(ck, p + "gate_up_proj_bias", {x.n, 2 * I}));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* dbias, float_tensor(ck, p + "down_proj_bias", {x.n, H}));
  for (int64_t i = 0; i < 2 * I; ++i) ex.gate_up_bias.push_back(gub->get(e * 2 * I + i));
  for (int64_t o = 0; o < H; ++o) ex.down_bias.push_back(dbias->get(e * H + o));
  return ex;
}

// GptOssExperts on one token row h [H].
std::vector<double> expert_forward(const Expert& ex, const Experts& x, const double* h, int64_t H) {
  const int64_t I = ex.down.cols;
  std::vector<double> act(static_cast<size_t>(I));
  for (int64_t i = 0; i < I; ++i) {
    double a[2];
    for (int k = 0; k < 2; ++k) {  // output 2i is gate unit i, 2i + 1 up unit i (`[..., ::2]`, `[..., 1::2]`)
      const int64_t row = 2 * i + k;
      a[k] = ex.gate_up_bias[static_cast<size_t>(row)];
      for (int64_t c = 0; c < H; ++c) a[k] += ex.gate_up.at(row, c) * h[c];
    }
    const double gate = std::min(a[0], x.limit), up = std::clamp(a[1], -x.limit, x.limit);
    act[static_cast<size_t>(i)] = (up + 1) * gate / (1 + std::exp(-gate * x.alpha));
  }
  std::vector<double> y(ex.down_bias);
  for (int64_t o = 0; o < H; ++o)
    for (int64_t i = 0; i < I; ++i) y[static_cast<size_t>(o)] += ex.down.at(o, i) * act[static_cast<size_t>(i)];
  return y;
}

Result<Mat> moe_block(const Mat& h, const hf::Checkpoint& ck, const std::string& mlp, const Experts& x, int64_t I) {
  const int64_t T = h.rows, H = h.cols;
  OG_ASSIGN_OR_RETURN(const hf::TensorView* rw, float_tensor(ck, mlp + "router.weight", {x.n, H}));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* rb, float_tensor(ck, mlp + "router.bias", {x.n}));
  const Mat logits = linear(h, *rw, rb);  // [T, E]
  std::vector<Expert> experts;
  for (int64_t e = 0; e < x.n; ++e) {
    OG_ASSIGN_OR_RETURN(Expert ex, load_expert(ck, mlp + "experts.", x, e, H, I));
    experts.push_back(std::move(ex));
  }
  Mat out(T, H);
  for (int64_t t = 0; t < T; ++t) {
    std::vector<int64_t> idx(static_cast<size_t>(x.n));
    std::iota(idx.begin(), idx.end(), int64_t{0});
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return logits.at(t, a) > logits.at(t, b); });
    const double top = logits.at(t, idx[0]);
    double sum = 0;
    for (int64_t j = 0; j < x.top_k; ++j) sum += std::exp(logits.at(t, idx[static_cast<size_t>(j)]) - top);
    for (int64_t j = 0; j < x.top_k; ++j) {
      const int64_t e = idx[static_cast<size_t>(j)];
      const double w = std::exp(logits.at(t, e) - top) / sum;
      const std::vector<double> y = expert_forward(experts[static_cast<size_t>(e)], x, h.row(t), H);
      for (int64_t c = 0; c < H; ++c) out.at(t, c) += w * y[static_cast<size_t>(c)];
    }
  }
  return out;
}

// GptOssConfig: layer_types, else sliding on even layers ((i + 1) % 2), window sliding_window.
Result<std::vector<int64_t>> windows(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(std::vector<bool> given, sliding_flags_from_layer_types(c));
  std::vector<int64_t> w(static_cast<size_t>(c.num_hidden_layers), 0);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const bool sliding = given.empty() ? (l + 1) % 2 != 0 : given[static_cast<size_t>(l)];
    if (!sliding) continue;
    if (!c.sliding_window) return c.text_fields().invalid("sliding_window", "a window for the sliding layers");
    w[static_cast<size_t>(l)] = *c.sliding_window;
  }
  return w;
}

Result<std::vector<double>> gpt_oss_forward(const hf::ModelConfig& c, const hf::Checkpoint& ck, std::span<const int32_t> tokens,
                                            const ForwardOptions&) {
  OG_TRY(require_causal(c));
  const hf::JsonFields t = c.text_fields();
  if (!t.has("rope_scaling") && !t.has("rope_parameters"))
    return unsupported("{}: gpt_oss config without rope_scaling/rope_parameters (GptOssConfig's default yarn is "
                       "not filled in by the reference)", c.path);
  OG_ASSIGN_OR_RETURN(const Experts x, read_experts(c));
  const bool bias = true;  // GptOssConfig sets attention_bias = True whatever the file says
  OG_ASSIGN_OR_RETURN(const std::vector<int64_t> win, windows(c));
  OG_ASSIGN_OR_RETURN(const RopeSpec rope, parse_uniform_rope(c, 150000.0));
  const int64_t H = c.hidden_size, D = c.head_dim, Hq = c.num_attention_heads, Hkv = c.num_key_value_heads;
  const std::vector<double> inv_freq = rope_inv_freq(rope, D);
  OG_ASSIGN_OR_RETURN(const hf::TensorView* embed, float_tensor(ck, "model.embed_tokens.weight", {c.vocab_size, H}));
  OG_ASSIGN_OR_RETURN(Mat h, embed_rows(*embed, tokens));  // [T, H]
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string pre = "model.layers." + std::to_string(l) + ".", at = pre + "self_attn.";
    auto tensor = [&](const std::string& name, std::vector<int64_t> shape) { return float_tensor(ck, name, shape); };
    AttentionWeights aw;
    OG_ASSIGN_OR_RETURN(aw.q, tensor(at + "q_proj.weight", {Hq * D, H}));
    OG_ASSIGN_OR_RETURN(aw.k, tensor(at + "k_proj.weight", {Hkv * D, H}));
    OG_ASSIGN_OR_RETURN(aw.v, tensor(at + "v_proj.weight", {Hkv * D, H}));
    OG_ASSIGN_OR_RETURN(aw.o, tensor(at + "o_proj.weight", {H, Hq * D}));
    if (bias) {
      OG_ASSIGN_OR_RETURN(aw.q_bias, tensor(at + "q_proj.bias", {Hq * D}));
      OG_ASSIGN_OR_RETURN(aw.k_bias, tensor(at + "k_proj.bias", {Hkv * D}));
      OG_ASSIGN_OR_RETURN(aw.v_bias, tensor(at + "v_proj.bias", {Hkv * D}));
      OG_ASSIGN_OR_RETURN(aw.o_bias, tensor(at + "o_proj.bias", {H}));
    }
    AttentionShape shape{.attn = {.n_heads = Hq, .n_kv_heads = Hkv, .head_dim = D,
                                  .scale = 1.0 / std::sqrt(static_cast<double>(D)), .softcap = 0,
                                  .window = win[static_cast<size_t>(l)]},
                         .inv_freq = inv_freq,
                         .rope_attention_factor = rope.attention_factor};
    OG_ASSIGN_OR_RETURN(shape.attn.sinks, vector_f64(ck, at + "sinks", Hq));
    OG_ASSIGN_OR_RETURN(std::vector<double> ln1, vector_f64(ck, pre + "input_layernorm.weight", H));
    OG_ASSIGN_OR_RETURN(std::vector<double> ln2, vector_f64(ck, pre + "post_attention_layernorm.weight", H));
    add_inplace(h, self_attention(rms_norm(h, ln1, c.rms_norm_eps, NormStyle::kWeight, H), aw, shape));
    OG_ASSIGN_OR_RETURN(Mat m, moe_block(rms_norm(h, ln2, c.rms_norm_eps, NormStyle::kWeight, H), ck, pre + "mlp.",
                                         x, c.intermediate_size[static_cast<size_t>(l)]));
    add_inplace(h, m);
  }
  OG_ASSIGN_OR_RETURN(std::vector<double> final_norm, vector_f64(ck, "model.norm.weight", H));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* head, output_head(ck, c, *embed, {"lm_head.weight"}));
  return linear(rms_norm(h, final_norm, c.rms_norm_eps, NormStyle::kWeight, H), *head).v;  // [T, V]
}

constexpr ModelType kGptOssTypes[] = {{"gpt_oss", false}};

}  // namespace

// GptOssConfig's class defaults (the reference's own copy).
const Family kGptOssFamily{"gpt_oss", kGptOssTypes, false,
                           R"({"num_hidden_layers": 36, "num_local_experts": 128, "vocab_size": 201088,
                               "hidden_size": 2880, "intermediate_size": 2880, "head_dim": 64,
                               "num_attention_heads": 64, "num_key_value_heads": 8, "sliding_window": 128,
                               "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-5,
                               "rope_theta": 150000.0, "num_experts_per_tok": 4, "swiglu_alpha": 1.702,
                               "swiglu_limit": 7.0, "attention_bias": true})",
                           &gpt_oss_forward, &windows};

}  // namespace og::reference
