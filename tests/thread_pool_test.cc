// src/base thread pool: every task runs exactly once, for any thread count
// and any number of concurrent callers (counted here with atomics, not by the pool).
#include <gtest/gtest.h>

#include <atomic>
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

TEST(ThreadPool, PhysicalCoresIsPositive) { EXPECT_GE(physical_cores(), 1); }

}  // namespace
}  // namespace og
