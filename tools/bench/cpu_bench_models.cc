// BenchModel: coil's compiled program against torch eager on one exported model.
#include "tools/bench/cpu_bench_models.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/onnx_conformance/onnx_tensor.h"
#include "tools/bench/cpu_bench_compare.h"
#include "tools/bench/cpu_bench_compile.h"
#include "tools/bench/cpu_bench_cpu_share.h"
#include "tools/bench/cpu_bench_peers.h"

namespace coil::bench {
namespace {

ModelRow StartRow(const TorchEagerModel& torch, const TorchEagerRun& run) {
  ModelRow row;
  row.set_model(torch.name());
  row.set_batch(run.batch());
  row.set_config(torch.config());
  row.set_torch_ms(run.median_ms());
  row.set_torch_min_ms(run.min_ms());
  row.set_bytes(run.bytes());
  if (run.has_compiled()) *row.mutable_compiled() = run.compiled();
  if (run.has_onnxruntime()) *row.mutable_onnxruntime() = run.onnxruntime();
  return row;
}

// Checks and times one batch; fills the rest of `row`. `cuda` (the CudaExecutable behind
// `program`, or null): coil_ms is the device part of each run. `bf16`: the model was compiled
// with --precision bf16 (its output is f32 computed in bf16).
void BenchRun(driver::Executable& program, cuda::CudaExecutable* cuda, const TorchEagerRun& run,
              bool bf16, const ModelBenchOptions& options, ModelRow& row) {
  std::vector<HostTensor> inputs;
  for (int i = -1; i < run.more_inputs_size(); ++i) {
    absl::StatusOr<HostTensor> x =
        onnx_testing::ReadOnnxTensorFile(i < 0 ? run.input() : run.more_inputs(i));
    if (!x.ok()) {
      row.set_error(std::string(x.status().message()));
      return;
    }
    inputs.push_back(*std::move(x));
  }
  absl::StatusOr<HostTensor> want = onnx_testing::ReadOnnxTensorFile(run.output());
  if (!want.ok()) {
    row.set_error(std::string(want.status().message()));
    return;
  }
  // A bf16 row (torch.autocast against coil's autocast pass) has an f32 output computed in bf16.
  row.set_tolerance(ModelTolerance(bf16 ? proto::BFLOAT16 : want->dtype(), options.tolerance));
  absl::StatusOr<std::vector<HostTensor>> got = program.Run(inputs);
  if (!got.ok()) {
    row.set_error(absl::StrCat("run: ", got.status().message()));
    return;
  }
  CheckOutputs(*got, *want, row.tolerance(), row);
  if (!row.matches()) return;  // a wrong answer gets no time
  // CUDA: device_ms per pass and the run's wall time less its extra passes (a one-pass run).
  std::vector<double> device_ms, run_ms;
  // Each CUDA sample runs the kernels back to back for at least kSampleMs (SetTimedPasses), as
  // torch_peers.py times torch's calls by the same rule (TorchEagerCommand passes it): only a
  // sample's first pass starts on an idle GPU.
  if (cuda != nullptr) {
    cuda->SetTimedPasses(cuda::CudaExecutable::PassesForSample(cuda->last_run_times().device_ms));
  }
  const CpuTimes cpu_before = ReadCpuTimes();
  absl::StatusOr<Timing> t = TimeRuns(options.timing, [&]() {
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = program.Run(inputs).status();
    if (cuda != nullptr) {
      const cuda::CudaExecutable::RunTimes r = cuda->last_run_times();
      device_ms.push_back(r.device_ms);
      run_ms.push_back(MillisecondsSince(start) - (r.passes - 1) * r.device_ms);
    }
    return s;
  });
  const int passes = cuda != nullptr ? cuda->last_run_times().passes : 1;
  if (cuda != nullptr) cuda->SetTimedPasses(1);
  if (!t.ok()) {
    row.set_error(absl::StrCat("run: ", t.status().message()));
    row.set_matches(false);
    return;
  }
  const CpuShares shares = SharesBetween(cpu_before, ReadCpuTimes());
  row.set_other_cpu_share(cuda == nullptr && shares.valid ? shares.other : -1);
  row.set_steal_cpu_share(cuda == nullptr && shares.valid ? shares.steal : -1);
  if (cuda != nullptr && cuda->graph_counts().replayed > 0) {
    // CUDA graphs (COIL_CUDA_GRAPHS=1): the timed runs replayed a graph; check a replay's output
    // too (the first run above was eager).
    absl::StatusOr<std::vector<HostTensor>> again = program.Run(inputs);
    if (!again.ok()) {
      row.set_error(absl::StrCat("run (CUDA graph): ", again.status().message()));
      row.set_matches(false);
      return;
    }
    CheckOutputs(*again, *want, row.tolerance(), row);
    const cuda::CudaExecutable::GraphCounts g = cuda->graph_counts();
    std::fprintf(stderr,
                 "coil bench: %s batch %d: CUDA graphs: %lld captured, %lld runs replayed one, "
                 "%lld eager; a replay's output %s (max relative error %.2g)\n",
                 row.model().c_str(), row.batch(), static_cast<long long>(g.captured),
                 static_cast<long long>(g.replayed), static_cast<long long>(g.eager),
                 row.matches() ? "matches torch" : "DOES NOT match torch",
                 row.max_relative_error());
    if (!row.matches()) return;
  } else if (cuda != nullptr && !cuda->graphs_why_not().empty() &&
             cuda->graphs_why_not() != "cuda_graphs is off") {
    std::fprintf(stderr, "coil bench: %s batch %d: no CUDA graph: %s\n", row.model().c_str(),
                 row.batch(), cuda->graphs_why_not().c_str());
  }
  if (cuda != nullptr) {
    // TimeRuns's warm-up runs come first: the last `reps` samples are the timed runs.
    row.set_coil_run_ms(
        SummarizeSamples(std::vector<double>(run_ms.end() - t->reps, run_ms.end())).median_ms);
    t = SummarizeSamples(std::vector<double>(device_ms.end() - t->reps, device_ms.end()));
    std::fprintf(stderr, "coil bench: %s batch %d: %d samples of %d pass%s back to back\n",
                 row.model().c_str(), row.batch(), t->reps, passes, passes == 1 ? "" : "es");
  }
  row.set_coil_ms(t->median_ms);
  row.set_coil_min_ms(t->min_ms);
  row.set_reps(t->reps);
  row.set_speedup(row.torch_ms() / t->median_ms);
}

}  // namespace

double ModelTolerance(DType t, double f32) {
  if (t == proto::BFLOAT16) return std::max(f32, kBf16ModelTolerance);
  if (t == proto::FLOAT16) return std::max(f32, kF16ModelTolerance);
  return f32;
}

void CheckOutputs(const std::vector<HostTensor>& got, const HostTensor& want, double tolerance,
                  ModelRow& row) {
  row.set_matches(false);
  if (got.size() != 1) {
    row.set_error(absl::StrCat("coil returned ", got.size(), " outputs, torch 1"));
    return;
  }
  if (got[0].shape() != want.shape() || got[0].dtype() != want.dtype()) {
    row.set_error(
        absl::StrCat("coil's output is ", got[0].TypeString(), ", torch's ", want.TypeString()));
    return;
  }
  const double err = MaxRelativeError(got[0].ToDoubles(), want.ToDoubles());
  row.set_max_relative_error(err);
  if (!(err <= tolerance)) {
    row.set_error(absl::StrFormat("output differs from torch: max relative error %.3g > %.3g", err,
                                  tolerance));
    return;
  }
  row.set_matches(true);
}

std::vector<ModelRow> BenchModel(const TorchEagerModel& torch, const ModelBenchOptions& options) {
  std::vector<ModelRow> rows;
  const bool bf16 = torch.precision() == "bf16";
  absl::StatusOr<CompiledModel> compiled =
      !bf16 && !torch.precision().empty()
          ? absl::InvalidArgumentError(absl::StrCat("unknown precision '", torch.precision(), "'"))
          : CompileOnnxModel(torch.onnx(), nullptr, options.threads, options.backend,
                             bf16 ? prims::Precision::kBF16 : prims::Precision::kF32);
  if (compiled.ok()) {
    std::fprintf(stderr, "coil bench: %s compiled in %.0f ms%s\n", torch.name().c_str(),
                 compiled->total_ms,
                 compiled->kernels > 0 ? absl::StrCat(" (", compiled->kernels, " kernels)").c_str()
                                       : "");
  }
  for (const TorchEagerRun& run : torch.runs()) {
    ModelRow row = StartRow(torch, run);
    if (!compiled.ok()) {
      row.set_error(absl::StrCat("compile: ", compiled.status().message()));
    } else {
      row.set_coil_compile_ms(compiled->total_ms);
      BenchRun(*compiled->executable, compiled->cuda, run, bf16, options, row);
    }
    SetPeerRatios(row, row.tolerance() > 0 ? row.tolerance() : options.tolerance);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace coil::bench
