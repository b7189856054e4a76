// ThreadPool: a job is a chunk counter; waiting threads spin briefly, then sleep on a
// condition variable (see thread_pool.h for the protocol).
#include "runtime/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

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
      // The job word holds a participant count below 2^kParticipantBits.
      threads_(std::min(num_threads > 0 ? num_threads : Cores(), (1 << kParticipantBits) - 1)),
      spin_us_(SpinMicros(num_threads, spin_us)),
      wake_all_([] {
        const char* v = std::getenv("COIL_POOL_WAKE_ALL");
        return v != nullptr && v[0] == '1';
      }()) {
  if (team_ != nullptr) return;
  num_threads = threads_;
  slots_ = std::make_unique<WorkerSlot[]>(num_threads - 1);
  workers_.reserve(num_threads - 1);
  for (int i = 0; i + 1 < num_threads; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < workers_.size(); ++i) slots_[i].cv.notify_all();
  }
  for (std::thread& t : workers_) t.join();
}

std::vector<int64_t> ThreadPool::JobsPerWorker() const {
  std::vector<int64_t> out;
  for (size_t i = 0; i < workers_.size(); ++i) out.push_back(slots_[i].jobs.load());
  return out;
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

// [Note: waking only the participants]
// A job of C chunks can use C - 1 workers beside the caller; waking the others (every worker,
// as this pool once did) costs a futex wake-up per sleeping worker and makes the caller wait
// for the slowest of them to be scheduled, check in and leave: on 16 threads, for a kernel
// of 2 to 4 chunks, that was most of the kernel's time. Now the caller publishes the job word
// (generation, participants P) after the job's fields and busy_workers_ = P, and wakes
// workers 0 .. P - 1 only (those marked sleeping). A worker that sees a new word takes part
// if its index is below P, else records the word and goes back to waiting. Why this is safe:
// - A participant of job g cannot miss it: the word stays g until busy_workers_ reaches 0,
//   which needs this participant's own decrement.
// - A non-participant may read a later word than the one that woke it (it then judges that
//   one, which is the current job) or skip a job entirely: it owes that job nothing.
// - Generation and count are one atomic, so no worker pairs g's count with g + 1's job.
// - The job's fields are written before the seq_cst word store and read after the worker's
//   seq_cst load of it; the caller reuses them only after every participant's decrement.
void ThreadPool::WorkerLoop(int index) {
  in_parallel_region = true;
  WorkerSlot& slot = slots_[index];
  uint64_t seen = 0;
  auto ready = [&] { return stop_.load() || job_.load() != seen; };
  while (true) {
    if (!SpinUntil(ready)) {
      std::unique_lock<std::mutex> lock(mu_);
      slot.sleeping.store(true);
      slot.cv.wait(lock, ready);
      slot.sleeping.store(false);
    }
    if (stop_.load()) return;
    seen = job_.load();
    if (static_cast<uint64_t>(index) >= Participants(seen)) continue;  // not in this job
    slot.jobs.store(slot.jobs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    RunChunks();
    // The last participant out wakes the caller if it sleeps.
    if (busy_workers_.fetch_sub(1) == 1 && caller_sleeping_.load() > 0) {
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
  const int64_t chunks = (n + chunk - 1) / chunk;
  fn_ = &fn;
  n_ = n;
  chunk_ = chunk;
  next_.store(0, std::memory_order_relaxed);
  if (team_ != nullptr) {
    // No more threads than chunks: a team thread without a chunk would only be woken.
    team_->run(&TeamEntry, this, static_cast<unsigned>(std::min(threads, chunks)));
    fn_ = nullptr;
    return;
  }
  // The caller takes chunks too: chunks - 1 workers at most.
  const int participants = static_cast<int>(std::min<int64_t>(
      static_cast<int64_t>(workers_.size()), wake_all_ ? threads : chunks - 1));
  busy_workers_.store(participants, std::memory_order_relaxed);
  const uint64_t generation = (job_.load() >> kParticipantBits) + 1;
  job_.store((generation << kParticipantBits) | static_cast<uint64_t>(participants));
  for (int i = 0; i < participants; ++i) {
    if (slots_[i].sleeping.load()) {
      std::lock_guard<std::mutex> lock(mu_);
      slots_[i].cv.notify_one();
    }
  }
  in_parallel_region = true;
  RunChunks();
  in_parallel_region = false;
  // Every participant must have left this job before its state is reused.
  auto done = [&] { return busy_workers_.load() == 0; };
  if (!SpinUntil(done)) {
    std::unique_lock<std::mutex> lock(mu_);
    caller_sleeping_.fetch_add(1);
    done_cv_.wait(lock, done);
    caller_sleeping_.fetch_sub(1);
  }
  fn_ = nullptr;
}

}  // namespace coil::cpu
