// CompileGraph / CompileOnnxModel / MeasureCompileTimes: the compile driver with the CPU
// backend (tools/driver/driver.h) as a list of timed stages (see cpu_bench_compile.h).
#include "tools/bench/cpu_bench_compile.h"

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "capture/onnx/onnx_importer.h"
#include "tools/bench/cpu_bench_timing.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"

namespace coil::bench {
namespace {

using Clock = std::chrono::steady_clock;

absl::Status InStage(const char* stage, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(stage, ": ", s.message()));
}

void AddStage(CompiledModel& m, const std::string& name, double ms) {
  Stage s;
  s.set_name(name);
  s.set_ms(ms);
  m.stages.push_back(s);
  m.total_ms += ms;
}

// The driver's stage names as this benchmark prints them (its reports and docs/benchmarks.md).
std::string BenchStageName(const std::string& stage) {
  if (stage == "capture") return "capture (verify)";
  if (stage == "cache key") return "cache key (graph hash)";
  if (stage == "cache lookup") return "cache lookup (read, checksum, parse)";
  if (stage == "prims") return "prims decompose";  // graph to proto included
  if (stage == "inductor") return "inductor schedule";
  if (stage == "codegen_cpu") return "codegen (LLVM O3 -> object)";
  if (stage == "codegen_cuda") return "codegen (CUDA C++ -> NVRTC)";
  if (stage == "load") return "load (JIT + runtime)";
  return stage;  // "cache store"
}

}  // namespace

absl::StatusOr<CompiledModel> CompileGraph(Graph graph, CompileCache* cache, int threads,
                                           const std::string& backend,
                                           prims::Precision precision) {
  driver::DriverOptions options;
  options.precision = precision;
  if (backend == "cuda") {
    options.backend = driver::CudaBackend();
  } else if (backend == "cpu") {
    driver::CpuBackendOptions cpu;
    cpu.runtime.num_threads = threads;
    options.backend = driver::CpuBackend(cpu);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("backend must be cpu or cuda, got '", backend, "'"));
  }
  options.cache = cache;
  options.keep_intermediates = false;  // as `coil compile`: the weights move, never copied
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(std::move(graph), options);
  if (!r.ok()) return r.status();
  if (r->executable == nullptr) {
    return r->load_error.ok() ? absl::InternalError("the driver loaded no executable")
                              : r->load_error;
  }
  CompiledModel m;
  for (const proto::StageTiming& t : r->report.timings()) {
    AddStage(m, BenchStageName(t.stage()), t.seconds() * 1e3);
  }
  m.cache_hit = r->cache_hit;
  m.executable = std::move(r->executable);
  if (backend == "cuda") {
    m.cuda = driver::AsCudaExecutable(*m.executable);
    if (m.cuda == nullptr) return absl::InternalError("the CUDA backend loaded no CudaExecutable");
    return m;
  }
  m.program = driver::AsCpuProgram(*m.executable);
  if (m.program == nullptr) return absl::InternalError("the CPU backend loaded no CpuProgram");
  m.kernels = m.program->module().schedule().kernels_size();
  return m;
}

absl::StatusOr<CompiledModel> CompileOnnxModel(const std::string& path, CompileCache* cache,
                                               int threads, const std::string& backend,
                                               prims::Precision precision) {
  const auto t = Clock::now();
  absl::StatusOr<Graph> graph = onnx::ImportOnnxFileAsGraph(path);
  if (!graph.ok()) return InStage("onnx import", graph.status());
  const double import_ms = MillisecondsSince(t);
  absl::StatusOr<CompiledModel> m =
      CompileGraph(*std::move(graph), cache, threads, backend, precision);
  if (!m.ok())
    return absl::Status(m.status().code(), absl::StrCat(path, ": ", m.status().message()));
  Stage s;
  s.set_name("onnx import");
  s.set_ms(import_ms);
  // Listed first, but not in total_ms: loading the model into memory is not a compile stage
  // (torch.compile's cache times start from the in-memory graph too).
  m->stages.insert(m->stages.begin(), s);
  return m;
}

CompileTimes MeasureCompileTimes(const std::string& model, const std::string& onnx_path,
                                 int threads) {
  CompileTimes times;
  times.set_model(model);
  std::error_code ec;
  std::string pattern =
      (std::filesystem::temp_directory_path(ec) / "coil_bench_cache_XXXXXX").string();
  if (ec || mkdtemp(pattern.data()) == nullptr) {
    times.set_error(absl::StrCat("cannot create a temporary compile cache folder ", pattern));
    return times;
  }
  const std::string dir = pattern;
  {
    CompileCache cache(dir);
    absl::StatusOr<CompiledModel> cold = CompileOnnxModel(onnx_path, &cache, threads);
    if (cold.ok() && cold->cache_hit) {
      cold = absl::InternalError("the cold compile hit an empty cache");
    }
    absl::StatusOr<CompiledModel> warm =
        cold.ok() ? CompileOnnxModel(onnx_path, &cache, threads) : cold.status();
    if (!warm.ok()) {
      times.set_error(std::string(warm.status().message()));
    } else {
      times.set_cold_ms(cold->total_ms);
      for (const Stage& s : cold->stages) *times.add_cold_stages() = s;
      times.set_warm_ms(warm->total_ms);
      for (const Stage& s : warm->stages) *times.add_warm_stages() = s;
      times.set_warm_cache_hit(warm->cache_hit);
      times.set_kernels(cold->kernels);
    }
  }
  std::filesystem::remove_all(dir, ec);
  return times;
}

}  // namespace coil::bench
