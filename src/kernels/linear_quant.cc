// Linear and embedding over group-quantized weights (kQ8, kQ4; layout in kernels.h).
//
// Same schedule as linear.cc (panels of rows, blocks of tokens, register tiles of kRows x
// kTokens, column blocks in prefill) and the same guarantee: each accumulator lane sees the
// same FMAs in the same order whatever the thread count, token count or column blocking,
// so results are bit-identical across them.
//
// The codes are widened in registers and never expanded to memory: per group, a row's
// scale s is broadcast once, each vector of codes becomes floats (Q4: nibble - 8 in
// integers), and one product dequantizes it (value = q * s, exactly as the scalar
// definition matrix_at computes it). A vector of Q4 bytes gives the group's
// values j.. (low nibbles) and j + group/2.. (high nibbles), so every byte is loaded once.
// Decoding a vector costs about as much as one FMA per token, which prefill spreads over
// kTokens tokens; decode (T = 1) stays memory-bound.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/linear_quant.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <vector>

#include "kernels/internal.h"
#include "kernels/simd-inl.h"
#include "kernels/tile_loops-inl.h"

HWY_BEFORE_NAMESPACE();
namespace og::kernels {
namespace HWY_NAMESPACE {

inline constexpr int kRows = 4;
// Tokens per register tile, sized so that accumulators (kRows x kTokens), the tokens' x
// vectors and the rows' scales fit 32 registers: Q4 keeps two x vectors per token.
template <bool kQ4>
inline constexpr int kTokens = kManyRegisters ? (kQ4 ? 4 : 5) : 2;

using DI = hn::RebindToSigned<DF>;
using DU8 = hn::Rebind<uint8_t, DF>;
using DI8 = hn::Rebind<int8_t, DF>;

// Columns [k0, k1) (whole groups) of the dot products of R rows starting at row r0 with C
// tokens of x. Accumulators start at zero (k0 == 0) or come from `park`; they are parked
// again, or (k1 == in) reduced into y[c * y_stride + r] with the bias.
template <int R, int C, bool kQ4>
HWY_INLINE void QTile(const Matrix& w, int64_t r0, const float* HWY_RESTRICT x, int64_t k0, int64_t k1,
                      float* HWY_RESTRICT park, const float* bias, float* HWY_RESTRICT y, int64_t y_stride,
                      bool prefetch) {
  const DF df;
  const DI di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const int64_t in = w.cols, G = w.group_size, groups = in / G;
  const int64_t row_bytes = kQ4 ? in / 2 : in;
  const uint8_t* codes = static_cast<const uint8_t*>(w.data) + r0 * row_bytes;
  const uint16_t* scales = w.scales + r0 * groups;
  VF acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = k0 == 0 ? hn::Zero(df) : hn::LoadU(df, park + (r * C + c) * N);
  // The R rows' scales for groups [k0, k1) as floats (vector conversion: a scalar f16
  // conversion per group would cost more than the group's arithmetic).
  // (Shifts: G is a power of two, and a division per group costs more than its arithmetic.)
  const int log2_g = __builtin_ctzll(static_cast<uint64_t>(G));
  const int64_t g_first = k0 >> log2_g, n_groups = (k1 - k0) >> log2_g;
  thread_local std::vector<float> scale_buffer;
  if (scale_buffer.size() < static_cast<size_t>(R * n_groups + N)) scale_buffer.resize(static_cast<size_t>(R * n_groups + N));
  float* sf = scale_buffer.data();
  for (int r = 0; r < R; ++r) {
    const uint16_t* src = scales + r * groups + g_first;
    int64_t g = 0;
    for (; g + N <= n_groups; g += N)
      hn::StoreU(hn::PromoteTo(df, hn::LoadU(hn::Rebind<hwy::float16_t, DF>(), reinterpret_cast<const hwy::float16_t*>(src + g))),
                 df, sf + r * n_groups + g);
    for (; g < n_groups; ++g) sf[r * n_groups + g] = fp16_to_float(src[g]);
  }
  for (int64_t g0 = k0; g0 < k1; g0 += G) {
    const float* sg = sf + ((g0 - k0) >> log2_g);
    VF vs[R];
    for (int r = 0; r < R; ++r) vs[r] = hn::Set(df, sg[r * n_groups]);
    if constexpr (kQ4) {
      const uint8_t* gb = codes + g0 / 2;
      if (prefetch)  // this group of the next R rows, into L2
        for (int r = 0; r < R; ++r) __builtin_prefetch(gb + (R + r) * row_bytes, 0, 2);
      for (int64_t j = 0; j < G / 2; j += N) {
        VF xlo[C], xhi[C];
        for (int c = 0; c < C; ++c) {
          xlo[c] = hn::LoadU(df, x + c * in + g0 + j);
          xhi[c] = hn::LoadU(df, x + c * in + g0 + G / 2 + j);
        }
        for (int r = 0; r < R; ++r) {
          const auto b = hn::PromoteTo(di, hn::LoadU(DU8(), gb + r * row_bytes + j));
          const auto eight = hn::Set(di, 8);
          const VF lo = hn::Mul(hn::ConvertTo(df, hn::Sub(hn::And(b, hn::Set(di, 15)), eight)), vs[r]);
          const VF hi = hn::Mul(hn::ConvertTo(df, hn::Sub(hn::ShiftRight<4>(b), eight)), vs[r]);
          for (int c = 0; c < C; ++c) {
            acc[r][c] = hn::MulAdd(lo, xlo[c], acc[r][c]);
            acc[r][c] = hn::MulAdd(hi, xhi[c], acc[r][c]);
          }
        }
      }
    } else {
      const int8_t* gb = reinterpret_cast<const int8_t*>(codes) + g0;
      if (prefetch)
        for (int r = 0; r < R; ++r) __builtin_prefetch(gb + (R + r) * row_bytes, 0, 2);
      for (int64_t j = 0; j < G; j += N) {
        VF xv[C];
        for (int c = 0; c < C; ++c) xv[c] = hn::LoadU(df, x + c * in + g0 + j);
        for (int r = 0; r < R; ++r) {
          const VF wv = hn::Mul(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(DI8(), gb + r * row_bytes + j))), vs[r]);
          for (int c = 0; c < C; ++c) acc[r][c] = hn::MulAdd(wv, xv[c], acc[r][c]);
        }
      }
    }
  }
  if (k1 < in) {
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) hn::StoreU(acc[r][c], df, park + (r * C + c) * N);
    return;
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * y_stride + r] = ReduceSumF(df, acc[r][c]) + (bias ? bias[r] : 0.0f);
}

template <bool kQ4>
void LinearQuantRowsT(const LinearArgs& a, int64_t r0, int64_t r1) {
  const int64_t in = a.w.cols, out = a.w.rows, G = a.w.group_size;
  const int64_t N = static_cast<int64_t>(hn::Lanes(DF()));
  // Decode streams whole rows; prefill works in column blocks of whole groups whose x
  // slice (kTokens rows) fills about 24 KB of L1.
  const bool streamed = a.T <= kTokens<kQ4>;  // one token block: as decode
  const int64_t kc = streamed ? in : std::max<int64_t>(G, (24 << 10) / (4 * kTokens<kQ4>) / G * G);
  const bool prefetch = a.T <= 8 && row_storage_bytes(a.w) <= (16 << 10);  // the first token block streams from memory
  const auto tile = [&]<int R, int C>(int64_t t0, int64_t r, int64_t k0, int64_t k1, float* park) HWY_ATTR {
    QTile<R, C, kQ4>(a.w, r, a.x + t0 * in, k0, k1, park, a.bias ? a.bias + r : nullptr, a.y + t0 * out + r, out, prefetch);
  };
  ForEachTile<kRows, kTokens<kQ4>>(tile, a.T, in, kc, a.panel_rows, N, r0, r1);
}

// Interleaved Q4 / Q8 with f32 x (rare: export interleaves only for int8 activations, so this
// serves hand-made programs and small matrices a f32 path reads). Each row is decoded into
// a scratch row (value = q * s, as matrix_at) and dotted with each token in one fixed
// order: a row's result does not depend on the token count. (cols is a multiple of the
// group size, 32 or more, so of every target's vector width.)
void LinearBlockRowsF32(const LinearArgs& a, int64_t r0, int64_t r1) {
  const DF df;
  const int64_t in = a.w.cols, out = a.w.rows, N = static_cast<int64_t>(hn::Lanes(df));
  thread_local std::vector<float> row;  // [in]
  row.resize(static_cast<size_t>(in));
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t c = 0; c < in; ++c) row[static_cast<size_t>(c)] = matrix_at(a.w, r, c);
    for (int64_t t = 0; t < a.T; ++t) {
      const float* x = a.x + t * in;
      VF acc = hn::Zero(df);
      for (int64_t c = 0; c < in; c += N) acc = hn::MulAdd(hn::LoadU(df, row.data() + c), hn::LoadU(df, x + c), acc);
      a.y[t * out + r] = ReduceSumF(df, acc) + (a.bias ? a.bias[r] : 0.0f);
    }
  }
}

void LinearQuantRows(const LinearArgs& a, int64_t r0, int64_t r1) {
  if (a.w.row_block != 0) return LinearBlockRowsF32(a, r0, r1);
  if (a.w.type == StorageType::kQ4) return LinearQuantRowsT<true>(a, r0, r1);
  LinearQuantRowsT<false>(a, r0, r1);
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cmath>

namespace og::kernels {

HWY_EXPORT(LinearQuantRows);

void linear_quant_rows(const LinearArgs& a, int64_t r0, int64_t r1) {
  HWY_DYNAMIC_DISPATCH(LinearQuantRows)(a, r0, r1);
}

// One row per token, dequantized as the linear kernel does (q * s, one product), then scaled.
void embedding_quant(const int32_t* ids, int64_t T, const Matrix& table, float scale, float* y) {
  const int64_t D = table.cols;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t id = ids[t] < table.rows ? ids[t] : 0;  // ids past a short table read row 0
    for (int64_t c = 0; c < D; ++c) y[t * D + c] = matrix_at(table, id, c) * scale;
  }
}

float matrix_at(const Matrix& m, int64_t row, int64_t col) {
  switch (m.type) {
    case StorageType::kF32:
    case StorageType::kBF16:
    case StorageType::kF16: {
      const int64_t i = m.row_block != 0 ? interleaved_float_index(m, row, col) : row * m.cols + col;
      if (m.type == StorageType::kF32) return static_cast<const float*>(m.data)[i];
      return to_float(static_cast<const uint16_t*>(m.data)[i], m.type);
    }
    case StorageType::kQ8: {
      if (m.row_block != 0) {  // interleaved (kernels.h)
        const int64_t G = m.group_size, groups = m.cols / G, b = row / kRowBlock, i = row % kRowBlock;
        const int64_t g = col / G, u = col % G / 4, j = col % 4;
        const int8_t q = static_cast<const int8_t*>(m.data)[((b * groups + g) * (G / 4) + u) * 64 + 4 * i + j];
        return static_cast<float>(q) * fp16_to_float(m.scales[(b * groups + g) * kRowBlock + i]);
      }
      const float s = fp16_to_float(m.scales[row * (m.cols / m.group_size) + col / m.group_size]);
      return static_cast<float>(static_cast<const int8_t*>(m.data)[row * m.cols + col]) * s;
    }
    case StorageType::kQ4: {
      if (m.row_block != 0) {  // interleaved (kernels.h)
        const int64_t G = m.group_size, groups = m.cols / G, b = row / kRowBlock, i = row % kRowBlock;
        const int64_t g = col / G, u = col % G / 8, k = col % 8;
        const uint8_t byte = static_cast<const uint8_t*>(m.data)[((b * groups + g) * (G / 8) + u) * 64 + 4 * i + k % 4];
        const int nibble = k < 4 ? (byte & 15) : (byte >> 4);
        return static_cast<float>(nibble - 8) * fp16_to_float(m.scales[(b * groups + g) * kRowBlock + i]);
      }
      const int64_t G = m.group_size, in_group = col % G, half = G / 2;
      const uint8_t byte = static_cast<const uint8_t*>(m.data)[row * m.cols / 2 + col / G * half + in_group % half];
      const int nibble = in_group < half ? (byte & 15) : (byte >> 4);
      const float s = fp16_to_float(m.scales[row * (m.cols / G) + col / G]);
      return static_cast<float>(nibble - 8) * s;
    }
  }
  return 0;
}

}  // namespace og::kernels
#endif  // HWY_ONCE
