#include "runtime/cache/cache_set.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "runtime/cache/cache_file.h"

namespace og::runtime {


uint64_t CacheSetPlan::row_bytes(int32_t c) const {
  const auto i = static_cast<size_t>(c);
  return static_cast<uint64_t>(kv_heads[i]) * static_cast<uint64_t>(kv_row_bytes(kv_type, head_dims[i]));
}

uint64_t CacheSetPlan::slot_bytes(int32_t c) const { return (one_copy(c) ? 1ull : 2ull) * row_bytes(c); }

uint64_t CacheSetPlan::position_bytes() const {
  uint64_t total = 0;
  for (int32_t c = 0; c < n_caches(); ++c) total += slot_bytes(c);
  return total;
}

uint64_t CacheSetPlan::bytes() const {
  uint64_t total = 0;
  for (int32_t c = 0; c < n_caches(); ++c) total += slot_bytes(c) * static_cast<uint64_t>(policies[static_cast<size_t>(c)].slots);
  return total;
}

CacheSetPlan plan_cache_set(const program::CacheLayout& layout, StorageType kv_type, int64_t max_ctx_len,
                            int64_t prefill_chunk_size) {
  CacheSetPlan p;
  p.kv_type = kv_type;
  p.max_ctx_len = max_ctx_len;
  p.chunk = std::min(prefill_chunk_size, max_ctx_len);  // no step can be longer than the context
  for (int32_t c = 0; c < layout.n_caches(); ++c) {
    p.policies.push_back(plan_cache(layout.windows[c], max_ctx_len, p.chunk));
    p.kv_heads.push_back(layout.kv_heads[c]);
    p.head_dims.push_back(layout.head_dims[c]);
    p.value_is_key.push_back(layout.values_are_keys(c) ? 1 : 0);
  }
  return p;
}

bool PrefixState::can_restore(int64_t n) const {
  if (n < 0 || n > length) return false;
  for (const Cache& c : caches) {
    const int64_t from = first_needed(n, c.window);
    if (from < c.first || n > c.first + c.rows) return false;
  }
  return true;
}

void PrefixState::allocate() {
  auto half_bytes = [&](const Cache& c) {  // K or V: [kv_heads, rows] rows
    return static_cast<size_t>(c.kv_heads) * static_cast<size_t>(c.rows) * static_cast<size_t>(kv_row_bytes(kv_type, c.head_dim));
  };
  auto copies = [](const Cache& c) -> size_t { return c.one_copy ? 1 : 2; };
  size_t total = 0;
  for (const Cache& c : caches) total += copies(c) * half_bytes(c);
  memory.resize(total);
  uint8_t* at = memory.data();
  for (Cache& c : caches) {
    const size_t half = half_bytes(c);
    c.k = {at, half};
    c.v = {c.one_copy ? at : at + half, half};
    at += copies(c) * half;
  }
}

PrefixState PrefixState::shape() const {
  PrefixState s;
  s.length = length;
  s.kv_type = kv_type;
  for (const Cache& c : caches)
    s.caches.push_back({.window = c.window,
                        .kv_heads = c.kv_heads,
                        .head_dim = c.head_dim,
                        .first = c.first,
                        .rows = c.rows,
                        .one_copy = c.one_copy});
  return s;
}

namespace {

// A prefix state's caches as storages of `rows` slots each (its K/V are [kv_heads, rows, head_dim]).
std::vector<kernels::KvStorage> prefix_views(const PrefixState& st) {
  std::vector<kernels::KvStorage> views;
  for (const PrefixState::Cache& c : st.caches) {
    kernels::KvStorage kv;
    kv.k = c.k.data();  // written to only by load_prefix_state, which owns st
    kv.v = c.v.data();
    kv.type = st.kv_type;
    kv.kv_heads = c.kv_heads;
    kv.head_dim = c.head_dim;
    kv.slots = c.rows;
    kv.ring = false;
    views.push_back(kv);
  }
  return views;
}

// The state a file's header describes, K/V sized but not filled (or empty when !with_data).
Result<StoredPrefix> prefix_of(const CacheFileHeader& h, const std::string& path, StorageType kv_type,
                               bool with_data) {
  StoredPrefix p;
  p.tokens = h.tokens;
  p.file_bytes = h.file_bytes;
  p.state.length = h.length;
  p.state.kv_type = kv_type;
  if (static_cast<int64_t>(h.tokens.size()) != h.length || h.length <= 0)
    return bad_input("{}: holds {} tokens for a prefix of {}; not a prefix snapshot", path, h.tokens.size(), h.length);
  for (const CacheFileHeader::Cache& hc : h.caches) {
    PrefixState::Cache c{.window = hc.window, .kv_heads = hc.kv_heads, .head_dim = hc.head_dim, .rows = hc.rows,
                         .one_copy = hc.copies == 1};
    c.first = h.length - hc.rows;
    // A state holds at least what its own length reads (copy_prefix), from position 0 at
    // most (a windowed cache's history): anything else is not a snapshot. A full-history
    // cache's first_needed is 0, so it holds exactly rows 0 ...
    const int64_t first = first_needed(h.length, hc.window);
    if (c.first > first || c.first < 0 || hc.slots != hc.rows) return bad_input("{}: cache rows do not match a prefix of {} tokens", path, h.length);
    p.state.caches.push_back(std::move(c));
  }
  if (with_data) p.state.allocate();
  return p;
}

}  // namespace

Status save_prefix_state(const std::string& path, uint64_t program_checksum, const PrefixState& state,
                         std::span<const int32_t> tokens) {
  CacheImage img{.program_checksum = program_checksum,
                 .kv_type = state.kv_type,
                 .length = state.length,
                 .caches = prefix_views(state),
                 .tokens = tokens.first(static_cast<size_t>(state.length))};
  for (const PrefixState::Cache& c : state.caches) img.windows.push_back(c.window);
  return write_cache_file(path, img);
}

Result<StoredPrefix> load_prefix_state(const std::string& path, uint64_t program_checksum, StorageType kv_type) {
  StoredPrefix out;
  auto into = [&](const CacheFileHeader& h) -> Result<std::vector<kernels::KvStorage>> {
    OG_ASSIGN_OR_RETURN(out, prefix_of(h, path, kv_type, true));
    return prefix_views(out.state);
  };
  OG_TRY(read_cache_file(path, program_checksum, kv_type, into));
  return out;
}

Result<StoredPrefix> read_prefix_shape(const std::string& path, uint64_t program_checksum, StorageType kv_type) {
  OG_ASSIGN_OR_RETURN(CacheFileHeader h, read_cache_header(path, program_checksum, kv_type));
  return prefix_of(h, path, kv_type, false);
}

Result<CacheSet> CacheSet::create(const CacheSetPlan& plan) {
  // Refuse up front, with the numbers, rather than die on allocation.
  const uint64_t total = plan.bytes();
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && total > static_cast<uint64_t>(pages) * static_cast<uint64_t>(page))
    return resource_error("KV caches need {} bytes ({} caches, max_ctx_len {}), more than this machine's memory ({} bytes)",
                          total, plan.n_caches(), plan.max_ctx_len, static_cast<uint64_t>(pages) * page);
  CacheSet s;
  s.plan_ = plan;
  for (int32_t c = 0; c < plan.n_caches(); ++c) {
    const CachePolicy& p = plan.policies[static_cast<size_t>(c)];
    const size_t half = plan.row_bytes(c) * static_cast<size_t>(p.slots);  // K or V: [kv_heads, slots, head_dim]
    // Where V is K (the program writes one value as both), V is K's memory: every write of v
    // stores the bytes k just stored, and every copy of V (prefix states, cache files) reads K.
    const bool one_copy = plan.one_copy(c);
    const size_t bytes = one_copy ? half : 2 * half;
    auto mem = std::unique_ptr<uint8_t[]>(new (std::nothrow) uint8_t[bytes]);
    if (!mem) return resource_error("cannot allocate {} bytes for KV cache {}", bytes, c);
    kernels::KvStorage kv;
    kv.k = mem.get();
    kv.v = one_copy ? mem.get() : mem.get() + half;
    kv.type = plan.kv_type;
    kv.kv_heads = plan.kv_heads[static_cast<size_t>(c)];
    kv.head_dim = plan.head_dims[static_cast<size_t>(c)];
    kv.slots = p.slots;
    kv.ring = p.ring;
    s.kv_.push_back(kv);
    s.memory_.push_back(std::move(mem));
  }
  s.stored_from_.assign(s.kv_.size(), 0);
  return s;
}

Status CacheSet::save(const std::string& path, uint64_t program_checksum, int64_t length) const {
  CacheImage img{.program_checksum = program_checksum,
                 .kv_type = plan_.kv_type,
                 .length = length,
                 .caches = kv_};
  for (const CachePolicy& p : plan_.policies) img.windows.push_back(p.window);
  return write_cache_file(path, img);
}

Result<int64_t> CacheSet::load(const std::string& path, uint64_t program_checksum) {
  // read_cache_file checks everything before it copies, so a refused file changes nothing.
  auto into_this = [&](const CacheFileHeader& h) -> Result<std::vector<kernels::KvStorage>> {
    if (h.caches.size() != kv_.size()) return bad_input("{}: {} caches, the session has {}", path, h.caches.size(), kv_.size());
    for (size_t c = 0; c < kv_.size(); ++c) {
      const kernels::KvStorage& kv = kv_[c];
      // A flat cache holds the first `length` rows; a ring all its slots.
      const int64_t rows = kv.ring ? kv.slots : std::min(h.length, kv.slots);
      if (h.caches[c].slots != kv.slots || h.caches[c].rows != rows || (!kv.ring && h.length > kv.slots))
        return bad_input("{}: cache {} geometry differs from this session's (was it saved with another --max-ctx-len?)", path, c);
    }
    return kv_;
  };
  OG_ASSIGN_OR_RETURN(CacheFileHeader h, read_cache_file(path, program_checksum, plan_.kv_type, into_this));
  if (h.length > plan_.max_ctx_len) return bad_input("{}: saved length {} exceeds max_ctx_len {}", path, h.length, plan_.max_ctx_len);
  stored_from_.assign(kv_.size(), 0);  // the file holds a flat cache's rows from 0 and a ring's last slots
  if (keep_history_) {
    for (size_t c = 0; c < kv_.size(); ++c) {
      if (!history_[c]) continue;
      const int64_t oldest = std::max<int64_t>(0, h.length - kv_[c].slots);
      history_[c]->reset(oldest);
      history_[c]->record(kv_[c], oldest, h.length - oldest);
    }
  }
  return h.length;
}

void CacheSet::keep_history(int64_t limit) {
  keep_history_ = true;
  history_limit_ = limit;
  history_.clear();
  history_.resize(kv_.size());
  for (size_t c = 0; c < kv_.size(); ++c)
    if (kv_[c].ring)
      history_[c].emplace(kv_[c].kv_heads, static_cast<size_t>(kv_row_bytes(plan_.kv_type, kv_[c].head_dim)));
}

void CacheSet::written(int64_t p0, int64_t rows) {
  for (size_t c = 0; c < history_.size(); ++c) {
    if (!history_[c]) continue;
    RingHistory& h = *history_[c];
    if (history_limit_ > 0 && p0 + rows > history_limit_) {  // past the limit: the history ends at p0
      if (p0 >= h.first())
        h.truncate(p0);
      else
        h.reset(p0);
      continue;
    }
    if (p0 >= h.first() && p0 <= h.end()) {
      h.truncate(p0);
      h.record(kv_[c], p0, rows);
    } else {  // not a continuation (a length change went unreported): restart at the ring's oldest row
      const int64_t oldest = std::max<int64_t>(0, p0 + rows - kv_[c].slots);
      h.reset(oldest);
      h.record(kv_[c], oldest, p0 + rows - oldest);
    }
  }
}

void CacheSet::truncated(int64_t n) {
  for (size_t c = 0; c < kv_.size(); ++c) {
    stored_from_[c] = std::min(stored_from_[c], n);
    if (c >= history_.size() || !history_[c]) continue;
    if (n < history_[c]->first())
      history_[c]->reset(n);
    else
      history_[c]->truncate(n);
  }
}

Status CacheSet::check_rewind(int64_t length, int64_t n) const {
  return runtime::check_rewind(length, n, plan_.policies, stored_from_);
}

uint64_t CacheSet::history_bytes() const {
  uint64_t n = 0;
  for (const auto& h : history_)
    if (h) n += h->bytes();
  return n;
}

int64_t CacheSet::held_from(size_t c) const {
  if (plan_.policies[c].window <= 0) return 0;
  if (history_[c]) return history_[c]->first();
  return stored_from_[c];
}

bool CacheSet::holds_every_row(size_t c, int64_t n) const {
  return keep_history_ && held_from(c) <= first_needed(n, plan_.policies[c].window) &&
         (!history_[c] || history_[c]->end() >= n);
}

Status CacheSet::check_copy(int64_t length, int64_t n) const {
  if (n < 0 || n > length) return bad_input("cannot copy a prefix of {} tokens from a sequence of {}", n, length);
  for (size_t c = 0; c < kv_.size(); ++c) {
    const int64_t need = first_needed(n, plan_.policies[c].window);
    if (holds_every_row(c, n)) continue;
    if (kv_[c].ring && need < std::max<int64_t>(0, length - kv_[c].slots))
      return bad_input("cannot copy a prefix of {}: cache {} (ring of {} slots, window {}) no longer holds position {}", n,
                       c, kv_[c].slots, plan_.policies[c].window, need);
  }
  return Status::ok();
}

PrefixState CacheSet::copy_prefix(int64_t length) const {
  PrefixState st;
  st.length = length;
  st.kv_type = plan_.kv_type;
  for (size_t c = 0; c < kv_.size(); ++c) {
    const kernels::KvStorage& kv = kv_[c];
    const int64_t need = first_needed(length, plan_.policies[c].window);
    // With history every row still held, so the state serves shorter prefixes too.
    const bool whole = holds_every_row(c, length);
    PrefixState::Cache pc;
    pc.window = plan_.policies[c].window;
    pc.kv_heads = kv.kv_heads;
    pc.head_dim = kv.head_dim;
    pc.first = whole ? held_from(c) : need;
    pc.rows = length - pc.first;
    pc.one_copy = plan_.one_copy(static_cast<int32_t>(c));
    st.caches.push_back(pc);
  }
  st.allocate();
  for (size_t c = 0; c < kv_.size(); ++c) {
    const kernels::KvStorage& kv = kv_[c];
    PrefixState::Cache& pc = st.caches[c];
    const auto row = static_cast<size_t>(kv_row_bytes(plan_.kv_type, kv.head_dim));
    if (keep_history_ && history_[c] && pc.first >= history_[c]->first() && history_[c]->end() >= length) {
      // (A ring's history keeps K and V apart even where V is K; with one copy both land on pc.k.)
      history_[c]->copy_out(pc.first, length, pc.k.data(), pc.v.data());
      continue;
    }
    const std::pair<const uint8_t*, uint8_t*> passes[] = {{static_cast<const uint8_t*>(kv.k), pc.k.data()},
                                                          {static_cast<const uint8_t*>(kv.v), pc.v.data()}};
    for (int pass = 0; pass < (pc.one_copy ? 1 : 2); ++pass) {  // V is K: the K pass copied it
      const auto [src, dst] = passes[pass];
      for (int32_t h = 0; h < kv.kv_heads; ++h)
        for (int64_t r = 0; r < pc.rows;) {  // runs of consecutive slots (a ring's wrap ends one)
          const int64_t s0 = kv.slot(pc.first + r);
          int64_t n = 1;
          while (r + n < pc.rows && kv.slot(pc.first + r + n) == s0 + n) ++n;
          std::memcpy(dst + (static_cast<size_t>(h) * pc.rows + r) * row,
                      src + (static_cast<size_t>(h) * kv.slots + s0) * row, static_cast<size_t>(n) * row);
          r += n;
        }
    }
  }
  return st;
}

Status CacheSet::restore_prefix(const PrefixState& st, std::optional<int64_t> length) {
  return restore(st, length, nullptr);
}

Status CacheSet::restore_prefix(const std::shared_ptr<const PrefixState>& st, std::optional<int64_t> length) {
  if (!st) return bad_input("no prefix state to restore");
  return restore(*st, length, st);
}

Status CacheSet::restore(const PrefixState& st, std::optional<int64_t> length,
                         const std::shared_ptr<const PrefixState>& shared) {
  const int64_t n = length.value_or(st.length);
  if (st.kv_type != plan_.kv_type) return bad_input("prefix state has another kv dtype than this session");
  if (st.caches.size() != kv_.size())
    return bad_input("prefix state has {} caches, the session {}", st.caches.size(), kv_.size());
  if (n < 0 || n > plan_.max_ctx_len)
    return bad_input("prefix state of {} tokens exceeds max_ctx_len {}", n, plan_.max_ctx_len);
  if (!st.can_restore(n)) return bad_input("prefix state of {} tokens cannot serve a prefix of {}", st.length, n);
  for (size_t c = 0; c < kv_.size(); ++c) {  // every check before the first copy
    const kernels::KvStorage& kv = kv_[c];
    const PrefixState::Cache& pc = st.caches[c];
    const size_t want = static_cast<size_t>(kv.kv_heads) * static_cast<size_t>(pc.rows) *
                        static_cast<size_t>(kv_row_bytes(plan_.kv_type, kv.head_dim));
    if (pc.window != plan_.policies[c].window || pc.kv_heads != kv.kv_heads || pc.head_dim != kv.head_dim ||
        pc.k.size() != want || pc.v.size() != want)
      return bad_input("prefix state of cache {} does not match this session's geometry", c);
  }
  for (size_t c = 0; c < kv_.size(); ++c) {
    const kernels::KvStorage& kv = kv_[c];
    const PrefixState::Cache& pc = st.caches[c];
    const auto row = static_cast<size_t>(kv_row_bytes(plan_.kv_type, kv.head_dim));
    // Positions from .. n - 1: what position n reads; keeping history, a flat windowed cache
    // takes every row the state has (a ring's history takes them below).
    const int64_t from = keep_history_ && !kv.ring ? pc.first : first_needed(n, pc.window);
    // Where the session's V is K's memory the K pass has written it (a state of two copies holds
    // the same rows twice); a state of one copy into two copies gives V its K rows.
    const std::pair<const uint8_t*, uint8_t*> passes[] = {{pc.k.data(), static_cast<uint8_t*>(kv.k)},
                                                          {pc.v.data(), static_cast<uint8_t*>(kv.v)}};
    for (int pass = 0; pass < (kv.v == kv.k ? 1 : 2); ++pass) {
      const auto [src, dst] = passes[pass];
      for (int32_t h = 0; h < kv.kv_heads; ++h)
        for (int64_t p = from; p < n;) {  // runs of consecutive slots: a ring's wrap ends one
          const int64_t s0 = kv.slot(p);
          const int64_t run = kv.ring ? std::min(n - p, kv.slots - s0) : n - p;
          std::memcpy(dst + (static_cast<size_t>(h) * kv.slots + s0) * row,
                      src + (static_cast<size_t>(h) * pc.rows + (p - pc.first)) * row, static_cast<size_t>(run) * row);
          p += run;
        }
    }
    stored_from_[c] = pc.window > 0 ? from : 0;
    if (!keep_history_) continue;
    if (history_[c] && shared) {
      history_[c]->adopt(shared, pc.k.data(), pc.v.data(), pc.rows, pc.first, n - pc.first);
    } else if (history_[c]) {
      history_[c]->reset(pc.first);
      history_[c]->record(pc.k.data(), pc.v.data(), pc.rows, pc.first, pc.first, n - pc.first);
    }
  }
  return Status::ok();
}

}  // namespace og::runtime
