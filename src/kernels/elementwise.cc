// Row-wise and element-wise kernels, per SIMD target: rms_norm, layer_norm, rope, activations,
// add/mul/scale/softcap, slice. An element's value never depends on where it falls in the
// array (a partial last vector is computed through a zero-padded buffer with the same
// vector code), so a row computed in a T-token step equals the same row computed alone.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/elementwise.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/thread_pool.h"

#include "kernels/internal.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace og::kernels {
namespace HWY_NAMESPACE {

// y[i] = f(a[i], b[i]) for i < n, one vector at a time; the partial last vector goes
// through zero-padded buffers so every element sees the same instructions.
template <class F>
HWY_INLINE void Map2(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, int64_t n, float* y, const F& f) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(f(df, hn::LoadU(df, a + i), b ? hn::LoadU(df, b + i) : hn::Zero(df)), df, y + i);
  if (i < n) {
    HWY_ALIGN float ba[kMaxLanesF] = {}, bb[kMaxLanesF] = {};
    const size_t rem = static_cast<size_t>(n - i);
    std::memcpy(ba, a + i, rem * sizeof(float));
    if (b) std::memcpy(bb, b + i, rem * sizeof(float));
    hn::Store(f(df, hn::Load(df, ba), hn::Load(df, bb)), df, ba);
    std::memcpy(y + i, ba, rem * sizeof(float));
  }
}

HWY_INLINE VF Silu(DF df, VF x) {
  // x / (1 + e^-x); the exponent is clamped inside Exp's range (e^88 already makes it -0).
  const VF e = hn::Exp(df, hn::Min(hn::Neg(x), hn::Set(df, 88.0f)));
  return hn::Div(x, hn::Add(hn::Set(df, 1.0f), e));
}
// gelu with the tanh approximation, as torch's gelu(approximate="tanh").
HWY_INLINE VF GeluTanh(DF df, VF x) {
  const VF inner = hn::Mul(hn::Set(df, 0.7978845608028654f),
                           hn::MulAdd(hn::Mul(hn::Set(df, 0.044715f), hn::Mul(x, x)), x, x));
  return hn::Mul(hn::Mul(hn::Set(df, 0.5f), x), hn::Add(hn::Set(df, 1.0f), hn::Tanh(df, inner)));
}

// The exact gelu, x times the normal CDF, x/2 * (1 + erf(x / sqrt 2)), as torch's gelu(approximate="none").
// Highway has no erf: erfc(|z|) by the Chebyshev fit of Numerical Recipes (erfcc: relative
// error < 1.2e-7 for every z >= 0, so gelu's tiny negative tail keeps its relative precision),
//   erfc(z) = t exp(-z^2 + P(t)),  t = 1 / (1 + z/2),  P a degree-9 polynomial,
// and 1 + erf(z) = 2 - erfc(z) for z >= 0, erfc(-z) for z < 0.
HWY_INLINE VF GeluErf(DF df, VF x) {
  const VF z = hn::Mul(x, hn::Set(df, 0.7071067811865476f));
  const VF az = hn::Abs(z);
  const VF t = hn::Div(hn::Set(df, 1.0f), hn::MulAdd(hn::Set(df, 0.5f), az, hn::Set(df, 1.0f)));
  VF p = hn::Set(df, 0.17087277f);
  for (float c : {-0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f, 0.09678418f, 0.37409196f,
                  1.00002368f, -1.26551223f})
    p = hn::MulAdd(p, t, hn::Set(df, c));
  // The exponent clamped inside Exp's range (below -87 erfc is 0 in f32 anyway).
  const VF erfc = hn::Mul(t, hn::Exp(df, hn::Max(hn::Sub(p, hn::Mul(az, az)), hn::Set(df, -87.0f))));
  const VF one_plus = hn::IfThenElse(hn::Lt(z, hn::Zero(df)), erfc, hn::Sub(hn::Set(df, 2.0f), erfc));
  return hn::Mul(hn::Mul(hn::Set(df, 0.5f), x), one_plus);
}

// max(x, 0)^2 (transformers' ReLUSquaredActivation, "relu2"); NaN stays NaN (torch.relu).
HWY_INLINE VF Relu2(DF df, VF x) {
  const VF r = hn::IfThenElse(hn::IsNaN(x), x, hn::Max(x, hn::Zero(df)));
  return hn::Mul(r, r);
}

void Act(const float* x, int64_t n, Activation a, float* y) {
  if (a == Activation::kSilu) return Map2(x, nullptr, n, y, [](DF df, VF v, VF) { return Silu(df, v); });
  if (a == Activation::kTanh) return Map2(x, nullptr, n, y, [](DF df, VF v, VF) { return hn::Tanh(df, v); });
  if (a == Activation::kGelu) return Map2(x, nullptr, n, y, [](DF df, VF v, VF) { return GeluErf(df, v); });
  if (a == Activation::kRelu2) return Map2(x, nullptr, n, y, [](DF df, VF v, VF) { return Relu2(df, v); });
  Map2(x, nullptr, n, y, [](DF df, VF v, VF) { return GeluTanh(df, v); });
}
void ActMul(const float* gate, const float* up, int64_t n, Activation a, float* y) {
  if (a == Activation::kSilu) return Map2(gate, up, n, y, [](DF df, VF g, VF u) { return hn::Mul(Silu(df, g), u); });
  if (a == Activation::kTanh)
    return Map2(gate, up, n, y, [](DF df, VF g, VF u) { return hn::Mul(hn::Tanh(df, g), u); });
  if (a == Activation::kGelu)
    return Map2(gate, up, n, y, [](DF df, VF g, VF u) { return hn::Mul(GeluErf(df, g), u); });
  if (a == Activation::kRelu2)
    return Map2(gate, up, n, y, [](DF df, VF g, VF u) { return hn::Mul(Relu2(df, g), u); });
  Map2(gate, up, n, y, [](DF df, VF g, VF u) { return hn::Mul(GeluTanh(df, g), u); });
}
void Add(const float* a, const float* b, int64_t n, float* y) {
  Map2(a, b, n, y, [](DF, VF u, VF v) { return hn::Add(u, v); });
}
void Mul(const float* a, const float* b, int64_t n, float* y) {
  Map2(a, b, n, y, [](DF, VF u, VF v) { return hn::Mul(u, v); });
}
void Scale(const float* x, int64_t n, float s, float* y) {
  Map2(x, nullptr, n, y, [s](DF df, VF u, VF) { return hn::Mul(u, hn::Set(df, s)); });
}
void Softcap(const float* x, int64_t n, float cap, float* y) {
  const float inv = 1.0f / cap;
  Map2(x, nullptr, n, y, [cap, inv](DF df, VF u, VF) {
    return hn::Mul(hn::Set(df, cap), hn::Tanh(df, hn::Mul(u, hn::Set(df, inv))));
  });
}

void Xielu(const float* x, int64_t n, XieluParams p, float* y) {
  Map2(x, nullptr, n, y, [p](DF df, VF u, VF) {
    const VF bx = hn::Mul(hn::Set(df, p.beta), u);
    const VF pos = hn::MulAdd(hn::Mul(hn::Set(df, p.alpha_p), u), u, bx);
    const VF em1 = hn::Expm1(df, hn::Min(u, hn::Set(df, p.eps)));
    const VF neg = hn::MulAdd(hn::Set(df, p.alpha_n), hn::Sub(em1, u), bx);
    const VF out = hn::IfThenElse(hn::Gt(u, hn::Zero(df)), pos, neg);
    return hn::IfThenElse(hn::IsNaN(u), u, out);  // torch.where keeps a NaN (x > 0 is false, min(NaN, eps) NaN)
  });
}

void RmsNorm(const float* x, int64_t rows, int64_t dim, const float* w, float eps, float* y) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    VF s0 = hn::Zero(df), s1 = hn::Zero(df);
    int64_t i = 0;
    for (; i + 2 * N <= dim; i += 2 * N) {
      const VF a = hn::LoadU(df, xr + i), b = hn::LoadU(df, xr + i + N);
      s0 = hn::MulAdd(a, a, s0);
      s1 = hn::MulAdd(b, b, s1);
    }
    double ss = static_cast<double>(ReduceSumF(df, hn::Add(s0, s1)));
    for (; i < dim; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(dim) + eps));
    if (w != nullptr) {
      Map2(xr, w, dim, yr, [inv](DF d, VF u, VF v) { return hn::Mul(hn::Mul(u, hn::Set(d, inv)), v); });
    } else {
      Map2(xr, nullptr, dim, yr, [inv](DF d, VF u, VF) { return hn::Mul(u, hn::Set(d, inv)); });
    }
  }
}

// LayerNorm: the row's mean subtracted, then RmsNorm's scaling of the centred row (two
// passes: the mean in double first, so a large common offset costs no precision), then
// the weight and bias.
// Rows [r0, r1); row r takes weight and bias row r % groups.
void LayerNorm(const float* x, int64_t r0, int64_t r1, int64_t dim, const float* w_all, const float* b_all,
               int64_t groups, float eps, float* y) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  for (int64_t r = r0; r < r1; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    const float* w = w_all != nullptr ? w_all + r % groups * dim : nullptr;
    const float* b = b_all != nullptr ? b_all + r % groups * dim : nullptr;
    double sum = 0;
    for (int64_t i = 0; i < dim; ++i) sum += xr[i];
    const float mean = static_cast<float>(sum / static_cast<double>(dim));
    const VF vm = hn::Set(df, mean);
    VF s0 = hn::Zero(df);
    int64_t i = 0;
    for (; i + N <= dim; i += N) {
      const VF c = hn::Sub(hn::LoadU(df, xr + i), vm);
      s0 = hn::MulAdd(c, c, s0);
    }
    double ss = static_cast<double>(ReduceSumF(df, s0));
    for (; i < dim; ++i) ss += static_cast<double>(xr[i] - mean) * (xr[i] - mean);
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(dim) + eps));
    const bool weighted = w != nullptr;
    Map2(xr, w, dim, yr, [mean, inv, weighted](DF d, VF u, VF v) {
      const VF n = hn::Mul(hn::Sub(u, hn::Set(d, mean)), hn::Set(d, inv));
      return weighted ? hn::Mul(n, v) : n;
    });
    if (b != nullptr) Map2(yr, b, dim, yr, [](DF, VF u, VF v) { return hn::Add(u, v); });
  }
}

// Tokens [t0, t1) of rope, cos and sin given per token: cs, sn [T, rotary_dim / 2].
void Rope(const float* x, int64_t t0, int64_t t1, const RopeParams& p, const float* cs, const float* sn, float* y) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const int32_t half = p.rotary_dim / 2;
  const int64_t width = int64_t{p.n_heads} * p.head_dim;
  for (int64_t t = t0; t < t1; ++t) {
    const float* ct = cs + t * half;
    const float* st = sn + t * half;
    for (int32_t h = 0; h < p.n_heads; ++h) {
      const float* xh = x + t * width + int64_t{h} * p.head_dim;
      float* yh = y + t * width + int64_t{h} * p.head_dim;
      int64_t i = 0;
      for (; i + N <= half; i += N) {
        const VF a = hn::LoadU(df, xh + i), b = hn::LoadU(df, xh + i + half);
        const VF c = hn::LoadU(df, ct + i), s = hn::LoadU(df, st + i);
        hn::StoreU(hn::Sub(hn::Mul(a, c), hn::Mul(b, s)), df, yh + i);
        hn::StoreU(hn::Add(hn::Mul(b, c), hn::Mul(a, s)), df, yh + i + half);
      }
      for (; i < half; ++i) {
        const float a = xh[i], b = xh[i + half];
        yh[i] = a * ct[i] - b * st[i];
        yh[i + half] = b * ct[i] + a * st[i];
      }
      if (p.rotary_dim < p.head_dim)
        std::memcpy(yh + p.rotary_dim, xh + p.rotary_dim, static_cast<size_t>(p.head_dim - p.rotary_dim) * sizeof(float));
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace og::kernels {

HWY_EXPORT(Act);
HWY_EXPORT(ActMul);
HWY_EXPORT(Add);
HWY_EXPORT(Mul);
HWY_EXPORT(Scale);
HWY_EXPORT(Softcap);
HWY_EXPORT(Xielu);
HWY_EXPORT(RmsNorm);
HWY_EXPORT(LayerNorm);
HWY_EXPORT(Rope);

namespace {

// Elements per task of a split element-wise kernel: below two of them (decode's rows) the
// kernel runs on the calling thread, as waking the pool would cost more.
constexpr int64_t kGrain = 16 << 10;

// f(i0, i1) over [0, n) in pieces of at least `grain`, four per thread at most.
template <class F>
void split(int64_t n, int64_t grain, ThreadPool* pool, const F& f) {
  const int64_t threads = pool ? pool->size() : 1;
  const int64_t tasks = std::min(4 * threads, n / std::max<int64_t>(1, grain));
  if (threads < 2 || tasks < 2) return f(int64_t{0}, n);
  const int64_t step = (n + tasks - 1) / tasks;
  pool->run(tasks, [&](int64_t t) { f(std::min(n, t * step), std::min(n, (t + 1) * step)); });
}

// A step's cos and sin, [T, rotary_dim / 2] each, for one set of frequencies, scale and
// positions: recent ones kept by each calling thread (two: the sliding and the global
// layers of a model that alternates rope kinds), found by value.
struct RopeTable {
  std::vector<float> inv_freq;
  std::vector<float> long_inv_freq;  // empty: none
  int32_t long_from = 0;
  float scale = 0;
  std::vector<int32_t> pos;
  std::vector<float> cs, sn;
  uint64_t used = 0;
};

const RopeTable& rope_table(const int32_t* pos, int64_t T, const RopeParams& p, ThreadPool* pool) {
  thread_local std::array<RopeTable, 2> tables;
  thread_local uint64_t clock = 0;
  const int32_t half = p.rotary_dim / 2;
  const int32_t long_half = p.long_inv_freq != nullptr ? half : 0;
  for (RopeTable& t : tables)
    if (t.scale == p.scale && std::ssize(t.inv_freq) == half && std::ssize(t.pos) == T &&
        std::ssize(t.long_inv_freq) == long_half && (long_half == 0 || t.long_from == p.long_from) &&
        std::equal(p.inv_freq, p.inv_freq + half, t.inv_freq.begin()) &&
        std::equal(p.long_inv_freq, p.long_inv_freq + long_half, t.long_inv_freq.begin()) &&
        std::equal(pos, pos + T, t.pos.begin())) {
      t.used = ++clock;
      return t;
    }
  RopeTable& t = tables[0].used <= tables[1].used ? tables[0] : tables[1];
  t.inv_freq.assign(p.inv_freq, p.inv_freq + half);
  t.long_inv_freq.assign(p.long_inv_freq, p.long_inv_freq + long_half);
  t.long_from = p.long_from;
  t.scale = p.scale;
  t.pos.assign(pos, pos + T);
  t.cs.resize(static_cast<size_t>(T * half));
  t.sn.resize(static_cast<size_t>(T * half));
  t.used = ++clock;
  float* const cs = t.cs.data();  // (a thread_local named in the lambda would be the worker's)
  float* const sn = t.sn.data();
  split(T * half, kGrain / 16, pool, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {
      // The angle in double: positions up to 2^30 times small frequencies keep f32 precision.
      // A position's frequencies depend on it alone, so decode, prefill and batches agree.
      const int32_t at = pos[k / half];
      const float* freq = long_half != 0 && at >= p.long_from ? p.long_inv_freq : p.inv_freq;
      const double angle = static_cast<double>(at) * static_cast<double>(freq[k % half]);
      cs[k] = static_cast<float>(std::cos(angle)) * p.scale;  // exact when scale is 1
      sn[k] = static_cast<float>(std::sin(angle)) * p.scale;
    }
  });
  return t;
}

}  // namespace

void act(const float* x, int64_t n, Activation a, float* y, ThreadPool* pool) {
  split(n, kGrain, pool, [&](int64_t i0, int64_t i1) { HWY_DYNAMIC_DISPATCH(Act)(x + i0, i1 - i0, a, y + i0); });
}
void act_mul(const float* gate, const float* up, int64_t n, Activation a, float* y, ThreadPool* pool) {
  split(n, kGrain, pool,
        [&](int64_t i0, int64_t i1) { HWY_DYNAMIC_DISPATCH(ActMul)(gate + i0, up + i0, i1 - i0, a, y + i0); });
}
void act_mul_clamped(const float* gate, const float* up, int64_t n, const ClampedSwiglu& c, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], c.limit);                  // NaN stays NaN (min keeps its first operand)
    const float u = std::min(std::max(up[i], -c.limit), c.limit);  // NaN stays NaN
    const float glu = g / (1.0f + std::exp(-c.alpha * g));        // g * sigmoid(alpha * g)
    y[i] = (u + 1.0f) * glu;
  }
}
void add(const float* a, const float* b, int64_t n, float* y, ThreadPool* pool) {
  split(n, kGrain, pool, [&](int64_t i0, int64_t i1) { HWY_DYNAMIC_DISPATCH(Add)(a + i0, b + i0, i1 - i0, y + i0); });
}
void mul(const float* a, const float* b, int64_t n, float* y, ThreadPool* pool) {
  split(n, kGrain, pool, [&](int64_t i0, int64_t i1) { HWY_DYNAMIC_DISPATCH(Mul)(a + i0, b + i0, i1 - i0, y + i0); });
}
void scale(const float* x, int64_t n, float s, float* y, ThreadPool* pool) {
  split(n, kGrain, pool, [&](int64_t i0, int64_t i1) { HWY_DYNAMIC_DISPATCH(Scale)(x + i0, i1 - i0, s, y + i0); });
}
void softcap(const float* x, int64_t n, float cap, float* y, ThreadPool* pool) {
  split(n, kGrain, pool, [&](int64_t i0, int64_t i1) { HWY_DYNAMIC_DISPATCH(Softcap)(x + i0, i1 - i0, cap, y + i0); });
}
void xielu(const float* x, int64_t n, const XieluParams& p, float* y, ThreadPool* pool) {
  split(n, kGrain, pool, [&](int64_t i0, int64_t i1) { HWY_DYNAMIC_DISPATCH(Xielu)(x + i0, i1 - i0, p, y + i0); });
}
void rms_norm(const float* x, int64_t rows, int64_t dim, const float* w, float eps, float* y, ThreadPool* pool) {
  split(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, dim)), pool, [&](int64_t r0, int64_t r1) {
    HWY_DYNAMIC_DISPATCH(RmsNorm)(x + r0 * dim, r1 - r0, dim, w, eps, y + r0 * dim);
  });
}
void layer_norm(const float* x, int64_t rows, int64_t dim, const float* w, const float* b, float eps, float* y,
                ThreadPool* pool, int64_t weight_groups) {
  split(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, dim)), pool, [&](int64_t r0, int64_t r1) {
    HWY_DYNAMIC_DISPATCH(LayerNorm)(x, r0, r1, dim, w, b, std::max<int64_t>(1, weight_groups), eps, y);
  });
}
void rope(const float* x, const int32_t* pos, int64_t T, const RopeParams& p, float* y, ThreadPool* pool) {
  if (T <= 0) return;
  const RopeTable& table = rope_table(pos, T, p, pool);
  const int64_t width = int64_t{p.n_heads} * p.head_dim;
  split(T, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, width)), pool, [&](int64_t t0, int64_t t1) {
    HWY_DYNAMIC_DISPATCH(Rope)(x, t0, t1, p, table.cs.data(), table.sn.data(), y);
  });
}

void slice_columns(const float* x, int64_t T, int64_t in_width, int64_t begin, int64_t width, float* y) {
  for (int64_t t = 0; t < T; ++t)
    std::memcpy(y + t * width, x + t * in_width + begin, static_cast<size_t>(width) * sizeof(float));
}

void concat_columns(const float* a, int64_t wa, const float* b, int64_t wb, int64_t T, float* y) {
  for (int64_t t = 0; t < T; ++t) {
    std::memcpy(y + t * (wa + wb), a + t * wa, static_cast<size_t>(wa) * sizeof(float));
    std::memcpy(y + t * (wa + wb) + wa, b + t * wb, static_cast<size_t>(wb) * sizeof(float));
  }
}

}  // namespace og::kernels
#endif  // HWY_ONCE
