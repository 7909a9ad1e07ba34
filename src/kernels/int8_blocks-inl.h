// Interleaved Q4 and Q8 weights (kernels.h, row_block 16) times int8 x, per Highway target
// (linear_int8.cc has the arithmetic's definition).
//
// A 32-bit lane is one weight row: 4 of its codes sit in the lane's 4 bytes (Q4: 8 codes, as
// low and high nibbles), so a lane sums a row's whole group in integers and converts it
// once, 16 rows per conversion on AVX-512 (the row-major kernel converts a group's 4-8 lane
// partial sums per row). x's 4 matching codes are one int32 broadcast to every lane,
// shared by all rows of the tile:
//   VNNI: vpdpbusd(lane sum, unsigned codes, broadcast) adds the 4 products (Q4 nibbles are
//     unsigned; Q8 codes become w + 128 by a bit flip);
//   other x86: pmaddubsw (2 products per 16-bit lane: Q4 low plus high nibbles,
//     2 x 2 x 15 x 127 = 7620; Q8 |w| times x with w's sign), pmaddwd with ones to 32 bits;
//   elsewhere: each byte shifted down into its lane and multiplied in 32 bits.
// Each lane starts from its group's -c sum q (Q4: nibble = q + 8, c = 8; Q8 on VNNI
// c = 128, else 0), so its integer sum is exact; then acc = fma(float(sum), s_w * d, acc),
// groups in order. Every (row, token) thus sees the same operations whatever the tile,
// token count, column blocking or thread count, and the same values on every target (only
// the last fma may round differently where it is not fused: EMU128 and SCALAR).
#if defined(OG_KERNELS_INT8_BLOCKS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef OG_KERNELS_INT8_BLOCKS_INL_H_
#undef OG_KERNELS_INT8_BLOCKS_INL_H_
#else
#define OG_KERNELS_INT8_BLOCKS_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>
#include <cstring>

#include "kernels/int8_target-inl.h"

HWY_BEFORE_NAMESPACE();
OG_INT8_TARGET
namespace og::kernels {
namespace HWY_NAMESPACE {

// int32 lanes per vector, and vectors per 16-row block.
inline constexpr int64_t kBlockNF = static_cast<int64_t>(hn::MaxLanes(D32()));
inline constexpr int kBlockVectors = static_cast<int>(kRowBlock / kBlockNF);

HWY_INLINE int32_t LoadI32(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

#if OG_X86_BYTES && !OG_VNNI
// Adjacent 16-bit lanes summed into 32 bits (pmaddwd with ones).
HWY_INLINE V32I PairSums(hn::Vec<D16B> s) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return V32I{_mm512_madd_epi16(s.raw, _mm512_set1_epi16(1))};
#elif HWY_TARGET == HWY_AVX2
  return V32I{_mm256_madd_epi16(s.raw, _mm256_set1_epi16(1))};
#else
  return V32I{_mm_madd_epi16(s.raw, _mm_set1_epi16(1))};
#endif
}
#endif

// Groups [g0, g1) of RB blocks of rows from `block` (each kRowBlock rows, blocks
// 16 x bytes-per-row apart) with C tokens, added to acc [RB * kBlockVectors][C][kBlockNF]
// (vector v: rows 16 (v / kBlockVectors) + kBlockNF (v % kBlockVectors) of the tile). kQ4:
// 8 values of a row per 4 bytes (low nibbles, then high); else Q8, 4 values per 4 bytes.
// The float accumulators stay in memory (L1), touched once per group: the registers are
// left to the integer sums, codes and broadcasts, which a tile in registers would spill.
// kChunks: the chunks per group when known at compile time (group size 32, unrolled: the
// integer sums then need no register copies between chunks), else 0.
// kChains: independent integer sums per (vector, token), added together at the group's end.
// A one-block tile (decode: one sequential stream, what the memory system reads fastest)
// would otherwise run a group as one chain of dependent multiply-adds; integer addition is
// exact, so the split changes no result.
template <bool kQ4, int RB, int C, int kChunks = 0, int kChains = 1>
HWY_INLINE void BlockDot(const Matrix& w, int64_t block, const XView& x, int64_t g0, int64_t g1, float* HWY_RESTRICT acc) {
  constexpr int V = RB * kBlockVectors;
  constexpr int64_t kValuesPerChunk = kQ4 ? 8 : 4;  // per row, per 64-byte chunk of the block
  const D32 d32;
  const DF32 df;
  const hn::Rebind<hwy::float16_t, DF32> dh;
  const int64_t G = w.group_size, groups = w.cols / G, chunks = kChunks != 0 ? kChunks : G / kValuesPerChunk;
  const int64_t block_bytes = kRowBlock * (kQ4 ? w.cols / 2 : w.cols);
  const uint8_t* codes = static_cast<const uint8_t*>(w.data) + block * block_bytes;
#if OG_X86_BYTES
  const DU8 du8;
  const D8 d8;
  const auto low4 = hn::Set(du8, 15);
#if OG_VNNI
  const auto flip = hn::Set(du8, 0x80);  // Q8: w + 128, paid for by the -128 sum q offsets
#endif
#else
  const hn::RebindToUnsigned<D32> du32;
  const auto low4 = hn::Set(du32, 15u);
#endif
  for (int64_t g = g0; g < g1; ++g) {
    V32I chain[kChains][V][C];
    for (int c = 0; c < C; ++c) {
      const auto offset = hn::Set(d32, x.offsets(c)[g]);
      for (int v = 0; v < V; ++v) {
        chain[0][v][c] = offset;
        for (int k = 1; k < kChains; ++k) chain[k][v][c] = hn::Zero(d32);
      }
    }
#pragma GCC unroll 8
    for (int64_t u = 0; u < chunks; ++u) {
      const int64_t chunk = (g * chunks + u) * 64, col = g * G + kValuesPerChunk * u;
      // This chunk's chains: Q4's high nibbles take the one after the low nibbles'.
      auto& sum = chain[(kQ4 && OG_VNNI ? 2 * u : u) % kChains];
#if OG_X86_BYTES && OG_VNNI
      auto& sum_hi = chain[(2 * u + 1) % kChains];
#endif
      auto at = [&](int v) { return codes + (v / kBlockVectors) * block_bytes + chunk + (v % kBlockVectors) * kBlockNF * 4; };
#if OG_X86_BYTES
      if constexpr (kQ4) {
        hn::Vec<DU8> lo[V], hi[V];
        for (int v = 0; v < V; ++v) {
          const auto b = hn::LoadU(du8, at(v));
          lo[v] = hn::And(b, low4);
          hi[v] = hn::ShiftRight<4>(b);
        }
        for (int c = 0; c < C; ++c) {
          const auto xl = hn::BitCast(d8, hn::Set(d32, LoadI32(x.bytes(c) + col)));
          const auto xh = hn::BitCast(d8, hn::Set(d32, LoadI32(x.bytes(c) + col + 4)));
          for (int v = 0; v < V; ++v)
#if OG_VNNI
          {
            sum[v][c] = DotBytes(sum[v][c], lo[v], xl);
            sum_hi[v][c] = DotBytes(sum_hi[v][c], hi[v], xh);
          }
#else
            sum[v][c] = hn::Add(sum[v][c], PairSums(hn::Add(MulAddBytePairs(lo[v], xl), MulAddBytePairs(hi[v], xh))));
#endif
        }
      } else {
#if OG_VNNI
        hn::Vec<DU8> wu[V];
        for (int v = 0; v < V; ++v) wu[v] = hn::Xor(hn::LoadU(du8, at(v)), flip);
        for (int c = 0; c < C; ++c) {
          const auto xv = hn::BitCast(d8, hn::Set(d32, LoadI32(x.bytes(c) + col)));
          for (int v = 0; v < V; ++v) sum[v][c] = DotBytes(sum[v][c], wu[v], xv);
        }
#else
        // |w| times x with w's sign: pairs of at most 2 x 128 x 127 < 2^15 (no saturation).
        hn::Vec<D8> ws[V];
        hn::Vec<DU8> wa[V];
        for (int v = 0; v < V; ++v) {
          ws[v] = hn::LoadU(d8, reinterpret_cast<const int8_t*>(at(v)));
          wa[v] = hn::BitCast(du8, hn::Abs(ws[v]));
        }
        for (int c = 0; c < C; ++c) {
          const auto xv = hn::BitCast(d8, hn::Set(d32, LoadI32(x.bytes(c) + col)));
          for (int v = 0; v < V; ++v) sum[v][c] = hn::Add(sum[v][c], PairSums(MulAddBytePairs(wa[v], SignOf(xv, ws[v]))));
        }
#endif
      }
#else
      const hn::RebindToSigned<D32> di32;
      for (int v = 0; v < V; ++v) {
        const auto b = hn::LoadU(du32, reinterpret_cast<const uint32_t*>(at(v)));
        for (int j = 0; j < 4; ++j) {
          if constexpr (kQ4) {
            const auto lo = hn::BitCast(d32, hn::And(hn::ShiftRightSame(b, 8 * j), low4));
            const auto hi = hn::BitCast(d32, hn::And(hn::ShiftRightSame(b, 8 * j + 4), low4));
            for (int c = 0; c < C; ++c) {
              const int8_t* xc = x.bytes(c) + col;
              sum[v][c] = hn::Add(sum[v][c], hn::Add(hn::Mul(lo, hn::Set(d32, int32_t{xc[j]})),
                                                     hn::Mul(hi, hn::Set(d32, int32_t{xc[4 + j]}))));
            }
          } else {  // byte j, sign-extended: up to the top byte, then arithmetically down
            const auto q = hn::ShiftRightSame(hn::ShiftLeftSame(hn::BitCast(di32, b), 24 - 8 * j), 24);
            for (int c = 0; c < C; ++c)
              sum[v][c] = hn::Add(sum[v][c], hn::Mul(hn::BitCast(d32, q), hn::Set(d32, int32_t{x.bytes(c)[col + j]})));
          }
        }
      }
      (void)low4;
#endif
    }
    V32I (&sum)[V][C] = chain[0];
    for (int k = 1; k < kChains; ++k)
      for (int v = 0; v < V; ++v)
        for (int c = 0; c < C; ++c) sum[v][c] = hn::Add(sum[v][c], chain[k][v][c]);
    for (int v = 0; v < V; ++v) {
      const uint16_t* s = w.scales + ((block + v / kBlockVectors) * groups + g) * kRowBlock + (v % kBlockVectors) * kBlockNF;
      const V32F sw = hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(s)));
      for (int c = 0; c < C; ++c) {
        float* a = acc + (v * C + c) * kBlockNF;
        hn::Store(hn::MulAdd(hn::ConvertTo(df, sum[v][c]), hn::Mul(sw, hn::Set(df, x.d(c)[g])), hn::Load(df, a)), df, a);
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#endif  // OG_KERNELS_INT8_BLOCKS_INL_H_
