#include "generate/scheduler.h"

#include <algorithm>

#include "generate/stop_rules.h"
#include "runtime/cache/cache_policy.h"

namespace og::generate {
namespace {

constexpr int64_t kFirstPromptRows = 4;     // prompt rows of the first such step, before any measurement

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

Result<std::unique_ptr<Scheduler>> Scheduler::create(std::shared_ptr<const runtime::Model> model,
                                                     const SchedulerOptions& o) {
  if (o.max_sequences < 1) return usage_error("max_sequences {} must be at least 1", o.max_sequences);
  if (o.prefill_rows_while_decoding < 0)
    return usage_error("prefill_rows_while_decoding {} must be >= 0", o.prefill_rows_while_decoding);
  if (!(o.prompt_step_ratio > 0) || o.prompt_step_ratio > 1000)
    return usage_error("prompt_step_ratio {} must be above 0 and at most 1000", o.prompt_step_ratio);
  auto s = std::unique_ptr<Scheduler>(new Scheduler());
  s->model_ = model;
  s->options_ = o;
  OG_ASSIGN_OR_RETURN(s->runner_, runtime::BatchRunner::create(model, {.threads = o.threads, .pool = o.pool}));
  // Feeding the prefix store, sessions keep their rings' rows: every stored state then serves
  // any shorter prefix, so a shared prompt is reused to its last shared token on every layer.
  // Never more rows than one state the store can hold.
  const bool keep_history = o.prefix_cache && !runtime::prefix_serves_shorter(model->layout().windows);
  const uint64_t position_bytes =
      runtime::plan_cache_set(model->layout(), o.kv_dtype, 1, 1).position_bytes();
  const int64_t history_limit =
      keep_history ? static_cast<int64_t>(o.prefix_cache->options().budget_bytes / std::max<uint64_t>(1, position_bytes)) : 0;
  for (int32_t i = 0; i < o.max_sequences; ++i) {
    // The sessions never step on their own: their kernels run on the runner's pool.
    OG_ASSIGN_OR_RETURN(auto session, runtime::Session::create(model, {.kv_dtype = o.kv_dtype,
                                                                       .max_ctx_len = o.max_ctx_len,
                                                                       .threads = 1,
                                                                       .keep_history = keep_history,
                                                                       .history_limit = std::max<int64_t>(1, history_limit)}));
    s->slots_.push_back({.session = std::move(session), .seq = nullptr});
  }
  // Adaptive: the first prompt step beside decodes is small (its cost is not known yet; 16
  // rows of a 1B bf16 program cost 3.5 decode steps here), then measured costs size them.
  s->prompt_budget_ = PromptRowBudget(o.prompt_step_ratio, kFirstPromptRows, s->runner_->max_rows());
  return s;
}

Submission Scheduler::submit(SequenceRequest r) {
  if (Status st = r.options.sampling.validate(); !st.is_ok()) return Submission::refused(Refusal::kInvalid, st);
  const int64_t n = static_cast<int64_t>(r.prompt.size());
  if (n == 0) return Submission::refused(Refusal::kInvalid, bad_input("the prompt has no tokens"));
  for (size_t i = 0; i < r.prompt.size(); ++i)
    if (r.prompt[i] < 0 || r.prompt[i] >= model_->vocab_size())
      return Submission::refused(Refusal::kBadToken, bad_input("token id {} at index {} is outside the vocabulary (size {})",
                                                               r.prompt[i], i, model_->vocab_size()));
  // One rule for every caller: the prompt must leave room for at least one generated token.
  const int64_t ctx = slots_.front().session->max_ctx_len();
  if (n > ctx)
    return Submission::refused(Refusal::kContextExceeded, bad_input("prompt of {} tokens exceeds the context of {} tokens", n, ctx));
  if (n == ctx)
    return Submission::refused(Refusal::kContextExceeded,
                               bad_input("prompt of {} tokens fills the context of {} tokens, leaving no room for a completion", n, ctx));
  const int64_t max_tokens = r.options.max_tokens;
  if (max_tokens > 0 && n + max_tokens > ctx)
    return Submission::refused(Refusal::kContextExceeded,
                               bad_input("prompt of {} tokens and max_tokens {} exceed the context of {} tokens", n, max_tokens, ctx));
  auto seq = std::make_unique<Sequence>();
  seq->request = std::move(r);
  seq->submitted = Clock::now();
  std::lock_guard lock(mu_);
  if (options_.max_waiting >= 0) {
    const size_t capacity = slots_.size() + static_cast<size_t>(options_.max_waiting);
    if (running_ + queue_.size() >= capacity)
      return Submission::refused(Refusal::kQueueFull,
                                 resource_error("the server is at capacity ({} requests running or queued)", capacity));
  }
  seq->id = next_id_++;
  const uint64_t id = seq->id;
  queue_.push_back(std::move(seq));
  work_.notify_all();
  return Submission::accepted(id);
}

void Scheduler::cancel(uint64_t id) {
  std::lock_guard lock(mu_);
  cancelled_.push_back(id);
  work_.notify_all();
}

void Scheduler::wait_for_work(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  work_.wait_for(lock, timeout, [&] { return !queue_.empty() || !cancelled_.empty(); });
}

size_t Scheduler::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

size_t Scheduler::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

double Scheduler::cache_utilisation() const {
  std::lock_guard lock(mu_);
  const double capacity = static_cast<double>(slots_.size()) * static_cast<double>(slots_.front().session->max_ctx_len());
  return capacity > 0 ? static_cast<double>(used_positions_) / capacity : 0;
}

void Scheduler::snapshot(Slot& slot, std::span<const int32_t> tokens, int64_t n) {
  if (!options_.prefix_cache || n <= 0) return;
  const auto start = Clock::now();
  auto state = slot.session->copy_prefix(n);
  if (state.is_ok()) options_.prefix_cache->insert(tokens, std::make_shared<const runtime::PrefixState>(std::move(*state)));
  if (slot.seq) slot.seq->stats.snapshot_seconds += seconds_between(start, Clock::now());
}

void Scheduler::retire(Slot& slot, Result<SequenceStats> result, bool prompt_state) {
  Sequence& s = *slot.seq;
  const auto prompt_len = static_cast<int64_t>(s.request.prompt.size());
  // The end of the reply: what a follow-up turn resends. The cache holds the history except
  // a last sampled token that was never fed. A reply of one token fed nothing past the
  // prompt, whose end is stored already or now (a second copy of a long prompt's state would
  // only delay the step).
  const bool reply_state = result.is_ok() && s.prefilled == prompt_len && s.stats.generated_tokens > 0 &&
                           slot.session->length() > prompt_len;
  if (result.is_ok()) result->total_seconds = seconds_between(s.submitted, Clock::now());
  {
    // The slot counts as free before the requester hears of the end: its next request fits.
    std::lock_guard lock(mu_);
    --running_;
  }
  if (s.request.on_done) s.request.on_done(result);
  // The states are copied after the requester has its answer (a 1.5k-token state of a 1B
  // model takes 0.1 s to copy into fresh memory here): the session still holds them, and the
  // next admission, on this thread, comes after.
  if (prompt_state) snapshot(slot, s.request.prompt, prompt_len);
  if (reply_state) snapshot(slot, s.history, slot.session->length());
  slot.seq.reset();
  slot.session->clear();
}

void Scheduler::admit() {
  std::vector<std::unique_ptr<Sequence>> dropped;  // cancelled while queued
  {
    std::lock_guard lock(mu_);
    // Cancellations of queued sequences: drop them; running ones are marked.
    for (uint64_t id : cancelled_) {
      auto it = std::find_if(queue_.begin(), queue_.end(), [&](const auto& q) { return q->id == id; });
      if (it != queue_.end()) {
        dropped.push_back(std::move(*it));
        queue_.erase(it);
        continue;
      }
      for (Slot& slot : slots_)
        if (slot.seq && slot.seq->id == id) slot.seq->cancelled = true;
    }
    cancelled_.clear();
    for (Slot& slot : slots_) {
      if (slot.seq || queue_.empty()) continue;
      slot.seq = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
  }
  for (auto& d : dropped) {
    SequenceStats st;
    st.prompt_tokens = static_cast<int64_t>(d->request.prompt.size());
    st.stop = StopReason::kCancelled;
    st.total_seconds = seconds_between(d->submitted, Clock::now());
    if (d->request.on_done) d->request.on_done(st);
  }
  for (Slot& slot : slots_) {
    if (!slot.seq) continue;
    Sequence& s = *slot.seq;
    if (s.cancelled) {
      s.stats.stop = StopReason::kCancelled;
      retire(slot, s.stats);
      continue;
    }
    if (s.sampler) continue;  // already running
    s.admitted = Clock::now();
    s.sampler.emplace(s.request.options.sampling, s.request.options.stop_ids);
    s.history = s.request.prompt;
    s.stats.prompt_tokens = static_cast<int64_t>(s.request.prompt.size());
    s.stats.queued_seconds = seconds_between(s.submitted, s.admitted);
    slot.session->clear();
    if (options_.prefix_cache && !s.request.on_prompt_logits) {
      const runtime::PrefixMatch hit = options_.prefix_cache->lookup(s.request.prompt);
      if (hit.state && slot.session->restore_prefix(hit.state, hit.length).is_ok()) {
        s.prefilled = hit.length;
        s.stats.cached_tokens = hit.length;
      }
    }
  }
}

bool Scheduler::advance(Slot& slot, std::span<const float> logits) {
  Sequence& s = *slot.seq;
  const GenerateOptions& o = s.request.options;
  // One token's turn, as generate() takes it: generate/stop_rules.h.
  if (max_tokens_reached(o, s.stats.generated_tokens)) {
    s.stats.stop = StopReason::kMaxTokens;
    return false;
  }
  const int32_t token = s.sampler->sample(logits, s.history);
  if (s.stats.generated_tokens == 0) s.stats.first_token_seconds = seconds_between(s.submitted, Clock::now());
  if (is_stop_id(o, token)) {
    s.stats.stop = StopReason::kStopToken;
    return false;
  }
  s.history.push_back(token);
  ++s.stats.generated_tokens;
  if (s.request.on_token && !s.request.on_token(token, logits)) {
    s.stats.stop = StopReason::kCallback;
    return false;
  }
  if (auto why = stop_after(o, s.stats.generated_tokens, slot.session->length(), slot.session->max_ctx_len(),
                            s.sampler->grammar_complete())) {
    s.stats.stop = *why;
    return false;
  }
  s.pending = token;  // enters the cache at the next step
  return true;
}

bool Scheduler::step() {
  const auto admit_start = Clock::now();
  admit();
  // Decodes first (one row each), then prompt chunks in admission order within the budget.
  struct Work {
    Slot* slot;
    int64_t prompt_rows;  // 0: a decode row
  };
  std::vector<Work> work;
  std::vector<runtime::BatchEntry> entries;
  int64_t budget = runner_->max_rows();
  for (Slot& slot : slots_)
    if (slot.seq && slot.seq->pending >= 0) {
      entries.push_back({.session = slot.session.get(), .ids = std::span<const int32_t>(&slot.seq->pending, 1)});
      work.push_back({&slot, 0});
      --budget;
    }
  const auto decodes = static_cast<int64_t>(entries.size());
  if (decodes > 0)
    budget = std::min(budget, options_.prefill_rows_while_decoding > 0 ? options_.prefill_rows_while_decoding
                                                                         : prompt_budget_.rows());
  std::vector<Slot*> prefilling;
  for (Slot& slot : slots_)
    if (slot.seq && slot.seq->pending < 0) prefilling.push_back(&slot);
  std::sort(prefilling.begin(), prefilling.end(), [](Slot* a, Slot* b) { return a->seq->id < b->seq->id; });
  int64_t prompt_rows = 0;
  for (Slot* slot : prefilling) {
    if (budget <= 0) break;
    Sequence& s = *slot->seq;
    const bool all_rows = static_cast<bool>(s.request.on_prompt_logits);
    int64_t n = std::min<int64_t>(all_rows ? std::min(budget, kPromptLogitsRows) : budget,
                                  static_cast<int64_t>(s.request.prompt.size()) - s.prefilled);
    entries.push_back({.session = slot->session.get(),
                       .ids = std::span<const int32_t>(s.request.prompt.data() + s.prefilled, static_cast<size_t>(n)),
                       .logits = all_rows ? runtime::LogitsRows::kAll : runtime::LogitsRows::kLast});
    work.push_back({slot, n});
    budget -= n;
    prompt_rows += n;
  }
  if (entries.empty()) {
    update_used_positions();  // sequences retired above free their positions
    return false;
  }

  StepRecord record{.decode_rows = decodes,
                    .prompt_rows = prompt_rows,
                    .prompt_row_budget = decodes > 0 ? budget + prompt_rows : 0};
  const auto start = Clock::now();
  record.admit_seconds = seconds_between(admit_start, start);
  auto result = runner_->step(entries);
  const auto ran = Clock::now();
  record.run_seconds = seconds_between(start, ran);
  if (!result.is_ok()) {
    for (Work& w : work) retire(*w.slot, result.status());
    if (options_.on_step) options_.on_step(record);
    return true;
  }
  for (size_t i = 0; i < work.size(); ++i) {
    Slot& slot = *work[i].slot;
    Sequence& s = *slot.seq;
    bool prompt_done = false;
    std::span<const float> logits = (*result)[i];  // [V], or [prompt_rows, V] for prompt logits
    if (work[i].prompt_rows > 0 && s.request.on_prompt_logits) {
      s.request.on_prompt_logits(s.prefilled, logits);
      logits = logits.last(static_cast<size_t>(model_->vocab_size()));
    }
    if (work[i].prompt_rows > 0) {
      s.prefilled += work[i].prompt_rows;
      const auto prompt_len = static_cast<int64_t>(s.request.prompt.size());
      prompt_done = s.prefilled == prompt_len;
      if (!prompt_done) continue;
    }
    s.pending = -1;
    // The first token goes out before the prompt's state is copied for the prefix cache (a
    // long prompt's copy takes 140 ms here); sampling leaves the cache as it is, and the
    // copy comes before a retirement clears the session.
    const bool more = advance(slot, logits);
    if (prompt_done && more) snapshot(slot, s.request.prompt, s.prefilled);
    if (!more) retire(slot, s.stats, /*prompt_state=*/prompt_done);
  }
  const auto end = Clock::now();
  if (options_.prefill_rows_while_decoding == 0) prompt_budget_.observe(decodes, prompt_rows, seconds_between(start, end));
  update_used_positions();
  record.after_seconds = seconds_between(ran, end);
  if (options_.on_step) options_.on_step(record);
  return true;
}

void Scheduler::update_used_positions() {
  int64_t used = 0;
  for (const Slot& slot : slots_) used += slot.session->length();
  std::lock_guard lock(mu_);
  used_positions_ = used;
}

}  // namespace og::generate
