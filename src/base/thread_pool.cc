#include "base/thread_pool.h"

#include <sched.h>

#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define OG_PAUSE() _mm_pause()
#elif defined(__aarch64__)
#define OG_PAUSE() asm volatile("yield")
#else
#define OG_PAUSE() ((void)0)
#endif

namespace og {
namespace {

constexpr uint64_t kClosed = 1ull << 31;
constexpr uint64_t kCountMask = kClosed - 1;
constexpr auto kSpin = std::chrono::microseconds(50);

int read_int(const std::string& path) {
  std::ifstream in(path);
  int v = -1;
  if (!(in >> v)) return -1;
  return v;
}

}  // namespace

int physical_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    const unsigned n = std::thread::hardware_concurrency();
    return n > 0 ? static_cast<int>(n) : 1;
  }
  std::set<std::pair<int, int>> cores;  // (package, core)
  int cpus = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    ++cpus;
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    const int pkg = read_int(dir + "physical_package_id"), core = read_int(dir + "core_id");
    if (pkg < 0 || core < 0) return cpus > 0 ? CPU_COUNT(&set) : 1;  // no topology: count CPUs
    cores.insert({pkg, core});
  }
  return cores.empty() ? 1 : static_cast<int>(cores.size());
}

ThreadPool* default_thread_pool() {
  static ThreadPool pool(0);
  return &pool;
}

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = physical_cores();
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::claim_tasks() {
  for (int64_t t = next_.fetch_add(1, std::memory_order_relaxed); t < n_tasks_;
       t = next_.fetch_add(1, std::memory_order_relaxed))
    fn_(ctx_, t);
}

void ThreadPool::run_erased(int64_t n_tasks, TaskFn fn, const void* ctx) {
  if (n_tasks <= 0) return;
  std::unique_lock<std::mutex> lock(busy_, std::defer_lock);
  if (workers_.empty() || n_tasks == 1 || !lock.try_lock()) {
    for (int64_t t = 0; t < n_tasks; ++t) fn(ctx, t);
    return;
  }
  // No worker is inside a job here (the previous run() waited for them): publish.
  fn_ = fn;
  ctx_ = ctx;
  n_tasks_ = n_tasks;
  next_.store(0, std::memory_order_relaxed);
  const uint32_t gen = generation_.load(std::memory_order_relaxed) + 1;
  state_.store(uint64_t{gen} << 32, std::memory_order_release);
  generation_.store(gen, std::memory_order_release);
  generation_.notify_all();
  claim_tasks();
  // Every task is claimed: close the job to latecomers, then wait for those inside. A
  // worker still busy after a few microseconds may have been preempted (a shared machine):
  // yield the core rather than spin against it.
  uint64_t s = state_.fetch_or(kClosed, std::memory_order_acq_rel) | kClosed;
  for (int i = 0; (s & kCountMask) != 0; ++i) {
    if (i < 2000) {
      OG_PAUSE();
    } else {
      std::this_thread::yield();
    }
    s = state_.load(std::memory_order_acquire);
  }
}

void ThreadPool::worker_loop() {
  uint32_t seen = 0;
  for (;;) {
    uint32_t gen = generation_.load(std::memory_order_acquire);
    if (gen == seen) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 1;; ++i) {
        OG_PAUSE();
        gen = generation_.load(std::memory_order_acquire);
        if (gen != seen) break;
        if (i % 16 == 0 && std::chrono::steady_clock::now() - start > kSpin) {
          generation_.wait(seen, std::memory_order_acquire);
          gen = generation_.load(std::memory_order_acquire);
          if (gen != seen) break;
        }
      }
    }
    seen = gen;
    if (stop_.load(std::memory_order_acquire)) return;
    // Join job `gen` unless it is closed or already replaced.
    uint64_t s = state_.load(std::memory_order_acquire);
    bool joined = false;
    while ((s >> 32) == gen && (s & kClosed) == 0) {
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        joined = true;
        break;
      }
    }
    if (!joined) continue;
    claim_tasks();
    state_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace og
