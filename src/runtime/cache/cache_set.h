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

namespace og::runtime {

struct CacheSetPlan {
  StorageType kv_type = StorageType::kF32;
  int64_t max_ctx_len = 0;
  int64_t chunk = 0;                    // largest step: prefill_chunk_size clamped to max_ctx_len
  std::vector<CachePolicy> policies;    // [n_caches]
  std::vector<int32_t> kv_heads;        // [n_caches]
  std::vector<int32_t> head_dims;       // [n_caches]

  int32_t n_caches() const { return static_cast<int32_t>(policies.size()); }
  // Bytes of one slot of cache c (K and V together).
  uint64_t slot_bytes(int32_t c) const;
  // Bytes the caches take when allocated: 2 * slots * kv_heads * head_dim * elem, summed.
  uint64_t bytes() const;
};

// max_ctx_len must be >= 1; the step size is clamped to it.
CacheSetPlan plan_cache_set(const program::CacheLayout& layout, StorageType kv_type, int64_t max_ctx_len,
                            int64_t prefill_chunk_size);

// The K/V a sequence of `length` tokens needs (see the header comment); bytes as stored.
struct PrefixState {
  int64_t length = 0;
  StorageType kv_type = StorageType::kF32;
  struct Cache {
    int64_t window = 0;      // the cache's window (0: full history)
    int32_t kv_heads = 0;
    int32_t head_dim = 0;
    int64_t first = 0;       // first position held
    int64_t rows = 0;        // positions first .. first + rows - 1
    LargeBytes k;            // [kv_heads, rows, head_dim] elements of kv_type
    LargeBytes v;            // [kv_heads, rows, head_dim]
  };
  std::vector<Cache> caches;  // [n_caches]
  uint64_t bytes() const;
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

  // Copies out the state a sequence of `length` committed tokens needs (length <= what the
  // caches hold; for a ring, the caller must not have stepped past `length` since).
  PrefixState copy_prefix(int64_t length) const;
  // Writes back the state of its first n tokens (n = state.length when absent); the sequence
  // then continues at n exactly as if it had computed them here. Refuses a state of another
  // geometry or kv dtype, or an n the state cannot serve (PrefixState::can_restore). Whether
  // a windowed cache is a ring or flat (a matter of max_ctx_len) does not matter: positions
  // are placed by position.
  Status restore_prefix(const PrefixState& state, std::optional<int64_t> n = std::nullopt);

 private:
  CacheSetPlan plan_;
  std::vector<kernels::KvStorage> kv_;                 // [n_caches] views into memory_
  std::vector<std::unique_ptr<uint8_t[]>> memory_;    // [n_caches] K then V, each [kv_heads, slots, head_dim]
};

}  // namespace og::runtime
