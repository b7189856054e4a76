// ThreadPool: a job is a chunk counter; waiting threads spin briefly, then sleep on a
// condition variable (see thread_pool.h for the protocol).
#include "runtime/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace coil::cpu {
namespace {

// True on pool workers and on a thread inside ParallelFor: nested calls run inline.
thread_local bool in_parallel_region = false;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

int Cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// More threads than cores: a spinning thread holds a core a thread with work needs, so wait
// by sleeping only.
int SpinMicros(int num_threads, int spin_us) {
  return num_threads > Cores() ? 0 : std::max(0, spin_us);
}

}  // namespace

ThreadPool::ThreadPool(int num_threads, int spin_us, const ThreadTeam* team)
    : team_(team != nullptr && team->run != nullptr ? team : nullptr),
      threads_(num_threads > 0 ? num_threads : Cores()),
      spin_us_(SpinMicros(num_threads, spin_us)) {
  if (team_ != nullptr) return;
  num_threads = threads_;
  workers_.reserve(num_threads - 1);
  for (int i = 0; i + 1 < num_threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  { std::lock_guard<std::mutex> lock(mu_); }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

template <typename Done>
bool ThreadPool::SpinUntil(Done done) const {
  if (spin_us_ == 0) return done();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

void ThreadPool::RunChunks() {
  while (true) {
    const int64_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (begin >= n_) return;
    (*fn_)(begin, std::min(n_, begin + chunk_));
  }
}

void ThreadPool::TeamEntry(void* self) {
  const bool was = in_parallel_region;
  in_parallel_region = true;
  static_cast<ThreadPool*>(self)->RunChunks();
  in_parallel_region = was;
}

void ThreadPool::WorkerLoop() {
  in_parallel_region = true;
  uint64_t seen = 0;
  auto ready = [&] { return stop_.load() || generation_.load() != seen; };
  while (true) {
    if (!SpinUntil(ready)) {
      std::unique_lock<std::mutex> lock(mu_);
      sleepers_.fetch_add(1);
      work_cv_.wait(lock, ready);
      sleepers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = generation_.load();
    RunChunks();
    // The last worker out wakes the caller if it sleeps.
    if (busy_workers_.fetch_sub(1) == 1 && sleepers_.load() > 0) {
      { std::lock_guard<std::mutex> lock(mu_); }
      done_cv_.notify_all();
    }
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             absl::FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (n <= grain || threads_ == 1 || in_parallel_region) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mu_);
  // About four chunks per thread balance uneven rows without much counter traffic.
  const int64_t threads = num_threads();
  const int64_t chunk = std::max(grain, (n + 4 * threads - 1) / (4 * threads));
  fn_ = &fn;
  n_ = n;
  chunk_ = chunk;
  next_.store(0, std::memory_order_relaxed);
  if (team_ != nullptr) {
    // No more threads than chunks: a team thread without a chunk would only be woken.
    const int64_t chunks = (n + chunk - 1) / chunk;
    team_->run(&TeamEntry, this, static_cast<unsigned>(std::min(threads, chunks)));
    fn_ = nullptr;
    return;
  }
  busy_workers_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1);  // publishes the job
  if (sleepers_.load() > 0) {
    { std::lock_guard<std::mutex> lock(mu_); }
    work_cv_.notify_all();
  }
  in_parallel_region = true;
  RunChunks();
  in_parallel_region = false;
  // Every worker must have left this job before its state is reused.
  auto done = [&] { return busy_workers_.load() == 0; };
  if (!SpinUntil(done)) {
    std::unique_lock<std::mutex> lock(mu_);
    sleepers_.fetch_add(1);
    done_cv_.wait(lock, done);
    sleepers_.fetch_sub(1);
  }
  fn_ = nullptr;
}

}  // namespace coil::cpu
