// Q4 weights times int8 x, per Highway target (linear_int8.cc has the scheme).
//
// x86: nibbles times int8 x as bytes (pmaddubsw, or vpdpbusd on VNNI) from the lanes' -8 sum q
// offsets; a chunk of W8 bytes gives its low nibbles' then its high nibbles' values, and a
// chunk holding several groups spreads their scales over its lanes by a table lookup.
// Elsewhere: 16-bit lanes, each chunk inside one group.
#if defined(OG_KERNELS_INT8_Q4_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef OG_KERNELS_INT8_Q4_INL_H_
#undef OG_KERNELS_INT8_Q4_INL_H_
#else
#define OG_KERNELS_INT8_Q4_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "kernels/int8_target-inl.h"

HWY_BEFORE_NAMESPACE();
OG_INT8_TARGET
namespace og::kernels {
namespace HWY_NAMESPACE {

// Groups [g_first, g_first + n_groups) of the dot products of R rows (codes, row_bytes
// apart) with C tokens of x, added to acc: per group, the exact integer sum times s.at().
template <int R, int C>
HWY_INLINE void Q4Dot(const uint8_t* HWY_RESTRICT codes, int64_t row_bytes, int64_t G, const XView& x, int64_t g_first,
                     int64_t n_groups, const GroupScales<R, C>& s, bool prefetch, V32F (&acc)[R][C]) {
  const D16 d16;
  const D32 d32;
  const DF32 df;
  const int64_t NF = static_cast<int64_t>(hn::Lanes(df)), W = static_cast<int64_t>(hn::Lanes(d16));
  const int log2_g = __builtin_ctzll(static_cast<uint64_t>(G));
#if OG_X86_BYTES
  const D8 d8;
  const DU8 du8;
  const D16B d16b;
  const int64_t W8 = static_cast<int64_t>(hn::Lanes(d8));
  const auto ones = hn::Set(d16b, 1);
#endif
  (void)W;
  (void)log2_g;
  (void)NF;
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
        for (int c = 0; c < C; ++c) s16[r][c] = hn::LoadU(d32, x.offsets(c) + g * NF);
#else
      hn::Vec<D16B> s16[R][C];
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) s16[r][c] = hn::Zero(d16b);
#endif
      if (prefetch)
        for (int r = 0; r < R; ++r) __builtin_prefetch(codes + (R + r) * row_bytes + g * half, 0, 2);
      for (int64_t j = 0; j < half; j += W8) {
        const int64_t b0 = g * half + j;
        hn::Vec<D8> xlo[C], xhi[C];
        for (int c = 0; c < C; ++c) {
          xlo[c] = hn::LoadU(d8, x.bytes(c) + 2 * b0);
          xhi[c] = hn::LoadU(d8, x.bytes(c) + 2 * b0 + W8);
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
          const V32F sum = widen(s16[r][c], x.offsets(c) + g * NF);
#endif
          acc[r][c] = hn::MulAdd(sum, hn::Set(df, s.at(r, c, g)), acc[r][c]);
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
      if (prefetch)
        for (int r = 0; r < R; ++r) __builtin_prefetch(codes + (R + r) * row_bytes + b0, 0, 2);
      hn::Vec<D8> xlo[C], xhi[C];
      for (int c = 0; c < C; ++c) {
        xlo[c] = hn::LoadU(d8, x.bytes(c) + 2 * b0);
        xhi[c] = hn::LoadU(d8, x.bytes(c) + 2 * b0 + W8);
      }
      for (int r = 0; r < R; ++r) {
        const auto v = hn::LoadU(du8, rp[r]);
        rp[r] += W8;
        const auto lo = hn::And(v, low4), hi = hn::ShiftRight<4>(v);
        for (int c = 0; c < C; ++c) {
          const int32_t* offsets = x.offsets(c) + (b0 / W8) * NF;
#if OG_VNNI
          const V32F sum = hn::ConvertTo(df, DotBytes(DotBytes(hn::LoadU(d32, offsets), lo, xlo[c]), hi, xhi[c]));
#else
          const V32F sum = widen(hn::Add(MulAddBytePairs(lo, xlo[c]), MulAddBytePairs(hi, xhi[c])), offsets);
#endif
          const V32F sc = hn::TableLookupLanes(hn::LoadU(df, s.row(r, c) + gi), idx);
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
      for (int c = 0; c < C; ++c) isum[r][c] = hn::LoadU(d32, x.offsets(c) + g * NF);
    const uint8_t* gb = codes + g * half;
    if (prefetch)
      for (int r = 0; r < R; ++r) __builtin_prefetch(gb + (R + r) * row_bytes, 0, 2);
    for (int64_t j = 0; j < half; j += W) {
      hn::Vec<D16> xlo[C], xhi[C];
      for (int c = 0; c < C; ++c) {
        const int16_t* xc = x.lanes(c) + 2 * (g * half + j);
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
        acc[r][c] = hn::MulAdd(hn::ConvertTo(df, isum[r][c]), hn::Set(df, s.at(r, c, g)), acc[r][c]);
  }
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#endif  // OG_KERNELS_INT8_Q4_INL_H_
