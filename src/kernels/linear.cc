// linear (y = x w^T + b) and embedding, per SIMD target.
//
// Arithmetic: y[t, o] is one vector accumulator of FMAs over the columns in steps of the
// vector width (the last partial step zero-padded), summed across lanes, plus the bias.
// Every tile shape computes it this way, so the value of y[t, o] does not depend on T, on
// the tile that produced it or on the thread count.
//
// Schedule: tasks are panels of output rows. Within a panel, tokens go in blocks of
// kTokens; each block runs kRows x kTokens register tiles down the panel, one block of
// columns at a time (so the tokens' slice of x stays in L1). The panel is sized (by bytes)
// to stay in L2 while every token block reuses it, so a prefill step reads each weight from
// memory once; decode (T = 1) streams kRows whole rows at a time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/linear.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/check.h"
#include "base/thread_pool.h"
#include "kernels/internal.h"
#include "kernels/simd-inl.h"
#include "kernels/tile_loops-inl.h"

HWY_BEFORE_NAMESPACE();
namespace og::kernels {
namespace HWY_NAMESPACE {

inline constexpr int kRows = 4;
inline constexpr int kTokens = kManyRegisters ? 6 : 2;

HWY_INLINE float Scalar(float v) { return v; }
HWY_INLINE float Scalar(hwy::bfloat16_t v) {
  uint16_t b;
  std::memcpy(&b, &v, 2);
  return bf16_to_float(b);
}
HWY_INLINE float Scalar(hwy::float16_t v) {
  uint16_t b;
  std::memcpy(&b, &v, 2);
  return fp16_to_float(b);
}

// Columns [k0, k1) of the dot products of R rows of w (stride in) with C tokens of x
// (stride in). The accumulators start at zero (first) or come from `park`; at the end they
// are parked again, or (last: k1 == in) finished: the zero-padded partial step, the lane
// sum and the bias go to y[c * y_stride + r]. Whatever the blocking, each lane of each
// accumulator sees the same FMAs in the same order.
template <int R, int C, typename W>
HWY_INLINE void Tile(const W* HWY_RESTRICT w, const float* HWY_RESTRICT x, int64_t in, int64_t k0, int64_t k1,
                     float* HWY_RESTRICT park, const float* bias, float* HWY_RESTRICT y, int64_t y_stride,
                     bool prefetch) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  VF acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = k0 == 0 ? hn::Zero(df) : hn::LoadU(df, park + (r * C + c) * N);
  int64_t i = k0;
  for (; i + N <= k1; i += N) {
    if (prefetch)  // the same columns of the next R rows, into L2
      for (int r = 0; r < R; ++r) __builtin_prefetch(w + (R + r) * in + i, 0, 2);
    VF xv[C];
    for (int c = 0; c < C; ++c) xv[c] = hn::LoadU(df, x + c * in + i);
    for (int r = 0; r < R; ++r) {
      const VF wv = LoadF(df, w + r * in + i);
      for (int c = 0; c < C; ++c) acc[r][c] = hn::MulAdd(wv, xv[c], acc[r][c]);
    }
  }
  if (k1 < in) {
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) hn::StoreU(acc[r][c], df, park + (r * C + c) * N);
    return;
  }
  if (i < in) {  // the last partial step, zero-padded
    HWY_ALIGN float buf[kMaxLanesF];
    VF xv[C];
    for (int c = 0; c < C; ++c) {
      for (int64_t k = 0; k < N; ++k) buf[k] = i + k < in ? x[c * in + i + k] : 0.0f;
      xv[c] = hn::Load(df, buf);
    }
    for (int r = 0; r < R; ++r) {
      for (int64_t k = 0; k < N; ++k) buf[k] = i + k < in ? Scalar(w[r * in + i + k]) : 0.0f;
      const VF wv = hn::Load(df, buf);
      for (int c = 0; c < C; ++c) acc[r][c] = hn::MulAdd(wv, xv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * y_stride + r] = ReduceSumF(df, acc[r][c]) + (bias ? bias[r] : 0.0f);
}

template <typename W>
void LinearRowsT(const LinearArgs& a, int64_t r0, int64_t r1) {
  const W* w = static_cast<const W*>(a.w.data);
  const int64_t in = a.w.cols, out = a.w.rows;
  const int64_t N = static_cast<int64_t>(hn::Lanes(DF()));
  // Decode, and steps of at most one token block (a batch of decoding sessions), stream
  // whole rows: each weight is used by one tile only. Prefill: column blocks whose x slice
  // (kTokens rows) fills about 24 KB of L1, a multiple of the vector width.
  const bool streamed = a.T <= kTokens;
  const int64_t kc = streamed ? in : std::max<int64_t>(N, (24 << 10) / (4 * kTokens) / N * N);
  // Decode: the kRows concurrent row streams of a tile can defeat the hardware's per-page
  // stream prefetcher, so for rows up to 16 KiB each tile also prefetches the same columns
  // of the next kRows rows into L2. Measured on the benchmark machine (docs/benchmarks.md):
  // 16-bit rows gain at every length tried (1152 columns: 7-9 -> 11-15 GB/s); f32 rows gain
  // only when they are not a multiple of 4 KiB, and long f32 rows lose.
  const int64_t row_bytes = in * static_cast<int64_t>(sizeof(W));
  const bool prefetch = a.T <= 8 && row_bytes <= (16 << 10) && (sizeof(W) == 2 || row_bytes % 4096 != 0);
  const auto tile = [&]<int R, int C>(int64_t t0, int64_t r, int64_t k0, int64_t k1, float* park) HWY_ATTR {
    Tile<R, C>(w + r * in, a.x + t0 * in, in, k0, k1, park, a.bias ? a.bias + r : nullptr, a.y + t0 * out + r, out, prefetch);
  };
  ForEachTile<kRows, kTokens>(tile, a.T, in, kc, a.panel_rows, N, r0, r1);
}

// y rows [r0, r1) of every token.
void LinearRows(const LinearArgs& a, int64_t r0, int64_t r1) {
  switch (a.w.type) {
    case StorageType::kF32: return LinearRowsT<float>(a, r0, r1);
    case StorageType::kBF16: return LinearRowsT<hwy::bfloat16_t>(a, r0, r1);
    case StorageType::kF16: return LinearRowsT<hwy::float16_t>(a, r0, r1);
    default: return;  // quantized: linear_quant.cc
  }
}

template <typename W>
void EmbeddingT(const int32_t* ids, int64_t T, const Matrix& table, float s, float* y) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df)), D = table.cols;
  const VF vs = hn::Set(df, s);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t id = ids[t] < table.rows ? ids[t] : 0;  // ids past a short table read row 0
    float* yt = y + t * D;
    if (table.row_block != 0) {  // interleaved (kernels.h): P values of the row per 16-lane column step
      constexpr int64_t P = 4 / sizeof(W);
      const W* lane = static_cast<const W*>(table.data) + interleaved_float_index(table, id, 0);
      for (int64_t i = 0; i < D; ++i) yt[i] = Scalar(lane[i / P * kRowBlock * P + i % P]) * s;
      continue;
    }
    const W* row = static_cast<const W*>(table.data) + id * D;
    int64_t i = 0;
    for (; i + N <= D; i += N) hn::StoreU(hn::Mul(LoadF(df, row + i), vs), df, yt + i);
    for (; i < D; ++i) yt[i] = Scalar(row[i]) * s;
  }
}

void Embedding(const int32_t* ids, int64_t T, const Matrix& table, float s, float* y) {
  switch (table.type) {
    case StorageType::kF32: return EmbeddingT<float>(ids, T, table, s, y);
    case StorageType::kBF16: return EmbeddingT<hwy::bfloat16_t>(ids, T, table, s, y);
    case StorageType::kF16: return EmbeddingT<hwy::float16_t>(ids, T, table, s, y);
    default: return;  // quantized: linear_quant.cc
  }
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <unistd.h>

namespace og::kernels {

HWY_EXPORT(LinearRows);
HWY_EXPORT(Embedding);
HWY_EXPORT(TargetName);

int64_t panel_bytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return std::clamp<int64_t>(l2 > 0 ? l2 / 2 : 256 << 10, 128 << 10, 2 << 20);
  }();
  return bytes;
}

void run_linears(RowsFn rows_fn, std::span<LinearArgs> as, ThreadPool* pool) {
  const int64_t T = as[0].T;
  const Matrix& w = as[0].w;
  int64_t rows = 0;
  for (const LinearArgs& a : as) {
    OG_CHECK(a.T == T && a.w.type == w.type && a.w.cols == w.cols && a.w.row_block == w.row_block &&
             a.w.group_size == w.group_size);
    rows += a.w.rows;
  }
  const int threads = pool ? pool->size() : 1;
  const int64_t row_bytes = std::max<int64_t>(1, row_storage_bytes(w));
  // Decode needs no reuse: panels only set the task size, about 512 KB of weights. Each
  // task starts a new stretch of memory for the hardware prefetchers (and the other thread
  // takes the next one): 64-row tasks of short quantized rows (36 KB) streamed 15 % slower
  // than tasks of 256 KB or more (docs/benchmarks.md). Prefill: as many rows as fit.
  // A batch of a few decoding sessions (T <= 8) streams like decode, in tasks that still fit
  // L2 when a second token block re-reads them.
  int64_t panel = T == 1   ? std::clamp<int64_t>((512 << 10) / row_bytes, 16, 4096)
                  : T <= 8 ? std::clamp<int64_t>(std::min<int64_t>(512 << 10, panel_bytes()) / row_bytes, 4, 4096)
                           : std::clamp<int64_t>(panel_bytes() / row_bytes, 4, 1024);
  // At least four tasks per thread, so a core slowed by other work takes fewer of them.
  if (threads > 1) panel = std::min(panel, std::max<int64_t>(4, (rows + 4 * threads - 1) / (4 * threads)));
  // Whole tiles of rows: 4, or the 16-row blocks of an interleaved matrix. A prefill panel
  // of interleaved rows holds pairs of blocks, the widest tile's rows (two blocks on
  // AVX-512, linear_float_blocks.cc), rounded down to stay in its share of L2: a 1152 x
  // 6912 bf16 matrix had panels of 3 blocks, whose third block ran in half-width tiles
  // (5-10 % more GFLOP/s at 128 tokens with whole tiles, docs/benchmarks.md).
  const int64_t unit = w.row_block != 0 ? w.row_block : 4;
  if (T > 8 && w.row_block != 0)
    panel = std::max(2 * unit, panel / (2 * unit) * (2 * unit));
  else
    panel = (panel + unit - 1) / unit * unit;
  int64_t tasks = 0;
  for (LinearArgs& a : as) {
    a.panel_rows = panel;
    tasks += (a.w.rows + panel - 1) / panel;
  }
  const auto run_task = [&](int64_t task) {
    for (const LinearArgs& a : as) {  // the linears' tasks one after another
      const int64_t n = (a.w.rows + panel - 1) / panel;
      if (task < n) return rows_fn(a, task * panel, std::min(a.w.rows, (task + 1) * panel));
      task -= n;
    }
  };
  if (pool == nullptr || tasks == 1) {
    for (int64_t t = 0; t < tasks; ++t) run_task(t);
    return;
  }
  pool->run(tasks, run_task);
}

void linear_group(const float* x, int64_t T, std::span<const LinearOut> outs, ThreadPool* pool, XQuant xquant) {
  if (T <= 0 || outs.empty()) return;
  const Matrix& w = outs[0].w;
  const bool quantized = w.type == StorageType::kQ8 || w.type == StorageType::kQ4;
  const bool bf16_x = xquant == XQuant::kBF16;
  OG_CHECK(!bf16_x || (w.type == StorageType::kBF16 && w.row_block != 0));
  LinearArgs args[kMaxGroup];
  OG_CHECK(outs.size() <= kMaxGroup);
  size_t n = 0;
  for (const LinearOut& o : outs)
    if (o.w.rows > 0)
      args[n++] = LinearArgs{.x = x, .T = T, .w = o.w, .bias = o.bias, .y = o.y, .panel_rows = 0, .bf16_x = bf16_x};
  if (n == 0) return;
  const std::span<LinearArgs> as(args, n);
  if (!quantized && w.row_block != 0) return linear_float_blocks(as, pool);
  run_linears(quantized ? &linear_quant_rows : HWY_DYNAMIC_DISPATCH(LinearRows), as, pool);
}

void linear(const float* x, int64_t T, const Matrix& w, const float* bias, float* y, ThreadPool* pool,
            XQuant xquant) {
  const LinearOut out{.w = w, .bias = bias, .y = y};
  linear_group(x, T, std::span(&out, 1), pool, xquant);
}

void embedding(const int32_t* ids, int64_t T, const Matrix& table, float scale, float* y) {
  if (table.type == StorageType::kQ8 || table.type == StorageType::kQ4) return embedding_quant(ids, T, table, scale, y);
  HWY_DYNAMIC_DISPATCH(Embedding)(ids, T, table, scale, y);
}

const char* simd_target() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

bool limit_simd_target(const char* name) {
  for (int64_t targets = HWY_TARGETS; targets != 0; targets &= targets - 1) {
    const int64_t t = targets & -targets;
    if (std::strcmp(hwy::TargetName(t), name) == 0) {
      hwy::DisableTargets(t - 1);  // better targets have lower bits
      return true;
    }
  }
  return false;
}

}  // namespace og::kernels
#endif  // HWY_ONCE
