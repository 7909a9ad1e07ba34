// A session: one sequence's KV caches (a CacheSet built from the program's layout, owned
// here, never in the program) and its committed length. Many sessions share one Model; a
// session itself is used by one thread at a time.
//
// step() validates its input first (ids < vocab, positions continuing the sequence,
// T <= prefill_chunk_size, capacity), so a rejected step leaves the session unchanged;
// an accepted step writes every cache and commits the new length at once. Sessions can
// also run together in one batched step (runtime/batch_runner.h).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "base/thread_pool.h"
#include "runtime/cache/cache_set.h"
#include "runtime/model.h"
#include "runtime/step_executor.h"

namespace og::runtime {

// A --kv-dtype value: a storage type that can be a KV cache (base/storage_type.h).
Result<StorageType> parse_kv_dtype(const std::string& s);

// Threads: 0 runs the kernels on the process-wide pool of physical_cores() threads
// (default_thread_pool()), 1 on the calling thread alone, N > 1 on a pool the session owns;
// `pool` (if set) is used instead. A pool may serve any number of sessions on any threads:
// a step that finds it busy runs that op on its own thread. Results do not depend on it.
struct SessionOptions {
  StorageType kv_dtype = StorageType::kF32;
  int64_t max_ctx_len = 0;  // 0: the program's
  int threads = 0;
  std::shared_ptr<ThreadPool> pool = nullptr;
  // Keep every row the sliding-window rings write (runtime/cache/ring_history.h), so that
  // copy_prefix() states serve any shorter prefix, as a flat cache's do: what a session that
  // feeds the prefix store wants. Costs the rows' bytes (history_bytes()) and a copy of each
  // row once, after its step.
  bool keep_history = false;
  // With keep_history, the positions kept at most (0: all): a state longer than the prefix
  // store's budget is never stored, so rows past it would be kept for nothing.
  int64_t history_limit = 0;
};

// The pool that `threads` / `pool` name (see SessionOptions); `owned` keeps a new one alive.
Result<ThreadPool*> resolve_pool(int threads, std::shared_ptr<ThreadPool> pool, std::shared_ptr<ThreadPool>& owned);

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(std::shared_ptr<const Model> model, const SessionOptions& options = {});

  // Runs one step; returns logits [rows, vocab] (rows = T, or 1 for kLast) valid until the next call.
  Result<std::span<const float>> step(std::span<const int32_t> ids, std::span<const int32_t> positions,
                                      LogitsRows rows = LogitsRows::kAll);
  // step() at positions length() .. length() + T - 1.
  Result<std::span<const float>> append(std::span<const int32_t> ids, LogitsRows rows = LogitsRows::kAll);

  // The checks step() makes before it runs anything: T tokens at positions p0.. .
  Status check(std::span<const int32_t> ids, std::span<const int32_t> positions) const;

  int64_t length() const { return length_; }
  int64_t max_ctx_len() const { return caches_.plan().max_ctx_len; }
  // Largest T of one step: the program's prefill_chunk_size, clamped to max_ctx_len.
  int64_t max_step_rows() const { return caches_.plan().chunk; }
  void clear() {
    length_ = 0;
    caches_.truncated(0);
  }
  Status rewind(int64_t n);
  // Saves caches and position; load() restores them into this session (same program,
  // same --kv-dtype and max_ctx_len), refusing any mismatch before touching the session.
  Status save(const std::string& path) const;
  Status load(const std::string& path);
  // The cache state of this sequence's first n tokens (n <= length(), and every ring must
  // still hold what position n needs, in its slots or its history), and restoring one: the
  // session then continues at state.length exactly as if it had computed those tokens itself.
  Result<PrefixState> copy_prefix(int64_t n) const;
  Status restore_prefix(const PrefixState& state, std::optional<int64_t> n = std::nullopt);
  // The same; the session's ring histories borrow the shared state's rows (no copy).
  Status restore_prefix(const std::shared_ptr<const PrefixState>& state, std::optional<int64_t> n = std::nullopt);

  uint64_t cache_bytes() const { return caches_.bytes(); }
  uint64_t history_bytes() const { return caches_.history_bytes(); }
  // Adds each op's time of this session's steps to `times` (sized to the model's ops), or
  // stops with nullptr.
  void set_op_times(OpTimes* times) { op_times_ = times; }
  const std::vector<CachePolicy>& cache_policies() const { return caches_.policies(); }
  const Model& model() const { return *model_; }
  const std::shared_ptr<const Model>& model_ptr() const { return model_; }

 private:
  friend class BatchRunner;  // runs entries on caches_ and commits length_
  explicit Session(CacheSet caches) : caches_(std::move(caches)) {}

  std::shared_ptr<const Model> model_;
  CacheSet caches_;
  int64_t length_ = 0;
  std::optional<StepBuffers> buffers_;  // this session's own steps; made at the first one
  OpTimes* op_times_ = nullptr;
  std::shared_ptr<ThreadPool> own_pool_;
  ThreadPool* pool_ = nullptr;  // null: kernels run on the calling thread
};

}  // namespace og::runtime
