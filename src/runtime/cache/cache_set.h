// Every KV cache of one sequence, planned from a program's published layout (DESIGN.md §3-4).
//
// plan_cache_set() is pure arithmetic (inspect uses it to report bytes without allocating);
// CacheSet::create() allocates what a plan describes. A CacheSet knows nothing of the
// sequence's length: the Session keeps that and passes it to save(), load() and the prefix
// state functions, which are the only ways cache contents move in or out.
//
// Prefix state (what the prefix cache stores): the K/V that a sequence of `length` tokens
// needs to continue exactly. A flat cache needs its first `length` rows; a ring needs only
// the positions its window still reads, max(0, length - W + 1) .. length - 1, which are its
// live slots at that moment and no others. KV-shared layers have no cache of their own and
// so no state: they read their donor's.
//
// With keep_history() (a session that feeds the prefix store) a windowed cache's state holds
// every row from position 0 instead, like a flat cache's, and so serves any shorter prefix:
// a ring's overwritten rows come from its RingHistory, a flat windowed cache keeps them
// anyway. The owner reports every change of length (written, truncated) so the history
// follows the sequence.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/large_buffer.h"
#include "base/status.h"
#include "kernels/kernels.h"
#include "program/layout.h"
#include "runtime/cache/cache_policy.h"
#include "runtime/cache/ring_history.h"

namespace og::runtime {

struct CacheSetPlan {
  StorageType kv_type = StorageType::kF32;
  int64_t max_ctx_len = 0;
  int64_t chunk = 0;                    // largest step: prefill_chunk_size clamped to max_ctx_len
  std::vector<CachePolicy> policies;    // [n_caches]
  std::vector<int32_t> kv_heads;        // [n_caches]
  std::vector<int32_t> head_dims;       // [n_caches]
  std::vector<uint8_t> value_is_key;    // [n_caches]: V is K's memory (one copy)

  int32_t n_caches() const { return static_cast<int32_t>(policies.size()); }
  // Bytes of one row of K (or of V) of cache c, all its kv heads.
  uint64_t row_bytes(int32_t c) const;
  // Whether cache c's V is K's memory (value_is_key).
  bool one_copy(int32_t c) const {
    return static_cast<size_t>(c) < value_is_key.size() && value_is_key[static_cast<size_t>(c)] != 0;
  }
  // Bytes one slot of cache c occupies: K and V, or K alone where V is K.
  uint64_t slot_bytes(int32_t c) const;
  // Bytes one position takes in every cache together: what a prefix state holds per token (K and
  // V, or K alone where V is K).
  uint64_t position_bytes() const;
  // Bytes the caches take when allocated: slots * slot_bytes, summed.
  uint64_t bytes() const;
};

// max_ctx_len must be >= 1; the step size is clamped to it.
CacheSetPlan plan_cache_set(const program::CacheLayout& layout, StorageType kv_type, int64_t max_ctx_len,
                            int64_t prefill_chunk_size);

// The K/V a sequence of `length` tokens needs (see the header comment); bytes as stored.
// One allocation holds every cache's K and V: a state is tens of buffers of a few MB each,
// and each allocated on its own came from malloc's mmap, faulted in 4 KiB pages; one buffer
// of 2 MiB or more gets huge pages (base/large_buffer.h). A 1B model's 1.5k-token state (80
// MB) took 204 ms to copy out before, 135 ms after: the rest is this VM backing memory the
// guest never touched (80 MB of fresh memory takes 180 ms to fault in here, 10 ms reused).
// Move-only: the caches' spans point into `memory`.
struct PrefixState {
  int64_t length = 0;
  StorageType kv_type = StorageType::kF32;
  struct Cache {
    int64_t window = 0;      // the cache's window (0: full history)
    int32_t kv_heads = 0;
    int32_t head_dim = 0;
    int64_t first = 0;       // first position held
    int64_t rows = 0;        // positions first .. first + rows - 1
    bool one_copy = false;   // V is K (layout value_is_key): v spans k's bytes
    std::span<uint8_t> k;    // [kv_heads, rows, head_dim] elements of kv_type, in `memory`
    std::span<uint8_t> v;    // [kv_heads, rows, head_dim]
  };
  std::vector<Cache> caches;  // [n_caches]
  LargeBytes memory;          // every cache's K then V (K alone where one_copy)

  PrefixState() = default;
  PrefixState(PrefixState&&) = default;
  PrefixState& operator=(PrefixState&&) = default;
  PrefixState(const PrefixState&) = delete;
  PrefixState& operator=(const PrefixState&) = delete;

  // Sizes `memory` for the caches' rows (set before) and points their spans into it.
  void allocate();
  uint64_t bytes() const { return memory.size(); }
  // The same state without its K/V (what it can serve, for an index of states kept on disk).
  PrefixState shape() const;
  // Whether restoring the state's first n tokens is exact: every cache holds the positions a
  // query at n reads (a flat full-history cache: any n <= length; a window: n == length).
  bool can_restore(int64_t n) const;
};

// A prefix state and the tokens it holds, in a cache file (runtime/cache/cache_file.h) tied to a
// program checksum; what the prefix cache keeps on disk (`serve --cache-dir`).
Status save_prefix_state(const std::string& path, uint64_t program_checksum, const PrefixState& state,
                         std::span<const int32_t> tokens);
struct StoredPrefix {
  std::vector<int32_t> tokens;  // [state.length]
  PrefixState state;            // without K/V when read by read_prefix_shape
  uint64_t file_bytes = 0;
};
// Reads a whole file, verifying its checksum.
Result<StoredPrefix> load_prefix_state(const std::string& path, uint64_t program_checksum, StorageType kv_type);
// Reads the header only (tokens and shape, no K/V); refuses a truncated file, not a corrupt one.
Result<StoredPrefix> read_prefix_shape(const std::string& path, uint64_t program_checksum, StorageType kv_type);

class CacheSet {
 public:
  // Allocates every cache of the plan (refusing, with the numbers, more than the machine has).
  static Result<CacheSet> create(const CacheSetPlan& plan);

  const CacheSetPlan& plan() const { return plan_; }
  uint64_t bytes() const { return plan_.bytes(); }
  std::span<const kernels::KvStorage> storages() const { return kv_; }
  const kernels::KvStorage& storage(int32_t c) const { return kv_[static_cast<size_t>(c)]; }
  const std::vector<CachePolicy>& policies() const { return plan_.policies; }

  // Save file of the used rows (runtime/cache/cache_file.h), tied to a program checksum.
  Status save(const std::string& path, uint64_t program_checksum, int64_t length) const;
  // Restores a save file; returns its length. Refuses a mismatch before touching any cache.
  Result<int64_t> load(const std::string& path, uint64_t program_checksum);

  // Keeps every windowed cache's rows from here on (see the header comment): from the next
  // write at position 0 (after written()/truncated() report a fresh sequence), up to
  // position `limit` (0: all; a ring's rows past it are not kept, and states longer than
  // that hold only the window, as without history).
  void keep_history(int64_t limit = 0);
  bool keeps_history() const { return keep_history_; }
  // The sequence's new rows [p0, p0 + rows) are written (a committed step), or it was cut to
  // n tokens (rewind, clear): the histories follow.
  void written(int64_t p0, int64_t rows);
  void truncated(int64_t n);
  // Whether a sequence of `length` tokens can rewind to n: every windowed cache still holds
  // what a query at n reads (check_rewind, with what restores left out).
  Status check_rewind(int64_t length, int64_t n) const;
  // Bytes the ring histories hold (allocated, kept across sequences).
  uint64_t history_bytes() const;

  // Whether copy_prefix(n) can serve a sequence of `length` tokens: n <= length, and every
  // ring holds what position n reads (in its slots, or in its history).
  Status check_copy(int64_t length, int64_t n) const;
  // Copies out the state a sequence of `length` committed tokens needs (length <= what the
  // caches hold; for a ring without history, the caller must not have stepped past `length`
  // since). With history, windowed caches hold every row they still have from position 0.
  PrefixState copy_prefix(int64_t length) const;
  // Writes back the state of its first n tokens (n = state.length when absent); the sequence
  // then continues at n exactly as if it had computed them here. Refuses a state of another
  // geometry or kv dtype, or an n the state cannot serve (PrefixState::can_restore). Whether
  // a windowed cache is a ring or flat (a matter of max_ctx_len) does not matter: positions
  // are placed by position.
  Status restore_prefix(const PrefixState& state, std::optional<int64_t> n = std::nullopt);
  // The same, and the ring histories borrow the state's rows instead of copying them (the
  // state is immutable; RingHistory::adopt).
  Status restore_prefix(const std::shared_ptr<const PrefixState>& state, std::optional<int64_t> n = std::nullopt);

 private:
  // First position whose row a windowed cache holds (in the ring's history for a ring):
  // what copy_prefix can reach back to when keeping history.
  int64_t held_from(size_t c) const;
  // Whether cache c keeps (with history) every row it has held up to n, reaching back at least
  // as far as position n reads: a state of length n then takes them all.
  bool holds_every_row(size_t c, int64_t n) const;
  // restore_prefix; `shared`, when set, is `st` and the histories borrow its rows.
  Status restore(const PrefixState& st, std::optional<int64_t> n, const std::shared_ptr<const PrefixState>& shared);

  CacheSetPlan plan_;
  bool keep_history_ = false;
  int64_t history_limit_ = 0;
  std::vector<std::optional<RingHistory>> history_;    // [n_caches] set for rings when keep_history_
  // [n_caches] first position whose row a windowed cache's storage holds: a restore writes
  // only what its length reads (a ring also holds at most its last `slots` positions).
  std::vector<int64_t> stored_from_;
  std::vector<kernels::KvStorage> kv_;                 // [n_caches] views into memory_
  std::vector<std::unique_ptr<uint8_t[]>> memory_;    // [n_caches] K then V, each [kv_heads, slots, head_dim]
};

}  // namespace og::runtime
