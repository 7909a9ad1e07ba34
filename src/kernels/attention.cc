// update_and_attend's two halves (DESIGN.md §2): write this step's k/v by position, then
// attend each query over the keys it may see, reading K/V in place from flat or ring
// storage with a running (one-pass) softmax, so no score buffer or gathered copy exists.
//
// Per query, keys go in blocks of kBlock: the block's scores (scale, softcap), one rescale
// of the running sum and accumulator when the block raises the maximum, then the block's
// values. A task is one token and up to kMaxGroup query heads of one kv head, so each key
// and value row is loaded once for the heads that share it. A head's sink (when the op has
// sinks) is the running softmax's starting state: maximum = sink, sum = e^0 = 1, no value;
// so it joins the denominator and the maximum exactly as a key with value 0 would. The arithmetic of one query
// depends only on its position and the stored keys, never on T, the task or the threads.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/thread_pool.h"
#include "kernels/convert.h"
#include "kernels/internal.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace og::kernels {
namespace HWY_NAMESPACE {

inline constexpr int kBlock = 16;     // keys per block
inline constexpr int kMaxGroup = 4;   // query heads per task
static_assert(kMaxLanesF <= kBlock, "a block of scores must hold whole vectors");
// Padding lanes of a block: exp(kMasked - m) is exactly 0 for any finite running max m.
inline constexpr float kMasked = -1e30f;

// sink: the sinks of these G heads, or null.
template <int G, typename K>
void AttendHeads(const AttendParams& p, const float* const* qh, const float* sink, int64_t pos, const K* kbase,
                 const K* vbase, const KvStorage& kv, float* const* oh) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df)), D = p.head_dim;
  const int64_t first = p.window > 0 ? std::max<int64_t>(0, pos - p.window + 1) : 0;
  HWY_ALIGN float acc[G][kMaxHeadDim];
  HWY_ALIGN float s[G][kBlock];
  float m[G], l[G];
  for (int g = 0; g < G; ++g) {
    std::fill(acc[g], acc[g] + D, 0.0f);
    m[g] = sink ? sink[g] : -std::numeric_limits<float>::infinity();
    l[g] = sink ? 1.0f : 0.0f;
  }
  const VF vscale = hn::Set(df, p.scale);
  const VF vcap = hn::Set(df, p.softcap), vinv_cap = hn::Set(df, p.softcap > 0 ? 1.0f / p.softcap : 0.0f);
  const K* krow[kBlock];
  const K* vrow[kBlock];
  for (int64_t j0 = first; j0 <= pos; j0 += kBlock) {
    const int nb = static_cast<int>(std::min<int64_t>(kBlock, pos + 1 - j0));
    for (int b = 0; b < nb; ++b) {
      const int64_t off = kv.slot(j0 + b) * D;
      krow[b] = kbase + off;
      vrow[b] = vbase + off;
    }
    // Scores of the block.
    for (int b = 0; b < nb; ++b) {
      VF dot[G];
      for (int g = 0; g < G; ++g) dot[g] = hn::Zero(df);
      int64_t i = 0;
      for (; i + N <= D; i += N) {
        const VF k = LoadF(df, krow[b] + i);
        for (int g = 0; g < G; ++g) dot[g] = hn::MulAdd(hn::LoadU(df, qh[g] + i), k, dot[g]);
      }
      for (int g = 0; g < G; ++g) {
        float tail = 0;
        for (int64_t t = i; t < D; ++t) tail += qh[g][t] * load(krow[b], t, kv.type);
        s[g][b] = ReduceSumF(df, dot[g]) + tail;
      }
    }
    for (int g = 0; g < G; ++g) {
      for (int b = nb; b < kBlock; ++b) s[g][b] = 0;
      for (int b = 0; b < kBlock; b += static_cast<int>(N)) {
        VF v = hn::Mul(hn::Load(df, s[g] + b), vscale);
        if (p.softcap > 0) v = hn::Mul(vcap, hn::Tanh(df, hn::Mul(v, vinv_cap)));
        hn::Store(v, df, s[g] + b);
      }
      float mb = s[g][0];
      for (int b = 1; b < nb; ++b) mb = std::max(mb, s[g][b]);
      for (int b = nb; b < kBlock; ++b) s[g][b] = kMasked;
      // Running softmax: rescale what was accumulated when the maximum rises.
      if (mb > m[g]) {
        const float c = std::exp(m[g] - mb);  // 0 for the first block (m = -inf) without a sink
        l[g] *= c;
        const VF vc = hn::Set(df, c);
        int64_t i = 0;
        for (; i + N <= D; i += N) hn::Store(hn::Mul(hn::Load(df, acc[g] + i), vc), df, acc[g] + i);
        for (; i < D; ++i) acc[g][i] *= c;
        m[g] = mb;
      }
      const VF vm = hn::Set(df, m[g]);
      for (int b = 0; b < kBlock; b += static_cast<int>(N))
        hn::Store(hn::Exp(df, hn::Sub(hn::Load(df, s[g] + b), vm)), df, s[g] + b);
      for (int b = 0; b < nb; ++b) l[g] += s[g][b];
    }
    // Values of the block: acc += w_b * v_b, each accumulator chunk held in a register.
    int64_t i = 0;
    for (; i + N <= D; i += N) {
      VF a[G];
      for (int g = 0; g < G; ++g) a[g] = hn::Load(df, acc[g] + i);
      for (int b = 0; b < nb; ++b) {
        const VF v = LoadF(df, vrow[b] + i);
        for (int g = 0; g < G; ++g) a[g] = hn::MulAdd(hn::Set(df, s[g][b]), v, a[g]);
      }
      for (int g = 0; g < G; ++g) hn::Store(a[g], df, acc[g] + i);
    }
    for (; i < D; ++i)
      for (int b = 0; b < nb; ++b) {
        const float v = load(vrow[b], i, kv.type);
        for (int g = 0; g < G; ++g) acc[g][i] += s[g][b] * v;
      }
  }
  for (int g = 0; g < G; ++g) {
    const float inv = 1.0f / l[g];
    const VF vinv = hn::Set(df, inv);
    int64_t i = 0;
    for (; i + N <= D; i += N) hn::StoreU(hn::Mul(hn::Load(df, acc[g] + i), vinv), df, oh[g] + i);
    for (; i < D; ++i) oh[g][i] = acc[g][i] * inv;
  }
}

template <typename K>
void AttendTaskT(const AttendArgs& a, int64_t task) {
  const AttendParams& p = *a.p;
  const KvStorage& kv = *a.kv;
  const int64_t D = p.head_dim, width = int64_t{p.n_heads} * D;
  const int32_t group = p.n_heads / p.n_kv_heads;
  const int32_t per_kv = (group + a.heads_per_task - 1) / a.heads_per_task;
  const int64_t t = task / (int64_t{p.n_kv_heads} * per_kv);
  const int32_t rem = static_cast<int32_t>(task % (int64_t{p.n_kv_heads} * per_kv));
  const int32_t kvh = rem / per_kv;
  const int32_t h0 = kvh * group + (rem % per_kv) * a.heads_per_task;
  const int32_t h1 = std::min(kvh * group + group, h0 + a.heads_per_task);
  const float* qh[kMaxGroup];
  float* oh[kMaxGroup];
  for (int32_t h = h0; h < h1; ++h) {
    qh[h - h0] = a.q + t * width + int64_t{h} * D;
    oh[h - h0] = a.out + t * width + int64_t{h} * D;
  }
  const K* kbase = static_cast<const K*>(kv.k) + int64_t{kvh} * kv.slots * D;
  const K* vbase = static_cast<const K*>(kv.v) + int64_t{kvh} * kv.slots * D;
  const int64_t pos = a.p0 + t;
  const float* sink = p.sinks ? p.sinks + h0 : nullptr;
  switch (h1 - h0) {
    case 1: return AttendHeads<1>(p, qh, sink, pos, kbase, vbase, kv, oh);
    case 2: return AttendHeads<2>(p, qh, sink, pos, kbase, vbase, kv, oh);
    case 3: return AttendHeads<3>(p, qh, sink, pos, kbase, vbase, kv, oh);
    default: return AttendHeads<4>(p, qh, sink, pos, kbase, vbase, kv, oh);
  }
}

void AttendTask(const AttendArgs& a, int64_t task) {
  switch (a.kv->type) {
    case ElemType::kF32: return AttendTaskT<float>(a, task);
    case ElemType::kBF16: return AttendTaskT<hwy::bfloat16_t>(a, task);
    case ElemType::kF16: return AttendTaskT<hwy::float16_t>(a, task);
    default: return;  // K/V are never stored quantized
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace og::kernels {

HWY_EXPORT(AttendTask);

void kv_write(const float* k, const float* v, int64_t T, int64_t p0, const KvStorage& kv) {
  const int64_t D = kv.head_dim, width = int64_t{kv.kv_heads} * D;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t slot = kv.slot(p0 + t);
    for (int32_t h = 0; h < kv.kv_heads; ++h) {
      const int64_t dst = (int64_t{h} * kv.slots + slot) * D;
      const float* ks = k + t * width + int64_t{h} * D;
      const float* vs = v + t * width + int64_t{h} * D;
      if (kv.type == ElemType::kF32) {
        std::memcpy(static_cast<float*>(kv.k) + dst, ks, static_cast<size_t>(D) * sizeof(float));
        std::memcpy(static_cast<float*>(kv.v) + dst, vs, static_cast<size_t>(D) * sizeof(float));
        continue;
      }
      for (int64_t i = 0; i < D; ++i) {
        store(kv.k, dst + i, kv.type, ks[i]);
        store(kv.v, dst + i, kv.type, vs[i]);
      }
    }
  }
}

void attend(const AttendParams& p, const float* q, int64_t T, int64_t p0, const KvStorage& kv, float* out,
            ThreadPool* pool) {
  if (T <= 0) return;
  const auto task_fn = &HWY_DYNAMIC_DISPATCH(AttendTask);
  const int32_t group = p.n_heads / p.n_kv_heads;
  const int threads = pool ? pool->size() : 1;
  // Up to 4 heads of a group per task (they share each K/V load); fewer when that leaves
  // too few tasks for the threads (a head's result does not depend on its task).
  int32_t per_task = std::min<int32_t>(group, 4);
  auto n_tasks = [&](int32_t h) { return T * p.n_kv_heads * ((group + h - 1) / h); };
  while (per_task > 1 && n_tasks(per_task) < 2 * threads) per_task = (per_task + 1) / 2;
  const AttendArgs a{.p = &p, .q = q, .T = T, .p0 = p0, .kv = &kv, .out = out, .heads_per_task = per_task};
  if (pool == nullptr) {
    for (int64_t task = 0; task < n_tasks(per_task); ++task) task_fn(a, task);
    return;
  }
  pool->run(n_tasks(per_task), [&](int64_t task) { task_fn(a, task); });
}

}  // namespace og::kernels
#endif  // HWY_ONCE
