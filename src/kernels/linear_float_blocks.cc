// Linear over interleaved float weights (kernels.h: f32 / bf16 / f16 with row_block 16), per
// Highway target: the outer-product form of y = x w^T.
//
// A 32-bit lane of a weight vector is one row (bf16 / f16: two consecutive columns of it,
// widened into two vectors), so one load serves every token of the tile: each token's x
// value is a broadcast, and a tile of kBlocksF blocks x kTokensF tokens keeps its
// kBlocksF * 16 * kTokensF sums in registers (24 vectors on AVX-512) with no reduction
// across lanes. The row-major kernel (linear.cc) loads a vector of each token's x per
// column step and sums lanes at the end; here the only work besides the FMAs is one load
// and (16-bit weights) one shift or mask per 16 rows and column.
//
// Arithmetic: y[t, r] = (((w[r][0] x[t][0] + 0) + w[r][1] x[t][1]) + ...) + bias[r]: one
// chain of FMAs in column order per (row, token), whatever the tile, token count, column
// blocking or thread count, so results are bit-identical across them and decode equals
// prefill. (Targets without fused multiply-add, EMU128 and SCALAR, round each product.)
//
// XQuant::kBF16 (bf16 weights): x is rounded to bf16 and packed as pairs of columns, one
// 32-bit broadcast per token and column step; each step adds the pair to the chain as
// vdpbf16ps does (column 2p + 1's product, then 2p's), with that instruction where the CPU
// has it, else two FMAs over the widened halves (kernels.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/linear_float_blocks.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/internal.h"
#include "kernels/dot_bf16-inl.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace og::kernels {
namespace HWY_NAMESPACE {

using DU32 = hn::RebindToUnsigned<DF>;

// Float lanes per vector, and vectors per 16-row block.
inline constexpr int64_t kLanesF = static_cast<int64_t>(hn::MaxLanes(DF()));
inline constexpr int kVectorsPerBlock = static_cast<int>(kRowBlock / kLanesF);
// Register tile: kBlocksF blocks of rows by kTokensF tokens, about three quarters of the
// register file in accumulators (24 of 32 on AVX-512, 12 of 16 on AVX2); the rest holds
// the block's widened weights and a broadcast.
inline constexpr int kBlocksF = kVectorsPerBlock >= 2 ? 1 : 2;
inline constexpr int kTokensF = std::max(1, (kManyRegisters ? 24 : 12) / (kBlocksF * kVectorsPerBlock));

// A few tokens (batched decode, decodes beside a prompt chunk) stream the weights from
// memory, and more blocks per tile read them faster: more streams and independent chains
// in flight. Where registers allow (one vector per block, 32 registers), up to
// kStreamTokens tokens go in one tile of kStreamBlocks blocks (20 accumulators). One
// thread, 2048 x 8192 bf16 from memory: 2 tokens 15 %, 3-4 tokens 25-30 % more GFLOP/s
// than kBlocksF blocks; from 6 tokens on, no gain (and a second token block would
// re-read the weights).
inline constexpr bool kStreamTiles = kManyRegisters && kVectorsPerBlock == 1;
inline constexpr int kStreamBlocks = 4;
inline constexpr int kStreamTokens = 5;

// Column steps (64-byte lines of a block) between a tile's loads and its prefetches. 24
// (1.5 KB ahead per block) against 8, alternating, weights from memory in huge pages, two
// threads (Zen 5): 6-16 tokens 10-15 % faster on 8192 x 2048 f32, 8-25 % on 6912 x 1152
// bf16, 5-8 % on 8192 x 2048 bf16; 16 and 32 within noise of 24; no change from 48 tokens
// on, where the panel sits in L2.
inline constexpr int64_t kPrefetchSteps = 24;

// Up to this many token blocks, a panel runs tile by tile (FloatBlockRowsT).
inline constexpr int64_t kAheadTokenBlocks = 4;

// How a tile meets x: f32 values, or bf16 pairs through vdpbf16ps or through FMAs.
enum class XMode { kF32, kBF16Native, kBF16Fma };

bool HasDotBF16() { return CpuHasDotBF16(); }

// f's nearest bf16 (ties to even) as the high half of an f32; a NaN stays a (quiet) NaN.
HWY_INLINE uint32_t RoundToBF16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (u >> 16) | 0x40u;
  return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

// RoundToBF16Bits of every lane.
HWY_INLINE hn::Vec<DU32> RoundToBF16BitsV(hn::Vec<DU32> u) {
  const DU32 du;
  const auto nan = hn::Gt(hn::And(u, hn::Set(du, 0x7FFFFFFFu)), hn::Set(du, 0x7F800000u));
  const auto odd = hn::And(hn::ShiftRight<16>(u), hn::Set(du, 1u));
  const auto rounded = hn::ShiftRight<16>(hn::Add(hn::Add(u, hn::Set(du, 0x7FFFu)), odd));
  return hn::IfThenElse(nan, hn::Or(hn::ShiftRight<16>(u), hn::Set(du, 0x40u)), rounded);
}

// to[p * stride] = x[2p] and x[2p + 1] rounded to bf16, the first in the low half, for p <
// pairs: a vector of pairs at a time (the bits of the scalar rounding), then the rest.
HWY_INLINE void PackBF16Pairs(const float* HWY_RESTRICT x, int64_t pairs, int64_t stride, uint32_t* HWY_RESTRICT to) {
  int64_t p = 0;
#if HWY_TARGET != HWY_SCALAR  // (one lane: no pairs of lanes to interleave)
  {
    const DF df;
    const DU32 du;
    const int64_t N = static_cast<int64_t>(hn::Lanes(du));
    HWY_ALIGN uint32_t buf[hn::MaxLanes(DU32())];
    for (; p + N <= pairs; p += N) {
      const auto lo = RoundToBF16BitsV(hn::BitCast(du, hn::LoadU(df, x + 2 * p)));
      const auto hi = RoundToBF16BitsV(hn::BitCast(du, hn::LoadU(df, x + 2 * p + N)));
      // Even elements are first columns, odd ones second: pair j is (2j, 2j + 1).
      hn::Store(hn::Or(hn::ConcatEven(du, hi, lo), hn::ShiftLeft<16>(hn::ConcatOdd(du, hi, lo))), du, buf);
      for (int64_t j = 0; j < N; ++j) to[(p + j) * stride] = buf[j];
    }
  }
#endif
  for (; p < pairs; ++p) to[p * stride] = RoundToBF16Bits(x[2 * p]) | RoundToBF16Bits(x[2 * p + 1]) << 16;
}

// One of the two columns of a lane of 16-bit weights as floats: the low half (half 0, the
// first column) or the high half.
HWY_INLINE VF WidenHalf(DF df, hn::Vec<DU32> pair, int half, hwy::bfloat16_t) {
  // A bf16 is an f32's high half.
  return hn::BitCast(df, half == 0 ? hn::ShiftLeft<16>(pair) : hn::And(pair, hn::Set(DU32(), 0xFFFF0000u)));
}
HWY_INLINE VF WidenHalf(DF df, hn::Vec<DU32> pair, int half, hwy::float16_t) {
  const hn::Rebind<uint16_t, DF> du16;
  const hn::Rebind<hwy::float16_t, DF> df16;
  return hn::PromoteTo(df, hn::BitCast(df16, hn::TruncateTo(du16, half == 0 ? pair : hn::ShiftRight<16>(pair))));
}

// Blocks [b, b + RB) of C tokens over columns [k0, k1) (multiples of the values per lane),
// x given as xt: the tokens' values of those columns packed step by step, [step][C][P]
// floats (XMode::kF32), or [step][C] pairs of bf16 (the others).
// Accumulators start from zero (k0 == 0) or `park` (16 floats per block and token); they
// are parked again or, at the last column, written to y with the bias (a last partial
// block's padding rows are not written).
// `ahead` (may be null): ahead_lines 64-byte lines from there are prefetched into L2 per
// column step (the next tile's weights, while this tile runs from L2).
template <typename W, XMode XM, int RB, int C, typename XT>
HWY_INLINE void FloatBlockTile(const LinearArgs& a, const XT* HWY_RESTRICT xt, int64_t t0, int64_t b, int64_t k0,
                               int64_t k1, float* HWY_RESTRICT park, const char* ahead = nullptr,
                               int64_t ahead_lines = 0) {
  constexpr int V = RB * kVectorsPerBlock;
  constexpr int64_t P = 4 / sizeof(W);  // values of a row per 32-bit lane
  constexpr int64_t XP = XM == XMode::kF32 ? P : 1;  // x's elements per token and step
  const DF df;
  const DU32 du32;
  const int64_t in = a.w.cols, out = a.w.rows;
  const int64_t block_elems = kRowBlock * in;
  const W* w = static_cast<const W*>(a.w.data) + b * block_elems;
  auto park_at = [&](int v, int c) { return park + ((v / kVectorsPerBlock) * C + c) * kRowBlock + (v % kVectorsPerBlock) * kLanesF; };
  // Vector v's lanes at column step p (kernels.h).
  auto at = [&](int v, int64_t p) { return w + (v / kVectorsPerBlock) * block_elems + (p * kRowBlock + (v % kVectorsPerBlock) * kLanesF) * P; };
  VF acc[V][C];
  for (int v = 0; v < V; ++v)
    for (int c = 0; c < C; ++c) acc[v][c] = k0 == 0 ? hn::Zero(df) : hn::LoadU(df, park_at(v, c));
  for (int64_t p = k0 / P; p < k1 / P; ++p, xt += C * XP) {
    // Tiles of several tokens (prefill, batched decode): each block's line kPrefetchSteps
    // column steps ahead, into L1. A prefill panel sits in L2, but the loads still stalled
    // on it (a fifth of the loop's samples, perf); one thread over 50 matrices of 2048 x
    // 2048 bf16, 128 tokens, A/B: 2-16 % more GFLOP/s in 5 of 6 pairs, 8 % less in one.
    if constexpr (C > 1) {
      if (p + kPrefetchSteps < k1 / P)
        for (int v = 0; v < V; v += kVectorsPerBlock) __builtin_prefetch(at(v, p + kPrefetchSteps), 0, 3);
      if (ahead != nullptr) {
        for (int64_t j = 0; j < ahead_lines; ++j) __builtin_prefetch(ahead + j * 64, 0, 2);
        ahead += ahead_lines * 64;
      }
    }
    if constexpr (XM == XMode::kBF16Native) {
      hn::Vec<DU32> pair[V];
      for (int v = 0; v < V; ++v) pair[v] = hn::LoadU(du32, reinterpret_cast<const uint32_t*>(at(v, p)));
      for (int c = 0; c < C; ++c) {
        const auto xv = hn::Set(du32, xt[c]);
        for (int v = 0; v < V; ++v) acc[v][c] = DotBF16Pairs(acc[v][c], pair[v], xv);
      }
    } else if constexpr (XM == XMode::kBF16Fma) {
      // vdpbf16ps's order: every token's second column, then every token's first.
      hn::Vec<DU32> pair[V];
      for (int v = 0; v < V; ++v) pair[v] = hn::LoadU(du32, reinterpret_cast<const uint32_t*>(at(v, p)));
      for (int half = 1; half >= 0; --half) {
        VF wv[V];
        for (int v = 0; v < V; ++v) wv[v] = WidenHalf(df, pair[v], half, W());
        for (int c = 0; c < C; ++c) {
          const VF xv = hn::BitCast(df, hn::Set(du32, half == 0 ? xt[c] << 16 : xt[c] & 0xFFFF0000u));
          for (int v = 0; v < V; ++v) acc[v][c] = hn::MulAdd(wv[v], xv, acc[v][c]);
        }
      }
    } else if constexpr (P == 1) {
      VF wv[V];
      for (int v = 0; v < V; ++v) wv[v] = hn::LoadU(df, reinterpret_cast<const float*>(at(v, p)));
      for (int c = 0; c < C; ++c) {
        const VF xv = hn::Set(df, xt[c]);
        for (int v = 0; v < V; ++v) acc[v][c] = hn::MulAdd(wv[v], xv, acc[v][c]);
      }
    } else {
      // Every token's first column, then every token's second: few widened vectors live.
      hn::Vec<DU32> pair[V];
      for (int v = 0; v < V; ++v) pair[v] = hn::LoadU(du32, reinterpret_cast<const uint32_t*>(at(v, p)));
      for (int half = 0; half < 2; ++half) {
        VF wv[V];
        for (int v = 0; v < V; ++v) wv[v] = WidenHalf(df, pair[v], half, W());
        for (int c = 0; c < C; ++c) {
          const VF xv = hn::Set(df, xt[c * 2 + half]);
          for (int v = 0; v < V; ++v) acc[v][c] = hn::MulAdd(wv[v], xv, acc[v][c]);
        }
      }
    }
  }
  if (k1 < in) {
    for (int v = 0; v < V; ++v)
      for (int c = 0; c < C; ++c) hn::StoreU(acc[v][c], df, park_at(v, c));
    return;
  }
  for (int v = 0; v < V; ++v) {
    const int64_t r = (b + v / kVectorsPerBlock) * kRowBlock + (v % kVectorsPerBlock) * kLanesF;
    if (r >= out) break;
    for (int c = 0; c < C; ++c) StoreRowSums(df, acc[v][c], r, out, a.bias, a.y + (t0 + c) * out);
  }
}

// Tokens [t0, t0 + nt), nt <= C, of blocks [pb0, pb1), x packed as FloatBlockLinear left it: column
// blocks of kc, each swept down the blocks RB at a time (then one at a time).
template <typename W, XMode XM, int RB, int C>
HWY_INLINE void FloatTokenBlock(const LinearArgs& a, int64_t nt, int64_t t0, int64_t pb0, int64_t pb1, int64_t kc,
                                float* park, const char* ahead = nullptr, int64_t ahead_lines = 0) {
  if constexpr (C > 1) {
    if (nt < C) return FloatTokenBlock<W, XM, RB, C - 1>(a, nt, t0, pb0, pb1, kc, park, ahead, ahead_lines);
  }
  const int64_t in = a.w.cols;
  // This token block, [step][C][P] floats or [step][C] pairs; x_off(k0): column k0's step.
  const auto* xt = [&] {
    if constexpr (XM == XMode::kF32) return a.x_packed + t0 * in;
    else return a.x_pairs + t0 * (in / 2);
  }();
  const auto x_off = [&](int64_t k0) { return XM == XMode::kF32 ? k0 * C : k0 / 2 * C; };
  // Block b's parked accumulators (none when the rows are not split into column blocks).
  const auto park_at = [&](int64_t b) { return park ? park + (b - pb0) * C * kRowBlock : nullptr; };
  for (int64_t k0 = 0; k0 < in; k0 += kc) {
    const int64_t k1 = std::min(in, k0 + kc);
    int64_t b = pb0;
    for (; b + RB <= pb1; b += RB)
      FloatBlockTile<W, XM, RB, C>(a, xt + x_off(k0), t0, b, k0, k1, park_at(b), ahead, ahead_lines);
    // The rest in tiles of half as many blocks, then single blocks: a task of 2 blocks (a
    // decode task of long rows) would otherwise run one chain of FMAs at a time, and its
    // matrix streamed a third slower than the others.
    if constexpr (RB >= 4) {
      for (; b + RB / 2 <= pb1; b += RB / 2)
        FloatBlockTile<W, XM, RB / 2, C>(a, xt + x_off(k0), t0, b, k0, k1, park_at(b));
    }
    for (; b < pb1; ++b) FloatBlockTile<W, XM, 1, C>(a, xt + x_off(k0), t0, b, k0, k1, park_at(b));
  }
}

// Rows [r0, r1) (r0 a multiple of 16; r1 too, or the last row): panels of blocks whose
// weights stay in L2 while every token block uses them.
template <typename W, XMode XM>
void FloatBlockRowsT(const LinearArgs& a, int64_t r0, int64_t r1) {
  const int64_t in = a.w.cols;
  constexpr int64_t P = 4 / sizeof(W);
  // Tiles run along whole rows while a token block's packed x fits in half the L2 beside the
  // panel: the weights then stream as one sequential run per block. Column blocks (whose x
  // slice fills about 24 KB of L1) cut each block into short runs that the hardware
  // prefetchers start again and again: one 8192 x 2048 bf16 linear on two threads (Zen 5,
  // 1 MB L2) took 1.98 ms at 16 tokens in column blocks against 1.65 ms along whole rows,
  // 2.57 against 2.27 at 24, and no less at any token count from 13 to 128 or any shape
  // tried (f32 and bf16; 8192 x 2048, 2048 x 8192, 6912 x 1152).
  const int64_t x_block_bytes = std::min<int64_t>(a.T, kTokensF) * in * 4;
  const int64_t kc = x_block_bytes <= panel_bytes() ? in : std::max<int64_t>(P, (24 << 10) / (4 * kTokensF) / P * P);
  const int64_t b0 = r0 / kRowBlock, b1 = (r1 + kRowBlock - 1) / kRowBlock;
  const int64_t panel_blocks = std::max<int64_t>(1, a.panel_rows / kRowBlock);
  thread_local std::vector<float> park;
  if (kc < in) park.resize(static_cast<size_t>(std::min(panel_blocks, b1 - b0) * kTokensF * kRowBlock));
  for (int64_t pb0 = b0; pb0 < b1; pb0 += panel_blocks) {
    const int64_t pb1 = std::min(b1, pb0 + panel_blocks);
    // One token: more blocks per tile, so that several chains of FMAs are in flight (each
    // is latency-bound on its own).
    if (a.T == 1) {
      FloatTokenBlock<W, XM, 2 * kBlocksF, 1>(a, 1, 0, pb0, pb1, kc, park.data());
      continue;
    }
    if constexpr (kStreamTiles) {
      if (a.T <= kStreamTokens) {  // one token block (x packed as [step][T][P])
        FloatTokenBlock<W, XM, kStreamBlocks, kStreamTokens>(a, a.T, 0, pb0, pb1, kc, park.data());
        continue;
      }
    }
    const TokenBlocks blocks(a.T, kTokensF);
    if (kc < in || blocks.count < 2 || blocks.count > kAheadTokenBlocks) {
      for (int64_t i = 0; i < blocks.count; ++i)
        FloatTokenBlock<W, XM, kBlocksF, kTokensF>(a, blocks.size(i), blocks.start(i), pb0, pb1, kc, park.data());
      continue;
    }
    // A few token blocks (a short prompt after a restored prefix): tile by tile, each tile's
    // weights met by every token block in turn; the first streams them from memory, the
    // others read them from L2 while they fetch the next tile's into L2, so that the memory
    // stream overlaps the compute instead of running alone in every first pass.
    const int64_t later = blocks.count - 1, steps = in / P;
    const int64_t block_bytes = kRowBlock * in * static_cast<int64_t>(sizeof(W));
    for (int64_t b = pb0; b < pb1; b += kBlocksF) {
      const int64_t be = std::min(pb1, b + kBlocksF);
      const int64_t next_lines = (std::min(b1, be + kBlocksF) - be) * block_bytes / 64;
      const int64_t share = (next_lines + later - 1) / later;  // lines per later pass
      const char* next = static_cast<const char*>(a.w.data) + be * block_bytes;
      for (int64_t i = 0; i < blocks.count; ++i) {
        const bool fetch = i > 0 && next_lines > 0;
        FloatTokenBlock<W, XM, kBlocksF, kTokensF>(a, blocks.size(i), blocks.start(i), b, be, kc, park.data(),
                                                   fetch ? next + (i - 1) * share * 64 : nullptr,
                                                   fetch ? (share + steps - 1) / steps : 0);
      }
    }
  }
}

void FloatBlockRows(const LinearArgs& a, int64_t r0, int64_t r1) {
  if (a.x_pairs != nullptr) {  // XQuant::kBF16 over kBF16 weights (linear() checks)
    if (CpuHasDotBF16()) return FloatBlockRowsT<hwy::bfloat16_t, XMode::kBF16Native>(a, r0, r1);
    return FloatBlockRowsT<hwy::bfloat16_t, XMode::kBF16Fma>(a, r0, r1);
  }
  switch (a.w.type) {
    case StorageType::kF32: return FloatBlockRowsT<float, XMode::kF32>(a, r0, r1);
    case StorageType::kBF16: return FloatBlockRowsT<hwy::bfloat16_t, XMode::kF32>(a, r0, r1);
    case StorageType::kF16: return FloatBlockRowsT<hwy::float16_t, XMode::kF32>(a, r0, r1);
    default: return;
  }
}

// The whole linears (one x, weights of one type and width): x packed once per call for
// every task of every linear (a tile's broadcasts then come from one small sequential
// stream), then the rows over the pool. The token block at t0 (C
// tokens, TokenBlocks of kTokensF) becomes [in / P][C][P] at packed + t0 * in; one token's
// packed row is x itself.
void FloatBlockLinear(std::span<LinearArgs> as, ThreadPool* pool) {
  const LinearArgs& a = as[0];
  const int64_t in = a.w.cols, P = a.w.type == StorageType::kF32 ? 1 : 2;
  // Token blocks are packed in parallel: a scalar pass over x on one thread while the other
  // waited cost 20 % of a 512 x 2048 linear's time at 128 tokens (perf, bf16 x).
  const TokenBlocks blocks(a.T, kTokensF);
  auto each_block = [&](const auto& pack) {
    if (pool != nullptr && blocks.count > 1)
      pool->run(blocks.count, [&](int64_t i) { pack(blocks.start(i), blocks.size(i)); });
    else
      for (int64_t i = 0; i < blocks.count; ++i) pack(blocks.start(i), blocks.size(i));
  };
  if (a.bf16_x) {
    // Pairs of x rounded to bf16 (nearest-even; NaN stays NaN), [in / 2][C] per token block.
    thread_local std::vector<uint32_t> pairs;  // [T, in / 2]
    pairs.resize(static_cast<size_t>(a.T * (in / 2)));
    uint32_t* const out = pairs.data();  // (a thread_local named in the lambda would be the worker's)
    each_block([&](int64_t t0, int64_t C) {
      uint32_t* to = out + t0 * (in / 2);
      for (int64_t c = 0; c < C; ++c) {
        const float* x = a.x + (t0 + c) * in;
        PackBF16Pairs(x, in / 2, C, to + c);
      }
    });
    for (LinearArgs& l : as) l.x_pairs = out;
  } else if (a.T > 1) {
    thread_local std::vector<float> packed;  // [T, in]
    packed.resize(static_cast<size_t>(a.T * in));
    float* const out = packed.data();
    each_block([&](int64_t t0, int64_t C) {
      float* to = out + t0 * in;
      for (int64_t c = 0; c < C; ++c) {
        const float* x = a.x + (t0 + c) * in;
        for (int64_t p = 0; p < in / P; ++p)
          for (int64_t j = 0; j < P; ++j) to[(p * C + c) * P + j] = x[p * P + j];
      }
    });
    for (LinearArgs& l : as) l.x_packed = out;
  } else {
    for (LinearArgs& l : as) l.x_packed = l.x;
  }
  run_linears(&FloatBlockRows, as, pool);
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace og::kernels {

HWY_EXPORT(FloatBlockLinear);
HWY_EXPORT(HasDotBF16);

bool bf16_dot_native() { return HWY_DYNAMIC_DISPATCH(HasDotBF16)(); }

void linear_float_blocks(std::span<LinearArgs> as, ThreadPool* pool) { HWY_DYNAMIC_DISPATCH(FloatBlockLinear)(as, pool); }

}  // namespace og::kernels
#endif  // HWY_ONCE
