// Mixture of experts (kernels.h): routing, grouping rows by expert, the experts' gated MLPs
// through the linear kernels, and the per-row weighted sum. The routing and the sums are
// scalar: k values per token next to 3 * k matrix-vector products.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/check.h"
#include "base/thread_pool.h"
#include "kernels/kernels.h"

namespace og::kernels {
namespace {

bool is_quantized(const Matrix& m) { return m.type == StorageType::kQ8 || m.type == StorageType::kQ4; }

template <typename T>
T* grown(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// Quantizes x [n, w.cols] into `memory` for w's layout (kernels::quantize_int8).
Int8Input quantized(const float* x, int64_t n, const Matrix& w, std::vector<uint8_t>& memory) {
  const int64_t row_bytes = int8_row_bytes(w);
  Int8Input xq{.data = grown(memory, static_cast<size_t>(n * row_bytes)), .row_bytes = row_bytes};
  quantize_int8(x, n, w, xq, 0);
  return xq;
}

bool int8_input(const Matrix& w, XQuant xquant) { return xquant == XQuant::kInt8 && is_quantized(w); }

// One expert's gated MLP: its matrices, optional biases (gate/up [I], down [H]) and activation.
struct Expert {
  const Matrix& gate;
  const Matrix& up;
  const Matrix& down;
  const float* gate_bias = nullptr;
  const float* up_bias = nullptr;
  const float* down_bias = nullptr;
};

// down(act(gate x + bg, up x + bu)) + bd for the n rows of x [n, H] into out [n, H]; gate and
// up read one quantization of x when they share a layout, as the runtime's linears do.
void gated_mlp(const float* x, int64_t n, const Expert& ex, const MoeParams& p, MoeScratch& s, float* out,
               ThreadPool* pool) {
  const Matrix &g = ex.gate, &u = ex.up, &d = ex.down;
  const XQuant xquant = p.xquant;
  const int64_t I = g.rows;
  float* gate = grown(s.gate, static_cast<size_t>(n * I));  // [n, I]
  float* up = grown(s.up, static_cast<size_t>(n * I));      // [n, I]
  float* h = grown(s.h, static_cast<size_t>(n * I));        // [n, I]
  if (int8_input(g, xquant)) {
    const Int8Input xq = quantized(x, n, g, s.xq);
    linear(xq, 0, n, g, ex.gate_bias, gate, pool);
    if (int8_input(u, xquant) && u.type == g.type && u.group_size == g.group_size) {
      linear(xq, 0, n, u, ex.up_bias, up, pool);
    } else if (int8_input(u, xquant)) {
      linear(quantized(x, n, u, s.hq), 0, n, u, ex.up_bias, up, pool);
    } else {
      linear(x, n, u, ex.up_bias, up, pool);
    }
  } else {
    linear(x, n, g, ex.gate_bias, gate, pool);
    if (int8_input(u, xquant)) linear(quantized(x, n, u, s.xq), 0, n, u, ex.up_bias, up, pool);
    else linear(x, n, u, ex.up_bias, up, pool);
  }
  if (p.clamped) act_mul_clamped(gate, up, n * I, p.swiglu, h);
  else act_mul(gate, up, n * I, p.act, h);
  if (int8_input(d, xquant)) linear(quantized(h, n, d, s.hq), 0, n, d, ex.down_bias, out, pool);
  else linear(h, n, d, ex.down_bias, out, pool);
}

// order[0..k) = the k largest keys, largest first, ties to the lower index; a NaN key ranks
// below every number (a strict weak order whatever the values).
void top_k_of(const std::vector<double>& key, int64_t k, std::vector<int32_t>& order) {
  for (size_t e = 0; e < order.size(); ++e) order[e] = static_cast<int32_t>(e);
  auto rank = [&](int32_t e) { return std::isnan(key[static_cast<size_t>(e)]) ? -INFINITY : key[static_cast<size_t>(e)]; };
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int32_t a, int32_t b) { return rank(a) > rank(b) || (rank(a) == rank(b) && a < b); });
}

// A routed row's working memory, sized once per call: the experts' keys and scores, and the
// expert groups' (their scores, their order, one group's keys and order).
struct RouteBuffers {
  std::vector<int32_t> order, best, in_order;
  std::vector<double> key, score, group, in_group;
  explicit RouteBuffers(const MoeParams& p)
      : order(static_cast<size_t>(p.n_experts)), best(static_cast<size_t>(p.n_group)),
        in_order(static_cast<size_t>(p.n_experts / p.n_group)), key(static_cast<size_t>(p.n_experts)),
        score(static_cast<size_t>(p.n_experts)), group(static_cast<size_t>(p.n_group)),
        in_group(static_cast<size_t>(p.n_experts / p.n_group)) {}
};

// The pick of the keyed rules (kSigmoidTopK; kSoftmaxTopK with a choice bias or groups) for
// router logits r [E]: score[e] = sigmoid(r_e) or softmax(r)_e, the choice key score +
// choice_bias; with groups, the keys outside the topk_group groups whose group_top best keys
// sum highest read masked_key (transformers' masked_fill(~mask, 0.0 or -inf)); b.order[0..top_k)
// the chosen.
void select_keyed(const MoeParams& p, const float* r, RouteBuffers& b) {
  const int64_t E = p.n_experts;
  std::vector<double>& key = b.key;
  std::vector<double>& score = b.score;
  if (p.scoring == RouterScoring::kSigmoidTopK) {
    for (int64_t e = 0; e < E; ++e) score[static_cast<size_t>(e)] = 1.0 / (1.0 + std::exp(-static_cast<double>(r[e])));
  } else {
    double top = -INFINITY, denom = 0;
    for (int64_t e = 0; e < E; ++e) top = std::max(top, static_cast<double>(r[e]));
    for (int64_t e = 0; e < E; ++e) denom += score[static_cast<size_t>(e)] = std::exp(static_cast<double>(r[e]) - top);
    for (int64_t e = 0; e < E; ++e) score[static_cast<size_t>(e)] /= denom;
  }
  for (int64_t e = 0; e < E; ++e)
    key[static_cast<size_t>(e)] = score[static_cast<size_t>(e)] + (p.choice_bias != nullptr ? static_cast<double>(p.choice_bias[e]) : 0.0);
  if (p.n_group > 1) {
    const int64_t G = p.n_group, per = E / G;
    std::vector<double>& group = b.group;
    std::vector<double>& in_group = b.in_group;
    std::vector<int32_t>& best = b.best;
    std::vector<int32_t>& in_order = b.in_order;
    for (int64_t g = 0; g < G; ++g) {  // a group's score: the sum of its group_top largest keys
      std::copy(key.begin() + g * per, key.begin() + (g + 1) * per, in_group.begin());
      top_k_of(in_group, p.group_top, in_order);
      double sum = 0;
      for (int32_t j = 0; j < p.group_top; ++j) sum += in_group[static_cast<size_t>(in_order[static_cast<size_t>(j)])];
      group[static_cast<size_t>(g)] = sum;
    }
    top_k_of(group, p.topk_group, best);
    // The groups not among the first topk_group of `best` read masked_key (best[topk_group..G)
    // are them).
    for (int64_t j = p.topk_group; j < G; ++j) {
      const int64_t g = best[static_cast<size_t>(j)];
      std::fill(key.begin() + g * per, key.begin() + (g + 1) * per, static_cast<double>(p.masked_key));
    }
  }
  top_k_of(key, p.top_k, b.order);
}

}  // namespace

void moe(const MoeParams& p, const float* x, const float* logits, int64_t T, float* y, MoeScratch& s,
         ThreadPool* pool) {
  const int64_t E = p.n_experts, K = p.top_k, H = p.gate[0].cols;
  OG_CHECK(K >= 1 && K <= E);
  int32_t* chosen = grown(s.chosen, static_cast<size_t>(T * K));  // [T, K]
  float* weight = grown(s.weight, static_cast<size_t>(T * K));    // [T, K]

  // 1. Route each row: top-k by key (largest first, ties to the lower index), weights in double.
  OG_CHECK(p.n_group >= 1 && E % p.n_group == 0 && p.topk_group >= 1 && p.topk_group <= p.n_group);
  OG_CHECK(p.n_group == 1 || (p.group_top >= 1 && p.group_top <= E / p.n_group));
  OG_CHECK(p.n_group == 1 || p.scoring != RouterScoring::kTopKSoftmax);
  const bool keyed = p.scoring == RouterScoring::kSigmoidTopK || p.choice_bias != nullptr || p.n_group > 1;
  RouteBuffers b(p);
  std::vector<int32_t>& order = b.order;
  std::vector<double>& score = b.score;
  for (int64_t t = 0; t < T; ++t) {
    const float* r = logits + t * E;  // [E]
    double w[64];
    OG_CHECK(K <= 64);
    if (keyed) {  // picked by score + choice bias within the best groups, weighted by score
      select_keyed(p, r, b);
      for (int64_t j = 0; j < K; ++j) w[j] = score[static_cast<size_t>(order[static_cast<size_t>(j)])];
    } else {
      for (int64_t e = 0; e < E; ++e) b.key[static_cast<size_t>(e)] = r[e];
      top_k_of(b.key, K, order);
      const double top = r[order[0]];  // the largest logit
      double denom = 0;
      if (p.scoring == RouterScoring::kSoftmaxTopK) {
        for (int64_t e = 0; e < E; ++e) denom += std::exp(static_cast<double>(r[e]) - top);
      } else {
        for (int64_t j = 0; j < K; ++j) denom += std::exp(static_cast<double>(r[order[j]]) - top);
      }
      for (int64_t j = 0; j < K; ++j) w[j] = std::exp(static_cast<double>(r[order[j]]) - top) / denom;
    }
    double sum = 0;
    for (int64_t j = 0; j < K; ++j) sum += w[j];
    // The renormalizations of the keyed rules, as transformers' routers write them: SigmoidTopK
    // adds 1e-20 to the sum, SoftmaxTopK with a choice bias divides by at least 1e-12.
    if (p.scoring == RouterScoring::kSigmoidTopK) sum += 1e-20;
    else if (p.choice_bias != nullptr) sum = std::max(sum, 1e-12);
    for (int64_t j = 0; j < K; ++j) {
      double v = p.normalize_top_k ? w[j] / sum : w[j];
      chosen[t * K + j] = order[static_cast<size_t>(j)];
      v *= static_cast<double>(p.routed_scale);
      if (p.expert_scale != nullptr) v *= static_cast<double>(p.expert_scale[order[static_cast<size_t>(j)]]);
      weight[t * K + j] = static_cast<float>(v);
    }
  }

  // 2. Group the T * K slots by expert (counting sort: tokens ascending within an expert).
  int64_t* first = grown(s.first, static_cast<size_t>(E + 1));
  std::fill(first, first + E + 1, 0);
  for (int64_t i = 0; i < T * K; ++i) ++first[chosen[i] + 1];
  for (int64_t e = 0; e < E; ++e) first[e + 1] += first[e];
  int32_t* slots = grown(s.slots, static_cast<size_t>(T * K));
  {
    std::vector<int64_t> fill(first, first + E);
    for (int64_t i = 0; i < T * K; ++i) slots[fill[static_cast<size_t>(chosen[i])]++] = static_cast<int32_t>(i);
  }

  // 3. Each chosen expert once, over all rows routed to it; outputs land in their slots.
  s.expert_reads.assign(static_cast<size_t>(E), 0);
  s.experts_read = 0;
  float* slot_out = grown(s.slot_out, static_cast<size_t>(T * K * H));  // [T * K, H]
  std::vector<int32_t> used;  // the chosen experts, ascending
  int64_t most_rows = 0;
  for (int64_t e = 0; e < E; ++e)
    if (first[e + 1] > first[e]) {
      used.push_back(static_cast<int32_t>(e));
      most_rows = std::max(most_rows, first[e + 1] - first[e]);
    }
  // Expert e over its n rows, with the working memory `w`, its linears split over `inner`.
  auto run_expert = [&](int64_t e, MoeScratch& w, ThreadPool* inner) {
    const int64_t n = first[e + 1] - first[e];
    float* xg = grown(w.xg, static_cast<size_t>(n * H));    // [n, H]
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(xg + i * H, x + (slots[first[e] + i] / K) * H, static_cast<size_t>(H) * sizeof(float));
    float* out = grown(w.out, static_cast<size_t>(n * H));  // [n, H]
    const int64_t I = p.gate[e].rows;
    const Expert ex{.gate = p.gate[e], .up = p.up[e], .down = p.down[e],
                    .gate_bias = p.gate_bias ? p.gate_bias + e * I : nullptr,
                    .up_bias = p.up_bias ? p.up_bias + e * I : nullptr,
                    .down_bias = p.down_bias ? p.down_bias + e * H : nullptr};
    gated_mlp(xg, n, ex, p, w, out, inner);
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(slot_out + slots[first[e] + i] * H, out + i * H, static_cast<size_t>(H) * sizeof(float));
  };
  // Decode-sized groups (a few rows per expert) with at least as many experts as threads:
  // one expert per task, streamed whole by one thread. A decoded token's experts are small
  // matrices (1 MB each at 4 bits for a 2048 x 768 expert); split over the pool, each would cost a
  // barrier and start short runs of memory on every thread. The linears' results do not
  // depend on the thread count, so both ways give the same bits.
  const int threads = pool ? pool->size() : 1;
  if (threads > 1 && static_cast<int64_t>(used.size()) >= threads && most_rows <= 8) {
    pool->run(static_cast<int64_t>(used.size()), [&](int64_t i) {
      thread_local MoeScratch local;  // this worker's working memory
      run_expert(used[static_cast<size_t>(i)], local, nullptr);
    });
  } else {
    for (const int32_t e : used) run_expert(e, s, pool);
  }
  for (const int32_t e : used) ++s.expert_reads[static_cast<size_t>(e)];
  s.experts_read = static_cast<int64_t>(used.size());

  // 4. Each row's weighted sum in top-k order.
  for (int64_t t = 0; t < T; ++t) {
    float* yt = y + t * H;  // [H]
    for (int64_t c = 0; c < H; ++c) yt[c] = weight[t * K] * slot_out[(t * K) * H + c];
    for (int64_t j = 1; j < K; ++j) {
      const float wj = weight[t * K + j];
      const float* o = slot_out + (t * K + j) * H;
      for (int64_t c = 0; c < H; ++c) yt[c] += wj * o[c];
    }
  }

  // 5. The shared expert over every row, gated by sigmoid(shared_expert_gate . x) if set.
  if (!p.has_shared) return;
  float* shared = grown(s.shared, static_cast<size_t>(T * H));  // [T, H]
  gated_mlp(x, T, Expert{.gate = p.shared_gate, .up = p.shared_up, .down = p.shared_down}, p, s, shared, pool);
  std::vector<float> g(static_cast<size_t>(T), 0.0f);  // [T] gate logits
  if (p.has_shared_expert_gate) linear(x, T, p.shared_expert_gate, nullptr, g.data(), pool);
  for (int64_t t = 0; t < T; ++t) {
    const float scale = p.has_shared_expert_gate
                            ? static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(g[static_cast<size_t>(t)]))))
                            : 1.0f;
    for (int64_t c = 0; c < H; ++c) y[t * H + c] += scale * shared[t * H + c];
  }
}

}  // namespace og::kernels
