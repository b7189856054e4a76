// MinCut on small graphs whose minimum cuts are known by hand, and against brute force over
// every source/sink split of random small graphs.
#include "autograd/min_cut.h"

#include <random>

#include "gtest/gtest.h"

namespace coil::autograd {
namespace {

TEST(MinCut, Diamond) {
  // 0 -> 1 (3), 0 -> 2 (2), 1 -> 3 (2), 2 -> 3 (3), 1 -> 2 (1): max flow 5
  MinCut cut(4);
  cut.AddEdge(0, 1, 3);
  cut.AddEdge(0, 2, 2);
  cut.AddEdge(1, 3, 2);
  cut.AddEdge(2, 3, 3);
  cut.AddEdge(1, 2, 1);
  EXPECT_EQ(cut.Solve(0, 3), 5);
  EXPECT_TRUE(cut.SourceSide()[0]);
  EXPECT_FALSE(cut.SourceSide()[3]);
}

TEST(MinCut, InfiniteEdgesAreNeverCut) {
  MinCut cut(3);
  cut.AddEdge(0, 1, kInfiniteCapacity);
  cut.AddEdge(1, 2, 7);
  EXPECT_EQ(cut.Solve(0, 2), 7);
  EXPECT_TRUE(cut.SourceSide()[1]);
}

TEST(MinCut, MatchesBruteForceOnRandomGraphs) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 6;
    std::vector<std::vector<int64_t>> cap(n, std::vector<int64_t>(n, 0));
    MinCut cut(n);
    for (int e = 0; e < 12; ++e) {
      int a = rng() % n, b = rng() % n;
      if (a == b) continue;
      int64_t c = rng() % 10;
      cap[a][b] += c;
      cut.AddEdge(a, b, c);
    }
    int64_t best = INT64_MAX;
    for (int mask = 0; mask < (1 << n); ++mask) {
      if (!(mask & 1) || (mask & (1 << (n - 1)))) continue;  // source 0 in, sink n-1 out
      int64_t c = 0;
      for (int a = 0; a < n; ++a) {
        for (int b = 0; b < n; ++b) {
          if ((mask >> a & 1) && !(mask >> b & 1)) c += cap[a][b];
        }
      }
      best = std::min(best, c);
    }
    EXPECT_EQ(cut.Solve(0, n - 1), best) << "trial " << trial;
  }
}

}  // namespace
}  // namespace coil::autograd
