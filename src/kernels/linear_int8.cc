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
// Semantics (kernels.h, quantize_x): per token and weight group g, x is quantized to
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
// order", written by quantize_x for the target that runs the kernel, padded with zeros to
// whole chunks). When a chunk holds several groups (32-value groups are 16 bytes; AVX2
// chunks are 32 bytes, AVX-512 64), 32-bit lane i holds bytes 4i..4i+3, so each group owns
// consecutive lanes and a table lookup spreads the groups' scales over them. Every
// accumulator lane sees the same operations in the same order whatever the thread count,
// token count or column blocking: results are bit-identical across them.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/linear_int8.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/internal.h"
#include "kernels/simd-inl.h"
#include "kernels/tile_loops-inl.h"

HWY_BEFORE_NAMESPACE();
namespace og::kernels {
namespace HWY_NAMESPACE {

// 16-bit lanes, at most 32 (one 512-bit vector): a chunk never spans more than two groups.
using D16 = hn::CappedTag<int16_t, 32>;
using DU16 = hn::RebindToUnsigned<D16>;
using D32 = hn::Repartition<int32_t, D16>;
using DF32 = hn::Repartition<float, D16>;
using V32F = hn::Vec<DF32>;
using V32I = hn::Vec<D32>;

// x86 has an unsigned x signed byte multiply-add (pmaddubsw: 2 products per 16-bit lane),
// twice the products per instruction of 16-bit lanes: Q4 nibbles are unsigned as they
// are, Q8 codes become |w| times x with w's sign (no sum saturates: 2 x 128 x 127 < 2^15).
// Other targets use 16-bit lanes for both types.
#undef OG_X86_BYTES
#undef OG_VNNI
#if HWY_TARGET == HWY_AVX3_DL
#define OG_VNNI 1
// Highway 1.0's AVX3_DL target string names AVX-VNNI but not AVX512-VNNI (which the
// target's CPU check requires): enable it for this target's code.
#pragma GCC target("avx512vnni")
#else
#define OG_VNNI 0
#endif
#if HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || \
    HWY_TARGET == HWY_SSSE3
#define OG_X86_BYTES 1
using D8 = hn::ScalableTag<int8_t>;
using DU8 = hn::RebindToUnsigned<D8>;
using D16B = hn::Repartition<int16_t, D8>;
// a (unsigned, <= 15) x b (signed) bytes, adjacent pairs summed into 16-bit lanes; with
// nibbles no sum saturates (2 x 15 x 127 = 3810, and up to 8 of them still fit).
HWY_INLINE hn::Vec<D16B> MulAddBytePairs(hn::Vec<DU8> a, hn::Vec<D8> b) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return hn::Vec<D16B>{_mm512_maddubs_epi16(a.raw, b.raw)};
#elif HWY_TARGET == HWY_AVX2
  return hn::Vec<D16B>{_mm256_maddubs_epi16(a.raw, b.raw)};
#else
  return hn::Vec<D16B>{_mm_maddubs_epi16(a.raw, b.raw)};
#endif
}
// x with the sign of w (x where w > 0, -x where w < 0, 0 where w = 0: only |w| x sign(w)
// matters).
HWY_INLINE hn::Vec<D8> SignOf(hn::Vec<D8> x, hn::Vec<D8> w) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return hn::Vec<D8>{_mm512_mask_sub_epi8(x.raw, _mm512_movepi8_mask(w.raw), _mm512_setzero_si512(), x.raw)};
#elif HWY_TARGET == HWY_AVX2
  return hn::Vec<D8>{_mm256_sign_epi8(x.raw, w.raw)};
#else
  return hn::Vec<D8>{_mm_sign_epi8(x.raw, w.raw)};
#endif
}
#if OG_VNNI
// sum + the four products of unsigned a and signed b bytes in each 32-bit lane (vpdpbusd:
// no intermediate saturation).
HWY_INLINE V32I DotBytes(V32I sum, hn::Vec<DU8> a, hn::Vec<D8> b) {
  return V32I{_mm512_dpbusd_epi32(sum.raw, a.raw, b.raw)};
}
#endif
// Bytes per Q4 chunk (and the kernel order's unit).
HWY_INLINE int64_t Q4ChunkBytes() { return static_cast<int64_t>(hn::Lanes(D8())); }
#else
#define OG_X86_BYTES 0
HWY_INLINE int64_t Q4ChunkBytes() { return static_cast<int64_t>(hn::Lanes(D16())); }
#endif

inline constexpr int kRowsI = 4;
// Tokens per register tile: float accumulators and integer group sums, kRowsI x kTokensI
// each, plus the tokens' x vectors must fit the register file.
inline constexpr int kTokensI = kManyRegisters ? 2 : 1;

// Per token: d per group, x in the order the kernel reads it, and the offsets' -c sum q.
void QuantizeX(const float* x, int64_t T, const Matrix& w, Int8X& o) {
  const int64_t in = w.cols, G = w.group_size, groups = in / G;
  const bool q4 = w.type == ElemType::kQ4;
  // Q4: chunks of W bytes give W low-nibble values then W high-nibble values; the last
  // chunk of a row may be shorter, its x padded with zeros to a whole chunk.
  // Q8 on x86: bytes in natural order, padded to whole vectors.
  const int64_t W = Q4ChunkBytes(), row_bytes = in / 2;
  const int64_t stride = q4 ? (row_bytes + W - 1) / W * W * 2 : OG_X86_BYTES ? (in + W - 1) / W * W : in;
  o.stride = stride;
  o.q_buf.assign(static_cast<size_t>(T * stride), 0);
  o.d_buf.resize(static_cast<size_t>(T * groups));
  // -c sum q (c = 8 for Q4, 128 for Q8 on VNNI): one int32 vector per conversion unit,
  // the unit being a group when a group spans whole chunks, else a chunk. Lane by lane:
  // each 32-bit lane gets -c times the q its own products meet, so that every lane's
  // integer sum is exactly the sum of its products with the true codes. (One total per
  // group in one lane would give the same group sums, but the lanes' floats would carry
  // large cancelling offsets, rounding worse, and Q8 would differ from the kernel
  // without offsets.)
  const int64_t NF = static_cast<int64_t>(hn::Lanes(D32()));
  const int64_t half = G / 2, group_bytes = q4 ? half : G, code_bytes = q4 ? row_bytes : in;
  const int32_t offset = q4 ? 8 : OG_VNNI ? 128 : 0;
  const bool unit_is_chunk = OG_X86_BYTES && group_bytes < W;
  const int64_t units = unit_is_chunk ? (code_bytes + W - 1) / W : groups;
  o.offset_stride = offset ? units * NF : 0;
  o.offset_buf.assign(static_cast<size_t>(T * o.offset_stride), 0);
  int16_t* xq = o.q_buf.data();
  int8_t* xq8 = reinterpret_cast<int8_t*>(o.q_buf.data());  // bytes (x86): T * stride of them
  float* d = o.d_buf.data();
  o.q = xq;
  o.d = d;
  o.offsets = o.offset_buf.data();
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  thread_local std::vector<int16_t> natural;
  if (natural.size() < static_cast<size_t>(in)) natural.resize(static_cast<size_t>(in));
  // Token t's offsets from its x in kernel order: 32-bit lane i of a chunk of W code bytes
  // meets the B = W / NF values from B * i of the chunk's x (bytes 4i..4i+3 on x86, 16-bit
  // lanes 2i, 2i+1 elsewhere), and for Q4 the B high-nibble values W further on.
  auto add_offsets = [&](int64_t t) {
    if (!offset) return;
    const int64_t B = W / NF, span = q4 ? 2 * W : W;
    int32_t* ot = o.offset_buf.data() + t * o.offset_stride;
    auto xk = [&](int64_t i) { return OG_X86_BYTES ? int32_t{xq8[t * stride + i]} : int32_t{xq[t * stride + i]}; };
    for (int64_t k = 0; k * W < code_bytes; ++k) {
      int32_t* lanes = ot + (unit_is_chunk ? k : k * W / group_bytes) * NF;
      for (int64_t i = 0; i < NF; ++i) {
        int32_t sum = 0;
        for (int64_t b = 0; b < B; ++b) sum += xk(k * span + B * i + b) + (q4 ? xk(k * span + W + B * i + b) : 0);
        lanes[i] -= offset * sum;
      }
    }
  };
  for (int64_t t = 0; t < T; ++t) {
    const float* xt = x + t * in;
    int16_t* out = q4 || OG_X86_BYTES ? natural.data() : xq + t * stride;
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
      if (bad) {  // codes 0 (offset_buf's -c sum q stays 0), scale NaN
        std::fill(out + g * G, out + (g + 1) * G, int16_t{0});
        d[t * groups + g] = NAN;
        continue;
      }
      const float dg = amax / 127.0f;
      const float id = dg != 0.0f ? 1.0f / dg : 0.0f;
      const auto vid = hn::Set(df, id);
      for (int64_t i = 0; i < G; i += N) {
        const auto q = hn::NearestInt(hn::Mul(hn::LoadU(df, xg + i), vid));
        hn::StoreU(hn::DemoteTo(hn::Rebind<int16_t, decltype(di)>(), q), hn::Rebind<int16_t, decltype(di)>(),
                   out + g * G + i);
      }
      d[t * groups + g] = dg;
    }
    if (!q4) {
      if (OG_X86_BYTES)
        for (int64_t i = 0; i < in; ++i) xq8[t * stride + i] = static_cast<int8_t>(natural[static_cast<size_t>(i)]);
      add_offsets(t);
      continue;
    }
    for (int64_t b0 = 0; b0 < row_bytes; b0 += W) {
      const int64_t n = std::min(W, row_bytes - b0);
      for (int64_t l = 0; l < n; ++l) {
        const int64_t b = b0 + l, g = b / half, j = b % half;
        const int16_t lo = natural[static_cast<size_t>(g * G + j)], hi = natural[static_cast<size_t>(g * G + j + half)];
        if (OG_X86_BYTES) {
          xq8[t * stride + 2 * b0 + l] = static_cast<int8_t>(lo);
          xq8[t * stride + 2 * b0 + W + l] = static_cast<int8_t>(hi);
        } else {
          xq[t * stride + 2 * b0 + l] = lo;
          xq[t * stride + 2 * b0 + W + l] = hi;
        }
      }
    }
    add_offsets(t);
  }
}

// Integer products of 16-bit lanes added pairwise into int32 lanes (lane i: lanes 2i, 2i+1).
template <class D, class V16>
HWY_INLINE hn::Vec<hn::Repartition<int32_t, D>> MulPairs(D d16, V16 a, V16 b, hn::Vec<hn::Repartition<int32_t, D>> sum) {
  const hn::Repartition<int32_t, D> d32;
  (void)d16;
  auto sum1 = hn::Zero(d32);
  sum = hn::ReorderWidenMulAccumulate(d32, a, b, sum, sum1);
  return hn::RearrangeToOddPlusEven(sum, sum1);
}

// A Q4 chunk of `D`'s lane count in bytes, unpacked to low and high nibbles (0..15).
template <class D>
HWY_INLINE void Nibbles(D d16, const uint8_t* p, hn::Vec<D>& lo, hn::Vec<D>& hi) {
  const hn::RebindToUnsigned<D> du;
  const auto b = hn::PromoteTo(du, hn::LoadU(hn::Rebind<uint8_t, D>(), p));
  lo = hn::BitCast(d16, hn::And(b, hn::Set(du, 15)));
  hi = hn::BitCast(d16, hn::ShiftRight<4>(b));
}

struct XView {  // one call's quantized x, as quantize_x wrote it
  const int16_t* q;   // token c at q + c * stride (Q4 on x86: bytes, stride in bytes)
  int64_t stride;
  const float* d;
  const int32_t* offsets;
  int64_t offset_stride;
  int64_t in, groups;
};

// Columns [k0, k1) (whole groups) of the dot products of R rows starting at r0 with C tokens.
template <int R, int C, bool kQ4>
HWY_INLINE void ITile(const Matrix& w, int64_t r0, const XView& x, int64_t k0, int64_t k1, float* HWY_RESTRICT park,
                      const float* bias, float* HWY_RESTRICT y, int64_t y_stride, bool prefetch) {
  const D16 d16;
  const D32 d32;
  const DF32 df;
  const int64_t NF = static_cast<int64_t>(hn::Lanes(df)), W = static_cast<int64_t>(hn::Lanes(d16));
  const int64_t in = w.cols, G = w.group_size, groups = x.groups;
  const int64_t row_bytes = kQ4 ? in / 2 : in;
  const uint8_t* codes = static_cast<const uint8_t*>(w.data) + r0 * row_bytes;
  V32F acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = k0 == 0 ? hn::Zero(df) : hn::LoadU(df, park + (r * C + c) * NF);

  // Products of the row scales with each token's d, per group. (Shifts, not divisions: G
  // and the lane counts are powers of two, and an integer division per tile costs as much
  // as a short row's arithmetic.)
  const int log2_g = __builtin_ctzll(static_cast<uint64_t>(G));
  const int64_t g_first = k0 >> log2_g, n_groups = (k1 - k0) >> log2_g;
  // comb[r][c][g] = s_w * d, NF lanes at a time. A last partial vector (n_tail < NF
  // groups) is loaded as the NF groups ending at the range's end and shifted down in
  // registers: copying it to the stack and reloading it stalls store forwarding, which
  // cost as much as a short row's arithmetic. Its spare lanes are exactly 0 (they meet the
  // zero integer sums of a last, partial chunk). Room for lookups reading NF lanes from
  // any group.
  const size_t stride = static_cast<size_t>(((n_groups + NF - 1) & ~(NF - 1)) + NF);
  thread_local std::vector<float> buf;
  if (buf.size() < stride * R * C) buf.resize(stride * R * C);
  float* comb = buf.data();  // [R][C][stride]
  const hn::Rebind<hwy::float16_t, DF32> dh;
  const int64_t n_tail = n_groups & (NF - 1), g_tail = n_groups - n_tail;
  const auto tail_idx = hn::IndicesFromVec(df, hn::Min(hn::Add(hn::Iota(d32, 0), hn::Set(d32, static_cast<int32_t>(NF - n_tail))),
                                                       hn::Set(d32, static_cast<int32_t>(NF - 1))));
  const auto tail_mask = hn::FirstN(df, static_cast<size_t>(n_tail));
  auto f16_at = [&](const uint16_t* p) { return hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p))); };
  for (int r = 0; r < R; ++r) {
    const uint16_t* src = w.scales + (r0 + r) * groups + g_first;
    float* cb = comb + r * C * stride;
    for (int64_t g = 0; g < g_tail; g += NF) {
      const V32F sv = f16_at(src + g);
      for (int c = 0; c < C; ++c) hn::StoreU(hn::Mul(sv, hn::LoadU(df, x.d + c * groups + g_first + g)), df, cb + c * stride + g);
    }
    if (n_tail == 0) continue;
    if (n_groups >= NF) {
      const V32F sv = hn::TableLookupLanes(f16_at(src + n_groups - NF), tail_idx);
      for (int c = 0; c < C; ++c) {
        const V32F dv = hn::TableLookupLanes(hn::LoadU(df, x.d + c * groups + g_first + n_groups - NF), tail_idx);
        hn::StoreU(hn::IfThenElseZero(tail_mask, hn::Mul(sv, dv)), df, cb + c * stride + g_tail);
      }
    } else {  // fewer groups than lanes (small matrices): scalar
      for (int c = 0; c < C; ++c) {
        std::fill(cb + c * stride, cb + c * stride + NF, 0.0f);
        for (int64_t g = 0; g < n_groups; ++g) cb[c * stride + g] = fp16_to_float(src[g]) * x.d[c * groups + g_first + g];
      }
    }
  }
  auto scale_of = [&](int r, int c, int64_t g) { return comb[(r * C + c) * stride + (g - g_first)]; };

#if OG_X86_BYTES
  const D8 d8;
  const DU8 du8;
  const D16B d16b;
  const int64_t W8 = static_cast<int64_t>(hn::Lanes(d8));
  const auto ones = hn::Set(d16b, 1);
  const int8_t* xb = reinterpret_cast<const int8_t*>(x.q);
#endif
  if constexpr (kQ4) {
    const int64_t half = G / 2;
#if OG_X86_BYTES
    // Bytes: nibbles x int8 x (pmaddubsw), pairs of 16-bit sums to 32 bits by a multiply-add
    // with ones (pmaddwd), then one conversion per group.
    const auto low4 = hn::Set(du8, 15);
    // 16-bit pair sums to 32 bits (a multiply-add with ones) on top of the lanes' -8 sum q.
    auto widen = [&](hn::Vec<D16B> s16, const int32_t* offsets) {
      auto unused = hn::Zero(d32);
      return hn::ConvertTo(
          df, hn::RearrangeToOddPlusEven(hn::ReorderWidenMulAccumulate(d32, s16, ones, hn::LoadU(d32, offsets), unused), unused));
    };
    if (half >= W8) {
      // Chunks inside one group: up to 8 byte products per 16-bit lane (8 x 3810 < 2^15).
      for (int64_t g = g_first; g < g_first + n_groups; ++g) {
#if OG_VNNI
        V32I s16[R][C];  // 32-bit sums here, from the lanes' -8 sum q
        for (int r = 0; r < R; ++r)
          for (int c = 0; c < C; ++c) s16[r][c] = hn::LoadU(d32, x.offsets + c * x.offset_stride + g * NF);
#else
        hn::Vec<D16B> s16[R][C];
        for (int r = 0; r < R; ++r)
          for (int c = 0; c < C; ++c) s16[r][c] = hn::Zero(d16b);
#endif
        if (C == 1 && prefetch)
          for (int r = 0; r < R; ++r) __builtin_prefetch(codes + (R + r) * row_bytes + g * half, 0, 2);
        for (int64_t j = 0; j < half; j += W8) {
          const int64_t b0 = g * half + j;
          hn::Vec<D8> xlo[C], xhi[C];
          for (int c = 0; c < C; ++c) {
            xlo[c] = hn::LoadU(d8, xb + c * x.stride + 2 * b0);
            xhi[c] = hn::LoadU(d8, xb + c * x.stride + 2 * b0 + W8);
          }
          for (int r = 0; r < R; ++r) {
            const auto v = hn::LoadU(du8, codes + r * row_bytes + b0);
            const auto lo = hn::And(v, low4), hi = hn::ShiftRight<4>(v);
            for (int c = 0; c < C; ++c)
#if OG_VNNI
              s16[r][c] = DotBytes(DotBytes(s16[r][c], lo, xlo[c]), hi, xhi[c]);
#else
              s16[r][c] = hn::Add(s16[r][c], hn::Add(MulAddBytePairs(lo, xlo[c]), MulAddBytePairs(hi, xhi[c])));
#endif
          }
        }
        for (int r = 0; r < R; ++r)
          for (int c = 0; c < C; ++c) {
#if OG_VNNI
            const V32F sum = hn::ConvertTo(df, s16[r][c]);
#else
            const V32F sum = widen(s16[r][c], x.offsets + c * x.offset_stride + g * NF);
#endif
            acc[r][c] = hn::MulAdd(sum, hn::Set(df, scale_of(r, c, g)), acc[r][c]);
          }
      }
    } else {
      // A chunk holds W8 / half groups; 32-bit lane i holds bytes 4i..4i+3, so group
      // i / (NF / groups per chunk) of the chunk: its scale comes by a table lookup.
      const int64_t lanes_per_group = (NF * half) >> __builtin_ctzll(static_cast<uint64_t>(W8));  // 4 or 8
      const auto idx = hn::IndicesFromVec(
          df, hn::ShiftRightSame(hn::Iota(d32, 0), static_cast<int>(__builtin_ctzll(static_cast<uint64_t>(lanes_per_group)))));
      // Row pointers at the current chunk; for a last, partial chunk they move to
      // zero-padded copies (its x is zero-padded too).
      const uint8_t* rp[R];
      for (int r = 0; r < R; ++r) rp[r] = codes + r * row_bytes + g_first * half;
      HWY_ALIGN uint8_t tail[R][HWY_MAX_BYTES];
      const int64_t b_begin = g_first * half, b_end = (g_first + n_groups) * half;
      const int64_t b_full = b_begin + ((b_end - b_begin) & ~(W8 - 1));
      const int64_t groups_per_chunk = W8 >> (log2_g - 1);
      for (int64_t b0 = b_begin, gi = 0; b0 < b_end; b0 += W8, gi += groups_per_chunk) {
        if (b0 == b_full) {
          for (int r = 0; r < R; ++r) {
            std::fill(tail[r], tail[r] + W8, uint8_t{0});
            std::copy(rp[r], rp[r] + (b_end - b0), tail[r]);
            rp[r] = tail[r];
          }
        }
        if (C == 1 && prefetch)
          for (int r = 0; r < R; ++r) __builtin_prefetch(codes + (R + r) * row_bytes + b0, 0, 2);
        hn::Vec<D8> xlo[C], xhi[C];
        for (int c = 0; c < C; ++c) {
          xlo[c] = hn::LoadU(d8, xb + c * x.stride + 2 * b0);
          xhi[c] = hn::LoadU(d8, xb + c * x.stride + 2 * b0 + W8);
        }
        for (int r = 0; r < R; ++r) {
          const auto v = hn::LoadU(du8, rp[r]);
          rp[r] += W8;
          const auto lo = hn::And(v, low4), hi = hn::ShiftRight<4>(v);
          for (int c = 0; c < C; ++c) {
            const int32_t* offsets = x.offsets + c * x.offset_stride + (b0 / W8) * NF;
#if OG_VNNI
            const V32F sum = hn::ConvertTo(df, DotBytes(DotBytes(hn::LoadU(d32, offsets), lo, xlo[c]), hi, xhi[c]));
#else
            const V32F sum = widen(hn::Add(MulAddBytePairs(lo, xlo[c]), MulAddBytePairs(hi, xhi[c])), offsets);
#endif
            const V32F sc = hn::TableLookupLanes(hn::LoadU(df, comb + (r * C + c) * stride + gi), idx);
            acc[r][c] = hn::MulAdd(sum, sc, acc[r][c]);
          }
        }
      }
    }
#else
    // 16-bit lanes (targets with at most 8 of them: a chunk never spans two groups).
    for (int64_t g = g_first; g < g_first + n_groups; ++g) {
      V32I isum[R][C];
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) isum[r][c] = hn::LoadU(d32, x.offsets + c * x.offset_stride + g * NF);
      const uint8_t* gb = codes + g * half;
      if (C == 1 && prefetch)
        for (int r = 0; r < R; ++r) __builtin_prefetch(gb + (R + r) * row_bytes, 0, 2);
      for (int64_t j = 0; j < half; j += W) {
        hn::Vec<D16> xlo[C], xhi[C];
        for (int c = 0; c < C; ++c) {
          const int16_t* xc = x.q + c * x.stride + 2 * (g * half + j);
          xlo[c] = hn::LoadU(d16, xc);
          xhi[c] = hn::LoadU(d16, xc + W);
        }
        for (int r = 0; r < R; ++r) {
          hn::Vec<D16> lo, hi;
          Nibbles(d16, gb + r * row_bytes + j, lo, hi);
          for (int c = 0; c < C; ++c) isum[r][c] = MulPairs(d16, hi, xhi[c], MulPairs(d16, lo, xlo[c], isum[r][c]));
        }
      }
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
          acc[r][c] = hn::MulAdd(hn::ConvertTo(df, isum[r][c]), hn::Set(df, scale_of(r, c, g)), acc[r][c]);
    }
#endif
  } else {
#if OG_X86_BYTES
    const int8_t* wb = reinterpret_cast<const int8_t*>(codes);
    // |w| x (x with w's sign), pairs to 16 bits, then to 32 bits (two such sums could
    // saturate 16 bits, so each is widened).
#if OG_VNNI
    // (w + 128) x on top of sum (which starts from its lanes' -128 sum q).
    const auto flip = hn::Set(du8, 0x80);
    auto dot = [&](hn::Vec<D8> w, hn::Vec<D8> xv, V32I sum) { return DotBytes(sum, hn::Xor(hn::BitCast(du8, w), flip), xv); };
    (void)ones;
#else
    auto dot = [&](hn::Vec<D8> w, hn::Vec<D8> xv, V32I sum) {
      auto unused = hn::Zero(d32);
      const auto s16 = MulAddBytePairs(hn::BitCast(du8, hn::Abs(w)), SignOf(xv, w));
      return hn::Add(sum, hn::RearrangeToOddPlusEven(hn::ReorderWidenMulAccumulate(d32, s16, ones, hn::Zero(d32), unused), unused));
    };
#endif
    if (G >= W8) {
      for (int64_t g = g_first; g < g_first + n_groups; ++g) {
        V32I isum[R][C];
        for (int r = 0; r < R; ++r)
          for (int c = 0; c < C; ++c) isum[r][c] = OG_VNNI ? hn::LoadU(d32, x.offsets + c * x.offset_stride + g * NF) : hn::Zero(d32);
        if (C == 1 && prefetch)
          for (int r = 0; r < R; ++r) __builtin_prefetch(wb + (R + r) * row_bytes + g * G, 0, 2);
        for (int64_t j = 0; j < G; j += W8) {
          const int64_t b0 = g * G + j;
          hn::Vec<D8> xv[C];
          for (int c = 0; c < C; ++c) xv[c] = hn::LoadU(d8, xb + c * x.stride + b0);
          for (int r = 0; r < R; ++r) {
            const auto wv = hn::LoadU(d8, wb + r * row_bytes + b0);
            for (int c = 0; c < C; ++c) isum[r][c] = dot(wv, xv[c], isum[r][c]);
          }
        }
        for (int r = 0; r < R; ++r)
          for (int c = 0; c < C; ++c)
            acc[r][c] = hn::MulAdd(hn::ConvertTo(df, isum[r][c]), hn::Set(df, scale_of(r, c, g)), acc[r][c]);
      }
    } else {
      // 512-bit vectors, 32-value groups: a chunk holds groups g (lanes 0..7) and g + 1.
      const auto idx = hn::IndicesFromVec(df, hn::ShiftRightSame(hn::Iota(d32, 0), 3));
      const int8_t* rp[R];  // as for Q4
      for (int r = 0; r < R; ++r) rp[r] = wb + r * row_bytes + g_first * G;
      HWY_ALIGN int8_t tail[R][HWY_MAX_BYTES];
      const int64_t b_begin = g_first * G, b_end = (g_first + n_groups) * G;
      const int64_t b_full = b_begin + ((b_end - b_begin) & ~(W8 - 1));
      for (int64_t b0 = b_begin, gi = 0; b0 < b_end; b0 += W8, gi += 2) {
        if (b0 == b_full) {  // an odd last group: zero-padded copies (x is padded too)
          for (int r = 0; r < R; ++r) {
            std::fill(tail[r], tail[r] + W8, int8_t{0});
            std::copy(rp[r], rp[r] + (b_end - b0), tail[r]);
            rp[r] = tail[r];
          }
        }
        if (C == 1 && prefetch)
          for (int r = 0; r < R; ++r) __builtin_prefetch(wb + (R + r) * row_bytes + b0, 0, 2);
        hn::Vec<D8> xv[C];
        for (int c = 0; c < C; ++c) xv[c] = hn::LoadU(d8, xb + c * x.stride + b0);
        for (int r = 0; r < R; ++r) {
          const auto wv = hn::LoadU(d8, rp[r]);
          rp[r] += W8;
          for (int c = 0; c < C; ++c) {
            const V32I start = OG_VNNI ? hn::LoadU(d32, x.offsets + c * x.offset_stride + (b0 / W8) * NF) : hn::Zero(d32);
            const V32F sc = hn::TableLookupLanes(hn::LoadU(df, comb + (r * C + c) * stride + gi), idx);
            acc[r][c] = hn::MulAdd(hn::ConvertTo(df, dot(wv, xv[c], start)), sc, acc[r][c]);
          }
        }
      }
    }
#else
    for (int64_t g = g_first; g < g_first + n_groups; ++g) {
      V32I isum[R][C];
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) isum[r][c] = hn::Zero(d32);
      const int8_t* gb = reinterpret_cast<const int8_t*>(codes) + g * G;
      if (C == 1 && prefetch)
        for (int r = 0; r < R; ++r) __builtin_prefetch(gb + (R + r) * row_bytes, 0, 2);
      for (int64_t j = 0; j < G; j += W) {
        hn::Vec<D16> xv[C];
        for (int c = 0; c < C; ++c) xv[c] = hn::LoadU(d16, x.q + c * x.stride + g * G + j);
        for (int r = 0; r < R; ++r) {
          const auto wv = hn::PromoteTo(d16, hn::LoadU(hn::Rebind<int8_t, D16>(), gb + r * row_bytes + j));
          for (int c = 0; c < C; ++c) isum[r][c] = MulPairs(d16, wv, xv[c], isum[r][c]);
        }
      }
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
          acc[r][c] = hn::MulAdd(hn::ConvertTo(df, isum[r][c]), hn::Set(df, scale_of(r, c, g)), acc[r][c]);
    }
#endif
  }

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
  const int64_t kc = a.T == 1 ? in : std::max<int64_t>(step, (16 << 10) / (2 * kTokensI) / step * step);
  const bool prefetch = a.T == 1 && row_storage_bytes(a.w) <= (16 << 10);
  const auto tile = [&]<int R, int C>(int64_t t0, int64_t r, int64_t k0, int64_t k1, float* park) HWY_ATTR {
    const Int8X& q = *a.xq;
    const XView x{.q = q.q + t0 * q.stride / (OG_X86_BYTES ? 2 : 1), .stride = q.stride, .d = q.d + t0 * (in / G),
                  .offsets = q.offsets + t0 * q.offset_stride, .offset_stride = q.offset_stride, .in = in, .groups = in / G};
    ITile<R, C, kQ4>(a.w, r, x, k0, k1, park, a.bias ? a.bias + r : nullptr, a.y + t0 * out + r, out, prefetch);
  };
  ForEachTile<kRowsI, kTokensI>(tile, a.T, in, kc, a.panel_rows, NF, r0, r1);
}

void LinearInt8Rows(const LinearArgs& a, int64_t r0, int64_t r1) {
  if (a.w.type == ElemType::kQ4) return LinearInt8RowsT<true>(a, r0, r1);
  LinearInt8RowsT<false>(a, r0, r1);
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace og::kernels {

HWY_EXPORT(LinearInt8Rows);
HWY_EXPORT(QuantizeX);

void linear_int8_rows(const LinearArgs& a, int64_t r0, int64_t r1) { HWY_DYNAMIC_DISPATCH(LinearInt8Rows)(a, r0, r1); }

void quantize_x(const float* x, int64_t T, const Matrix& w, Int8X& out) {
  const auto fn = &HWY_DYNAMIC_DISPATCH(QuantizeX);  // the layout depends on the target
  const size_t n = static_cast<size_t>(T * w.cols);
  if (out.made_by == reinterpret_cast<const void*>(fn) && out.type == w.type && out.cols == w.cols &&
      out.group == w.group_size && out.source.size() == n && std::memcmp(out.source.data(), x, n * sizeof(float)) == 0)
    return;  // the same input as the previous linear's
  fn(x, T, w, out);
  out.source.assign(x, x + n);
  out.type = w.type;
  out.cols = w.cols;
  out.group = w.group_size;
  // Read again: a first call goes through Highway's target-choosing trampoline.
  out.made_by = reinterpret_cast<const void*>(&HWY_DYNAMIC_DISPATCH(QuantizeX));
}

}  // namespace og::kernels
#endif  // HWY_ONCE
