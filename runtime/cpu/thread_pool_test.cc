// ThreadPool: every index exactly once, grain respected, inline cases, nested calls, several
// threads calling ParallelFor on one pool at the same time, spinning and sleeping workers; the
// same on another library's thread team (a stand-in team of fresh std::threads here; libgomp's
// in openmp_team_test).
#include "runtime/cpu/thread_pool.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace coil::cpu {
namespace {

// Runs ParallelFor(n, grain) and checks each index was visited once and chunks >= grain.
void CheckCover(ThreadPool& pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> hits(n);
  std::atomic<int> short_chunks{0};
  pool.ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
    ASSERT_LE(0, begin);
    ASSERT_LT(begin, end);
    ASSERT_LE(end, n);
    if (end - begin < grain && end != n) short_chunks.fetch_add(1);
    for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " index " << i;
  EXPECT_EQ(short_chunks.load(), 0);
}

TEST(ThreadPoolTest, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {1, 2, 7, 64, 1000, 12345}) {
      for (int64_t grain : {1, 3, 100, 100000}) CheckCover(pool, n, grain);
    }
  }
}

TEST(ThreadPoolTest, ZeroThreadsMeansHardwareConcurrency) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.num_threads(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  CheckCover(pool, 100, 1);
}

TEST(ThreadPoolTest, EmptyAndSmallRangesRunInline) {
  ThreadPool pool(4);
  int calls = 0;
  pool.ParallelFor(0, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  const std::thread::id me = std::this_thread::get_id();
  pool.ParallelFor(10, 10, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 10);
    EXPECT_EQ(std::this_thread::get_id(), me);
  });
  EXPECT_EQ(calls, 1);
}

TEST(ThreadPoolTest, UsesSeveralThreads) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> hits(4000);
  std::atomic<bool> saw_other{false};
  const std::thread::id me = std::this_thread::get_id();
  // Enough slow chunks that workers take some (they wake while the caller works).
  pool.ParallelFor(4000, 1, [&](int64_t b, int64_t e) {
    if (std::this_thread::get_id() != me) saw_other = true;
    for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  });
  EXPECT_TRUE(saw_other.load());
}

TEST(ThreadPoolTest, NestedCallsRunInline) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(50 * 40);
  pool.ParallelFor(50, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      pool.ParallelFor(40, 1, [&](int64_t b2, int64_t e2) {
        for (int64_t j = b2; j < e2; ++j) hits[i * 40 + j].fetch_add(1);
      });
    }
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ThreadPoolTest, ConcurrentCallersUnderContention) {
  ThreadPool pool(3);
  constexpr int kCallers = 6, kRounds = 200;
  std::vector<std::thread> callers;
  std::atomic<int64_t> errors{0};
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r) {
        const int64_t n = 1 + (c * 131 + r * 17) % 3000;
        std::vector<int> hits(n, 0);  // each index written by one chunk only
        pool.ParallelFor(n, 1 + r % 7, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) ++hits[i];
        });
        for (int64_t i = 0; i < n; ++i) {
          if (hits[i] != 1) errors.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(errors.load(), 0);
}

// Waiting threads spin before they sleep; either way (no spin, a spin longer than the gaps
// between jobs, jobs after the workers fell asleep) every job runs completely.
TEST(ThreadPoolTest, SpinningAndSleepingWorkersTakeEveryJob) {
  for (int spin_us : {0, 20, 2000}) {
    ThreadPool pool(2, spin_us);
    for (int round = 0; round < 200; ++round) CheckCover(pool, 64 + round % 5, 4);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // workers fall asleep
    CheckCover(pool, 1000, 1);
  }
}

// A job of C chunks wakes C - 1 workers, the lowest-numbered: with 2 chunks only worker 0
// ever takes part, however many workers wait (spinning or asleep), and the others none.
TEST(ThreadPoolTest, AJobWakesOnlyTheWorkersItsChunksCanUse) {
  for (int spin_us : {0, 20}) {
    ThreadPool pool(8, spin_us);
    // n = 2 * grain: chunk = grain (n / 32 < grain), so 2 chunks: the caller and worker 0.
    for (int round = 0; round < 300; ++round) {
      CheckCover(pool, 200, 100);
      if (round % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::vector<int64_t> jobs = pool.JobsPerWorker();
    ASSERT_EQ(jobs.size(), 7u);
    EXPECT_EQ(jobs[0], 300) << "spin_us " << spin_us;
    for (size_t w = 1; w < jobs.size(); ++w) EXPECT_EQ(jobs[w], 0) << "worker " << w;
    // 4 chunks: workers 0-2.
    for (int round = 0; round < 100; ++round) CheckCover(pool, 400, 100);
    jobs = pool.JobsPerWorker();
    EXPECT_EQ(jobs[1], 100);
    EXPECT_EQ(jobs[2], 100);
    for (size_t w = 3; w < jobs.size(); ++w) EXPECT_EQ(jobs[w], 0) << "worker " << w;
  }
}

// Jobs of every participant count back to back, from several callers, with the workers
// spinning, asleep or in between: every index exactly once every time, and a caller never
// returns before its job's participants are done (the chunks write a per-call vector that
// the caller checks and frees right after).
TEST(ThreadPoolTest, StressMixedParticipantCounts) {
  for (int spin_us : {0, 5, 20}) {
    ThreadPool pool(6, spin_us);
    constexpr int kCallers = 3, kRounds = 400;
    std::atomic<int64_t> errors{0};
    std::vector<std::thread> callers;
    for (int c = 0; c < kCallers; ++c) {
      callers.emplace_back([&, c] {
        for (int r = 0; r < kRounds; ++r) {
          const int64_t grain = 1 + (r * 7 + c) % 50;
          const int64_t n = grain + 1 + (r * 131 + c * 17) % (7 * grain);  // 2 .. 8 chunks
          auto hits = std::make_unique<std::vector<int>>(n, 0);
          pool.ParallelFor(n, grain, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) ++(*hits)[i];
          });
          for (int64_t i = 0; i < n; ++i) {
            if ((*hits)[i] != 1) errors.fetch_add(1);
          }
          hits.reset();
          if (r % 97 == c) std::this_thread::sleep_for(std::chrono::microseconds(300));
        }
      });
    }
    for (std::thread& t : callers) t.join();
    EXPECT_EQ(errors.load(), 0) << "spin_us " << spin_us;
  }
}

TEST(ThreadPoolTest, ManyPoolsStartAndStop) {
  for (int i = 0; i < 20; ++i) {
    auto pool = std::make_unique<ThreadPool>(1 + i % 4);
    CheckCover(*pool, 257, 2);
  }
}

// A stand-in for libgomp's team: fn(arg) on `threads` threads, the caller being one of them.
std::atomic<int> team_calls{0};
std::atomic<unsigned> team_max_threads{0};
void RunOnFreshThreads(void (*fn)(void*), void* arg, unsigned threads) {
  team_calls.fetch_add(1);
  if (threads > team_max_threads.load()) team_max_threads = threads;
  std::vector<std::thread> others;
  for (unsigned i = 1; i < threads; ++i) others.emplace_back([&] { fn(arg); });
  fn(arg);
  for (std::thread& t : others) t.join();
}

TEST(ThreadPoolTest, RunsJobsOnATeam) {
  const ThreadTeam team{&RunOnFreshThreads};
  for (int threads : {1, 2, 5}) {
    ThreadPool pool(threads, 20, &team);
    EXPECT_TRUE(pool.on_team());
    EXPECT_EQ(pool.num_threads(), threads);
    team_calls = 0;
    team_max_threads = 0;
    for (int64_t n : {1, 2, 7, 64, 1000, 12345}) {
      for (int64_t grain : {1, 3, 100, 100000}) CheckCover(pool, n, grain);
    }
    // One thread or a range within one grain runs inline; otherwise the team runs it, with
    // no more threads than the pool has (nor than there are chunks).
    if (threads == 1) {
      EXPECT_EQ(team_calls.load(), 0);
    } else {
      EXPECT_GT(team_calls.load(), 0);
      EXPECT_EQ(team_max_threads.load(), static_cast<unsigned>(threads));
    }
    team_max_threads = 0;
    CheckCover(pool, 2, 1);
    EXPECT_LE(team_max_threads.load(), 2u);
  }
  ThreadPool own(3, 20, nullptr);
  EXPECT_FALSE(own.on_team());
}

TEST(ThreadPoolTest, NestedCallsOnATeamRunInline) {
  const ThreadTeam team{&RunOnFreshThreads};
  ThreadPool pool(3, 20, &team);
  std::vector<std::atomic<int>> hits(50 * 40);
  team_calls = 0;
  pool.ParallelFor(50, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      pool.ParallelFor(40, 1, [&](int64_t b2, int64_t e2) {
        for (int64_t j = b2; j < e2; ++j) hits[i * 40 + j].fetch_add(1);
      });
    }
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  EXPECT_EQ(team_calls.load(), 1);  // the inner calls ran inline on the team's threads
  // After the job the caller is outside a region again: its next call goes to the team.
  CheckCover(pool, 100, 1);
  EXPECT_EQ(team_calls.load(), 2);
}

}  // namespace
}  // namespace coil::cpu
