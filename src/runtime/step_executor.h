// Runs a model's ops once over the rows of one or more sequences (runtime-internal; the
// public entry points are Session::step and BatchRunner::step, which validate first).
//
// Rows: buffers.ids / buffers.positions [0, N) hold every entry's rows, entry after entry.
// Row-wise ops (embedding, norms, linears, rope, activations, the LM head) run over all N
// rows at once, so a linear reads its weights once for the whole batch; update_and_attend
// runs per entry, on that entry's rows against that entry's caches. Each entry's rows see
// exactly the arithmetic they would see alone (kernels compute each output row with the
// same operations whatever the row count), so a batched entry is bit-identical to a solo step.
//
// After the last attention only the rows whose logits are wanted run (all of an entry's
// rows, or its last one): they are moved to the front first, in entry order.
#pragma once

#include <cstdint>
#include <span>

#include "base/thread_pool.h"
#include "runtime/cache/cache_set.h"
#include "runtime/model.h"
#include "runtime/step_buffers.h"

namespace og::runtime {

enum class LogitsRows { kAll, kLast };

struct EntryRows {
  CacheSet* caches = nullptr;
  int64_t row0 = 0;      // first row in the step's buffers
  int64_t rows = 0;      // T
  int64_t p0 = 0;        // position of the first row
  LogitsRows logits = LogitsRows::kAll;
  int64_t logits_row0 = 0;  // out: first row of this entry's logits in buffers.logits
};

// Entries must be validated and in row order; their rows fit buffers.capacity.
void execute_step(const Model& model, std::span<EntryRows> entries, StepBuffers& buffers, ThreadPool* pool);

}  // namespace og::runtime
