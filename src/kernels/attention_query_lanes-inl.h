// Included by attention.cc inside its per-target namespace, after the keys-in-lanes kernel
// whose helpers (kBlock, kLanes, kMasked, kKeyInBlock, PairSum, ForEachKeyBlock, RowsAsFloats)
// it uses.
//
// A task of many queries (prefill) puts one query in each lane: the scores of a key for
// kLanes queries are one vector, so the softmax runs across queries with no reduction
// across lanes, a key's value row is read as broadcasts, and the queries (transposed once
// per task, qt [D][kLanes]) are reused by every block of keys.
//
// The arithmetic is the keys-in-lanes kernel's, per query: a score is kLanes chains of
// FMAs (chain l over columns l, l + kLanes, ...) summed as PairSum's tree; the block's
// weights are summed by PairSum; a query's accumulator is a chain over the block's keys in
// order. A rescale multiplies the queries whose maximum did not rise by exactly 1. So a
// query's result is the same bits whichever kernel its task ran (decode equals prefill).
// Lanes of queries with no key in the block take weight 0 and keep their maximum.

// Whether a task of nq queries runs with queries in lanes: enough queries to fill most
// lanes of a vector, and a head that is whole vectors (the other kernel adds a tail).
HWY_INLINE bool QueryLanesFit(int nq, int64_t D) { return kLanes >= 4 && nq >= kLanes && D % kLanes == 0; }

// Keys per score tile (each query load serves them all) and value columns per tile.
inline constexpr int kLaneKeys = kManyRegisters ? 4 : 2;
inline constexpr int kLaneCols = 8;

// out[k] = the scores of keys kr[k] (k < KB) for the kLanes queries of qt [D][kLanes],
// over the chains of lanes [l0, l0 + n): PairSum<n> of chain l over columns c kLanes + l.
// C > 0 is the head's chunk count known at compile time (the chains unroll); 0 reads chunks.
template <int KB, int n, int C>
HWY_INLINE void LaneScores(const float* HWY_RESTRICT qt, const float* const* kr, int64_t chunks, int l0, VF* out) {
  const DF df;
  if constexpr (n == 1) {
    VF acc[KB];
    for (int k = 0; k < KB; ++k) acc[k] = hn::Zero(df);
    const int64_t nc = C > 0 ? C : chunks;
    HWY_UNROLL(4)
    for (int64_t c = 0; c < nc; ++c) {
      const int64_t i = c * kLanes + l0;
      const VF qv = hn::Load(df, qt + i * kLanes);
      for (int k = 0; k < KB; ++k) acc[k] = hn::MulAdd(qv, hn::Set(df, kr[k][i]), acc[k]);
    }
    for (int k = 0; k < KB; ++k) out[k] = acc[k];
  } else {
    VF lo[KB], hi[KB];
    LaneScores<KB, n / 2, C>(qt, kr, chunks, l0, lo);
    LaneScores<KB, n / 2, C>(qt, kr, chunks, l0 + n / 2, hi);
    for (int k = 0; k < KB; ++k) out[k] = hn::Add(lo[k], hi[k]);
  }
}

// The scores s[b] of keys [b0, b1] (C as in LaneScores).
template <int C>
HWY_INLINE void BlockScores(const float* HWY_RESTRICT qt, const float* const* kr, int64_t chunks, int b0, int b1,
                            VF* s) {
  constexpr int n = static_cast<int>(kLanes);
  int b = b0;
  for (; b + kLaneKeys <= b1 + 1; b += kLaneKeys) LaneScores<kLaneKeys, n, C>(qt, kr + b, chunks, 0, s + b);
  for (; b <= b1; ++b) LaneScores<1, n, C>(qt, kr + b, chunks, 0, s + b);
}

// fn(integral_constant<int, u>) for u = 0 .. U - 1 as straight-line code: an array of
// accumulators indexed by constants stays in registers, where GCC turned a loop of loads
// into a memcpy to the stack and kept the accumulators there (perf).
template <int... u, class Fn>
HWY_INLINE void UnrollSeq(std::integer_sequence<int, u...>, const Fn& fn) {
  (fn(std::integral_constant<int, u>()), ...);
}
template <int U, class Fn>
HWY_INLINE void Unroll(const Fn& fn) {
  UnrollSeq(std::make_integer_sequence<int, U>(), fn);
}

// acc [D][kLanes] = acc c + e[k] v_k[i] over keys k = b0 .. b1 in order (c: the lanes'
// rescale factors, or none), kLaneCols columns at a time.
HWY_INLINE void LaneValues(const float (*HWY_RESTRICT e)[kLanes], const float* const* vr, int b0, int b1, int64_t D,
                           const VF* c, float* HWY_RESTRICT acc) {
  const DF df;
  int64_t i = 0;
  for (; i + kLaneCols <= D; i += kLaneCols) {
    VF a[kLaneCols];
    float* HWY_RESTRICT at = acc + i * kLanes;
    Unroll<kLaneCols>([&](auto u) HWY_ATTR { a[u] = hn::Load(df, at + u * kLanes); });
    if (c != nullptr) Unroll<kLaneCols>([&](auto u) HWY_ATTR { a[u] = hn::Mul(a[u], *c); });
    for (int k = b0; k <= b1; ++k) {
      const VF ek = hn::Load(df, e[k]);
      const float* HWY_RESTRICT v = vr[k] + i;
      Unroll<kLaneCols>([&](auto u) HWY_ATTR { a[u] = hn::MulAdd(ek, hn::Set(df, v[u]), a[u]); });
    }
    Unroll<kLaneCols>([&](auto u) HWY_ATTR { hn::Store(a[u], df, at + u * kLanes); });
  }
  for (; i < D; ++i) {
    VF a = hn::Load(df, acc + i * kLanes);
    if (c != nullptr) a = hn::Mul(a, *c);
    for (int k = b0; k <= b1; ++k) a = hn::MulAdd(hn::Load(df, e[k]), hn::Set(df, vr[k][i]), a);
    hn::Store(a, df, acc + i * kLanes);
  }
}

// The running state of kLanes queries: maximum, sum, and the accumulator acc [D][kLanes].
struct LaneGroup {
  float* qt;   // [D][kLanes]
  float* acc;  // [D][kLanes]
  float* m;    // [kLanes]
  float* l;    // [kLanes]
  const int64_t* pos;
  const int64_t* first;
  int64_t min_pos, max_first;  // over the group's lanes
};

// One block of keys j0 + [b0, b1] (rows kr, vr as floats) for one group of queries. Not
// inlined: one copy per target serves every key type.
HWY_NOINLINE void LaneBlock(const AttendParams& p, const LaneGroup& g, int64_t j0, int b0, int b1,
                          const float* const* kr, const float* const* vr) {
  const DF df;
  const DI di;
  const int64_t D = p.head_dim, chunks = D / kLanes;
  HWY_ALIGN float e[kBlock][kLanes];  // the block's weights, key by key
  // Scores, scaled and soft-capped; keys outside each query's range masked.
  VF s[kBlock];
  const VF vmasked = hn::Set(df, kMasked);
  for (int b = 0; b < b0; ++b) s[b] = vmasked;
  for (int b = b1 + 1; b < kBlock; ++b) s[b] = vmasked;
  // The common head sizes unroll their chains.
  switch (D) {  // a multiple of kLanes (QueryLanesFit)
    case 64: BlockScores<64 / kLanes>(g.qt, kr, chunks, b0, b1, s); break;
    case 128: BlockScores<128 / kLanes>(g.qt, kr, chunks, b0, b1, s); break;
    case 256: BlockScores<256 / kLanes>(g.qt, kr, chunks, b0, b1, s); break;
    default: BlockScores<0>(g.qt, kr, chunks, b0, b1, s);
  }
  // A block every query of the group sees whole (all but the diagonal blocks of a causal
  // prefill) needs no masks: every key is in range, every query active.
  const bool whole = g.min_pos >= j0 + kBlock - 1 && g.max_first <= j0;
  // Else each query's keys as block offsets: key k is in range when lo < k < hi (clamped
  // to [-2, kBlock + 1]); a query is active when one of the block's keys is.
  HWY_ALIGN int32_t lo[kLanes], hi[kLanes], act[kLanes];
  for (int64_t q = 0; q < kLanes && !whole; ++q) {
    const int64_t first = g.first[q] - j0, last = g.pos[q] - j0;
    lo[q] = static_cast<int32_t>(std::clamp<int64_t>(first - 1, -2, kBlock + 1));
    hi[q] = static_cast<int32_t>(std::clamp<int64_t>(last + 1, -2, kBlock + 1));
    act[q] = std::max<int64_t>(first, 0) <= std::min<int64_t>(last, kBlock - 1) ? 1 : 0;
  }
  const VF vscale = hn::Set(df, p.scale);
  const VF vcap = hn::Set(df, p.softcap), vinv_cap = hn::Set(df, p.softcap > 0 ? 1.0f / p.softcap : 0.0f);
  VF vmax = vmasked;
  for (int k = b0; k <= b1; ++k) {
    VF x = hn::Mul(s[k], vscale);
    if (p.softcap > 0) x = hn::Mul(vcap, hn::Tanh(df, hn::Mul(x, vinv_cap)));
    if (!whole) {
      const auto vk = hn::Set(di, k);
      x = hn::IfThenElse(hn::RebindMask(df, hn::And(hn::Gt(vk, hn::Load(di, lo)), hn::Lt(vk, hn::Load(di, hi)))), x,
                         vmasked);
    }
    s[k] = x;
    vmax = hn::Max(vmax, x);
  }
  // Queries with a key in the block; of those, the ones whose maximum rises.
  const auto active =
      whole ? hn::FirstN(df, kLanes) : hn::RebindMask(df, hn::Gt(hn::Load(di, act), hn::Zero(di)));
  VF vm = hn::Load(df, g.m);
  const auto raised = hn::And(active, hn::Gt(vmax, vm));
  // The accumulators' factors when a maximum rises (1 for the other lanes: exact), applied
  // as the value pass loads them.
  std::optional<VF> rescale;
  if (!hn::AllFalse(df, raised)) {
    HWY_ALIGN float mb[kLanes], c[kLanes];
    HWY_ALIGN int32_t up[kLanes];
    hn::Store(vmax, df, mb);
    hn::Store(hn::VecFromMask(di, hn::RebindMask(di, raised)), di, up);
    for (int64_t q = 0; q < kLanes; ++q) {
      c[q] = 1.0f;
      if (up[q] == 0) continue;
      c[q] = std::exp(g.m[q] - mb[q]);  // 0 for the first block (m = -inf) without a sink
      g.l[q] *= c[q];
      g.m[q] = mb[q];
    }
    rescale = hn::Load(df, c);
    vm = hn::Load(df, g.m);
  }
  for (int k = 0; k < kBlock; ++k) {
    const VF ek = hn::Exp(df, hn::Sub(s[k], vm));
    hn::Store(whole ? ek : hn::IfThenElseZero(active, ek), df, e[k]);
  }
  VF ev[kBlock];
  for (int k = 0; k < kBlock; ++k) ev[k] = hn::Load(df, e[k]);
  hn::Store(hn::Add(hn::Load(df, g.l), PairSum<kBlock>(ev)), df, g.l);
  LaneValues(e, vr, b0, b1, D, rescale ? &*rescale : nullptr, g.acc);
}

template <typename K>
void AttendQueriesInLanes(const AttendArgs& a, TaskQueries& tq) {
  const DF df;
  const AttendParams& p = *a.p;
  const KvStorage& kv = *a.kv;
  const int64_t D = p.head_dim, width = int64_t{p.n_heads} * D;
  const int nq = tq.nq, groups = static_cast<int>((nq + kLanes - 1) / kLanes);
  // Per group: qt and acc [D][kLanes]; then the block's keys and values as floats [kBlock][D]
  // (used when the cache stores 16-bit or block-quantized values).
  thread_local std::vector<float> mem;
  const int64_t group_floats = 2 * D * kLanes;
  mem.assign(static_cast<size_t>(groups * group_floats + 2 * kBlock * D + kLanes), 0.0f);
  float* base = mem.data() + (kLanes - reinterpret_cast<uintptr_t>(mem.data()) / sizeof(float) % kLanes) % kLanes;
  float* kf = base + groups * group_floats;
  float* vf = kf + kBlock * D;
  // Lanes past the last query: no keys (pos -1), state that never changes.
  HWY_ALIGN int64_t pos[kMaxQueries], first[kMaxQueries];
  HWY_ALIGN float m[kMaxQueries], l[kMaxQueries];
  LaneGroup g[kMaxQueries / 4];
  for (int q = 0; q < groups * kLanes; ++q) {
    pos[q] = q < nq ? tq.pos[q] : -1;
    first[q] = q < nq ? tq.first[q] : 0;
    m[q] = q < nq ? tq.m[q] : 0.0f;
    l[q] = q < nq ? tq.l[q] : 1.0f;
  }
  for (int gi = 0; gi < groups; ++gi) {
    float* qt = base + gi * group_floats;
    const int64_t* gpos = pos + gi * kLanes;
    const int64_t* gfirst = first + gi * kLanes;
    g[gi] = LaneGroup{.qt = qt, .acc = qt + D * kLanes, .m = m + gi * kLanes, .l = l + gi * kLanes, .pos = gpos,
                      .first = gfirst, .min_pos = *std::min_element(gpos, gpos + kLanes),
                      .max_first = *std::max_element(gfirst, gfirst + kLanes)};
    // Row i of qt is column i of the group's queries: one line written at a time.
    const int lanes = static_cast<int>(std::min<int64_t>(kLanes, nq - gi * kLanes));
    const float* const* qp = tq.qp + gi * kLanes;
    for (int64_t i = 0; i < D; ++i)
      for (int lane = 0; lane < lanes; ++lane) qt[i * kLanes + lane] = qp[lane][i];
  }
  const float* kr[kBlock];
  const float* vr[kBlock];
  ForEachKeyBlock<K>(kv, tq, [&](int64_t j0, int b0, int b1, int qa, int qb, const K* const* krow,
                                 const K* const* vrow) HWY_ATTR {
    RowsAsFloats(krow, b0, b1, D, kv.type, kf, kr);
    RowsAsFloats(vrow, b0, b1, D, kv.type, vf, vr);
    for (int gi = qa / static_cast<int>(kLanes); gi * kLanes < qb; ++gi) LaneBlock(p, g[gi], j0, b0, b1, kr, vr);
  });
  // out = acc / l, row i of acc (one line) at a time.
  for (int gi = 0; gi < groups; ++gi) {
    const int lanes = static_cast<int>(std::min<int64_t>(kLanes, nq - gi * kLanes));
    float* out[kLanes];
    for (int lane = 0; lane < lanes; ++lane) {
      const int q = gi * static_cast<int>(kLanes) + lane;
      out[lane] = a.out + (tq.t0 + q / tq.G) * width + int64_t{tq.h0 + q % tq.G} * D;
    }
    const VF inv = hn::Div(hn::Set(df, 1.0f), hn::Load(df, g[gi].l));
    HWY_ALIGN float row[kLanes];
    for (int64_t i = 0; i < D; ++i) {
      hn::Store(hn::Mul(hn::Load(df, g[gi].acc + i * kLanes), inv), df, row);
      for (int lane = 0; lane < lanes; ++lane) out[lane][i] = row[lane];
    }
  }
}
