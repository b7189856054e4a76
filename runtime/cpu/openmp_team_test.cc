// One thread team (COIL_CPU_POOL=omp, set by the BUILD rule): the executable's ThreadPool runs
// its jobs on libgomp's team, oneDNN's threads. Every index once on several threads, nested
// calls inline, oneDNN GEMMs (multi-threaded and single-threaded) interleaved with pool jobs
// against a float64 product, and the environment restored after loading.

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/thread_pool.h"

namespace coil::cpu {
namespace {

void CheckCover(ThreadPool& pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> hits(n);
  pool.ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
    ASSERT_LE(0, begin);
    ASSERT_LT(begin, end);
    ASSERT_LE(end, n);
    for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " index " << i;
}

TEST(OpenMpTeamTest, PoolJobsRunOnTheTeam) {
  const ThreadTeam* team = ExternThreadTeam();
  ASSERT_NE(team, nullptr) << "COIL_CPU_POOL=omp and oneDNN loadable: libgomp's team";
  // Set only around the library's loading.
  EXPECT_EQ(std::getenv("GOMP_SPINCOUNT"), nullptr);
  EXPECT_EQ(std::getenv("OMP_WAIT_POLICY"), nullptr);
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads, 20, team);
    EXPECT_TRUE(pool.on_team());
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {1, 2, 7, 64, 1000, 12345}) {
      for (int64_t grain : {1, 3, 100, 100000}) CheckCover(pool, n, grain);
    }
  }
  ThreadPool pool(4, 20, team);
  std::mutex mu;
  std::set<std::thread::id> seen;
  std::vector<std::atomic<int>> hits(50 * 40);
  pool.ParallelFor(50, 1, [&](int64_t b, int64_t e) {
    {
      std::lock_guard<std::mutex> lock(mu);
      seen.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));  // every thread gets chunks
    for (int64_t i = b; i < e; ++i) {
      pool.ParallelFor(40, 1, [&](int64_t b2, int64_t e2) {  // nested: inline
        for (int64_t j = b2; j < e2; ++j) hits[i * 40 + j].fetch_add(1);
      });
    }
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  EXPECT_GT(seen.size(), 1u);
}

// x[m, k] @ y[k, n] through the oneDNN extern on `threads`, against a float64 product.
void CheckMm(int64_t m, int64_t k, int64_t n, int threads, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(m * k), y(k * n), out(m * n, NAN);
  for (float& v : x) v = u(rng);
  for (float& v : y) v = u(rng);
  std::vector<ExternTensor> in = {
      {proto::FLOAT32, {m, k}, reinterpret_cast<char*>(x.data())},
      {proto::FLOAT32, {k, n}, reinterpret_cast<char*>(y.data())}};
  const ExternTensor o{proto::FLOAT32, {m, n}, reinterpret_cast<char*>(out.data())};
  const AttrMap attrs;
  ASSERT_TRUE(RunExtern("aten.mm", ExternArgs{in, o, attrs, threads}).ok());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) want += double(x[i * k + p]) * y[p * n + j];
      ASSERT_NEAR(out[i * n + j], want, 1e-4 * (1 + std::abs(want))) << i << ", " << j;
    }
  }
}

TEST(OpenMpTeamTest, OneDnnCallsBetweenPoolJobs) {
  const ThreadTeam* team = ExternThreadTeam();
  ASSERT_NE(team, nullptr);
  ThreadPool pool(3, 20, team);
  std::mt19937 rng(7);
  for (int round = 0; round < 4; ++round) {
    CheckCover(pool, 3000 + round, 7);
    CheckMm(67, 129, 255, 3, rng);  // 4.4 MFLOP: one thread
    CheckCover(pool, 511, 1);
    CheckMm(130, 257, 129, 3, rng);  // 8.6 MFLOP: the team's three
    CheckMm(1, 300, 77, 3, rng);
  }
}

}  // namespace
}  // namespace coil::cpu
