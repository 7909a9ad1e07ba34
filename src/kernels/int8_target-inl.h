// Per-target pieces of the int8-activation linear (linear_int8.cc; included once per
// Highway target, after hwy/foreach_target.h): vector types, the x86 byte multiply-adds,
// this target's layout of quantized x (internal.h Int8RowLayout), the view a tile reads it
// through, and the per-group products of weight and activation scales.
//
// OG_X86_BYTES: codes multiply as bytes (pmaddubsw, vpdpbusd); else as 16-bit lanes.
// OG_VNNI: the AVX3_DL target, whose vpdpbusd sums four byte products into 32 bits.
// OG_INT8_TARGET: Highway 1.0's AVX3_DL target string names AVX-VNNI but not AVX512-VNNI
// (which the target's CPU check requires): every region using it enables it with this, and
// lambdas there take OG_INT8_ATTR in place of HWY_ATTR.
#if defined(OG_KERNELS_INT8_TARGET_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef OG_KERNELS_INT8_TARGET_INL_H_
#undef OG_KERNELS_INT8_TARGET_INL_H_
#else
#define OG_KERNELS_INT8_TARGET_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/internal.h"

#undef OG_X86_BYTES
#undef OG_VNNI
#undef OG_INT8_TARGET
#undef OG_INT8_ATTR
#if HWY_TARGET == HWY_AVX3_DL
#define OG_VNNI 1
#if defined(__clang__)
// clang applies one target attribute per function, not the union of nested ones: replace
// Highway's (HWY_BEFORE_NAMESPACE) with its features plus VNNI; HWY_AFTER_NAMESPACE pops it.
#define OG_INT8_TARGET HWY_PRAGMA(clang attribute pop) HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512vnni")
// A lambda's own attribute (HWY_ATTR) replaces the pushed one in clang: this one keeps VNNI.
#define OG_INT8_ATTR __attribute__((target(HWY_TARGET_STR ",avx512vnni")))
#else
#define OG_INT8_TARGET _Pragma("GCC target(\"avx512vnni\")")
#define OG_INT8_ATTR HWY_ATTR
#endif
#else
#define OG_VNNI 0
#define OG_INT8_TARGET
#define OG_INT8_ATTR HWY_ATTR
#endif
#if HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || \
    HWY_TARGET == HWY_SSSE3
#define OG_X86_BYTES 1
#else
#define OG_X86_BYTES 0
#endif

HWY_BEFORE_NAMESPACE();
OG_INT8_TARGET
namespace og::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 16-bit lanes, at most 32 (one 512-bit vector): a chunk never spans more than two groups.
using D16 = hn::CappedTag<int16_t, 32>;
using D32 = hn::Repartition<int32_t, D16>;
using DF32 = hn::Repartition<float, D16>;
using V32F = hn::Vec<DF32>;
using V32I = hn::Vec<D32>;

// x86 has an unsigned x signed byte multiply-add (pmaddubsw: 2 products per 16-bit lane),
// twice the products per instruction of 16-bit lanes: Q4 nibbles are unsigned as they
// are, Q8 codes become |w| times x with w's sign (no sum saturates: 2 x 128 x 127 < 2^15).
// Other targets use 16-bit lanes for both types.
#if OG_X86_BYTES
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
HWY_INLINE int64_t Q4ChunkBytes() { return static_cast<int64_t>(hn::Lanes(D16())); }
#endif

// This target's layout of one token's quantized x (internal.h).
HWY_INLINE Int8RowLayout RowLayout(const Matrix& w) {
  const Int8Target t{.W = Q4ChunkBytes(), .NF = static_cast<int64_t>(hn::Lanes(D32())), .bytes = OG_X86_BYTES != 0,
                     .vnni = OG_VNNI != 0};
  return int8_row_layout(w.type, w.cols, w.group_size, w.row_block, t);
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

// The first of C tokens' quantized rows (quantize_int8's output), row_bytes apart.
struct XView {
  const uint8_t* rows;  // [C, row_bytes]
  int64_t row_bytes;
  Int8RowLayout layout;
  int64_t groups;
  const int8_t* bytes(int c) const { return reinterpret_cast<const int8_t*>(rows + c * row_bytes); }
  const int16_t* lanes(int c) const { return reinterpret_cast<const int16_t*>(rows + c * row_bytes); }
  const float* d(int c) const { return reinterpret_cast<const float*>(rows + c * row_bytes + layout.d); }
  const int32_t* offsets(int c) const { return reinterpret_cast<const int32_t*>(rows + c * row_bytes + layout.offsets); }
};

// comb[r][c][g] = s_w[r][g] * d_c[g] for R rows from r0, C tokens, groups [g_first,
// g_first + n_groups), with at least NF readable lanes after the last group (for lookups
// reading NF lanes from any group).
template <int R, int C>
struct GroupScales {
  const float* comb;  // [R][C][stride]
  size_t stride;
  int64_t g_first;
  float at(int r, int c, int64_t g) const { return comb[(r * C + c) * stride + (g - g_first)]; }
  const float* row(int r, int c) const { return comb + (r * C + c) * stride; }
};

template <int R, int C>
HWY_INLINE GroupScales<R, C> ScaleProducts(const Matrix& w, int64_t r0, const XView& x, int64_t g_first, int64_t n_groups) {
  const D32 d32;
  const DF32 df;
  const int64_t NF = static_cast<int64_t>(hn::Lanes(df)), groups = x.groups;
  // NF lanes at a time. A last partial vector (n_tail < NF groups) is loaded as the NF
  // groups ending at the range's end and shifted down in registers: copying it to the
  // stack and reloading it stalls store forwarding, which cost as much as a short row's
  // arithmetic. Its spare lanes are exactly 0 (they meet the zero integer sums of a last,
  // partial chunk).
  const size_t stride = static_cast<size_t>(((n_groups + NF - 1) & ~(NF - 1)) + NF);
  thread_local std::vector<float> buf;  // [R][C][stride]: scratch, rewritten by every tile
  if (buf.size() < stride * R * C) buf.resize(stride * R * C);
  float* comb = buf.data();
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
      for (int c = 0; c < C; ++c) hn::StoreU(hn::Mul(sv, hn::LoadU(df, x.d(c) + g_first + g)), df, cb + c * stride + g);
    }
    if (n_tail == 0) continue;
    if (n_groups >= NF) {
      const V32F sv = hn::TableLookupLanes(f16_at(src + n_groups - NF), tail_idx);
      for (int c = 0; c < C; ++c) {
        const V32F dv = hn::TableLookupLanes(hn::LoadU(df, x.d(c) + g_first + n_groups - NF), tail_idx);
        hn::StoreU(hn::IfThenElseZero(tail_mask, hn::Mul(sv, dv)), df, cb + c * stride + g_tail);
      }
    } else {  // fewer groups than lanes (small matrices): scalar
      for (int c = 0; c < C; ++c) {
        std::fill(cb + c * stride, cb + c * stride + NF, 0.0f);
        for (int64_t g = 0; g < n_groups; ++g) cb[c * stride + g] = fp16_to_float(src[g]) * x.d(c)[g_first + g];
      }
    }
  }
  return {comb, stride, g_first};
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#endif  // OG_KERNELS_INT8_TARGET_INL_H_
