// update_and_attend's two halves (DESIGN.md §2): write this step's k/v by position, then
// attend each query over the keys it may see, reading K/V in place from flat or ring
// storage with a running (one-pass) softmax, so no score buffer or gathered copy exists.
//
// A task is up to kMaxQueries queries of one kv head: a block of consecutive tokens times
// the query heads that share the kv head. Keys go in blocks of kBlock positions aligned to
// multiples of kBlock, and every load of a key or value row serves kTileQueries queries at
// once (prefill shares each block across tokens as well as heads). Per query and block:
// the block's scores (scale, softcap, keys outside the query's range masked), one rescale
// of the running sum and accumulator when the block raises the maximum, then the block's
// values. A head's sink (when the op has sinks) is the running softmax's starting state:
// maximum = sink, sum = e^0 = 1, no value; so it joins the denominator and the maximum
// exactly as a key with value 0 would.
//
// Two kernels, one arithmetic: keys in lanes (below; few queries, decode) and queries in
// lanes (attention_query_lanes-inl.h; tasks of 16 or more queries, prefill), which
// computes each query exactly as this one does.
//
// Arithmetic: a score is, per lane, a chain of FMAs over the head's vector chunks, then a
// fixed tree over the lanes (SumLanesOfBlock; a scalar tail adds columns past the last
// whole vector); the weights of a block are summed as a tree of adjacent pairs; a query's
// accumulator is a chain over its blocks' keys in position order, where a key of the block
// outside the query's range (valid for another query of the tile) adds 0 * v, which leaves
// it unchanged for any finite stored value. So one query's result depends only on its
// position and the stored keys, never on T, the task or the threads: decode equals prefill.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/convert.h"
#include "kernels/internal.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace og::kernels {
namespace HWY_NAMESPACE {

using DI = hn::RebindToSigned<DF>;

inline constexpr int kBlock = 16;         // keys per block: positions [16 j, 16 j + 16)
inline constexpr int kTileQueries = 8;    // queries sharing each key and value load
inline constexpr int64_t kLanes = static_cast<int64_t>(hn::MaxLanes(DF()));
inline constexpr int kKeyVecs = static_cast<int>(kBlock / kLanes);  // vectors of a block's scores
static_assert(kLanes <= kBlock && kBlock % kLanes == 0, "a block of scores must hold whole vectors");
static_assert(kMaxQueries % kTileQueries == 0);
// Lanes of keys outside a query's range: exp(kMasked - m) is exactly 0 for any finite m.
inline constexpr float kMasked = -1e30f;
// Each lane's key within a block, loaded as a vector: hn::Iota built it through 16 scalar
// stores and one vector load per call, a store-forwarding stall that took 6 % of prefill
// attention (perf).
HWY_ALIGN constexpr int32_t kKeyInBlock[kBlock] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

template <typename K>
inline constexpr bool kIsKvBlock = std::is_same_v<K, KvQ8Block> || std::is_same_v<K, KvQ4Block>;

// A cache row is head_dim values of K: float types one element per value, the block types
// (kv_blocks.h) one element per 32 values.
template <typename K>
constexpr int64_t RowUnits(int64_t D) {
  return kIsKvBlock<K> ? (D + kKvBlockValues - 1) / kKvBlockValues : D;
}

// A block's fp16 scale in every lane (F16C's vcvtph2ps where the target has it, where
// fp16_to_float's branches cost more than the block's arithmetic): the same float either way.
HWY_INLINE VF BlockScale(DF df, uint16_t d) {
  const hn::Rebind<uint16_t, DF> du16;
  return hn::PromoteTo(df, hn::BitCast(hn::Rebind<hwy::float16_t, DF>(), hn::Set(du16, d)));
}

// Values [i, i + kLanes) of a row as floats (i a multiple of kLanes, which divides a block:
// the lanes share one block and, for q4_0, one half of its bytes' nibbles). A block's values
// are exact in f32: d has 11 significant bits and q (or n - 8) at most 8, so d * q, and for
// q4_0 n d - 8 d with or without a fused multiply-add, round nowhere: every path here, in
// LoadBlock and in kv_block_value gives the same floats.
template <typename K>
HWY_INLINE VF LoadRow(DF df, const K* HWY_RESTRICT row, int64_t i) {
  if constexpr (std::is_same_v<K, KvQ8Block>) {
    const KvQ8Block& b = row[i / kKvBlockValues];
    const VF q = hn::ConvertTo(df, hn::PromoteTo(DI(), hn::LoadU(hn::Rebind<int8_t, DF>(), b.q + i % kKvBlockValues)));
    return hn::Mul(q, BlockScale(df, b.d));
  } else if constexpr (std::is_same_v<K, KvQ4Block>) {
    const KvQ4Block& b = row[i / kKvBlockValues];
    const int64_t j = i % kKvBlockValues;
    const DI di;
    auto bytes = hn::PromoteTo(di, hn::LoadU(hn::Rebind<uint8_t, DF>(), b.q + j % 16));
    bytes = j < 16 ? hn::And(bytes, hn::Set(di, 0xF)) : hn::ShiftRight<4>(bytes);
    const VF d = BlockScale(df, b.d);
    return hn::MulAdd(hn::ConvertTo(df, bytes), d, hn::Mul(d, hn::Set(df, -8.0f)));
  } else {
    return LoadF(df, row + i);
  }
}

// A whole block as kBlockVecs vectors (values c * kLanes + lane in vector c): one scale
// conversion per block, and for q4_0 one load of its bytes for both halves.
inline constexpr int kBlockVecs = static_cast<int>(kKvBlockValues / kLanes);
HWY_INLINE void LoadBlock(DF df, const KvQ8Block& b, VF* HWY_RESTRICT out) {
  const VF d = BlockScale(df, b.d);
  for (int c = 0; c < kBlockVecs; ++c)
    out[c] = hn::Mul(hn::ConvertTo(df, hn::PromoteTo(DI(), hn::LoadU(hn::Rebind<int8_t, DF>(), b.q + c * kLanes))), d);
}
HWY_INLINE void LoadBlock(DF df, const KvQ4Block& b, VF* HWY_RESTRICT out) {
  const DI di;
  const VF d = BlockScale(df, b.d), neg8d = hn::Mul(d, hn::Set(df, -8.0f));
  for (int c = 0; c < kBlockVecs / 2; ++c) {
    const auto bytes = hn::PromoteTo(di, hn::LoadU(hn::Rebind<uint8_t, DF>(), b.q + c * kLanes));
    out[c] = hn::MulAdd(hn::ConvertTo(df, hn::And(bytes, hn::Set(di, 0xF))), d, neg8d);
    out[c + kBlockVecs / 2] = hn::MulAdd(hn::ConvertTo(df, hn::ShiftRight<4>(bytes)), d, neg8d);
  }
}
static_assert(kKvBlockValues == 32 && 16 % kLanes == 0, "a vector of a row lies in one half of one block");

// part[b] holds key b's partial dot products, one per lane; out[b] becomes their sum, for
// the 16 keys at once: each round adds adjacent lanes of two vectors into one (ConcatEven
// + ConcatOdd of the pair), halving the vectors until each lane is one key's whole sum
// (key R * lanes + lane of vector R). 30 shuffles for 16 keys on AVX-512, against 16 lane
// reductions. part is overwritten.
HWY_INLINE void SumLanesOfBlock(DF df, VF* part, float* HWY_RESTRICT out) {
  int n = kBlock;
#if HWY_TARGET != HWY_SCALAR  // one lane: each vector is already a sum
  for (int64_t width = kLanes; width > 1; width /= 2, n /= 2)
    for (int j = 0; j < n / 2; ++j)
      part[j] = hn::Add(hn::ConcatEven(df, part[2 * j + 1], part[2 * j]), hn::ConcatOdd(df, part[2 * j + 1], part[2 * j]));
#endif
  for (int v = 0; v < n; ++v) hn::StoreU(part[v], df, out + v * kLanes);
}

// Rows [b0, b1] of a block of keys or values (rows[b]) as floats, row b at out + b * D, and
// fr[b] pointing there; float rows are used in place. So the tiles read floats whatever the
// cache stores: one copy of them per target rather than one per key type, and each row is
// converted once per task rather than once per tile of queries. The floats are the stored
// values exactly (LoadRow), so the tiles' arithmetic is the same for every type.
template <typename K>
HWY_INLINE void RowsAsFloats(const K* const* rows, int b0, int b1, int64_t D, StorageType type,
                             float* HWY_RESTRICT out, const float** fr) {
  if constexpr (std::is_same_v<K, float>) {
    for (int b = b0; b <= b1; ++b) fr[b] = rows[b];
  } else {
    const DF df;
    const int64_t whole = D / kLanes * kLanes;
    for (int b = b0; b <= b1; ++b) {
      float* HWY_RESTRICT o = out + b * D;
      int64_t i = 0;
      if constexpr (kIsKvBlock<K>) {  // whole blocks: one scale conversion and byte load each
        for (; i + kKvBlockValues <= whole; i += kKvBlockValues) {
          VF v[kBlockVecs];
          LoadBlock(df, rows[b][i / kKvBlockValues], v);
          for (int c = 0; c < kBlockVecs; ++c) hn::StoreU(v[c], df, o + i + c * kLanes);
        }
      }
      for (; i < whole; i += kLanes) hn::StoreU(LoadRow(df, rows[b], i), df, o + i);
      for (; i < D; ++i) o[i] = load(rows[b], i, type);
      fr[b] = o;
    }
  }
}

// Scores of Q queries (qp) for the block's keys [b0, b1] (krow), into w [Q][kBlock]; the
// block's other keys score 0 (no query sees them: each masks them).
template <int Q>
HWY_INLINE void ScoreTile(const float* const* qp, const float* const* krow, int b0, int b1, int64_t D,
                          float* HWY_RESTRICT w) {
  const DF df;
  const int64_t whole = D / kLanes * kLanes;
  HWY_ALIGN float part[Q][kBlock][kLanes];
  for (int b = 0; b < kBlock; ++b) {
    VF acc[Q];
    for (int q = 0; q < Q; ++q) acc[q] = hn::Zero(df);
    if (b >= b0 && b <= b1) {
      for (int64_t i = 0; i < whole; i += kLanes) {
        const VF k = hn::LoadU(df, krow[b] + i);
        for (int q = 0; q < Q; ++q) acc[q] = hn::MulAdd(hn::LoadU(df, qp[q] + i), k, acc[q]);
      }
    }
    for (int q = 0; q < Q; ++q) hn::Store(acc[q], df, part[q][b]);
  }
  for (int q = 0; q < Q; ++q) {
    VF v[kBlock];
    for (int b = 0; b < kBlock; ++b) v[b] = hn::Load(df, part[q][b]);
    SumLanesOfBlock(df, v, w + q * kBlock);
    if (whole == D) continue;
    for (int b = b0; b <= b1; ++b) {
      float tail = 0;
      for (int64_t i = whole; i < D; ++i) tail += qp[q][i] * krow[b][i];
      w[q * kBlock + b] += tail;
    }
  }
}

// acc[q] += sum over keys b in [b0, b1] of w[q][b] * v_b, for Q queries: each load of a
// value chunk serves every query.
template <int Q>
HWY_INLINE void ValueTile(float* const* acc, const float* HWY_RESTRICT w, const float* const* vrow, int b0, int b1,
                          int64_t D) {
  const DF df;
  int64_t i = 0;
  for (; i + kLanes <= D; i += kLanes) {
    VF a[Q];
    for (int q = 0; q < Q; ++q) a[q] = hn::LoadU(df, acc[q] + i);
    for (int b = b0; b <= b1; ++b) {
      const VF v = hn::LoadU(df, vrow[b] + i);
      for (int q = 0; q < Q; ++q) a[q] = hn::MulAdd(hn::Set(df, w[q * kBlock + b]), v, a[q]);
    }
    for (int q = 0; q < Q; ++q) hn::StoreU(a[q], df, acc[q] + i);
  }
  for (; i < D; ++i)
    for (int b = b0; b <= b1; ++b) {
      const float v = vrow[b][i];
      for (int q = 0; q < Q; ++q) acc[q][i] += w[q * kBlock + b] * v;
    }
}

// fn(std::integral_constant<int, n>) for a tile of n <= Q queries: tiles of a compile-time
// size keep their accumulators in registers.
template <int Q, class Fn>
HWY_INLINE void ForTile(int n, const Fn& fn) {
  if constexpr (Q > 1) {
    if (n < Q) return ForTile<Q - 1>(n, fn);
  }
  fn(std::integral_constant<int, Q>());
}

// The sum of n values (a power of two) as a tree of adjacent pairs: ((x0 + x1) + (x2 + x3)) +
// ...; of scalars (one query's block of weights) or of vectors (a block's weights, one
// query per lane), which gives the same bits per lane.
template <int n, typename T>
HWY_INLINE T PairSum(const T* x) {
  if constexpr (n == 1) {
    return x[0];
  } else {
    return PairSum<n / 2>(x) + PairSum<n / 2>(x + n / 2);
  }
}

// One query's running softmax over a block whose scores are in w [kBlock] (keys j0 ..):
// keys outside [first, pos] masked, the state (m, l, acc [D]) rescaled when the block
// raises the maximum, w turned into the block's weights e^(s - m).
HWY_INLINE void SoftmaxBlock(const AttendParams& p, int64_t j0, int64_t first, int64_t pos, float* HWY_RESTRICT w,
                             float& m, float& l, float* HWY_RESTRICT acc) {
  const DF df;
  const DI di;
  const VF vscale = hn::Set(df, p.scale), vmasked = hn::Set(df, kMasked);
  const VF vcap = hn::Set(df, p.softcap), vinv_cap = hn::Set(df, p.softcap > 0 ? 1.0f / p.softcap : 0.0f);
  // Keys j0 + b with first <= j0 + b <= pos.
  const auto lo = hn::Set(di, static_cast<int32_t>(first - j0 - 1)), hi = hn::Set(di, static_cast<int32_t>(pos - j0 + 1));
  VF s[kKeyVecs];
  VF vmax = vmasked;
  for (int v = 0; v < kKeyVecs; ++v) {
    VF x = hn::Mul(hn::LoadU(df, w + v * kLanes), vscale);
    if (p.softcap > 0) x = hn::Mul(vcap, hn::Tanh(df, hn::Mul(x, vinv_cap)));
    const auto b = hn::Load(di, kKeyInBlock + v * kLanes);
    s[v] = hn::IfThenElse(hn::RebindMask(df, hn::And(hn::Gt(b, lo), hn::Lt(b, hi))), x, vmasked);
    vmax = hn::Max(vmax, s[v]);
  }
  const float mb = hn::GetLane(hn::MaxOfLanes(df, vmax));
  // Running softmax: rescale what was accumulated when the maximum rises.
  if (mb > m) {
    const float c = std::exp(m - mb);  // 0 for the first block (m = -inf) without a sink
    l *= c;
    const VF vc = hn::Set(df, c);
    int64_t i = 0;
    for (; i + kLanes <= p.head_dim; i += kLanes) hn::StoreU(hn::Mul(hn::LoadU(df, acc + i), vc), df, acc + i);
    for (; i < p.head_dim; ++i) acc[i] *= c;
    m = mb;
  }
  const VF vm = hn::Set(df, m);
  for (int v = 0; v < kKeyVecs; ++v) hn::StoreU(hn::Exp(df, hn::Sub(s[v], vm)), df, w + v * kLanes);
  l += PairSum<kBlock>(w);
}

// One task's queries: tokens [t0, t1) x heads [h0, h0 + G) of kv head kvh, token-major.
struct TaskQueries {
  int64_t t0, t1;
  int32_t kvh, h0, G;
  int nq;
  int64_t pos[kMaxQueries], first[kMaxQueries];  // the keys [first, pos] each query sees
  const float* qp[kMaxQueries];
  float m[kMaxQueries], l[kMaxQueries];  // running maximum and sum, from the head's sink
};

HWY_INLINE void TaskGeometry(const AttendArgs& a, int64_t task, TaskQueries& tq) {
  const AttendParams& p = *a.p;
  const int64_t D = p.head_dim, width = int64_t{p.n_heads} * D;
  const int32_t group = p.n_heads / p.n_kv_heads;
  const int32_t per_kv = (group + a.heads_per_task - 1) / a.heads_per_task;
  const int64_t per_tokens = int64_t{p.n_kv_heads} * per_kv;
  const int64_t token_blocks = (a.T + a.tokens_per_task - 1) / a.tokens_per_task;
  // Later tokens see more keys: their tasks come first, so the last tasks are short.
  tq.t0 = (token_blocks - 1 - task / per_tokens) * a.tokens_per_task;
  tq.t1 = std::min(a.T, tq.t0 + a.tokens_per_task);
  const int32_t rem = static_cast<int32_t>(task % per_tokens);
  tq.kvh = rem / per_kv;
  tq.h0 = tq.kvh * group + (rem % per_kv) * a.heads_per_task;
  tq.G = std::min(tq.kvh * group + group, tq.h0 + a.heads_per_task) - tq.h0;
  tq.nq = static_cast<int>((tq.t1 - tq.t0) * tq.G);
  for (int q = 0; q < tq.nq; ++q) {
    const int64_t t = tq.t0 + q / tq.G;
    const int32_t h = tq.h0 + q % tq.G;
    tq.qp[q] = a.q + t * width + int64_t{h} * D;
    tq.pos[q] = a.p0 + t;
    tq.first[q] = p.window > 0 ? std::max<int64_t>(0, tq.pos[q] - p.window + 1) : 0;
    tq.m[q] = p.sinks ? p.sinks[h] : -std::numeric_limits<float>::infinity();
    tq.l[q] = p.sinks ? 1.0f : 0.0f;
  }
}

// Calls fn(j0, b0, b1, qa, qb, krow, vrow) for each block of keys some query of the task
// sees: keys j0 + [b0, b1] (rows krow[b], vrow[b]), seen by queries [qa, qb).
template <typename K, class Fn>
HWY_INLINE void ForEachKeyBlock(const KvStorage& kv, const TaskQueries& tq, const Fn& fn) {
  const int64_t units = RowUnits<K>(kv.head_dim);  // elements of K per row
  const K* kbase = static_cast<const K*>(kv.k) + int64_t{tq.kvh} * kv.slots * units;
  const K* vbase = static_cast<const K*>(kv.v) + int64_t{tq.kvh} * kv.slots * units;
  const int nq = tq.nq;
  const int64_t lo = tq.first[0], hi = tq.pos[nq - 1];  // keys any query of the task sees
  const K* krow[kBlock];
  const K* vrow[kBlock];
  for (int64_t j0 = lo / kBlock * kBlock; j0 <= hi; j0 += kBlock) {
    const int b0 = static_cast<int>(std::max(lo, j0) - j0), b1 = static_cast<int>(std::min(hi, j0 + kBlock - 1) - j0);
    for (int b = b0; b <= b1; ++b) {
      const int64_t off = kv.slot(j0 + b) * units;
      krow[b] = kbase + off;
      vrow[b] = vbase + off;
    }
    // Queries with a key in the block: positions and first keys rise with the query index.
    int qa = 0, qb = nq;
    while (qa < nq && tq.pos[qa] < j0) ++qa;
    while (qb > qa && tq.first[qb - 1] > j0 + kBlock - 1) --qb;
    fn(j0, b0, b1, qa, qb, krow, vrow);
  }
}

// Queries [qa, qb) of a task over one block of keys j0 + [b0, b1] (rows kr, vr as floats):
// scores, running softmax, values. Not inlined: one copy per target serves every key type
// (the tiles unrolled for each query count are most of this file's code).
HWY_NOINLINE void KeysInLanesBlock(const AttendParams& p, TaskQueries& tq, int64_t j0, int b0, int b1, int qa, int qb,
                                   const float* const* kr, const float* const* vr, float* HWY_RESTRICT w,
                                   float* const* acc) {
  const int64_t D = p.head_dim;
  for (int q = qa; q < qb; q += kTileQueries)
    ForTile<kTileQueries>(qb - q, [&](auto n) HWY_ATTR {
      ScoreTile<decltype(n)::value>(tq.qp + q, kr, b0, b1, D, w + q * kBlock);
    });
  for (int q = qa; q < qb; ++q) SoftmaxBlock(p, j0, tq.first[q], tq.pos[q], w + q * kBlock, tq.m[q], tq.l[q], acc[q]);
  for (int q = qa; q < qb; q += kTileQueries)
    ForTile<kTileQueries>(qb - q, [&](auto n) HWY_ATTR {
      ValueTile<decltype(n)::value>(acc + q, w + q * kBlock, vr, b0, b1, D);
    });
}

// A task of few queries (decode): one query's scores per lane sum, keys in lanes.
template <typename K>
void AttendKeysInLanes(const AttendArgs& a, TaskQueries& tq) {
  const AttendParams& p = *a.p;
  const KvStorage& kv = *a.kv;
  const int64_t D = p.head_dim, width = int64_t{p.n_heads} * D;
  const int nq = tq.nq;
  float* acc[kMaxQueries];
  thread_local std::vector<float> acc_mem;  // [nq, D]
  acc_mem.assign(static_cast<size_t>(nq * D), 0.0f);
  for (int q = 0; q < nq; ++q) acc[q] = acc_mem.data() + q * D;
  HWY_ALIGN float w[kMaxQueries * kBlock];  // [nq][kBlock]: scores, then weights
  thread_local std::vector<float> rows_mem;  // the block's keys and values as floats [2][kBlock][D]
  float* kf = nullptr;
  float* vf = nullptr;
  if constexpr (!std::is_same_v<K, float>) {
    rows_mem.resize(static_cast<size_t>(2 * kBlock * D));
    kf = rows_mem.data();
    vf = kf + kBlock * D;
  }
  const float* kr[kBlock];
  const float* vr[kBlock];
  ForEachKeyBlock<K>(kv, tq, [&](int64_t j0, int b0, int b1, int qa, int qb, const K* const* krow,
                                 const K* const* vrow) HWY_ATTR {
    RowsAsFloats(krow, b0, b1, D, kv.type, kf, kr);
    RowsAsFloats(vrow, b0, b1, D, kv.type, vf, vr);
    KeysInLanesBlock(p, tq, j0, b0, b1, qa, qb, kr, vr, w, acc);
  });
  const DF df;
  for (int q = 0; q < nq; ++q) {
    const int64_t t = tq.t0 + q / tq.G;
    float* out = a.out + t * width + int64_t{tq.h0 + q % tq.G} * D;
    const float inv = 1.0f / tq.l[q];
    const VF vinv = hn::Set(df, inv);
    int64_t i = 0;
    for (; i + kLanes <= D; i += kLanes) hn::StoreU(hn::Mul(hn::LoadU(df, acc[q] + i), vinv), df, out + i);
    for (; i < D; ++i) out[i] = acc[q][i] * inv;
  }
}

#include "kernels/attention_query_lanes-inl.h"

template <typename K>
void AttendTaskT(const AttendArgs& a, int64_t task) {
  TaskQueries tq;
  TaskGeometry(a, task, tq);
  // Both kernels compute each query's result in the same arithmetic: the choice is free.
  if (QueryLanesFit(tq.nq, a.p->head_dim)) return AttendQueriesInLanes<K>(a, tq);
  AttendKeysInLanes<K>(a, tq);
}

void AttendTask(const AttendArgs& a, int64_t task) {
  switch (a.kv->type) {
    case StorageType::kF32: return AttendTaskT<float>(a, task);
    case StorageType::kBF16: return AttendTaskT<hwy::bfloat16_t>(a, task);
    case StorageType::kF16: return AttendTaskT<hwy::float16_t>(a, task);
    case StorageType::kQ8_0: return AttendTaskT<KvQ8Block>(a, task);
    case StorageType::kQ4_0: return AttendTaskT<KvQ4Block>(a, task);
    default: return;  // group-quantized weight types are never a cache's (parse_kv_dtype)
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace og::kernels {

HWY_EXPORT(AttendTask);

void kv_write(const float* k, const float* v, int64_t T, int64_t p0, const KvStorage& kv) {
  const int64_t D = kv.head_dim, width = int64_t{kv.kv_heads} * D;
  const auto row = static_cast<size_t>(kv_row_bytes(kv.type, D));
  for (int64_t t = 0; t < T; ++t) {
    const int64_t slot = kv.slot(p0 + t);
    for (int32_t h = 0; h < kv.kv_heads; ++h) {
      const size_t dst = (static_cast<size_t>(h) * static_cast<size_t>(kv.slots) + static_cast<size_t>(slot)) * row;
      uint8_t* kd = static_cast<uint8_t*>(kv.k) + dst;
      uint8_t* vd = static_cast<uint8_t*>(kv.v) + dst;
      const float* ks = k + t * width + int64_t{h} * D;
      const float* vs = v + t * width + int64_t{h} * D;
      switch (kv.type) {
        case StorageType::kF32:
          std::memcpy(kd, ks, row);
          std::memcpy(vd, vs, row);
          break;
        case StorageType::kQ8_0:
          quantize_kv_row(ks, D, reinterpret_cast<KvQ8Block*>(kd));
          quantize_kv_row(vs, D, reinterpret_cast<KvQ8Block*>(vd));
          break;
        case StorageType::kQ4_0:
          quantize_kv_row(ks, D, reinterpret_cast<KvQ4Block*>(kd));
          quantize_kv_row(vs, D, reinterpret_cast<KvQ4Block*>(vd));
          break;
        default:
          for (int64_t i = 0; i < D; ++i) {
            store(kd, i, kv.type, ks[i]);
            store(vd, i, kv.type, vs[i]);
          }
      }
    }
  }
}

void attend(const AttendParams& p, const float* q, int64_t T, int64_t p0, const KvStorage& kv, float* out,
            ThreadPool* pool) {
  if (T <= 0) return;
  const auto task_fn = &HWY_DYNAMIC_DISPATCH(AttendTask);
  const int32_t group = p.n_heads / p.n_kv_heads;
  const int threads = pool ? pool->size() : 1;
  // A task: up to kMaxQueries queries of one kv head, as many tokens as fit beside the
  // heads of the group (they share each key and value load); fewer tokens, then fewer
  // heads, when that leaves too few tasks for the threads (a query's result does not depend
  // on its task).
  int32_t heads = std::min<int32_t>(group, kMaxQueries);
  int64_t tokens = std::clamp<int64_t>(kMaxQueries / heads, 1, T);
  auto n_tasks = [&] { return (T + tokens - 1) / tokens * p.n_kv_heads * ((group + heads - 1) / heads); };
  while (tokens > 1 && n_tasks() < 4 * threads) tokens = (tokens + 1) / 2;
  // A block-quantized cache is dequantized once per task for all its queries: there, split
  // heads only until each thread has a task (one kv head of 4 query heads at decode, 2 threads:
  // 2 tasks of 2 heads, not 4 of 1, each dequantizing every key again).
  const int64_t min_tasks = (kv_block_bytes(kv.type) > 0 ? 1 : 2) * threads;
  while (heads > 1 && n_tasks() < min_tasks) heads = (heads + 1) / 2;
  const AttendArgs a{.p = &p, .q = q, .T = T, .p0 = p0, .kv = &kv, .out = out, .heads_per_task = heads,
                     .tokens_per_task = tokens};
  if (pool == nullptr) {
    for (int64_t task = 0; task < n_tasks(); ++task) task_fn(a, task);
    return;
  }
  pool->run(n_tasks(), [&](int64_t task) { task_fn(a, task); });
}

}  // namespace og::kernels
#endif  // HWY_ONCE
