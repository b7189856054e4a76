// CUDA graph bookkeeping (runtime/cuda/cuda_graphs.h) against a fake driver (no GPU): the first
// run of a key is eager, the second captures and launches the graph, later ones replay it; a
// new key (other shapes or addresses) starts over; a run that needs the host stays eager with
// the reason; a capture error falls back to an eager run; the least recently used graph is
// evicted past max_graphs; replays add the GEMM / convolution counts of the captured run.
#include "runtime/cuda/cuda_graphs.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace coil::cuda {
namespace {

// What the fake driver saw.
struct Calls {
  int begin = 0, end = 0, instantiate = 0, launch = 0, exec_destroy = 0, graph_destroy = 0;
  bool capturing = false;
  CUresult end_result = 0;  // what cuStreamEndCapture returns
  std::vector<std::string> log;
};
Calls* calls = nullptr;

CUgraph FakeGraph() { return reinterpret_cast<CUgraph>(0x1000); }

CudaDriver FakeDriver() {
  CudaDriver d{};
  d.StreamBeginCapture = [](CUstream, int mode) -> CUresult {
    EXPECT_EQ(mode, kStreamCaptureModeRelaxed);
    ++calls->begin;
    calls->capturing = true;
    return 0;
  };
  d.StreamEndCapture = [](CUstream, CUgraph* g) -> CUresult {
    ++calls->end;
    calls->capturing = false;
    *g = calls->end_result == 0 ? FakeGraph() : nullptr;
    return calls->end_result;
  };
  d.GraphInstantiate = [](CUgraphExec* e, CUgraph g, unsigned long long) -> CUresult {
    EXPECT_EQ(g, FakeGraph());
    ++calls->instantiate;
    *e = reinterpret_cast<CUgraphExec>(static_cast<uintptr_t>(0x2000 + calls->instantiate));
    return 0;
  };
  d.GraphLaunch = [](CUgraphExec, CUstream) -> CUresult {
    ++calls->launch;
    calls->log.push_back("graph");
    return 0;
  };
  d.GraphExecDestroy = [](CUgraphExec) -> CUresult {
    ++calls->exec_destroy;
    return 0;
  };
  d.GraphDestroy = [](CUgraph) -> CUresult {
    ++calls->graph_destroy;
    return 0;
  };
  d.GetErrorName = [](CUresult, const char** s) -> CUresult {
    *s = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    return 0;
  };
  d.GetErrorString = [](CUresult, const char** s) -> CUresult {
    *s = "invalidated";
    return 0;
  };
  return d;
}

class CudaGraphsTest : public ::testing::Test {
 protected:
  void SetUp() override { calls = &calls_; }
  void TearDown() override { calls = nullptr; }

  // One run of `key`: the launch records "eager" or "capture" and counts one fused GEMM.
  absl::Status RunOnce(CudaGraphs& g, const std::string& key, bool needs_host = false) {
    return g.Run(key, nullptr, counters_, [&](bool capturing, std::string* host) -> absl::Status {
      EXPECT_EQ(capturing, calls_.capturing);
      if (needs_host) {
        *host = "kernel 4 'k4_cumsum' (extern aten.cumsum) runs on the host";
        if (capturing) return absl::AbortedError(*host);
      }
      calls_.log.push_back(capturing ? "capture" : "eager");
      ++counters_[0];
      return absl::OkStatus();
    });
  }

  Calls calls_;
  CudaGraphs::Tally counters_{};
};

TEST_F(CudaGraphsTest, WarmThenCaptureThenReplay) {
  CudaDriver d = FakeDriver();
  CudaGraphs g(&d, 8);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(RunOnce(g, "shapes A").ok());
  EXPECT_EQ(calls_.log, (std::vector<std::string>{"eager", "capture", "graph", "graph", "graph"}));
  EXPECT_EQ(calls_.begin, 1);
  EXPECT_EQ(calls_.instantiate, 1);
  EXPECT_EQ(calls_.graph_destroy, 1) << "the graph is freed once instantiated";
  EXPECT_EQ(counters_[0], 4) << "every run counts its GEMM once, replays included";
  EXPECT_EQ(g.counts().eager, 1);
  EXPECT_EQ(g.counts().captured, 1);
  EXPECT_EQ(g.counts().replayed, 3);
  EXPECT_EQ(g.graphs(), 1);
  // Other shapes: a new key, warmed and captured on its own; A's graph stays.
  calls_.log.clear();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(RunOnce(g, "shapes B").ok());
  ASSERT_TRUE(RunOnce(g, "shapes A").ok());
  EXPECT_EQ(calls_.log, (std::vector<std::string>{"eager", "capture", "graph", "graph", "graph"}));
  EXPECT_EQ(g.graphs(), 2);
  EXPECT_EQ(g.why_not(), "");
}

TEST_F(CudaGraphsTest, HostWorkStaysEager) {
  CudaDriver d = FakeDriver();
  CudaGraphs g(&d, 8);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(RunOnce(g, "k", /*needs_host=*/true).ok());
  EXPECT_EQ(calls_.log, (std::vector<std::string>{"eager", "eager", "eager"}));
  EXPECT_EQ(calls_.begin, 0) << "the first run showed the host work: no capture tried";
  EXPECT_EQ(g.why_not(), "kernel 4 'k4_cumsum' (extern aten.cumsum) runs on the host");
  EXPECT_EQ(g.counts().eager, 3);
  EXPECT_EQ(counters_[0], 3);
}

TEST_F(CudaGraphsTest, HostWorkFoundWhileCapturingRunsEagerly) {
  CudaDriver d = FakeDriver();
  CudaGraphs g(&d, 8);
  ASSERT_TRUE(RunOnce(g, "k").ok());
  // The second run's capture meets an extern that must run on the host: the capture ends,
  // nothing of it is kept, the run happens eagerly and counts once.
  ASSERT_TRUE(RunOnce(g, "k", /*needs_host=*/true).ok());
  EXPECT_EQ(calls_.begin, 1);
  EXPECT_EQ(calls_.end, 1);
  EXPECT_EQ(calls_.instantiate, 0);
  EXPECT_EQ(calls_.log, (std::vector<std::string>{"eager", "eager"}));
  EXPECT_EQ(counters_[0], 2);
  ASSERT_TRUE(RunOnce(g, "k").ok());
  EXPECT_EQ(calls_.log.back(), "eager") << "the key stays eager";
  EXPECT_NE(g.why_not().find("runs on the host"), std::string::npos) << g.why_not();
}

TEST_F(CudaGraphsTest, InvalidatedCaptureFallsBackToEager) {
  CudaDriver d = FakeDriver();
  CudaGraphs g(&d, 8);
  calls_.end_result = 901;
  ASSERT_TRUE(RunOnce(g, "k").ok());
  ASSERT_TRUE(RunOnce(g, "k").ok());
  EXPECT_EQ(calls_.log, (std::vector<std::string>{"eager", "capture", "eager"}));
  EXPECT_EQ(counters_[0], 2) << "the recorded launches did not count";
  EXPECT_NE(g.why_not().find("cuStreamEndCapture"), std::string::npos) << g.why_not();
  EXPECT_NE(g.why_not().find("CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"), std::string::npos);
  EXPECT_EQ(g.graphs(), 0);
}

TEST_F(CudaGraphsTest, LeastRecentlyUsedGraphIsEvicted) {
  CudaDriver d = FakeDriver();
  CudaGraphs g(&d, 2);
  for (const char* key : {"a", "b"}) {
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(RunOnce(g, key).ok());
  }
  ASSERT_TRUE(RunOnce(g, "a").ok());  // a replayed: b is now the oldest
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(RunOnce(g, "c").ok());
  EXPECT_EQ(g.graphs(), 2);
  EXPECT_EQ(g.counts().evicted, 1);
  EXPECT_EQ(calls_.exec_destroy, 1);
  calls_.log.clear();
  ASSERT_TRUE(RunOnce(g, "a").ok());
  ASSERT_TRUE(RunOnce(g, "b").ok());
  EXPECT_EQ(calls_.log, (std::vector<std::string>{"graph", "eager"})) << "b warms up again";
}

TEST_F(CudaGraphsTest, DriverWithoutGraphApiStaysEager) {
  CudaDriver d = FakeDriver();
  d.GraphInstantiate = nullptr;
  CudaGraphs g(&d, 8);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(RunOnce(g, "k").ok());
  EXPECT_EQ(calls_.log, (std::vector<std::string>{"eager", "eager", "eager"}));
  EXPECT_NE(g.why_not().find("graph API"), std::string::npos) << g.why_not();
}

TEST_F(CudaGraphsTest, DestroysItsGraphs) {
  CudaDriver d = FakeDriver();
  {
    CudaGraphs g(&d, 8);
    for (const char* key : {"a", "b"}) {
      for (int i = 0; i < 2; ++i) ASSERT_TRUE(RunOnce(g, key).ok());
    }
  }
  EXPECT_EQ(calls_.exec_destroy, 2);
}

}  // namespace
}  // namespace coil::cuda
