// Compile-time measurement of the CPU pipeline, stage by stage (docs/inductor.md, "Compile
// time"): ONNX import -> prims::Decompose -> inductor::BuildSchedule (CPU capabilities) ->
// GenerateCpu -> CpuProgram::Load (JIT + executable), each timed in wall and process CPU time
// (CPU time is what a loaded shared machine still measures faithfully; it also shows the
// parallel part of code generation), the minimum over --repeat cold compiles. Then a warm
// compile (the same pipeline with a compile-cache hit in a fresh temporary cache), and the
// compiled program's run time (median of --runs runs on seeded random inputs after one warm-up),
// so a change that makes compiling faster can be checked against the speed of the code.
//
//   bazel --output_base=/root/.cache/bazel_ct run --config=opt //codegen_cpu:compile_time -- \
//       [--repeat=3] [--runs=10] [--threads=1] [--compile_threads=0] [--opt_level=3] \
//       [--dim=batch=8] MODEL.onnx...
//
// One markdown row per model on stdout; progress and errors on stderr.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "capture/onnx/onnx_importer.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/cpu_program.h"
#include "inductor/schedule.h"
#include "ir/graph.h"
#include "prims/decompose.h"
#include "runtime/compile_cache.h"
#include "runtime/host_tensor.h"

namespace coil {
namespace {

struct Flags {
  std::vector<std::string> models;
  int repeat = 3;
  int runs = 10;
  int threads = 1;
  CpuCodegenOptions codegen;
  absl::flat_hash_map<std::string, int64_t> dims;  // --dim NAME=N: symbol sizes of the run
};

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto int_flag = [&](const char* name, int& out, int min) -> absl::StatusOr<bool> {
      const std::string prefix = absl::StrCat("--", name, "=");
      if (!absl::StartsWith(a, prefix)) return false;
      if (!absl::SimpleAtoi(a.substr(prefix.size()), &out) || out < min) {
        return absl::InvalidArgumentError(absl::StrCat(a, ": expected an integer >= ", min));
      }
      return true;
    };
    bool matched = false;
    for (auto [name, out, min] : std::vector<std::tuple<const char*, int*, int>>{
             {"repeat", &f.repeat, 1},
             {"runs", &f.runs, 0},
             {"threads", &f.threads, 0},
             {"compile_threads", &f.codegen.compile_threads, 0},
             {"opt_level", &f.codegen.opt_level, 0}}) {
      absl::StatusOr<bool> m = int_flag(name, *out, min);
      if (!m.ok()) return m.status();
      matched = matched || *m;
    }
    if (matched) continue;
    if (absl::StartsWith(a, "--dim=")) {
      std::vector<std::string> kv = absl::StrSplit(a.substr(6), '=');
      int64_t v = 0;
      if (kv.size() != 2 || kv[0].empty() || !absl::SimpleAtoi(kv[1], &v) || v < 1) {
        return absl::InvalidArgumentError(absl::StrCat(a, ": expected --dim=NAME=SIZE"));
      }
      f.dims[kv[0]] = v;
      continue;
    }
    if (absl::StartsWith(a, "--")) return absl::InvalidArgumentError("unknown flag " + a);
    f.models.push_back(a);
  }
  if (f.models.empty()) {
    return absl::InvalidArgumentError(
        "usage: compile_time [--repeat=N] [--runs=N] [--threads=N] [--compile_threads=N] "
        "[--opt_level=N] [--dim=NAME=SIZE]... MODEL.onnx...");
  }
  return f;
}

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Time {
  double wall = 1e30, cpu = 1e30;  // seconds; the minimum over repeats
};

// Runs `stage`, folding its wall and CPU time into `t` (the minimum over calls).
absl::Status Timed(Time& t, const std::function<absl::Status()>& stage) {
  const double w = WallSeconds(), c = CpuSeconds();
  absl::Status s = stage();
  t.wall = std::min(t.wall, WallSeconds() - w);
  t.cpu = std::min(t.cpu, CpuSeconds() - c);
  return s;
}

// Seeded random inputs at the symbols' hints (or `dims`): floats uniform in [-1, 1), integers
// in [0, 10).
absl::StatusOr<std::vector<HostTensor>> RandomInputs(
    const Graph& graph, const absl::flat_hash_map<std::string, int64_t>& dims) {
  absl::flat_hash_map<std::string, int64_t> hints;
  for (const SymbolInfo& s : graph.symbols()) hints[s.name] = s.hint > 0 ? s.hint : 1;
  for (const auto& [name, size] : dims) hints[name] = size;
  std::mt19937_64 rng(0);
  std::vector<HostTensor> out;
  for (const Value* in : graph.inputs()) {
    std::vector<int64_t> shape;
    int64_t n = 1;
    for (const SymExpr& d : in->type().shape) {
      absl::StatusOr<int64_t> v = d.Evaluate(hints);
      if (!v.ok()) return v.status();
      shape.push_back(*v);
      n *= *v;
    }
    std::vector<double> values(n);
    const bool floating = IsFloating(in->type().dtype);
    for (double& v : values) {
      v = floating ? std::uniform_real_distribution<double>(-1, 1)(rng)
                   : static_cast<double>(rng() % 10);
    }
    out.push_back(HostTensor::FromDoubles(in->type().dtype, shape, values));
  }
  return out;
}

struct Stages {
  Time import, prims, inductor, codegen, load, cold, warm;
  int kernels = 0;
  double run_ms = 0;
};

// One compile: import -> prims -> inductor -> codegen (or a cache hit) -> load.
absl::Status CompileOnce(const Flags& flags, const std::string& model, Stages& st,
                         CompileCache* cache, std::unique_ptr<CpuProgram>& program,
                         Graph* graph_out) {
  proto::Graph imported, prims_graph;
  proto::Schedule schedule;
  proto::KernelModule module;
  cpu::CpuExecutableOptions runtime;
  runtime.num_threads = flags.threads;
  runtime.external_data_dir = std::filesystem::path(model).parent_path().string();
  Time unused;
  Time& total = cache == nullptr ? st.cold : st.warm;
  auto pick = [&](Time& t) -> Time& { return cache == nullptr ? t : unused; };
  return Timed(total, [&]() -> absl::Status {
    if (absl::Status s = Timed(pick(st.import), [&]() -> absl::Status {
          absl::StatusOr<proto::Graph> g = onnx::ImportOnnxFile(model);
          if (!g.ok()) return g.status();
          imported = *std::move(g);
          return absl::OkStatus();
        });
        !s.ok()) {
      return s;
    }
    if (absl::Status s = Timed(pick(st.prims), [&]() -> absl::Status {
          absl::StatusOr<Graph> g = Graph::FromProto(imported);
          if (!g.ok()) return g.status();
          if (graph_out != nullptr) *graph_out = g->Clone();
          absl::StatusOr<bool> changed = prims::Decompose(*g);
          if (!changed.ok()) return changed.status();
          prims_graph = g->ToProto();
          return absl::OkStatus();
        });
        !s.ok()) {
      return s;
    }
    if (absl::Status s = Timed(pick(st.inductor), [&]() -> absl::Status {
          inductor::ScheduleOptions options;
          options.capabilities = CpuCapabilities();
          absl::StatusOr<proto::Schedule> sch = inductor::BuildSchedule(prims_graph, options);
          if (!sch.ok()) return sch.status();
          schedule = *std::move(sch);
          return absl::OkStatus();
        });
        !s.ok()) {
      return s;
    }
    if (cache != nullptr) {
      absl::StatusOr<std::unique_ptr<CpuProgram>> p =
          CpuProgram::CompileCached(schedule, *cache, flags.codegen, runtime);
      if (!p.ok()) return p.status();
      program = *std::move(p);
      return absl::OkStatus();
    }
    if (absl::Status s = Timed(st.codegen, [&]() -> absl::Status {
          absl::StatusOr<proto::KernelModule> m = GenerateCpu(schedule, flags.codegen);
          if (!m.ok()) return m.status();
          module = *std::move(m);
          return absl::OkStatus();
        });
        !s.ok()) {
      return s;
    }
    st.kernels = module.kernels_size();
    return Timed(st.load, [&]() -> absl::Status {
      absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Load(std::move(module), runtime);
      if (!p.ok()) return p.status();
      program = *std::move(p);
      return absl::OkStatus();
    });
  });
}

absl::Status Measure(const Flags& flags, const std::string& model, Stages& st) {
  std::unique_ptr<CpuProgram> program;
  Graph graph;
  for (int r = 0; r < flags.repeat; ++r) {
    program.reset();
    if (absl::Status s = CompileOnce(flags, model, st, nullptr, program, &graph); !s.ok()) {
      return s;
    }
  }
  // Warm: fill a fresh cache once, then time hits.
  std::error_code ec;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("coil_compile_time_", getpid());
  std::filesystem::remove_all(dir, ec);
  CompileCache cache(dir.string());
  Stages fill;
  absl::Status warm = CompileOnce(flags, model, fill, &cache, program, nullptr);
  for (int r = 0; r < flags.repeat && warm.ok(); ++r) {
    program.reset();
    warm = CompileOnce(flags, model, st, &cache, program, nullptr);
    if (warm.ok() && !program->cache_hit()) {
      warm = absl::InternalError(absl::StrCat("no compile-cache hit in ", dir.string()));
    }
  }
  std::filesystem::remove_all(dir, ec);
  if (!warm.ok()) return warm;

  absl::StatusOr<std::vector<HostTensor>> inputs = RandomInputs(graph, flags.dims);
  if (!inputs.ok()) return inputs.status();
  std::vector<double> times;
  for (int r = 0; r <= flags.runs && flags.runs > 0; ++r) {
    const double w = WallSeconds();
    absl::StatusOr<std::vector<HostTensor>> out = program->Run(*inputs);
    if (!out.ok()) return out.status();
    if (r > 0) times.push_back(WallSeconds() - w);  // the first run is a warm-up
  }
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    st.run_ms = times[times.size() / 2] * 1e3;
  }
  return absl::OkStatus();
}

std::string Cell(const Time& t) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.0f / %.0f", t.wall * 1e3, t.cpu * 1e3);
  return text;
}

int Main(int argc, char** argv) {
  absl::StatusOr<Flags> flags = ParseFlags(argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "%s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  std::printf("wall / CPU ms, minimum of %d cold compiles (opt_level %d, compile_threads %d); "
              "run: median of %d runs on %d thread(s)\n\n",
              flags->repeat, flags->codegen.opt_level, flags->codegen.compile_threads,
              flags->runs, flags->threads);
  std::printf("| model | import | prims | inductor | codegen | load | cold total | warm total "
              "| kernels | run ms |\n|---|---|---|---|---|---|---|---|---|---|\n");
  int failures = 0;
  for (const std::string& model : flags->models) {
    Stages st;
    if (absl::Status s = Measure(*flags, model, st); !s.ok()) {
      std::fprintf(stderr, "%s: %s\n", model.c_str(), std::string(s.message()).c_str());
      ++failures;
      continue;
    }
    std::string name = std::filesystem::path(model).parent_path().filename().string();
    if (name.empty()) name = model;
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %d | %.2f |\n", name.c_str(),
                Cell(st.import).c_str(), Cell(st.prims).c_str(), Cell(st.inductor).c_str(),
                Cell(st.codegen).c_str(), Cell(st.load).c_str(), Cell(st.cold).c_str(),
                Cell(st.warm).c_str(), st.kernels, st.run_ms);
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace coil

int main(int argc, char** argv) { return coil::Main(argc, argv); }
