// Server metrics in the Prometheus text format. The three gauges the Gateway API Inference
// Extension's model-server protocol asks of a backend (TotalQueuedRequests,
// TotalRunningRequests, KVCacheUtilization) come from the scheduler when scraped; counters
// and histograms are fed by the request paths. docs/serving.md maps the names.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace og::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}
  void observe(double x);
  // "# TYPE name histogram" and its _bucket/_sum/_count lines.
  std::string render(const std::string& name, const std::string& help) const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative); the last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

struct Gauges {
  double queued = 0, running = 0, kv_cache_usage = 0;  // usage as a fraction in [0, 1]
};

class Metrics {
 public:
  Metrics();
  std::atomic<uint64_t> prompt_tokens{0}, generation_tokens{0};
  std::atomic<uint64_t> prefix_cache_queries{0}, prefix_cache_hits{0};  // in tokens, as vLLM counts
  std::atomic<uint64_t> requests_ok{0}, requests_error{0};
  std::atomic<uint64_t> client_disconnects{0};  // clients gone before their answer ended (jobs cancelled)
  Histogram time_to_first_token, inter_token_latency, e2e_latency;

  std::string render(const Gauges& g) const;
};

}  // namespace og::serve
