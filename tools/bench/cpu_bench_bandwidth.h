// The bandwidth rows of `coil bench cpu`: memory-bound graphs compiled by coil's CPU pipeline
// against a STREAM-style copy of the same byte count on the same number of threads, measured
// in the same run.
//
//   copy             dst[i] = src[i] over rows x cols floats (memcpy per 64 KiB block, split
//                    over a runtime/cpu ThreadPool); moves 2 * 4 * rows * cols bytes
//   pointwise_chain  y = gelu(x * a + b) * c; x, y: f32[rows, cols]; a, b, c: f32[cols]
//   softmax          aten.softmax over the last dim of f32[rows, cols]
//
// Bandwidth counts only the bytes that must move (each input read once, the output written
// once), so extra passes over memory show up as a lower fraction of the copy. Each graph's
// output is checked against a float64 evaluation written here.
//
//   std::vector<BandwidthRow> rows = BenchBandwidth({.threads = 2, .rows = 16384});
#ifndef COIL_TOOLS_BENCH_CPU_BENCH_BANDWIDTH_H_
#define COIL_TOOLS_BENCH_CPU_BENCH_BANDWIDTH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cpu/thread_pool.h"
#include "tools/bench/cpu_bench.pb.h"
#include "tools/bench/cpu_bench_timing.h"

namespace coil::bench {

struct BandwidthOptions {
  int threads = 1;
  TimingPolicy timing;
  int64_t rows = 16384;
  int64_t cols = 1024;
  double tolerance = 1e-4;  // max relative error against the float64 evaluation
};

// Rows "copy", "pointwise_chain", "softmax", in that order. A graph that fails to compile, run
// or match has matches = false and `error` set.
std::vector<BandwidthRow> BenchBandwidth(const BandwidthOptions& options);

// The copy kernel: dst[0, n) = src[0, n), blocks of 64 KiB spread over `pool`.
void ParallelCopy(const float* src, float* dst, int64_t n, cpu::ThreadPool& pool);

// The text IR of the two graphs (ir/parser.h).
std::string PointwiseChainGraph(int64_t rows, int64_t cols);
std::string SoftmaxGraph(int64_t rows, int64_t cols);

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_CPU_BENCH_BANDWIDTH_H_
