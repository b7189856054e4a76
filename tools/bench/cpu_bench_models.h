// The model rows of `coil bench cpu` (and `coil bench cuda`): each model torch_eager.py or
// torch_peers.py exported is compiled once by coil's CPU (or CUDA) backend (batch dimension
// symbolic), then run at every batch size torch timed, on
// torch's input; the output is checked against torch's before coil's time counts.
//
//   std::vector<ModelRow> rows = BenchModel(torch_model, {.threads = 2});
#ifndef COIL_TOOLS_BENCH_CPU_BENCH_MODELS_H_
#define COIL_TOOLS_BENCH_CPU_BENCH_MODELS_H_

#include <vector>

#include "ir/dtype.h"
#include "runtime/host_tensor.h"
#include "tools/bench/cpu_bench.pb.h"
#include "tools/bench/cpu_bench_timing.h"

namespace coil::bench {

// The largest max|coil - torch| / max|torch| a model row accepts (as tests/real_models).
inline constexpr double kModelTolerance = 1e-4;
// A bf16 (f16) output: torch and coil each round to 8 (11) significant bits, and may round
// an intermediate differently (a bf16 x + r, a GEMM's bf16 output between layers): a few
// units in the last place of the largest value.
inline constexpr double kBf16ModelTolerance = 3e-2;
inline constexpr double kF16ModelTolerance = 4e-3;

// The tolerance of a row whose output has dtype `t`: the 16-bit ones above, else `f32`.
double ModelTolerance(DType t, double f32);

struct ModelBenchOptions {
  int threads = 1;
  TimingPolicy timing;
  double tolerance = kModelTolerance;
  // "cpu" or "cuda". With cuda, coil_ms is each Run's device time (CUDA events, first kernel
  // to the end of the last) and coil_run_ms the whole Run's (host copies at the edges).
  std::string backend = "cpu";
};

// One row per run in `torch` (its batch sizes, in order). A row that cannot be compiled, run
// or that does not match torch has matches = false, speedup 0 and `error` set. The model is
// compiled without a compile cache: coil_compile_ms is a cold compile. Peer timings in the runs
// (torch_peers.py) are copied into the rows with coil's ratios against them.
std::vector<ModelRow> BenchModel(const TorchEagerModel& torch, const ModelBenchOptions& options);

// Compares `got` (coil's outputs) with `want` (torch's single output) into row's
// max_relative_error, matches and error (shape or count mismatch, or the error over
// `tolerance`).
void CheckOutputs(const std::vector<HostTensor>& got, const HostTensor& want, double tolerance,
                  ModelRow& row);

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_CPU_BENCH_MODELS_H_
