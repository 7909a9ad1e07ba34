#include "serve/metrics.h"

#include <fmt/format.h>

namespace og::serve {

void Histogram::observe(double x) {
  std::lock_guard lock(mu_);
  size_t i = 0;
  while (i < bounds_.size() && x > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += x;
  ++count_;
}

std::string Histogram::render(const std::string& name, const std::string& help) const {
  std::lock_guard lock(mu_);
  std::string out = fmt::format("# HELP {0} {1}\n# TYPE {0} histogram\n", name, help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds_[i], cumulative);
  }
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, count_, name, sum_, name, count_);
  return out;
}

Metrics::Metrics()
    : time_to_first_token({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}),
      inter_token_latency({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5}),
      e2e_latency({0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480}) {}

std::string Metrics::render(const Gauges& g) const {
  std::string out;
  auto gauge = [&](const char* name, const char* help, double v) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} gauge\n{0} {2}\n", name, help, v);
  };
  auto counter = [&](const char* name, const char* help, uint64_t v) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} counter\n{0} {2}\n", name, help, v);
  };
  gauge("offgraph:num_requests_waiting", "Requests queued for a slot (TotalQueuedRequests).", g.queued);
  gauge("offgraph:num_requests_running", "Requests holding a slot (TotalRunningRequests).", g.running);
  gauge("offgraph:kv_cache_usage_perc", "KV-cache positions in use over all slots, 0 to 1 (KVCacheUtilization).",
        g.kv_cache_usage);
  counter("offgraph:prompt_tokens_total", "Prompt tokens of finished requests.", prompt_tokens.load());
  counter("offgraph:generation_tokens_total", "Generated tokens.", generation_tokens.load());
  counter("offgraph:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.", prefix_cache_queries.load());
  counter("offgraph:prefix_cache_hits_total", "Prompt tokens restored from the prefix cache.", prefix_cache_hits.load());
  out += fmt::format("# HELP offgraph:request_success_total Finished requests by outcome.\n"
                     "# TYPE offgraph:request_success_total counter\n"
                     "offgraph:request_success_total{{outcome=\"ok\"}} {}\n"
                     "offgraph:request_success_total{{outcome=\"error\"}} {}\n",
                     requests_ok.load(), requests_error.load());
  counter("offgraph:client_disconnects_total", "Requests whose client left before the answer ended (cancelled at once).",
          client_disconnects.load());
  out += time_to_first_token.render("offgraph:time_to_first_token_seconds", "Submit to first generated token.");
  out += inter_token_latency.render("offgraph:inter_token_latency_seconds", "Time between consecutive generated tokens.");
  out += e2e_latency.render("offgraph:e2e_request_latency_seconds", "Submit to the end of generation.");
  return out;
}

}  // namespace og::serve
