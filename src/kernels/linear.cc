// linear (y = x w^T + b) and embedding, per SIMD target.
//
// Arithmetic: y[t, o] is one vector accumulator of FMAs over the columns in steps of the
// vector width (the last partial step zero-padded), summed across lanes, plus the bias.
// Every tile shape computes it this way, so the value of y[t, o] does not depend on T, on
// the tile that produced it or on the thread count.
//
// Schedule: tasks are panels of output rows. Within a panel, tokens go in blocks of
// kTokens; each block runs kRows x kTokens register tiles down the panel. The panel is
// sized (by bytes) to stay in L2 while every token block reuses it, so a prefill step reads
// each weight from memory once; decode (T = 1) streams kRows rows at a time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/linear.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>

#include "base/thread_pool.h"
#include "kernels/internal.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace og::kernels {
namespace HWY_NAMESPACE {

inline constexpr int kRows = 4;
inline constexpr int kTokens = kManyRegisters ? 4 : 2;

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

// y[c * y_stride + r] = w[r] . x[c] + bias[r] for R rows of w (stride in) and C tokens of x.
template <int R, int C, typename W>
HWY_INLINE void Tile(const W* HWY_RESTRICT w, const float* HWY_RESTRICT x, int64_t in, const float* bias,
                     float* HWY_RESTRICT y, int64_t y_stride) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  VF acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = hn::Zero(df);
  int64_t i = 0;
  for (; i + N <= in; i += N) {
    VF xv[C];
    for (int c = 0; c < C; ++c) xv[c] = hn::LoadU(df, x + c * in + i);
    for (int r = 0; r < R; ++r) {
      const VF wv = LoadF(df, w + r * in + i);
      for (int c = 0; c < C; ++c) acc[r][c] = hn::MulAdd(wv, xv[c], acc[r][c]);
    }
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

// Rows [r0, r1) of C tokens.
template <int C, typename W>
HWY_INLINE void TileColumn(const W* w, const float* x, int64_t in, int64_t out, const float* bias, float* y,
                           int64_t r0, int64_t r1) {
  int64_t r = r0;
  for (; r + kRows <= r1; r += kRows)
    Tile<kRows, C>(w + r * in, x, in, bias ? bias + r : nullptr, y + r, out);
  for (; r < r1; ++r) Tile<1, C>(w + r * in, x, in, bias ? bias + r : nullptr, y + r, out);
}

template <typename W>
void LinearRowsT(const LinearArgs& a, int64_t r0, int64_t r1) {
  const W* w = static_cast<const W*>(a.w.data);
  const int64_t in = a.w.cols, out = a.w.rows;
  for (int64_t p0 = r0; p0 < r1; p0 += a.panel_rows) {
    const int64_t p1 = std::min(r1, p0 + a.panel_rows);
    for (int64_t t0 = 0; t0 < a.T; t0 += kTokens) {
      const float* x = a.x + t0 * in;
      float* y = a.y + t0 * out;
      const int64_t nt = std::min<int64_t>(kTokens, a.T - t0);
      if (nt == kTokens) {
        TileColumn<kTokens>(w, x, in, out, a.bias, y, p0, p1);
      } else if (nt == 1) {
        TileColumn<1>(w, x, in, out, a.bias, y, p0, p1);
      } else if constexpr (kTokens == 4) {
        if (nt == 2) TileColumn<2>(w, x, in, out, a.bias, y, p0, p1);
        else TileColumn<3>(w, x, in, out, a.bias, y, p0, p1);
      }
    }
  }
}

// y rows [r0, r1) of every token.
void LinearRows(const LinearArgs& a, int64_t r0, int64_t r1) {
  switch (a.w.type) {
    case ElemType::kF32: return LinearRowsT<float>(a, r0, r1);
    case ElemType::kBF16: return LinearRowsT<hwy::bfloat16_t>(a, r0, r1);
    case ElemType::kF16: return LinearRowsT<hwy::float16_t>(a, r0, r1);
  }
}

template <typename W>
void EmbeddingT(const int32_t* ids, int64_t T, const Matrix& table, float s, float* y) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df)), D = table.cols;
  const VF vs = hn::Set(df, s);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t id = ids[t] < table.rows ? ids[t] : 0;  // ids past a short table read row 0
    const W* row = static_cast<const W*>(table.data) + id * D;
    float* yt = y + t * D;
    int64_t i = 0;
    for (; i + N <= D; i += N) hn::StoreU(hn::Mul(LoadF(df, row + i), vs), df, yt + i);
    for (; i < D; ++i) yt[i] = Scalar(row[i]) * s;
  }
}

void Embedding(const int32_t* ids, int64_t T, const Matrix& table, float s, float* y) {
  switch (table.type) {
    case ElemType::kF32: return EmbeddingT<float>(ids, T, table, s, y);
    case ElemType::kBF16: return EmbeddingT<hwy::bfloat16_t>(ids, T, table, s, y);
    case ElemType::kF16: return EmbeddingT<hwy::float16_t>(ids, T, table, s, y);
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

namespace {

// Bytes of weights a prefill panel keeps in cache: half the L2 (the rest holds the tokens).
int64_t panel_bytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return std::clamp<int64_t>(l2 > 0 ? l2 / 2 : 256 << 10, 128 << 10, 2 << 20);
  }();
  return bytes;
}

}  // namespace

void linear(const float* x, int64_t T, const Matrix& w, const float* bias, float* y, ThreadPool* pool) {
  if (T <= 0 || w.rows <= 0) return;
  const auto rows_fn = &HWY_DYNAMIC_DISPATCH(LinearRows);
  const int threads = pool ? pool->size() : 1;
  const int64_t row_bytes = std::max<int64_t>(1, w.cols * static_cast<int64_t>(elem_size(w.type)));
  // Decode needs no reuse: panels only set the task size. Prefill: as many rows as fit.
  int64_t panel = T == 1 ? 64 : std::clamp<int64_t>(panel_bytes() / row_bytes, 4, 1024);
  // At least four tasks per thread, so a core slowed by other work takes fewer of them.
  if (threads > 1) panel = std::min(panel, std::max<int64_t>(4, (w.rows + 4 * threads - 1) / (4 * threads)));
  panel = (panel + 3) / 4 * 4;
  const LinearArgs a{.x = x, .T = T, .w = w, .bias = bias, .y = y, .panel_rows = panel};
  const int64_t tasks = (w.rows + panel - 1) / panel;
  if (pool == nullptr || tasks == 1) return rows_fn(a, 0, w.rows);
  pool->run(tasks, [&](int64_t task) { rows_fn(a, task * panel, std::min(w.rows, (task + 1) * panel)); });
}

void embedding(const int32_t* ids, int64_t T, const Matrix& table, float scale, float* y) {
  HWY_DYNAMIC_DISPATCH(Embedding)(ids, T, table, scale, y);
}

const char* simd_target() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

}  // namespace og::kernels
#endif  // HWY_ONCE
