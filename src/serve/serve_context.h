// What a request handler may touch, and nothing more: the backend (scheduler, tokenizer and
// template, the names it answers to), the metrics, the jobs in flight and whether the
// server drains. Handlers never see Server or the HTTP library.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "generate/model_text.h"
#include "generate/scheduler.h"
#include "serve/metrics.h"

namespace og::serve {

// What the server drives, built by the caller once the program is loaded.
struct Backend {
  std::unique_ptr<generate::Scheduler> scheduler;
  generate::ModelText text;
  std::string model_name;               // the id /v1/models lists and requests may name
  int64_t ctx_len = 0;                  // positions per sequence
};

struct Job;

// Jobs submitted to the scheduler and not yet done (so shutdown can cancel them).
class JobRegistry {
 public:
  void add(const std::shared_ptr<Job>& job);
  void remove(const std::shared_ptr<Job>& job);
  size_t size() const;
  void cancel_all(generate::Scheduler& scheduler);

 private:
  mutable std::mutex mu_;
  std::unordered_set<std::shared_ptr<Job>> jobs_;
};

struct ServeContext {
  Backend& backend;
  Metrics& metrics;
  JobRegistry& jobs;
  const std::atomic<bool>& draining;    // shutting down: new jobs are cancelled at once
};

}  // namespace og::serve
