#include "reference/blocks.h"

#include <algorithm>
#include <cmath>
#include <numeric>

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
  // Qwen3/Gemma3 normalize each head of q and k over head_dim, before RoPE (HunYuan after it).
  auto qk_norms = [&] {
    if (w.qk_layer_norm) {
      q = layer_norm(q, w.q_norm, w.q_norm_bias, w.qk_norm_eps, D);
      k = layer_norm(k, w.k_norm, w.k_norm_bias, w.qk_norm_eps, D);
    } else {
      if (!w.q_norm.empty()) q = rms_norm(q, w.q_norm, w.qk_norm_eps, w.qk_norm_style, w.qk_norm_whole ? q.cols : D);
      if (!w.k_norm.empty()) k = rms_norm(k, w.k_norm, w.qk_norm_eps, w.qk_norm_style, w.qk_norm_whole ? k.cols : D);
    }
  };
  if (!w.qk_norm_after_rope) qk_norms();
  if (s.rope_pairs) {
    OG_CHECK(s.long_inv_freq.empty());
    apply_rope_pairs(q, s.attn.n_heads, D, s.inv_freq, s.rope_attention_factor);
    apply_rope_pairs(k, s.attn.n_kv_heads, D, s.inv_freq, s.rope_attention_factor);
  } else {
    apply_rope(q, s.attn.n_heads, D, s.inv_freq, s.rope_attention_factor, s.long_inv_freq, s.long_from);
    apply_rope(k, s.attn.n_kv_heads, D, s.inv_freq, s.rope_attention_factor, s.long_inv_freq, s.long_from);
  }
  if (w.qk_norm_after_rope) qk_norms();
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

Mat plain_mlp(const Mat& x, const MlpWeights& w) {
  Mat h = linear(x, *w.up, w.up_bias);  // [T, I]
  if (w.has_xielu) {  // transformers' XIELUActivation, its python path
    auto softplus = [](double a) { return a > 20 ? a : std::log1p(std::exp(a)); };  // torch's threshold 20
    const double beta = w.xielu[2], eps = w.xielu[3];
    const double alpha_p = softplus(w.xielu[0]), alpha_n = beta + softplus(w.xielu[1]);
    for (double& v : h.v)
      v = v > 0 ? alpha_p * v * v + beta * v : (std::expm1(std::min(v, eps)) - v) * alpha_n + beta * v;
    return linear(h, *w.down, w.down_bias);
  }
  for (double& v : h.v) v = activate(w.act, v);
  return linear(h, *w.down, w.down_bias);
}

namespace {

// Expert indices by value, largest first, ties to the lower index.
std::vector<int64_t> ranked(const std::vector<double>& v) {
  std::vector<int64_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), int64_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return v[static_cast<size_t>(a)] > v[static_cast<size_t>(b)]; });
  return idx;
}

// One token's (expert, weight) pairs under the sigmoid router (Glm4MoeTopkRouter.forward and
// get_topk_indices, step by step).
std::vector<std::pair<int64_t, double>> sigmoid_route(const Mat& logits, int64_t t, const MoeWeights& w,
                                                      const std::vector<double>& bias) {
  const int64_t E = logits.cols, G = w.n_group, per = E / G;
  std::vector<double> scores(static_cast<size_t>(E)), choice(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) {
    scores[static_cast<size_t>(e)] = 1.0 / (1.0 + std::exp(-logits.at(t, e)));
    choice[static_cast<size_t>(e)] = scores[static_cast<size_t>(e)] + (bias.empty() ? 0.0 : bias[static_cast<size_t>(e)]);
  }
  std::vector<double> group_scores(static_cast<size_t>(G));
  for (int64_t g = 0; g < G; ++g) {
    std::vector<double> members(choice.begin() + g * per, choice.begin() + (g + 1) * per);
    std::sort(members.begin(), members.end(), std::greater<>());
    group_scores[static_cast<size_t>(g)] = members[0] + members[1];
  }
  const std::vector<int64_t> groups = ranked(group_scores);
  std::vector<bool> keep(static_cast<size_t>(G), false);
  for (int64_t j = 0; j < w.topk_group; ++j) keep[static_cast<size_t>(groups[static_cast<size_t>(j)])] = true;
  for (int64_t e = 0; e < E; ++e)  // masked_fill(~score_mask, -inf)
    if (!keep[static_cast<size_t>(e / per)]) choice[static_cast<size_t>(e)] = -INFINITY;
  const std::vector<int64_t> idx = ranked(choice);
  double sum = 0;
  for (int64_t j = 0; j < w.top_k; ++j) sum += scores[static_cast<size_t>(idx[static_cast<size_t>(j)])];
  std::vector<std::pair<int64_t, double>> out;
  for (int64_t j = 0; j < w.top_k; ++j) {
    const int64_t e = idx[static_cast<size_t>(j)];
    const double s = scores[static_cast<size_t>(e)];
    out.push_back({e, (w.normalize ? s / (sum + 1e-20) : s) * w.routed_scale});
  }
  return out;
}

}  // namespace

Mat sparse_moe(const Mat& x, const MoeWeights& w) {
  const int64_t T = x.rows, E = static_cast<int64_t>(w.experts.size()), K = w.top_k;
  const Mat logits = linear(x, *w.router);  // [T, E]
  // routing[e] = (token, weight) pairs of the tokens that chose expert e.
  std::vector<std::vector<std::pair<int64_t, double>>> routing(static_cast<size_t>(E));
  for (int64_t t = 0; t < T; ++t) {
    if (w.sigmoid) {
      for (const auto& [e, weight] : sigmoid_route(logits, t, w, w.choice_bias)) routing[static_cast<size_t>(e)].push_back({t, weight});
      continue;
    }
    std::vector<double> prob(static_cast<size_t>(E));
    double top = logits.at(t, 0), sum = 0;
    for (int64_t e = 0; e < E; ++e) top = std::max(top, logits.at(t, e));
    for (int64_t e = 0; e < E; ++e) sum += prob[static_cast<size_t>(e)] = std::exp(logits.at(t, e) - top);
    for (double& p : prob) p /= sum;
    std::vector<double> choice = prob;  // what picks the experts: the probabilities (+ the choice bias)
    for (size_t e = 0; e < w.choice_bias.size(); ++e) choice[e] += w.choice_bias[e];
    if (w.n_group > 1) {  // DeepseekV2Moe's group_limited_greedy: groups scored by their best
      const int64_t per = E / w.n_group;
      std::vector<double> group_scores(static_cast<size_t>(w.n_group), -INFINITY);
      for (int64_t e = 0; e < E; ++e)
        group_scores[static_cast<size_t>(e / per)] = std::max(group_scores[static_cast<size_t>(e / per)], choice[static_cast<size_t>(e)]);
      const std::vector<int64_t> groups = ranked(group_scores);
      std::vector<bool> keep(static_cast<size_t>(w.n_group), false);
      for (int64_t j = 0; j < w.topk_group; ++j) keep[static_cast<size_t>(groups[static_cast<size_t>(j)])] = true;
      for (int64_t e = 0; e < E; ++e)  // tmp_scores = masked_fill(~score_mask, 0.0), which also weigh
        if (!keep[static_cast<size_t>(e / per)]) prob[static_cast<size_t>(e)] = choice[static_cast<size_t>(e)] = 0.0;
    }
    const std::vector<int64_t> idx = ranked(choice);
    double chosen = 0;
    for (int64_t j = 0; j < K; ++j) chosen += prob[static_cast<size_t>(idx[j])];
    chosen = std::max(chosen, w.norm_min);
    for (int64_t j = 0; j < K; ++j) {
      const int64_t e = idx[static_cast<size_t>(j)];
      routing[static_cast<size_t>(e)].push_back({t, (w.normalize ? prob[e] / chosen : prob[e]) * w.routed_scale});
    }
  }
  Mat out(T, x.cols);
  for (int64_t e = 0; e < E; ++e) {
    const auto& rows = routing[static_cast<size_t>(e)];
    if (rows.empty()) continue;
    Mat xe(static_cast<int64_t>(rows.size()), x.cols);  // the tokens routed to e
    for (size_t i = 0; i < rows.size(); ++i) std::copy(x.row(rows[i].first), x.row(rows[i].first) + x.cols, xe.row(static_cast<int64_t>(i)));
    const Mat ye = gated_mlp(xe, w.experts[static_cast<size_t>(e)]);
    for (size_t i = 0; i < rows.size(); ++i)
      for (int64_t c = 0; c < x.cols; ++c) out.at(rows[i].first, c) += rows[i].second * ye.at(static_cast<int64_t>(i), c);
  }
  if (w.shared) {  // gated by sigmoid(x · shared_gate) when there is one
    const Mat ys = gated_mlp(x, *w.shared);
    const Mat gate = w.shared_gate ? linear(x, *w.shared_gate) : Mat(T, 1);  // [T, 1]
    for (int64_t t = 0; t < T; ++t) {
      const double g = w.shared_gate ? 1.0 / (1.0 + std::exp(-gate.at(t, 0))) : 1.0;
      for (int64_t c = 0; c < x.cols; ++c) out.at(t, c) += g * ys.at(t, c);
    }
  }
  return out;
}

}  // namespace og::reference
