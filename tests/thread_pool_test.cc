// src/base thread pool: every task runs exactly once, for any thread count
// and any number of concurrent callers (counted here with atomics, not by the pool).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <cstdint>
#include <thread>
#include <vector>

#include "base/thread_pool.h"

namespace og {
namespace {

TEST(ThreadPool, RunsEveryTaskExactlyOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{1000}}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      for (int rep = 0; rep < 50; ++rep) pool.run(n, [&](int64_t t) { hits[t].fetch_add(1); });
      for (int64_t t = 0; t < n; ++t) ASSERT_EQ(hits[t].load(), 50) << "threads " << threads << " n " << n;
    }
  }
}

TEST(ThreadPool, ConcurrentCallersShareOnePoolWithoutLosingTasks) {
  ThreadPool pool(2);
  constexpr int kCallers = 4, kRuns = 200, kTasks = 37;
  std::vector<std::atomic<int64_t>> sums(kCallers);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRuns; ++r) pool.run(kTasks, [&](int64_t t) { sums[c].fetch_add(t + 1); });
    });
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(sums[c].load(), int64_t{kRuns} * kTasks * (kTasks + 1) / 2);
}

// The CPUs this process may run on, from /proc/self/status ("Cpus_allowed_list: 0-3,6").
std::set<int> allowed_cpus() {
  std::ifstream in("/proc/self/status");
  std::string line;
  std::set<int> out;
  while (std::getline(in, line)) {
    if (line.rfind("Cpus_allowed_list:", 0) != 0) continue;
    std::stringstream ranges(line.substr(line.find(':') + 1));
    std::string r;
    while (std::getline(ranges, r, ',')) {
      const size_t dash = r.find('-');
      const int lo = std::stoi(r), hi = dash == std::string::npos ? lo : std::stoi(r.substr(dash + 1));
      for (int c = lo; c <= hi; ++c) out.insert(c);
    }
  }
  return out;
}

// physical_cores() reads sysfs topology; this counts the same cores another way: distinct
// (physical id, core id) pairs of /proc/cpuinfo over the CPUs the process may use.
TEST(ThreadPool, PhysicalCoresCountsDistinctCoresOfTheAllowedCpus) {
  const std::set<int> allowed = allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  int cpu = -1, package = -1;
  std::set<std::pair<int, int>> cores;
  bool has_topology = false;
  auto value = [&] { return std::stoi(line.substr(line.find(':') + 1)); };
  while (std::getline(in, line)) {
    if (line.rfind("processor", 0) == 0) cpu = value();
    else if (line.rfind("physical id", 0) == 0) package = value();
    else if (line.rfind("core id", 0) == 0) {
      has_topology = true;
      if (allowed.count(cpu)) cores.insert({package, value()});
    }
  }
  const int n = physical_cores();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, static_cast<int>(allowed.size()));
  if (has_topology) EXPECT_EQ(n, static_cast<int>(cores.size()));
}

}  // namespace
}  // namespace og
