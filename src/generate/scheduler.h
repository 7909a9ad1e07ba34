// The scheduler of many sequences on one loaded program (DESIGN.md §4b): it admits
// requests into a fixed set of sessions, and each step() runs one batched step that carries
// one decode row for every generating sequence plus chunks of the prompts being prefilled,
// so running streams keep decoding while a new prompt is admitted (a decode never waits
// behind a whole long prompt). Finished and cancelled sequences are retired between steps.
//
// Sampling is per sequence (its own Sampler and seed) and a batched step's logits equal a
// solo step's bit for bit, so a seeded sequence generates the same tokens whatever runs
// beside it.
//
// Threads: submit(), cancel(), wait_for_work() and the counters may be called from any
// thread; step() from one thread at a time (the loop that drives the scheduler). Callbacks
// run on the step() thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "generate/generator.h"
#include "generate/prompt_row_budget.h"
#include "generate/sampler.h"
#include "runtime/batch_runner.h"
#include "runtime/prefix_cache.h"
#include "runtime/session.h"

namespace og::generate {

struct SequenceStats {
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;          // prompt tokens restored instead of computed
  int64_t generated_tokens = 0;
  double queued_seconds = 0;          // submit to admission
  double first_token_seconds = 0;     // submit to the first sampled token
  double total_seconds = 0;           // submit to retirement
  double snapshot_seconds = 0;        // copying prefix states out for the prefix cache
  StopReason stop = StopReason::kMaxTokens;
};

// Called with each generated token and the logits it was sampled from ([vocab], valid for
// the call); stop tokens are not passed. Return false to stop the sequence.
using SequenceTokenFn = std::function<bool(int32_t token, std::span<const float> logits)>;
// Called once when the sequence retires: with its stats, or with the error that ended it.
using SequenceDoneFn = std::function<void(const Result<SequenceStats>&)>;

// Why submit() refused a request: the server maps each to an HTTP status and an OpenAI
// error code, and nothing else decides it.
enum class Refusal {
  kNone = 0,
  kInvalid,          // no prompt tokens, sampling values out of range
  kBadToken,         // a prompt id outside the vocabulary
  kContextExceeded,  // the prompt leaves no room for a token, or prompt + max_tokens > context
  kQueueFull,        // running + waiting requests at SchedulerOptions's bound
};

// What submit() answers: the request's id, or why it was refused (read like a Result).
class Submission {
 public:
  static Submission accepted(uint64_t id) { return Submission(id, Refusal::kNone, Status::ok()); }
  static Submission refused(Refusal why, Status status) { return Submission(0, why, std::move(status)); }
  bool is_ok() const { return refusal_ == Refusal::kNone; }
  uint64_t operator*() const { return id_; }
  uint64_t value() const { return id_; }
  Refusal refusal() const { return refusal_; }
  const Status& status() const { return status_; }

 private:
  Submission(uint64_t id, Refusal r, Status s) : id_(id), refusal_(r), status_(std::move(s)) {}
  uint64_t id_;
  Refusal refusal_;
  Status status_;
};

// The logits rows of prompt positions [first, first + rows.size() / vocab): row j is the
// distribution of the token after position first + j (valid for the call only).
using PromptLogitsFn = std::function<void(int64_t first, std::span<const float> rows)>;

struct SequenceRequest {
  std::vector<int32_t> prompt;
  GenerateOptions options;            // max_tokens, sampling (seed), stop ids
  SequenceTokenFn on_token;
  SequenceDoneFn on_done;
  // Set: every prompt position's logits come out (prompt logprobs, echo). The prompt is then
  // computed whole (no prefix restore: a restored position has no logits), in chunks of at
  // most kPromptLogitsRows rows so the logits buffer stays small.
  PromptLogitsFn on_prompt_logits;
};
inline constexpr int64_t kPromptLogitsRows = 64;

// One step's account (SchedulerOptions::on_step): what it carried and where its time went.
// The streams that decode in it wait for all three parts.
struct StepRecord {
  int64_t decode_rows = 0;
  int64_t prompt_rows = 0;
  int64_t prompt_row_budget = 0;      // prompt rows allowed beside the decodes (0: none decoding)
  double admit_seconds = 0;           // admissions: prefix-cache lookups and restores
  double run_seconds = 0;             // the batched step
  double after_seconds = 0;           // sampling, token callbacks, snapshots, retirements
};

struct SchedulerOptions {
  int32_t max_sequences = 4;          // sessions (slots) that run at once
  int64_t max_ctx_len = 0;            // per session; 0: the program's
  StorageType kv_dtype = StorageType::kF32;
  int threads = 0;                    // as SessionOptions::threads
  std::shared_ptr<ThreadPool> pool = nullptr;
  // Prompt rows one step may carry while other sequences decode: the step then costs little
  // more than a decode step (0: adapt them so that such a step costs at most about
  // 1 + prompt_step_ratio plain decode steps). With nothing decoding a prompt takes the
  // whole row budget.
  int64_t prefill_rows_while_decoding = 0;
  // With the adaptive rows: how much longer than a decode-only step a step that carries
  // prompt rows may be, in decode steps. More gives new prompts their first token sooner and
  // makes the running streams' gaps longer.
  double prompt_step_ratio = 3.0;
  // Prefix reuse (runtime/prefix_cache.h), null: off. A request's prompt is looked up at
  // admission and the longest restorable prefix restored; states are stored at the end of
  // every prompt and the end of every reply. Sessions of programs with sliding windows then
  // keep their rings' rows (SessionOptions::keep_history), so every state serves any shorter
  // prefix, as a flat program's does.
  std::shared_ptr<runtime::PrefixCache> prefix_cache = nullptr;
  // Requests that may wait for a slot beyond those running; past it submit() refuses with
  // kQueueFull (-1: no bound). A sequence's slot counts as free before its on_done runs.
  int32_t max_waiting = -1;
  // Called on the step() thread after every step that ran (null: nothing is reported).
  std::function<void(const StepRecord&)> on_step = nullptr;
};

class Scheduler {
 public:
  static Result<std::unique_ptr<Scheduler>> create(std::shared_ptr<const runtime::Model> model,
                                                   const SchedulerOptions& options = {});

  // Queues a request; returns its id. A request that can never run (empty prompt, bad
  // sampling values, an id outside the vocabulary, a prompt that leaves no room in the
  // context for a token, prompt + max_tokens past the context) or that finds the queue full
  // is refused here, before it is queued, with its Refusal.
  Submission submit(SequenceRequest request);
  // Stops a queued or running sequence at the next step (its on_done reports kCancelled).
  void cancel(uint64_t id);

  // Runs one batched step (admitting queued requests first). Returns false when there was
  // nothing to do. An error of the step itself retires every sequence in it with that error.
  bool step();
  // Blocks until a request is queued or `timeout` passes (for the loop that calls step()).
  void wait_for_work(std::chrono::milliseconds timeout);

  size_t queued() const;
  size_t running() const;
  int32_t max_sequences() const { return static_cast<int32_t>(slots_.size()); }
  // Context positions in use over all slots / positions all slots can hold.
  double cache_utilisation() const;
  const runtime::Model& model() const { return *model_; }
  StorageType kv_dtype() const { return options_.kv_dtype; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Sequence {
    uint64_t id = 0;
    SequenceRequest request;
    Clock::time_point submitted;
    Clock::time_point admitted;
    std::optional<Sampler> sampler;
    std::vector<int32_t> history;     // prompt + generated tokens (repetition penalty)
    int64_t prefilled = 0;            // prompt tokens in the cache
    int32_t pending = -1;             // sampled token not yet in the cache
    SequenceStats stats;
    bool cancelled = false;
  };
  struct Slot {
    std::unique_ptr<runtime::Session> session;
    std::unique_ptr<Sequence> seq;    // null: free
  };

  Scheduler() = default;
  void admit();
  // Ends a sequence: tells its requester, then stores its states (the prompt's end when
  // `prompt_state`, and the reply's end) and frees its session.
  void retire(Slot& slot, Result<SequenceStats> result, bool prompt_state = false);
  // Stores the state of the slot's first n tokens (of `tokens`) in the prefix cache.
  void snapshot(Slot& slot, std::span<const int32_t> tokens, int64_t n);
  // Samples the next token of a sequence whose logits are ready; false when it is done.
  bool advance(Slot& slot, std::span<const float> logits);
  void update_used_positions();  // for cache_utilisation()

  std::shared_ptr<const runtime::Model> model_;
  std::unique_ptr<runtime::BatchRunner> runner_;
  std::vector<Slot> slots_;
  SchedulerOptions options_;

  mutable std::mutex mu_;                    // guards queue_, cancelled_, next_id_, the counters
  std::condition_variable work_;
  std::deque<std::unique_ptr<Sequence>> queue_;
  std::vector<uint64_t> cancelled_;
  uint64_t next_id_ = 1;
  size_t running_ = 0;
  int64_t used_positions_ = 0;

  PromptRowBudget prompt_budget_{1, 1, 1};  // prompt rows beside decodes (set by create)
};

}  // namespace og::generate
