// A fixed pool of worker threads for the CPU runtime: ParallelFor splits [0, n) into chunks
// that the workers and the calling thread take from a shared counter.
//
//   ThreadPool pool(4);  // the caller plus 3 workers
//   pool.ParallelFor(rows, /*grain=*/16, [&](int64_t begin, int64_t end) { ... });
//
// A call allocates nothing. Calls from several threads are serialized (one job at a time); a
// ParallelFor from inside a chunk (or from a pool thread) runs inline on the current thread.
//
// Waiting: a model runs many short kernels back to back, and a sleeping thread takes several
// microseconds (tens on a busy machine) to wake. So a worker that finished a job, and a caller
// waiting for the last worker, first spin for a short while (`spin_us`, 20 us by default)
// watching for the next job or the end of this one, and only then sleep on a condition
// variable. The spin is short and bounded: a pool between runs, or next to oneDNN's OpenMP
// threads during a convolution, costs (almost) nothing.
//
// Waking: a job wakes only the workers it can use: with C chunks, C - 1 workers (the caller
// takes chunks too), the lowest-numbered first, and the caller waits only for those. A job
// word (generation and participant count in one atomic) tells each worker whether it is in;
// the others do not wake, or go back to waiting ([Note: waking only the participants] in
// thread_pool.cc).
//
// A pool made with a ThreadTeam starts no workers: each job runs on the team's threads
// instead (libgomp's, which oneDNN uses: dnnl_api.h's OpenMpTeam), so that the generated
// kernels and the externs share one set of threads and one wait policy.
#ifndef COIL_RUNTIME_CPU_THREAD_POOL_H_
#define COIL_RUNTIME_CPU_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace coil::cpu {

// Another library's thread team: run(fn, arg, threads) calls fn(arg) once on each of up to
// `threads` threads, the calling thread among them, and returns when every call has returned.
struct ThreadTeam {
  void (*run)(void (*fn)(void*), void* arg, unsigned threads) = nullptr;
};

class ThreadPool {
 public:
  // `num_threads` threads take part in each ParallelFor, the calling thread included (so
  // num_threads - 1 workers are started); 0 means std::thread::hardware_concurrency().
  // `spin_us`: how long waiting threads spin before sleeping (0: sleep at once; always 0 with
  // more threads than cores).
  // `team` (not owned, outlives the pool; nullptr: the pool's own workers) runs every job.
  explicit ThreadPool(int num_threads = 0, int spin_us = 20, const ThreadTeam* team = nullptr);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return threads_; }
  // How many jobs each worker (not the calling thread) has taken part in, worker 0 first:
  // for tests of which workers a job wakes. Empty on a team.
  std::vector<int64_t> JobsPerWorker() const;
  // Whether jobs run on another library's team (the constructor's `team`).
  bool on_team() const { return team_ != nullptr; }

  // Calls fn(begin, end) on disjoint chunks that cover [0, n) exactly once, each at least
  // `grain` long except the last, and returns when every chunk has run. Runs inline (one call
  // fn(0, n)) when n <= grain, with one thread, or when nested. `fn` must not throw.
  void ParallelFor(int64_t n, int64_t grain, absl::FunctionRef<void(int64_t, int64_t)> fn);

 private:
  void WorkerLoop(int index);
  // A team thread's part of the current job (`self` is the pool).
  static void TeamEntry(void* self);
  // Takes chunks of the current job until none is left.
  void RunChunks();
  // Spins up to spin_us_ until `done()`; returns whether it became true.
  template <typename Done>
  bool SpinUntil(Done done) const;

  std::vector<std::thread> workers_;
  const ThreadTeam* const team_;
  const int threads_;
  const int spin_us_;
  // COIL_POOL_WAKE_ALL=1 (read at construction): every job wakes every worker, as before the
  // participant count (for A/B measurements).
  const bool wake_all_;
  std::mutex call_mu_;  // one ParallelFor at a time

  // The job word: (generation << kParticipantBits) | participants, workers 0 .. participants
  // - 1 take part. One atomic, so a worker never pairs one job's generation with another's
  // count.
  static constexpr int kParticipantBits = 16;
  static uint64_t Participants(uint64_t word) {
    return word & ((uint64_t{1} << kParticipantBits) - 1);
  }

  // One worker's wait: its own condition variable, so a job wakes only its participants.
  struct alignas(64) WorkerSlot {
    std::condition_variable cv;      // a job that includes this worker, or stop
    std::atomic<bool> sleeping{false};
    std::atomic<int64_t> jobs{0};    // JobsPerWorker (written by this worker only)
  };

  // Sleeping and waking: a waiter marks itself sleeping under mu_ before it blocks, and a
  // notifier that changed the watched atomic takes mu_ before notifying when it is marked
  // (both seq_cst, so one of the two sees the other's write).
  std::mutex mu_;
  std::unique_ptr<WorkerSlot[]> slots_;  // one per worker
  std::condition_variable done_cv_;      // the last participant left the job
  std::atomic<int> caller_sleeping_{0};
  std::atomic<uint64_t> job_{0};         // the job word, a new generation per job
  std::atomic<bool> stop_{false};
  std::atomic<int> busy_workers_{0};     // participants not yet done with the current job

  // The current job (written by the caller before generation_ changes).
  absl::FunctionRef<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 1;
  std::atomic<int64_t> next_{0};
};

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_THREAD_POOL_H_
