// RunWithBackend: the CLI's straight list of stages per backend.
#include "tools/coil/backend_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "runtime/interpreter.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace coil::cli {
namespace {

using Clock = std::chrono::steady_clock;

void Report(const char* stage, Clock::time_point start) {
  // Run times, printed like the driver's stage times.
  std::fprintf(stderr, "  %-28s %9.3f ms\n", stage,
               std::chrono::duration<double, std::milli>(Clock::now() - start).count());
}

// Per-kernel time over `runs` runs that took `total_ms` in all, slowest first.
template <typename KernelTime>
void PrintProfile(std::vector<KernelTime> times, double total_ms, int runs) {
  double kernels_ms = 0;
  for (const auto& k : times) kernels_ms += k.total_ms;
  std::sort(times.begin(), times.end(),
            [](const auto& a, const auto& b) { return a.total_ms > b.total_ms; });
  std::fprintf(stderr, "\n  %-40s %-24s %12s %8s\n", "kernel", "kind", "ms per run", "share");
  for (const auto& k : times) {
    std::fprintf(stderr, "  %-40s %-24s %12.4f %7.1f%%\n", k.kernel.c_str(), k.kind.c_str(),
                 k.total_ms / runs, total_ms > 0 ? 100 * k.total_ms / total_ms : 0.0);
  }
  std::fprintf(stderr, "  %-65s %12.4f %7.1f%%\n", "outside kernels (binding, outputs, calls)",
               (total_ms - kernels_ms) / runs,
               total_ms > 0 ? 100 * (total_ms - kernels_ms) / total_ms : 0.0);
}

}  // namespace

absl::StatusOr<std::vector<HostTensor>> RunWithBackend(const Graph& graph,
                                                       absl::Span<const HostTensor> inputs,
                                                       const std::string& backend,
                                                       const RunOptions& options) {
  const int repeat = options.repeat;
  if (backend == "reference") {
    InterpreterOptions reference;
    reference.external_data_dir = options.external_data_dir;
    return Interpret(graph, inputs, reference);
  }
  if (backend != "schedule" && backend != "cpu" && backend != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--backend must be reference, schedule, cpu or cuda; got '", backend, "'"));
  }
  // The compile driver, through the process-wide compile cache (the one `coil compile` uses).
  driver::DriverOptions compile;
  if (backend == "cpu") {
    driver::CpuBackendOptions cpu;
    cpu.runtime.num_threads = options.threads;
    cpu.runtime.external_data_dir = options.external_data_dir;
    compile.backend = driver::CpuBackend(cpu);
  } else if (backend == "cuda") {
    driver::CudaBackendOptions cuda;
    cuda.runtime.external_data_dir = options.external_data_dir;
    cuda.runtime.cuda_graphs = options.cuda_graphs;
    // For A/B measurements (tools/cuda_gpu_bench.py): COIL_CUDA_WARP_ROW_MAX=0 runs every row
    // kernel a block per row; COIL_CUDA_ROW_UNROLL=N unrolls row kernels' position loops;
    // COIL_CUDA_VECTORIZE=0 runs pointwise kernels a thread per index; COIL_CUDA_PERSISTENT=0
    // loads a row again in each of its Loops.
    if (const char* w = std::getenv("COIL_CUDA_WARP_ROW_MAX"); w != nullptr) {
      cuda.codegen.warp_row_max = std::atoll(w);
    }
    if (const char* v = std::getenv("COIL_CUDA_VECTORIZE"); v != nullptr) {
      cuda.codegen.vectorize = std::atoi(v) != 0;
    }
    if (const char* p = std::getenv("COIL_CUDA_PERSISTENT"); p != nullptr) {
      cuda.codegen.persistent_rows = std::atoi(p) != 0;
    }
    // COIL_CUDA_VECTOR_GROUPS=N: vectors of 4 per thread of pointwise kernels; COIL_CUDA_ROW_VALUES=0
    // keeps only loads (no computed values) in persistent rows' registers.
    if (const char* g = std::getenv("COIL_CUDA_VECTOR_GROUPS"); g != nullptr) {
      cuda.codegen.vector_groups = std::max(1, std::atoi(g));
    }
    if (const char* rv = std::getenv("COIL_CUDA_ROW_VALUES"); rv != nullptr) {
      cuda.codegen.row_values = std::atoi(rv) != 0;
    }
    // COIL_CUDA_ROW_MIN_BLOCKS=N: block-per-row kernels ask ptxas for N blocks per SM.
    if (const char* mb = std::getenv("COIL_CUDA_ROW_MIN_BLOCKS"); mb != nullptr) {
      cuda.codegen.row_min_blocks = std::max(0, std::atoi(mb));
    }
    // COIL_CUDA_DIV_RECIPROCAL=0: bf16 / f16 divisions by constants stay divisions.
    if (const char* dr = std::getenv("COIL_CUDA_DIV_RECIPROCAL"); dr != nullptr) {
      cuda.codegen.narrow_div_reciprocal = std::atoi(dr) != 0;
    }
    // COIL_CUDA_ROW_DIVISION=0: divisions by a row's sum stay IEEE divisions per position.
    if (const char* rd = std::getenv("COIL_CUDA_ROW_DIVISION"); rd != nullptr) {
      cuda.codegen.row_division = std::atoi(rd) != 0;
    }
    // COIL_CUDA_PACKED_PAIRS=0: bf16 / f16 tails stay f32 operations per position.
    if (const char* pp = std::getenv("COIL_CUDA_PACKED_PAIRS"); pp != nullptr) {
      cuda.codegen.packed_pairs = std::atoi(pp) != 0;
    }
    // COIL_CUDA_ROW_PREFETCH=0: block-per-row kernels prefetch no later rows into L2.
    if (const char* rp = std::getenv("COIL_CUDA_ROW_PREFETCH"); rp != nullptr) {
      cuda.codegen.row_prefetch = std::atoi(rp) != 0;
    }
    if (const char* u = std::getenv("COIL_CUDA_ROW_UNROLL"); u != nullptr) {
      cuda.codegen.row_unroll = std::max(1, std::atoi(u));
    }
    // COIL_CUDA_TF32=1: f32 GEMMs and convolutions may use TF32 tensor cores (torch's default for
    // cuDNN convolutions), about 1e-3 relative error: outside --check's threshold.
    if (const char* t = std::getenv("COIL_CUDA_TF32"); t != nullptr) {
      cuda.runtime.allow_tf32 = std::atoi(t) != 0;
    }
    compile.backend = driver::CudaBackend(cuda);
  } else {
    compile.backend = driver::ScheduleInterpreterBackend({}, options.external_data_dir);
  }
  compile.external_data_dir = options.external_data_dir;
  compile.precision = options.precision;
  compile.on_stage = [](const driver::StageEvent& e) {
    std::fprintf(stderr, "  %-36s %9.3f ms  %s\n", e.stage.c_str(), e.seconds * 1e3,
                 e.detail.c_str());
  };
  absl::StatusOr<driver::CompileResult> compiled = driver::CompileGraph(graph.Clone(), compile);
  if (!compiled.ok()) return compiled.status();
  const char* cache_state = compile.cache == nullptr || !compile.cache->enabled() ? "cache off"
                            : compiled->cache_hit                              ? "cache hit"
                                                                               : "cache miss";
  std::fprintf(stderr, "  %-36s %9.3f ms (%s)\n", absl::StrCat("compile (", backend, ")").c_str(),
               compiled->total_seconds() * 1e3, cache_state);
  if (compiled->executable == nullptr) return compiled->load_error;
  driver::Executable& program = *compiled->executable;
  CpuProgram* cpu_program = driver::AsCpuProgram(program);
  cuda::CudaExecutable* cuda_exe = driver::AsCudaExecutable(program);
  auto t = Clock::now();
  absl::StatusOr<std::vector<HostTensor>> out = program.Run(inputs);
  Report("run (first)", t);
  if (!out.ok()) return out;
  if (repeat <= 1) {
    if (cpu_program == nullptr) return out;  // the interpreter: once is enough
    t = Clock::now();
    out = program.Run(inputs);
    Report("run (again)", t);
    return out;
  }
  std::vector<double> ms;
  // CUDA: the device part of each run (CUDA events from the first kernel to the end of the
  // last), and the copies at the edges.
  std::vector<double> device_ms, copy_in_ms, copy_out_ms;
  const bool profile = options.profile && cpu_program != nullptr;
  if (profile) cpu_program->executable().SetProfiling(true);
  for (int i = 0; i < repeat && out.ok(); ++i) {
    t = Clock::now();
    out = program.Run(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
    if (cuda_exe != nullptr) {
      const cuda::CudaExecutable::RunTimes r = cuda_exe->last_run_times();
      device_ms.push_back(r.device_ms);
      copy_in_ms.push_back(r.copy_in_ms);
      copy_out_ms.push_back(r.copy_out_ms);
    }
  }
  if (!out.ok()) return out;
  const double total = std::accumulate(ms.begin(), ms.end(), 0.0);
  std::sort(ms.begin(), ms.end());
  std::fprintf(stderr, "  %-28s %9.3f ms min, %.3f ms median, %.3f ms mean\n",
               absl::StrCat("run x ", repeat).c_str(), ms.front(), ms[ms.size() / 2],
               total / ms.size());
  if (cuda_exe != nullptr) {
    for (auto* v : {&device_ms, &copy_in_ms, &copy_out_ms}) std::sort(v->begin(), v->end());
    std::fprintf(stderr, "  %-28s %9.3f ms min, %.3f ms median\n",
                 absl::StrCat("device x ", repeat).c_str(), device_ms.front(),
                 device_ms[device_ms.size() / 2]);
    std::fprintf(stderr, "  %-28s %9.3f ms median in, %.3f ms median out\n", "host copies",
                 copy_in_ms[copy_in_ms.size() / 2], copy_out_ms[copy_out_ms.size() / 2]);
    // The kernels back to back (as `coil bench cuda` times them): only each run's first pass
    // starts on an idle GPU.
    const int passes = cuda::CudaExecutable::PassesForSample(device_ms[device_ms.size() / 2]);
    cuda_exe->SetTimedPasses(passes);
    std::vector<double> back_to_back;
    for (int i = 0; i < repeat && out.ok(); ++i) {
      out = program.Run(inputs);
      back_to_back.push_back(cuda_exe->last_run_times().device_ms);
    }
    cuda_exe->SetTimedPasses(1);
    if (!out.ok()) return out;
    std::sort(back_to_back.begin(), back_to_back.end());
    std::fprintf(stderr, "  %-28s %9.3f ms min, %.3f ms median per pass\n",
                 absl::StrCat("device x ", repeat, " x ", passes, " passes").c_str(),
                 back_to_back.front(), back_to_back[back_to_back.size() / 2]);
    const cuda::CudaExecutable::GraphCounts graphs = cuda_exe->graph_counts();
    if (graphs.eager + graphs.replayed > 0) {
      const std::string why = cuda_exe->graphs_why_not();
      std::fprintf(stderr, "  CUDA graphs: %lld captured, %lld runs replayed one, %lld eager%s%s\n",
                   static_cast<long long>(graphs.captured), static_cast<long long>(graphs.replayed),
                   static_cast<long long>(graphs.eager), why.empty() ? "" : "; eager because: ",
                   why.c_str());
    }
    const cuda::CudaExecutable::GemmCounts convs = cuda_exe->conv_counts();
    if (convs.fused + convs.plain + convs.host > 0) {
      const std::string why = cuda_exe->conv_why_not();
      std::fprintf(stderr, "  convolutions: %s: %lld fused, %lld plain, %lld on the host%s%s\n",
                   cuda_exe->conv_library().c_str(), static_cast<long long>(convs.fused),
                   static_cast<long long>(convs.plain), static_cast<long long>(convs.host),
                   why.empty() ? "" : "; last fallback: ", why.c_str());
    }
    if (options.profile) {
      // One more pass with an event around every kernel (slower: not in the numbers above).
      cuda_exe->SetProfiling(true);
      double device_total = 0;
      for (int i = 0; i < repeat && out.ok(); ++i) {
        out = program.Run(inputs);
        device_total += cuda_exe->last_run_times().device_ms;
      }
      if (!out.ok()) return out;
      PrintProfile(cuda_exe->Profile(), device_total, repeat);
      cuda_exe->SetProfiling(false);
    }
  }
  if (profile) PrintProfile(cpu_program->executable().Profile(), total, repeat);
  return out;
}

}  // namespace coil::cli
