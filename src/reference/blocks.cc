#include "reference/blocks.h"

#include "base/check.h"

namespace og::reference {
namespace {

void add_bias(Mat& y, const hf::TensorView* bias) {
  if (bias == nullptr) return;
  OG_CHECK(bias->numel() == y.cols);
  for (int64_t t = 0; t < y.rows; ++t)
    for (int64_t o = 0; o < y.cols; ++o) y.at(t, o) += bias->get(o);
}

}  // namespace

Mat self_attention(const Mat& x, const AttentionWeights& w, const AttentionShape& s) {
  const int64_t D = s.attn.head_dim;
  const int64_t q_width = s.attn.n_heads * D, kv_width = s.attn.n_kv_heads * D;
  Mat q, k, v;  // [T, Hq*D], [T, Hkv*D], [T, Hkv*D]
  if (w.qkv != nullptr) {
    q = linear_rows(x, *w.qkv, 0, q_width);
    k = linear_rows(x, *w.qkv, q_width, kv_width);
    v = linear_rows(x, *w.qkv, q_width + kv_width, kv_width);
  } else {
    q = linear(x, *w.q);
    k = linear(x, *w.k);
    v = linear(x, *w.v);
  }
  add_bias(q, w.q_bias);
  add_bias(k, w.k_bias);
  add_bias(v, w.v_bias);
  // Qwen3/Gemma3 normalize each head of q and k over head_dim, before RoPE.
  if (!w.q_norm.empty()) q = rms_norm(q, w.q_norm, w.qk_norm_eps, w.qk_norm_style, D);
  if (!w.k_norm.empty()) k = rms_norm(k, w.k_norm, w.qk_norm_eps, w.qk_norm_style, D);
  apply_rope(q, s.attn.n_heads, D, s.inv_freq, s.rope_attention_factor);
  apply_rope(k, s.attn.n_kv_heads, D, s.inv_freq, s.rope_attention_factor);
  Mat a = attention(q, k, v, s.attn);  // [T, Hq*D], heads concatenated as transformers reshapes them
  return linear(a, *w.o, w.o_bias);
}

Mat gated_mlp(const Mat& x, const MlpWeights& w) {
  Mat gate, up;  // [T, I] each
  if (w.gate_up != nullptr) {
    gate = linear_rows(x, *w.gate_up, 0, w.intermediate);
    up = linear_rows(x, *w.gate_up, w.intermediate, w.intermediate);
  } else {
    gate = linear(x, *w.gate, w.gate_bias);
    up = linear(x, *w.up, w.up_bias);
  }
  for (size_t i = 0; i < gate.v.size(); ++i) gate.v[i] = activate(w.act, gate.v[i]) * up.v[i];
  return linear(gate, *w.down, w.down_bias);
}

}  // namespace og::reference
