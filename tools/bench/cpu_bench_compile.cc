// CompileGraph / CompileOnnxModel / MeasureCompileTimes: the CPU compile pipeline
// (CompileGraphForCpu, codegen_cpu/cpu_pipeline.h) as a list of timed stages (see
// cpu_bench_compile.h).
#include "tools/bench/cpu_bench_compile.h"

#include <stdlib.h>

#include <chrono>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "capture/onnx/onnx_importer.h"
#include "codegen_cpu/cpu_pipeline.h"
#include "tools/bench/cpu_bench_timing.h"

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

}  // namespace

absl::StatusOr<CompiledModel> CompileGraph(Graph graph, CompileCache* cache, int threads) {
  CpuPipelineOptions options;
  options.runtime.num_threads = threads;
  absl::StatusOr<CpuPipelineResult> r = CompileGraphForCpu(std::move(graph), options, cache);
  if (!r.ok()) return r.status();
  CompiledModel m;
  for (const CpuPipelineStage& s : r->stages) AddStage(m, s.name, s.ms);
  m.cache_hit = r->cache_hit;
  m.kernels = r->kernels;
  m.program = std::move(r->program);
  return m;
}

absl::StatusOr<CompiledModel> CompileOnnxModel(const std::string& path, CompileCache* cache,
                                               int threads) {
  const auto t = Clock::now();
  absl::StatusOr<Graph> graph = onnx::ImportOnnxFileAsGraph(path);
  if (!graph.ok()) return InStage("onnx import", graph.status());
  const double import_ms = MillisecondsSince(t);
  absl::StatusOr<CompiledModel> m = CompileGraph(*std::move(graph), cache, threads);
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
