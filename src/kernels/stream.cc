// stream_sum: a read-only pass over a large buffer, for measuring memory bandwidth the way
// a decode step uses it (every thread streaming its own contiguous range).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/stream.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/internal.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace og::kernels {
namespace HWY_NAMESPACE {

double SumRange(const float* x, int64_t n) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  VF a0 = hn::Zero(df), a1 = hn::Zero(df), a2 = hn::Zero(df), a3 = hn::Zero(df);
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    a0 = hn::Add(a0, hn::LoadU(df, x + i));
    a1 = hn::Add(a1, hn::LoadU(df, x + i + N));
    a2 = hn::Add(a2, hn::LoadU(df, x + i + 2 * N));
    a3 = hn::Add(a3, hn::LoadU(df, x + i + 3 * N));
  }
  double s = ReduceSumF(df, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)));
  for (; i < n; ++i) s += x[i];
  return s;
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace og::kernels {

HWY_EXPORT(SumRange);

double stream_sum(const float* x, int64_t n, ThreadPool* pool) {
  const auto fn = &HWY_DYNAMIC_DISPATCH(SumRange);
  if (pool == nullptr || pool->size() == 1) return fn(x, n);
  // Contiguous 4 MiB pieces, claimed in order, so each thread streams long runs.
  constexpr int64_t kPiece = int64_t{1} << 20;
  const int64_t tasks = (n + kPiece - 1) / kPiece;
  std::vector<double> sums(static_cast<size_t>(tasks));
  pool->run(tasks, [&](int64_t t) { sums[t] = fn(x + t * kPiece, std::min(kPiece, n - t * kPiece)); });
  double s = 0;
  for (double v : sums) s += v;
  return s;
}

}  // namespace og::kernels
#endif  // HWY_ONCE
