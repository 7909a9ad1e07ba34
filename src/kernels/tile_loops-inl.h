// The loop nest the linear kernels share (linear.cc, linear_quant.cc, linear_int8.cc), per
// Highway target: each kernel supplies only its register tile.
//
// Rows [r0, r1) of every token go in panels of panel_rows rows (whose weights stay in cache
// while every token block uses them); in a panel, blocks of at most kC tokens (TokenBlocks);
// in a block, column blocks of kc columns, each swept down the panel's rows in tiles of kR
// rows (then single rows). Between column blocks a tile parks its accumulators in `park`, park_lanes floats
// per row and token. Every accumulator lane thus sees the same operations in the same order
// whatever the thread count, token count or column blocking.
//
// tile.template operator()<R, C>(t0, r, k0, k1, park) computes rows [r, r + R) of tokens
// [t0, t0 + C) over columns [k0, k1): from 0 it starts its accumulators (else reloads them
// from park), and at `in` it writes y (else parks them).
#if defined(OG_KERNELS_TILE_LOOPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef OG_KERNELS_TILE_LOOPS_INL_H_
#undef OG_KERNELS_TILE_LOOPS_INL_H_
#else
#define OG_KERNELS_TILE_LOOPS_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <vector>

HWY_BEFORE_NAMESPACE();
namespace og::kernels {
namespace HWY_NAMESPACE {

// Tokens [t0, t0 + nt), nt <= C: the tile width is the block's token count.
template <int kR, int C, class TileFn>
HWY_INLINE void TileTokenBlock(const TileFn& tile, int64_t nt, int64_t t0, int64_t in, int64_t kc, int64_t park_lanes,
                               int64_t r0, int64_t r1, float* park) {
  if constexpr (C > 1) {
    if (nt < C) return TileTokenBlock<kR, C - 1>(tile, nt, t0, in, kc, park_lanes, r0, r1, park);
  }
  // Row r's parked accumulators (none when the rows are not split into column blocks).
  const auto park_at = [&](int64_t r) { return park ? park + (r - r0) * C * park_lanes : nullptr; };
  for (int64_t k0 = 0; k0 < in; k0 += kc) {
    const int64_t k1 = std::min(in, k0 + kc);
    int64_t r = r0;
    for (; r + kR <= r1; r += kR) tile.template operator()<kR, C>(t0, r, k0, k1, park_at(r));
    // The rest in tiles of half the rows, then single rows: a task's last rows (a decode
    // task of blocks is often 2-7 of them) would otherwise run one chain at a time.
    if constexpr (kR >= 4) {
      for (; r + kR / 2 <= r1; r += kR / 2) tile.template operator()<kR / 2, C>(t0, r, k0, k1, park_at(r));
    }
    for (; r < r1; ++r) tile.template operator()<1, C>(t0, r, k0, k1, park_at(r));
  }
}

template <int kR, int kC, class TileFn>
HWY_INLINE void ForEachTile(const TileFn& tile, int64_t T, int64_t in, int64_t kc, int64_t panel_rows, int64_t park_lanes,
                            int64_t r0, int64_t r1) {
  thread_local std::vector<float> park_buffer;
  float* park = nullptr;
  if (kc < in) {
    const size_t need = static_cast<size_t>(std::min(panel_rows, r1 - r0) * kC * park_lanes);
    if (park_buffer.size() < need) park_buffer.resize(need);
    park = park_buffer.data();
  }
  for (int64_t p0 = r0; p0 < r1; p0 += panel_rows) {
    const int64_t p1 = std::min(r1, p0 + panel_rows);
    const TokenBlocks blocks(T, kC);
    for (int64_t i = 0; i < blocks.count; ++i)
      TileTokenBlock<kR, kC>(tile, blocks.size(i), blocks.start(i), in, kc, park_lanes, p0, p1, park);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#endif  // OG_KERNELS_TILE_LOOPS_INL_H_
