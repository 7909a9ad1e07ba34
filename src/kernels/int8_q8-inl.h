// Q8 weights times int8 x, per Highway target (linear_int8.cc has the scheme).
//
// x86: |w| times x with w's sign as bytes (pmaddubsw), or (w + 128) times x on VNNI from the
// lanes' -128 sum q offsets; 512-bit vectors with 32-value groups hold two groups per chunk.
// Elsewhere: 16-bit lanes.
#if defined(OG_KERNELS_INT8_Q8_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef OG_KERNELS_INT8_Q8_INL_H_
#undef OG_KERNELS_INT8_Q8_INL_H_
#else
#define OG_KERNELS_INT8_Q8_INL_H_
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
HWY_INLINE void Q8Dot(const uint8_t* HWY_RESTRICT codes, int64_t row_bytes, int64_t G, const XView& x, int64_t g_first,
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
        for (int c = 0; c < C; ++c) isum[r][c] = OG_VNNI ? hn::LoadU(d32, x.offsets(c) + g * NF) : hn::Zero(d32);
      if (prefetch)
        for (int r = 0; r < R; ++r) __builtin_prefetch(wb + (R + r) * row_bytes + g * G, 0, 2);
      for (int64_t j = 0; j < G; j += W8) {
        const int64_t b0 = g * G + j;
        hn::Vec<D8> xv[C];
        for (int c = 0; c < C; ++c) xv[c] = hn::LoadU(d8, x.bytes(c) + b0);
        for (int r = 0; r < R; ++r) {
          const auto wv = hn::LoadU(d8, wb + r * row_bytes + b0);
          for (int c = 0; c < C; ++c) isum[r][c] = dot(wv, xv[c], isum[r][c]);
        }
      }
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
          acc[r][c] = hn::MulAdd(hn::ConvertTo(df, isum[r][c]), hn::Set(df, s.at(r, c, g)), acc[r][c]);
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
      if (prefetch)
        for (int r = 0; r < R; ++r) __builtin_prefetch(wb + (R + r) * row_bytes + b0, 0, 2);
      hn::Vec<D8> xv[C];
      for (int c = 0; c < C; ++c) xv[c] = hn::LoadU(d8, x.bytes(c) + b0);
      for (int r = 0; r < R; ++r) {
        const auto wv = hn::LoadU(d8, rp[r]);
        rp[r] += W8;
        for (int c = 0; c < C; ++c) {
          const V32I start = OG_VNNI ? hn::LoadU(d32, x.offsets(c) + (b0 / W8) * NF) : hn::Zero(d32);
          const V32F sc = hn::TableLookupLanes(hn::LoadU(df, s.row(r, c) + gi), idx);
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
    if (prefetch)
      for (int r = 0; r < R; ++r) __builtin_prefetch(gb + (R + r) * row_bytes, 0, 2);
    for (int64_t j = 0; j < G; j += W) {
      hn::Vec<D16> xv[C];
      for (int c = 0; c < C; ++c) xv[c] = hn::LoadU(d16, x.lanes(c) + g * G + j);
      for (int r = 0; r < R; ++r) {
        const auto wv = hn::PromoteTo(d16, hn::LoadU(hn::Rebind<int8_t, D16>(), gb + r * row_bytes + j));
        for (int c = 0; c < C; ++c) isum[r][c] = MulPairs(d16, wv, xv[c], isum[r][c]);
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

#endif  // OG_KERNELS_INT8_Q8_INL_H_
