// Linear over group-quantized weights (kQ8, kQ4) with int8 activations (XQuant::kInt8).
//
// The arithmetic ggml uses for Q8_0 / Q4_0 weights, which makes decode memory-bound
// again: the float kernel (linear_quant.cc) spends about five instructions per 16 products
// widening codes to floats; here products are integer multiply-adds and the codes are only
// unpacked, never converted. On x86 both types multiply bytes (pmaddubsw: unsigned x
// signed, two products per 16-bit lane; Q4 nibbles are unsigned, Q8 becomes |w| times x
// with w's sign), then pairs of 16-bit sums go to 32 bits (pmaddwd with ones). Elsewhere
// codes and x are 16-bit lanes (ReorderWidenMulAccumulate).
//
// Semantics (kernels.h, quantize_int8): per token and weight group g, x is quantized to
// q = nearest-even(x * id), id = 1 / d, d = max|x_g| / 127 (ggml's quantize_row_q8_0, but d
// stays f32: no f16 rounding step). y[r] = sum_g s_w[r][g] * d_g * sum_{i in g} q_i c_{r,i}
// (+ bias) with c the stored code (Q8: q; Q4: nibble - 8). Integer sums are exact; floats
// enter once per group: acc += float(int sum) * (s_w * d).
//
// Q4's "- 8" costs nothing per weight: sum (n - 8) q = sum n q - 8 sum q, and -8 sum q,
// per (token, 32-bit lane) over the q that lane's products meet and shared by all rows,
// starts the lane's integer sum, so every lane's sum is exactly its true products' sum.
//
// With AVX-512 VNNI (the AVX3_DL target), vpdpbusd adds four unsigned x signed byte
// products straight into 32-bit lanes: Q4 nibbles need no 16-bit step, and Q8 codes become
// unsigned by adding 128 (a bit flip), paid for like Q4's 8 with -128 sum q per lane. The
// lanes' integer sums, and so the results, are the same as the AVX3 target's.
//
// Q4 x order: a row's bytes are processed in chunks of W bytes (a vector); chunk b0 gives
// W low nibbles then W high nibbles, so x is stored per token in that order ("kernel
// order", written by quantize_int8 for the target that runs the kernel, padded with zeros to
// whole chunks). When a chunk holds several groups (32-value groups are 16 bytes; AVX2
// chunks are 32 bytes, AVX-512 64), 32-bit lane i holds bytes 4i..4i+3, so each group owns
// consecutive lanes and a table lookup spreads the groups' scales over them. Every
// accumulator lane sees the same operations in the same order whatever the thread count,
// token count or column blocking: results are bit-identical across them.
// Interleaved weights (kernels.h, row_block 16; what export writes for int8 activations)
// take another kernel (int8_blocks-inl.h): one 32-bit lane per weight row sums a whole group
// in integers, so a conversion serves 16 rows (not 4-8 lanes of one row), x is read in its
// natural order as 4-byte broadcasts, and a block of rows is one sequential stream. Its x
// rows are bytes in natural order on every target, with one offset per group.
//
// quantize_int8 writes a token's codes, scales and offsets into one row of the caller's
// buffer (internal.h Int8RowLayout) and records which target's kernel reads that layout;
// linear calls that kernel. The per-target pieces are in int8_target-inl.h (types, layout,
// scale products), int8_q4-inl.h and int8_q8-inl.h (the integer dot products).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/linear_int8.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/check.h"
#include "kernels/int8_q4-inl.h"
#include "kernels/int8_blocks-inl.h"
#include "kernels/int8_q8-inl.h"
#include "kernels/int8_target-inl.h"
#include "kernels/internal.h"
#include "kernels/simd-inl.h"
#include "kernels/tile_loops-inl.h"

HWY_BEFORE_NAMESPACE();
OG_INT8_TARGET
namespace og::kernels {
namespace HWY_NAMESPACE {

inline constexpr int kRowsI = 4;
// Tokens per register tile: float accumulators and integer group sums, kRowsI x kTokensI
// each, plus the tokens' x vectors must fit the register file.
inline constexpr int kTokensI = kManyRegisters ? 2 : 1;

void LinearInt8Rows(const LinearArgs& a, int64_t r0, int64_t r1);
void LinearBlockRows(const LinearArgs& a, int64_t r0, int64_t r1);

// Per token, into out (rows row_bytes apart): x in the order this target's kernel reads
// it, d per group and the offsets' -c sum q. Returns that kernel.
RowsFn QuantizeX(const float* x, int64_t T, const Matrix& w, uint8_t* out, int64_t row_bytes) {
  const Int8RowLayout l = RowLayout(w);
  OG_CHECK(l.bytes <= row_bytes);  // int8_row_bytes bounds every target's layout
  const int64_t in = w.cols, G = w.group_size, groups = in / G;
  const bool q4 = w.type == StorageType::kQ4;
  const int64_t W = Q4ChunkBytes(), row_bytes_w = in / 2, stride = l.code_stride;
  // -c sum q (c = 8 for Q4, 128 for Q8 on VNNI): one int32 vector per conversion unit.
  // Lane by lane: each 32-bit lane gets -c times the q its own products meet, so that
  // every lane's integer sum is exactly the sum of its products with the true codes. (One
  // total per group in one lane would give the same group sums, but the lanes' floats
  // would carry large cancelling offsets, rounding worse, and Q8 would differ from the
  // kernel without offsets.)
  const int64_t NF = static_cast<int64_t>(hn::Lanes(D32()));
  const int64_t half = G / 2, group_bytes = q4 ? half : G, code_bytes = q4 ? row_bytes_w : in;
  const int32_t offset = l.c;
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const bool blocked = w.row_block != 0;
  thread_local std::vector<int16_t> natural;  // [in]: one token's codes in natural order
  if (natural.size() < static_cast<size_t>(in)) natural.resize(static_cast<size_t>(in));
  for (int64_t t = 0; t < T; ++t) {
    uint8_t* row = out + t * row_bytes;
    int16_t* xq = reinterpret_cast<int16_t*>(row);  // [stride] (16-bit lanes)
    int8_t* xq8 = reinterpret_cast<int8_t*>(row);   // [stride] (bytes, x86)
    float* d = reinterpret_cast<float*>(row + l.d);  // [groups]
    int32_t* ot = reinterpret_cast<int32_t*>(row + l.offsets);  // [offset_ints]
    std::fill(row, row + l.bytes, uint8_t{0});  // padding codes 0, offsets from 0
    const float* xt = x + t * in;
    int16_t* nat = q4 || OG_X86_BYTES ? natural.data() : xq;
    for (int64_t g = 0; g < groups; ++g) {
      const float* xg = xt + g * G;
      auto vmax = hn::Zero(df), vsum = hn::Zero(df);
      for (int64_t i = 0; i < G; i += N) {
        const auto a = hn::Abs(hn::LoadU(df, xg + i));
        vmax = hn::Max(vmax, a);
        vsum = hn::Add(vsum, a);  // a NaN stays in the sum (Max may drop it)
      }
      const float amax = hn::GetLane(hn::MaxOfLanes(df, vmax));
      // A group holding NaN or infinity gets a NaN scale: the outputs it feeds are NaN, as
      // with f32 activations, rather than finite numbers from codes of garbage.
      const bool bad = std::isnan(hn::GetLane(hn::SumOfLanes(df, vsum))) || std::isinf(amax);
      if (bad) {  // codes 0 (the offsets' -c sum q stays 0), scale NaN
        if (!blocked) std::fill(nat + g * G, nat + (g + 1) * G, int16_t{0});
        d[g] = NAN;
        continue;
      }
      const float dg = amax / 127.0f;
      const float id = dg != 0.0f ? 1.0f / dg : 0.0f;
      const auto vid = hn::Set(df, id);
      d[g] = dg;
      if (blocked) {  // interleaved: bytes in natural order, one -c sum q per group
        auto qsum = hn::Zero(di);
        for (int64_t i = 0; i < G; i += N) {
          const auto q = hn::NearestInt(hn::Mul(hn::LoadU(df, xg + i), vid));
          hn::StoreU(hn::DemoteTo(hn::Rebind<int8_t, decltype(di)>(), q), hn::Rebind<int8_t, decltype(di)>(), xq8 + g * G + i);
          qsum = hn::Add(qsum, q);
        }
        ot[g] = -offset * static_cast<int32_t>(hn::GetLane(hn::SumOfLanes(di, qsum)));
        continue;
      }
      for (int64_t i = 0; i < G; i += N) {
        const auto q = hn::NearestInt(hn::Mul(hn::LoadU(df, xg + i), vid));
        hn::StoreU(hn::DemoteTo(hn::Rebind<int16_t, decltype(di)>(), q), hn::Rebind<int16_t, decltype(di)>(), nat + g * G + i);
      }
    }
    if (blocked) continue;
    if (!q4) {
      if (OG_X86_BYTES)
        for (int64_t i = 0; i < in; ++i) xq8[i] = static_cast<int8_t>(natural[static_cast<size_t>(i)]);
    } else {
      for (int64_t b0 = 0; b0 < row_bytes_w; b0 += W) {
        const int64_t n = std::min(W, row_bytes_w - b0);
        for (int64_t k = 0; k < n; ++k) {
          const int64_t b = b0 + k, g = b / half, j = b % half;
          const int16_t lo = natural[static_cast<size_t>(g * G + j)], hi = natural[static_cast<size_t>(g * G + j + half)];
          if (OG_X86_BYTES) {
            xq8[2 * b0 + k] = static_cast<int8_t>(lo);
            xq8[2 * b0 + W + k] = static_cast<int8_t>(hi);
          } else {
            xq[2 * b0 + k] = lo;
            xq[2 * b0 + W + k] = hi;
          }
        }
      }
    }
    if (!offset) continue;
    // The offsets from x in kernel order: 32-bit lane i of a chunk of W code bytes meets
    // the B = W / NF values from B * i of the chunk's x (bytes 4i..4i+3 on x86, 16-bit
    // lanes 2i, 2i+1 elsewhere), and for Q4 the B high-nibble values W further on.
    const int64_t B = W / NF, span = q4 ? 2 * W : W;
    auto xk = [&](int64_t i) { return OG_X86_BYTES ? int32_t{xq8[i]} : int32_t{xq[i]}; };
    for (int64_t k = 0; k * W < code_bytes; ++k) {
      int32_t* lanes = ot + (l.unit_is_chunk ? k : k * W / group_bytes) * NF;
      for (int64_t i = 0; i < NF; ++i) {
        int32_t sum = 0;
        for (int64_t b = 0; b < B; ++b) sum += xk(k * span + B * i + b) + (q4 ? xk(k * span + W + B * i + b) : 0);
        lanes[i] -= offset * sum;
      }
    }
  }
  (void)stride;
  return w.row_block != 0 ? &LinearBlockRows : &LinearInt8Rows;
}

// Columns [k0, k1) (whole groups) of the dot products of R rows starting at r0 with C
// tokens. The accumulators start at zero (k0 == 0) or come from `park`; they are parked
// again, or (k1 == in) reduced into y[c * y_stride + r] with the bias.
template <int R, int C, bool kQ4>
HWY_INLINE void ITile(const Matrix& w, int64_t r0, const XView& x, int64_t k0, int64_t k1, float* HWY_RESTRICT park,
                      const float* bias, float* HWY_RESTRICT y, int64_t y_stride, bool prefetch) {
  const DF32 df;
  const int64_t NF = static_cast<int64_t>(hn::Lanes(df));
  const int64_t in = w.cols, G = w.group_size;
  const int64_t row_bytes = kQ4 ? in / 2 : in;
  const uint8_t* codes = static_cast<const uint8_t*>(w.data) + r0 * row_bytes;
  V32F acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = k0 == 0 ? hn::Zero(df) : hn::LoadU(df, park + (r * C + c) * NF);
  // (Shifts, not divisions: G is a power of two, and an integer division per tile costs
  // as much as a short row's arithmetic.)
  const int log2_g = __builtin_ctzll(static_cast<uint64_t>(G));
  const int64_t g_first = k0 >> log2_g, n_groups = (k1 - k0) >> log2_g;
  const GroupScales<R, C> s = ScaleProducts<R, C>(w, r0, x, g_first, n_groups);
  if constexpr (kQ4)
    Q4Dot<R, C>(codes, row_bytes, G, x, g_first, n_groups, s, prefetch, acc);
  else
    Q8Dot<R, C>(codes, row_bytes, G, x, g_first, n_groups, s, prefetch, acc);
  if (k1 < in) {
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) hn::StoreU(acc[r][c], df, park + (r * C + c) * NF);
    return;
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      y[c * y_stride + r] = hn::GetLane(hn::SumOfLanes(df, acc[r][c])) + (bias ? bias[r] : 0.0f);
}

template <bool kQ4>
void LinearInt8RowsT(const LinearArgs& a, int64_t r0, int64_t r1) {
  const int64_t in = a.w.cols, out = a.w.rows, G = a.w.group_size;
  const int64_t NF = static_cast<int64_t>(hn::Lanes(DF32()));
  // Decode streams whole rows; prefill works in column blocks whose x slice fills about
  // 16 KB of L1, made of whole vectors of groups (so of whole pairs of groups).
  const int64_t step = std::max<int64_t>(2, NF) * G;
  const bool streamed = a.T <= kTokensI;  // one token block: as decode
  const int64_t kc = streamed ? in : std::max<int64_t>(step, (16 << 10) / (2 * kTokensI) / step * step);
  const bool prefetch = a.T <= 8 && row_storage_bytes(a.w) <= (16 << 10);  // the first token block streams from memory
  const Int8RowLayout layout = RowLayout(a.w);
  const auto tile = [&]<int R, int C>(int64_t t0, int64_t r, int64_t k0, int64_t k1, float* park) OG_INT8_ATTR {
    const XView x{.rows = a.xq + t0 * a.xq_row_bytes, .row_bytes = a.xq_row_bytes, .layout = layout, .groups = in / G};
    ITile<R, C, kQ4>(a.w, r, x, k0, k1, park, a.bias ? a.bias + r : nullptr, a.y + t0 * out + r, out, prefetch);
  };
  ForEachTile<kRowsI, kTokensI>(tile, a.T, in, kc, a.panel_rows, NF, r0, r1);
}

void LinearInt8Rows(const LinearArgs& a, int64_t r0, int64_t r1) {
  if (a.w.type == StorageType::kQ4) return LinearInt8RowsT<true>(a, r0, r1);
  LinearInt8RowsT<false>(a, r0, r1);
}

// Interleaved Q4 / Q8: tiles of kBlocksQ blocks of 16 rows by kTokensQ tokens (int8_blocks-inl.h).
inline constexpr int kBlocksQ = kManyRegisters ? 2 : 1;
inline constexpr int kTokensQ = kManyRegisters ? 4 : 2;

// Blocks [b, b + RB) of C tokens over columns [k0, k1) (whole groups): accumulators from
// zero (k0 == 0) or `park` (16 floats per block and token), parked again or, at the last
// column, written to y with the bias (the padding rows of a last partial block are not).
template <bool kQ4, int RB, int C, int kChains>
HWY_INLINE void BlockTile(const LinearArgs& a, const XView& x, int64_t t0, int64_t b, int64_t k0, int64_t k1, float* park) {
  constexpr int V = RB * kBlockVectors;
  const DF32 df;
  const int64_t G = a.w.group_size, out = a.w.rows;
  HWY_ALIGN float acc[V * C * kBlockNF];  // [V][C][kBlockNF]
  auto park_at = [&](int v, int c) { return park + ((v / kBlockVectors) * C + c) * kRowBlock + (v % kBlockVectors) * kBlockNF; };
  auto acc_at = [&](int v, int c) { return acc + (v * C + c) * kBlockNF; };
  for (int v = 0; v < V; ++v)
    for (int c = 0; c < C; ++c) hn::Store(k0 == 0 ? hn::Zero(df) : hn::LoadU(df, park_at(v, c)), df, acc_at(v, c));
  if (G == 32)
    BlockDot<kQ4, RB, C, kQ4 ? 4 : 8, kChains>(a.w, b, x, k0 / G, k1 / G, acc);
  else
    BlockDot<kQ4, RB, C, 0, kChains>(a.w, b, x, k0 / G, k1 / G, acc);
  if (k1 < a.w.cols) {
    for (int v = 0; v < V; ++v)
      for (int c = 0; c < C; ++c) hn::StoreU(hn::Load(df, acc_at(v, c)), df, park_at(v, c));
    return;
  }
  for (int v = 0; v < V; ++v) {
    const int64_t r = (b + v / kBlockVectors) * kRowBlock + (v % kBlockVectors) * kBlockNF;
    if (r >= out) break;
    for (int c = 0; c < C; ++c) StoreRowSums(df, hn::Load(df, acc_at(v, c)), r, out, a.bias, a.y + (t0 + c) * out);
  }
}

// Rows [r0, r1) (r0 a multiple of 16; r1 too, or the last row).
template <bool kQ4>
void LinearBlockRowsT(const LinearArgs& a, int64_t r0, int64_t r1) {
  const int64_t in = a.w.cols, G = a.w.group_size;
  // Decode streams whole rows; prefill works in column blocks whose x slice fills about
  // 16 KB of L1 (whole groups).
  const bool streamed = a.T <= kTokensQ;
  const int64_t kc = streamed ? in : std::max<int64_t>(G, (16 << 10) / kTokensQ / G * G);
  const Int8RowLayout layout = RowLayout(a.w);
  // A one-block, one-token tile splits its integer sums into 4 chains (BlockDot); wider
  // tiles have that many independent sums already.
  const auto tile = [&]<int RB, int C>(int64_t t0, int64_t b, int64_t k0, int64_t k1, float* park) OG_INT8_ATTR {
    const XView x{.rows = a.xq + t0 * a.xq_row_bytes, .row_bytes = a.xq_row_bytes, .layout = layout, .groups = in / G};
    BlockTile<kQ4, RB, C, RB == 1 && C == 1 ? 4 : 1>(a, x, t0, b, k0, k1, park);
  };
  const int64_t b0 = r0 / kRowBlock, b1 = (r1 + kRowBlock - 1) / kRowBlock;
  const int64_t panel_blocks = std::max<int64_t>(1, a.panel_rows / kRowBlock);
  // One token: one block at a time, so a task reads its weights as one sequential stream
  // (4 blocks side by side are 4 streams a block apart: decode ran 10-12 % slower on Zen 4,
  // docs/benchmarks.md, session 16), its integer sums in 4 chains to keep as many
  // multiply-adds in flight as a wider tile has.
  if (a.T == 1)
    ForEachTile<1, 1>(tile, a.T, in, kc, panel_blocks, kRowBlock, b0, b1);
  else
    ForEachTile<kBlocksQ, kTokensQ>(tile, a.T, in, kc, panel_blocks, kRowBlock, b0, b1);
}

void LinearBlockRows(const LinearArgs& a, int64_t r0, int64_t r1) {
  if (a.w.type == StorageType::kQ4) return LinearBlockRowsT<true>(a, r0, r1);
  LinearBlockRowsT<false>(a, r0, r1);
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace og::kernels {

HWY_EXPORT(QuantizeX);

int64_t int8_row_bytes(const Matrix& w) {
  // Every layout a compiled target may use: x86 bytes in 128/256/512-bit vectors (and
  // VNNI's), 16-bit lanes of 128-bit vectors (NEON, EMU128) or of one lane (SCALAR).
  static constexpr Int8Target kTargets[] = {{.W = 16, .NF = 4, .bytes = true},  {.W = 32, .NF = 8, .bytes = true},
                                            {.W = 64, .NF = 16, .bytes = true}, {.W = 64, .NF = 16, .bytes = true, .vnni = true},
                                            {.W = 8, .NF = 4},                  {.W = 1, .NF = 1}};
  int64_t bytes = 0;
  for (const Int8Target& t : kTargets) bytes = std::max(bytes, int8_row_layout(w.type, w.cols, w.group_size, w.row_block, t).bytes);
  return bytes;
}

void quantize_int8(const float* x, int64_t T, const Matrix& w, Int8Input& xq, int64_t row0) {
  OG_CHECK((w.type == StorageType::kQ8 || w.type == StorageType::kQ4) && xq.row_bytes >= int8_row_bytes(w));
  const RowsFn reader = HWY_DYNAMIC_DISPATCH(QuantizeX)(x, T, w, xq.data + row0 * xq.row_bytes, xq.row_bytes);
  xq.type = w.type;
  xq.cols = w.cols;
  xq.group_size = w.group_size;
  xq.row_block = w.row_block;
  xq.reader = reinterpret_cast<void (*)()>(reader);
}

void linear_group(const Int8Input& xq, int64_t row0, int64_t T, std::span<const LinearOut> outs, ThreadPool* pool) {
  if (T <= 0) return;
  OG_CHECK(outs.size() <= kMaxGroup);
  LinearArgs args[kMaxGroup];
  size_t n = 0;
  for (const LinearOut& o : outs) {
    const Matrix& w = o.w;
    // Rows quantized for another weight layout would be read as garbage.
    OG_CHECK(xq.reader != nullptr && xq.type == w.type && xq.cols == w.cols && xq.group_size == w.group_size &&
             xq.row_block == w.row_block);
    if (w.rows > 0)
      args[n++] = LinearArgs{.x = nullptr, .T = T, .w = w, .bias = o.bias, .y = o.y, .panel_rows = 0,
                             .xq = xq.data + row0 * xq.row_bytes, .xq_row_bytes = xq.row_bytes};
  }
  if (n > 0) run_linears(reinterpret_cast<RowsFn>(xq.reader), std::span(args, n), pool);
}

void linear(const Int8Input& xq, int64_t row0, int64_t T, const Matrix& w, const float* bias, float* y,
            ThreadPool* pool) {
  const LinearOut out{.w = w, .bias = bias, .y = y};
  linear_group(xq, row0, T, std::span(&out, 1), pool);
}

}  // namespace og::kernels
#endif  // HWY_ONCE
