// Batched steps (DESIGN.md §4b): rows of several sessions in one step, so the weights are
// read once for all of them. Each entry names a session, its token ids and positions, and
// which logits rows it wants; entries may mix a prefill chunk of one session with
// single-token decodes of others, and each session's logits are bit-identical to stepping
// it alone, whatever the batch's other entries and their order.
//
// Every entry is validated before anything runs: one bad entry refuses the whole step with
// an error naming it, and no session changes. The step's total rows are bounded by the
// program's prefill_chunk_size; the runner owns the activation buffers for that many rows,
// sized once. Sessions keep only their caches and length; they must share the runner's Model.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "runtime/session.h"
#include "runtime/step_buffers.h"

namespace og::runtime {

struct BatchEntry {
  Session* session = nullptr;
  std::span<const int32_t> ids;        // [T]
  std::span<const int32_t> positions;  // [T]; empty: continue the session (length() ..)
  LogitsRows logits = LogitsRows::kLast;
};

struct BatchOptions {
  int threads = 0;  // as SessionOptions::threads
  std::shared_ptr<ThreadPool> pool = nullptr;
};

class BatchRunner {
 public:
  static Result<std::unique_ptr<BatchRunner>> create(std::shared_ptr<const Model> model, const BatchOptions& options = {});

  // Runs the entries as one step. Returns each entry's logits [rows, vocab] (rows = T, or 1
  // for kLast), in entry order, valid until the next call of step().
  Result<std::vector<std::span<const float>>> step(std::span<const BatchEntry> entries);

  // Largest total rows of one step.
  int64_t max_rows() const { return buffers_.capacity; }
  const Model& model() const { return *model_; }

 private:
  BatchRunner(std::shared_ptr<const Model> model, ThreadPool* pool, std::shared_ptr<ThreadPool> owned);

  std::shared_ptr<const Model> model_;
  std::shared_ptr<ThreadPool> own_pool_;
  ThreadPool* pool_ = nullptr;
  StepBuffers buffers_;                // [prefill_chunk_size rows]
  std::vector<EntryRows> rows_;        // [entries]
  std::vector<int32_t> continuation_;  // positions of entries that gave none
};

}  // namespace og::runtime
