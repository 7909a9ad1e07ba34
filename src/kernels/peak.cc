// compute_peak: the arithmetic rate of this machine's cores, measured the way a linear's
// inner loop uses them, so that prefill can be reported as a fraction of it (`bench`).
//
// f32: independent accumulators of vector FMAs (acc = acc * a + b) on registers only; each
// lane of each FMA is 2 flops. int8: the byte multiply-add the int8-activation kernel runs
// (linear_int8.cc): vpdpbusd on AVX-512 VNNI (4 byte products into each 32-bit lane), else
// pmaddubsw then pmaddwd-with-ones into 32-bit sums on x86 (ggml's sequence), else 16-bit
// widening multiply-adds; each byte product is 2 ops. Enough accumulators to cover the
// instructions' latency on every target (12: 4-cycle latency x 2 ports, plus margin).
// bf16: vdpbf16ps where the CPU has AVX512_BF16 (2 bf16 products into each 32-bit lane, 4
// flops), else the f32 FMA loop (what XQuant::kBF16 linears then run).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/peak.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/dot_bf16-inl.h"
#include "kernels/int8_target-inl.h"
#include "kernels/kernels.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
OG_INT8_TARGET
namespace og::kernels {
namespace HWY_NAMESPACE {

inline constexpr int kAcc = 12;

// An empty asm that "changes" v: the compiler can neither fold the loops' constant
// operands nor hoist their loop-invariant products out of the loop.
template <class V>
HWY_INLINE void Opaque(V& v) {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  __asm__ volatile("" : "+v"(v.raw));
#else
  (void)v;
#endif
}

// iters x kAcc vector FMAs; returns their lane sum (so the loop cannot be elided) and the
// flops in *ops.
double F32Loop(int64_t iters, double* ops) {
  const DF df;
  const VF a = hn::Set(df, 0.999f), b = hn::Set(df, 1e-3f);
  VF acc[kAcc];
  for (int i = 0; i < kAcc; ++i) acc[i] = hn::Set(df, static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < kAcc; ++i) acc[i] = hn::MulAdd(acc[i], a, b);
  }
  VF s = acc[0];
  for (int i = 1; i < kAcc; ++i) s = hn::Add(s, acc[i]);
  *ops = 2.0 * static_cast<double>(iters) * kAcc * static_cast<double>(hn::Lanes(df));
  return ReduceSumF(df, s);
}

// iters x kAcc vdpbf16ps (F32Loop where the CPU lacks it); flops in *ops.
double BF16Loop(int64_t iters, double* ops) {
  if (!CpuHasDotBF16()) return F32Loop(iters, ops);
  const DF df;
  const hn::RebindToUnsigned<DF> du32;
  auto w = hn::Set(du32, 0x3F7F3F7Fu);  // pairs of bf16 0.996
  const auto x = hn::Set(du32, 0x3A833A83u);  // pairs of bf16 ~1e-3
  VF acc[kAcc];
  for (int i = 0; i < kAcc; ++i) acc[i] = hn::Set(df, static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it) {
    Opaque(w);
    for (int i = 0; i < kAcc; ++i) acc[i] = DotBF16Pairs(acc[i], w, x);
  }
  VF s = acc[0];
  for (int i = 1; i < kAcc; ++i) s = hn::Add(s, acc[i]);
  *ops = 4.0 * static_cast<double>(iters) * kAcc * static_cast<double>(hn::Lanes(df));
  return ReduceSumF(df, s);
}

// The lanes' sum modulo 2^32, in scalar unsigned arithmetic: the int8 loops overflow their
// 32-bit lanes by design (only the work counts), and a signed lane sum (SumOfLanes on
// int32, _mm512_reduce_add_epi32) would be undefined behaviour.
template <class D32>
HWY_INLINE uint32_t WrappingLaneSum(D32 d32, hn::Vec<D32> v) {
  const hn::RebindToUnsigned<D32> du32;
  alignas(64) uint32_t lanes[HWY_MAX_BYTES / sizeof(uint32_t)];
  hn::StoreU(hn::BitCast(du32, v), du32, lanes);
  uint32_t sum = 0;
  for (size_t i = 0; i < hn::Lanes(du32); ++i) sum += lanes[i];
  return sum;
}

// iters x kAcc byte multiply-adds into 32-bit lanes; ops = 2 per byte product.
double Int8Loop(int64_t iters, double* ops) {
#if OG_X86_BYTES
  const D8 d8;
  const DU8 du8;
  using D32B = hn::Repartition<int32_t, D8>;
  const D32B d32;
  auto a = hn::Set(du8, 3);
  const auto b = hn::Set(d8, -2);
  hn::Vec<D32B> acc[kAcc];
  for (int i = 0; i < kAcc; ++i) acc[i] = hn::Set(d32, i);
  for (int64_t it = 0; it < iters; ++it) {
    Opaque(a);
    for (int i = 0; i < kAcc; ++i) {
#if OG_VNNI
      acc[i] = hn::Vec<D32B>{_mm512_dpbusd_epi32(acc[i].raw, a.raw, b.raw)};
#else
      const hn::Repartition<int16_t, D8> d16;
      const auto pairs = MulAddBytePairs(a, b);
      auto unused = hn::Zero(d32);
      acc[i] = hn::ReorderWidenMulAccumulate(d32, pairs, hn::Set(d16, 1), acc[i], unused);
#endif
    }
  }
  auto s = acc[0];
  for (int i = 1; i < kAcc; ++i) s = hn::Add(s, acc[i]);
  *ops = 2.0 * static_cast<double>(iters) * kAcc * static_cast<double>(hn::Lanes(d8));
  return static_cast<double>(WrappingLaneSum(d32, s));
#else
  using D16S = hn::ScalableTag<int16_t>;
  using D32S = hn::Repartition<int32_t, D16S>;
  const D16S d16;
  const D32S d32;
  auto a = hn::Set(d16, 3);
  const auto b = hn::Set(d16, -2);
  hn::Vec<D32S> acc[kAcc], odd[kAcc];
  for (int i = 0; i < kAcc; ++i) acc[i] = odd[i] = hn::Set(d32, i);
  for (int64_t it = 0; it < iters; ++it) {
    Opaque(a);
    for (int i = 0; i < kAcc; ++i) acc[i] = hn::ReorderWidenMulAccumulate(d32, a, b, acc[i], odd[i]);
  }
  auto s = acc[0];
  for (int i = 1; i < kAcc; ++i) s = hn::Add(s, hn::Add(acc[i], odd[i]));
  *ops = 2.0 * static_cast<double>(iters) * kAcc * static_cast<double>(hn::Lanes(d16));
  return static_cast<double>(WrappingLaneSum(d32, s));
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace og::kernels {

HWY_EXPORT(F32Loop);
HWY_EXPORT(Int8Loop);
HWY_EXPORT(BF16Loop);

namespace {

using LoopFn = double (*)(int64_t, double*);

// Ops per second of `fn` on every thread of the pool at once: each thread times its own
// loop and the threads' rates add up (a thread that started late, or ran its task after
// another on the same core, then reports its own rate instead of halving the total). The
// best of 5 timed rounds after a warm-up, each about 50 ms.
double rate(LoopFn fn, ThreadPool* pool) {
  const int threads = pool ? pool->size() : 1;
  double ops_per_iter = 0;
  fn(1, &ops_per_iter);
  int64_t iters = 1 << 16;
  double best = 0, sink = 0;
  for (int round = 0; round < 6; ++round) {
    std::vector<double> seconds(static_cast<size_t>(threads)), sums(static_cast<size_t>(threads));
    auto task = [&](int64_t t) {
      double ops;
      const auto t0 = std::chrono::steady_clock::now();
      sums[t] = fn(iters, &ops);
      seconds[t] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    if (pool)
      pool->run(threads, task);
    else
      task(0);
    for (double v : sums) sink += v;
    if (round == 0) {  // warm-up: size the rounds to about 50 ms
      iters = std::max<int64_t>(1 << 12, static_cast<int64_t>(static_cast<double>(iters) * 0.05 / std::max(seconds[0], 1e-6)));
      continue;
    }
    double total = 0;
    for (double s : seconds) total += ops_per_iter * static_cast<double>(iters) / std::max(s, 1e-9);
    best = std::max(best, total);
  }
  return sink == 0.123456789 ? 0 : best;  // (uses the sums, so the loops stay)
}

}  // namespace

ComputePeak compute_peak(ThreadPool* pool) {
  return ComputePeak{.f32_flop_s = rate(HWY_DYNAMIC_DISPATCH(F32Loop), pool),
                     .int8_op_s = rate(HWY_DYNAMIC_DISPATCH(Int8Loop), pool),
                     .bf16_flop_s = rate(HWY_DYNAMIC_DISPATCH(BF16Loop), pool),
                     .threads = pool ? pool->size() : 1};
}

namespace {

// Ops per second of `fn` on this thread alone: the best of 5 short rounds after a warm-up
// (about 0.1-0.3 ms each: a probe at load, not a benchmark).
double quick_rate(LoopFn fn) {
  double best = 0, sink = 0, ops = 0;
  for (int round = 0; round < 6; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    sink += fn(int64_t{1} << 15, &ops);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (round > 0) best = std::max(best, ops / std::max(s, 1e-9));
  }
  return sink == 0.123456789 ? 0 : best;
}

}  // namespace

bool bf16_dot_outruns_fma() {
  if (!bf16_dot_native()) return false;
  static std::mutex mu;
  static std::map<std::string, bool> by_target;  // limit_simd_target can change the answer
  const std::lock_guard<std::mutex> lock(mu);
  const std::string target = simd_target();
  if (const auto it = by_target.find(target); it != by_target.end()) return it->second;
  const double fma = quick_rate(HWY_DYNAMIC_DISPATCH(F32Loop));
  const double dot = quick_rate(HWY_DYNAMIC_DISPATCH(BF16Loop));
  return by_target[target] = dot > fma;
}

}  // namespace og::kernels
#endif  // HWY_ONCE
