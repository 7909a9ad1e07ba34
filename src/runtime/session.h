// A session: one sequence's KV caches (built from the program's layout, owned here, never
// in the program) plus its activation buffers. Many sessions share one Model; a session
// itself is used by one thread at a time.
//
// step() validates its input first (ids < vocab, positions continuing the sequence,
// T <= prefill_chunk_size, capacity), so a rejected step leaves the session unchanged;
// an accepted step writes every cache and commits the new length at once.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "base/thread_pool.h"
#include "runtime/cache/cache_policy.h"
#include "runtime/model.h"

namespace og::runtime {

enum class KvDType { kF32, kBF16, kF16 };
Result<KvDType> parse_kv_dtype(const std::string& s);

// Threads: 0 runs the kernels on the process-wide pool of physical_cores() threads
// (default_thread_pool()), 1 on the calling thread alone, N > 1 on a pool the session owns;
// `pool` (if set) is used instead. A pool may serve any number of sessions on any threads:
// a step that finds it busy runs that op on its own thread. Results do not depend on it.
struct SessionOptions {
  KvDType kv_dtype = KvDType::kF32;
  int64_t max_ctx_len = 0;  // 0: the program's
  int threads = 0;
  std::shared_ptr<ThreadPool> pool = nullptr;
};

enum class LogitsRows { kAll, kLast };

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(std::shared_ptr<const Model> model, const SessionOptions& options = {});

  // Runs one step; returns logits [rows, vocab] (rows = T, or 1 for kLast) valid until the next call.
  Result<std::span<const float>> step(std::span<const int32_t> ids, std::span<const int32_t> positions,
                                      LogitsRows rows = LogitsRows::kAll);
  // step() at positions length() .. length() + T - 1.
  Result<std::span<const float>> append(std::span<const int32_t> ids, LogitsRows rows = LogitsRows::kAll);

  int64_t length() const { return length_; }
  int64_t max_ctx_len() const { return max_ctx_len_; }
  void clear() { length_ = 0; }
  Status rewind(int64_t n);
  // Saves caches and position; load() restores them into this session (same program,
  // same --kv-dtype and max_ctx_len), refusing any mismatch before touching the session.
  Status save(const std::string& path) const;
  Status load(const std::string& path);
  uint64_t cache_bytes() const;
  const std::vector<CachePolicy>& cache_policies() const { return policies_; }
  const Model& model() const { return *model_; }

 private:
  Session() = default;
  float* value_ptr(int32_t v, int64_t row);

  std::shared_ptr<const Model> model_;
  int64_t max_ctx_len_ = 0;
  int64_t length_ = 0;
  std::vector<CachePolicy> policies_;
  std::vector<kernels::KvStorage> kv_;
  std::vector<std::unique_ptr<uint8_t[]>> kv_memory_;
  uint64_t kv_bytes_ = 0;
  std::vector<std::vector<float>> slots_;   // [slot][prefill_chunk_size * width]
  std::vector<float> logits_;
  // Int8 activation buffers (Model::int8_buffer_row_bytes): [prefill_chunk_size, row_bytes]
  // each, described by int8_ (which also records what quantize_int8 last wrote there).
  std::vector<std::vector<uint8_t>> int8_memory_;
  std::vector<kernels::Int8Input> int8_;
  std::vector<int32_t> ids_, positions_, remapped_;
  std::shared_ptr<ThreadPool> own_pool_;
  ThreadPool* pool_ = nullptr;  // null: kernels run on the calling thread
  uint32_t kv_type_ = 0;
};

}  // namespace og::runtime
