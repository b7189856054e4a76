// CompileGraph / CompileOnnxModel / MeasureCompileTimes: the CPU compile pipeline as a straight
// list of timed stages (see cpu_bench_compile.h).
#include "tools/bench/cpu_bench_compile.h"

#include <stdlib.h>

#include <chrono>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "capture/onnx/onnx_importer.h"
#include "inductor/schedule.h"
#include "prims/decompose.h"
#include "tools/bench/cpu_bench_timing.h"

namespace coil::bench {
namespace {

using Clock = std::chrono::steady_clock;

absl::Status InStage(const char* stage, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(stage, ": ", s.message()));
}

void AddStage(CompiledModel& m, const char* name, double ms) {
  Stage s;
  s.set_name(name);
  s.set_ms(ms);
  m.stages.push_back(s);
  m.total_ms += ms;
}

}  // namespace

absl::StatusOr<CompiledModel> CompileGraph(Graph graph, CompileCache* cache, int threads) {
  CompiledModel m;
  auto t = Clock::now();
  if (absl::StatusOr<bool> changed = prims::Decompose(graph); !changed.ok()) {
    return InStage("prims decompose", changed.status());
  }
  AddStage(m, "prims decompose", MillisecondsSince(t));

  t = Clock::now();
  proto::Graph graph_proto = graph.ToProto();
  AddStage(m, "graph to proto", MillisecondsSince(t));

  t = Clock::now();
  inductor::ScheduleOptions options;
  options.capabilities = CpuCapabilities();
  absl::StatusOr<proto::Schedule> schedule = inductor::BuildSchedule(graph_proto, options);
  if (!schedule.ok()) return InStage("inductor schedule", schedule.status());
  AddStage(m, "inductor schedule", MillisecondsSince(t));
  m.kernels = schedule->kernels_size();

  t = Clock::now();
  cpu::CpuExecutableOptions runtime;
  runtime.num_threads = threads;
  absl::StatusOr<std::unique_ptr<CpuProgram>> program =
      cache != nullptr ? CpuProgram::CompileCached(*schedule, *cache, {}, runtime)
                       : CpuProgram::Compile(*schedule, {}, runtime);
  if (!program.ok()) return InStage("codegen_cpu", program.status());
  const double program_ms = MillisecondsSince(t);
  const double codegen_ms = (*program)->codegen_seconds() * 1e3;
  const double load_ms = (*program)->load_seconds() * 1e3;
  m.cache_hit = (*program)->cache_hit();
  if (!m.cache_hit) AddStage(m, "codegen (LLVM O3 -> object)", codegen_ms);
  AddStage(m, "load (JIT + runtime)", load_ms);
  // What CpuProgram does besides generating and loading: the cache key, lookup and store.
  if (cache != nullptr) {
    AddStage(m, "compile cache (key, lookup, store)",
             std::max(0.0, program_ms - codegen_ms - load_ms));
  }
  m.program = *std::move(program);
  return m;
}

absl::StatusOr<CompiledModel> CompileOnnxModel(const std::string& path, CompileCache* cache,
                                               int threads) {
  const auto t = Clock::now();
  absl::StatusOr<proto::Graph> imported = onnx::ImportOnnxFile(path);
  if (!imported.ok()) return InStage("onnx import", imported.status());
  absl::StatusOr<Graph> graph = Graph::FromProto(*imported);
  if (!graph.ok()) return InStage("onnx import", graph.status());
  const double import_ms = MillisecondsSince(t);
  absl::StatusOr<CompiledModel> m = CompileGraph(*std::move(graph), cache, threads);
  if (!m.ok())
    return absl::Status(m.status().code(), absl::StrCat(path, ": ", m.status().message()));
  Stage s;
  s.set_name("onnx import");
  s.set_ms(import_ms);
  m->stages.insert(m->stages.begin(), s);
  m->total_ms += import_ms;
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
