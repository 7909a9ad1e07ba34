// A persistent pool of worker threads for data-parallel kernels: no thread is created per
// op. run(n, fn) calls fn(task) for every task in [0, n) on the calling thread and the
// workers, which claim tasks one at a time from a shared counter (so a core slowed by
// another process simply takes fewer tasks), and returns when every task is done.
//
// Kernels give each task a fixed piece of the output (a block of rows, a kv head), and the
// arithmetic of a piece never depends on which thread runs it: results are identical for
// any thread count.
//
// Concurrency: run() may be called from several threads at once (sessions sharing a pool).
// One call at a time gets the workers; a call that finds them busy runs its tasks on its
// own thread instead of waiting, so concurrent callers neither block nor deadlock.
// Idle workers spin briefly (about 50 us) after a job, so the next op of a decode step
// starts without a wake-up, then sleep on a futex. A worker that wakes after the caller
// has finished every task does not join that job, so a descheduled worker never delays it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace og {

// Physical cores available to this process (SMT siblings counted once), at least 1.
int physical_cores();

class ThreadPool;
// The process-wide pool of physical_cores() threads, created on first use; sessions use it
// unless told otherwise.
ThreadPool* default_thread_pool();

class ThreadPool {
 public:
  // threads: total threads that work on a job, including the caller; 0 means physical_cores().
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(task) for task in [0, n_tasks); returns when all calls have returned.
  template <typename Fn>
  void run(int64_t n_tasks, const Fn& fn) {
    run_erased(n_tasks, &invoke<Fn>, &fn);
  }

 private:
  using TaskFn = void (*)(const void* ctx, int64_t task);
  template <typename Fn>
  static void invoke(const void* ctx, int64_t task) {
    (*static_cast<const Fn*>(ctx))(task);
  }
  void run_erased(int64_t n_tasks, TaskFn fn, const void* ctx);
  void worker_loop();
  void claim_tasks();

  std::vector<std::thread> workers_;
  std::mutex busy_;  // held by the run() that owns the workers
  // The current job; written only while no worker is inside a job.
  TaskFn fn_ = nullptr;
  const void* ctx_ = nullptr;
  int64_t n_tasks_ = 0;
  std::atomic<int64_t> next_{0};  // next unclaimed task
  // Job state: generation (high 32 bits) | closed (bit 31) | workers inside (low 31 bits).
  std::atomic<uint64_t> state_{0};
  std::atomic<uint32_t> generation_{0};  // futex word the idle workers sleep on
  std::atomic<bool> stop_{false};
};

}  // namespace og
