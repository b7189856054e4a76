// RunWithBackend: the CLI's straight list of stages per backend.
#include "tools/coil/backend_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "codegen_cpu/cpu_pipeline.h"
#include "codegen_cpu/cpu_program.h"
#include "inductor/schedule.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"

namespace coil::cli {
namespace {

using Clock = std::chrono::steady_clock;

void Report(const char* stage, Clock::time_point start) {
  std::fprintf(stderr, "  %-28s %9.3f ms\n", stage,
               std::chrono::duration<double, std::milli>(Clock::now() - start).count());
}

template <typename T>
absl::StatusOr<T> Named(const char* stage, absl::StatusOr<T> r) {
  if (r.ok()) return r;
  return absl::Status(r.status().code(), absl::StrCat(stage, ": ", r.status().message()));
}

// Per-kernel time over `runs` runs that took `total_ms` in all, slowest first.
void PrintProfile(std::vector<cpu::CpuExecutable::KernelTime> times, double total_ms, int runs) {
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
  if (backend == "reference") return Interpret(graph, inputs);
  if (backend != "schedule" && backend != "cpu") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--backend must be reference, schedule or cpu; got '", backend, "'"));
  }
  auto t = Clock::now();
  std::unique_ptr<CpuProgram> program;
  if (backend == "cpu") {
    // THE CPU pipeline, behind the graph-level compile cache (codegen_cpu/cpu_pipeline.h).
    CpuPipelineOptions pipeline;
    pipeline.runtime.num_threads = options.threads;
    absl::StatusOr<CpuPipelineResult> compiled =
        CompileGraphForCpu(graph, pipeline, &CompileCache::Default());
    if (!compiled.ok()) return compiled.status();
    for (const CpuPipelineStage& s : compiled->stages) {
      std::fprintf(stderr, "  %-36s %9.3f ms\n", s.name.c_str(), s.ms);
    }
    std::fprintf(stderr, "  %-36s %9.3f ms (%d kernels, %s)\n", "compile (cpu)",
                 compiled->total_ms(), compiled->kernels,
                 !CompileCache::Default().enabled() ? "cache off"
                 : compiled->cache_hit              ? "cache hit"
                                                    : "cache miss");
    program = std::move(compiled->program);
  } else {
    Graph prims_graph = graph.Clone();
    absl::StatusOr<bool> decomposed = Named("decompose", prims::Decompose(prims_graph));
    if (!decomposed.ok()) return decomposed.status();
    Report("prims (decompose)", t);
    t = Clock::now();
    absl::StatusOr<proto::Schedule> schedule =
        Named("inductor", inductor::BuildSchedule(prims_graph.ToProto()));
    if (!schedule.ok()) return schedule.status();
    Report("inductor (schedule)", t);
    t = Clock::now();
    absl::StatusOr<std::vector<HostTensor>> out = InterpretSchedule(*schedule, inputs);
    Report("schedule interpreter", t);
    return out;
  }
  t = Clock::now();
  absl::StatusOr<std::vector<HostTensor>> out = program->Run(inputs);
  Report("run (first)", t);
  if (!out.ok()) return out;
  if (repeat <= 1) {
    t = Clock::now();
    out = program->Run(inputs);
    Report("run (again)", t);
    return out;
  }
  std::vector<double> ms;
  if (options.profile) program->executable().SetProfiling(true);
  for (int i = 0; i < repeat && out.ok(); ++i) {
    t = Clock::now();
    out = program->Run(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
  }
  if (!out.ok()) return out;
  const double total = std::accumulate(ms.begin(), ms.end(), 0.0);
  std::sort(ms.begin(), ms.end());
  std::fprintf(stderr, "  %-28s %9.3f ms min, %.3f ms median, %.3f ms mean\n",
               absl::StrCat("run x ", repeat).c_str(), ms.front(), ms[ms.size() / 2],
               total / ms.size());
  if (options.profile) PrintProfile(program->executable().Profile(), total, repeat);
  return out;
}

double MaxRelativeError(const HostTensor& got, const HostTensor& want) {
  std::vector<double> a = got.ToDoubles(), b = want.ToDoubles();
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) diff = INFINITY;
      continue;
    }
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return scale == 0 ? diff : diff / scale;
}

}  // namespace coil::cli
