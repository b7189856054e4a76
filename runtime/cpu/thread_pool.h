// A fixed pool of worker threads for the CPU runtime: ParallelFor splits [0, n) into chunks
// that the workers and the calling thread take from a shared counter.
//
//   ThreadPool pool(4);  // the caller plus 3 workers
//   pool.ParallelFor(rows, /*grain=*/16, [&](int64_t begin, int64_t end) { ... });
//
// A call allocates nothing. Calls from several threads are serialized (one job at a time); a
// ParallelFor from inside a chunk (or from a pool thread) runs inline on the current thread.
#ifndef COIL_RUNTIME_CPU_THREAD_POOL_H_
#define COIL_RUNTIME_CPU_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace coil::cpu {

class ThreadPool {
 public:
  // `num_threads` threads take part in each ParallelFor, the calling thread included (so
  // num_threads - 1 workers are started); 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) on disjoint chunks that cover [0, n) exactly once, each at least
  // `grain` long except the last, and returns when every chunk has run. Runs inline (one call
  // fn(0, n)) when n <= grain, with one thread, or when nested. `fn` must not throw.
  void ParallelFor(int64_t n, int64_t grain, absl::FunctionRef<void(int64_t, int64_t)> fn);

 private:
  void WorkerLoop();
  // Takes chunks of the current job until none is left.
  void RunChunks();

  std::vector<std::thread> workers_;
  std::mutex call_mu_;  // one ParallelFor at a time

  std::mutex mu_;
  std::condition_variable work_cv_;  // a new job or stop
  std::condition_variable done_cv_;  // the last worker left the job
  uint64_t generation_ = 0;          // guarded by mu_
  bool stop_ = false;                // guarded by mu_
  int busy_workers_ = 0;             // workers not yet done with the current job; mu_

  // The current job (written by the caller before generation_ changes).
  absl::FunctionRef<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 1;
  std::atomic<int64_t> next_{0};
};

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_THREAD_POOL_H_
