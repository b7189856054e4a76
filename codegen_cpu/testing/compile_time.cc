// Compile-time measurement of the CPU pipeline, stage by stage (docs/inductor.md, "Compile
// time"): ONNX import, then the compile driver (tools/driver/driver.h) with the CPU backend:
// prims -> inductor (CPU capabilities, constants folded) -> codegen_cpu -> load (JIT +
// executable), each timed in wall and process CPU time (CPU time is what a loaded shared
// machine still measures faithfully; it also shows the parallel part of code generation), the
// minimum over --repeat cold compiles (no compile cache). The import column includes the
// driver's "capture" stage (the graph verified). Then a warm compile (the driver with a
// compile-cache hit in a fresh temporary cache: import, cache key, lookup and load), and the
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
#include <initializer_list>
#include <memory>
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
#include "ir/graph.h"
#include "ir/tensor_type.h"
#include "runtime/compile_cache.h"
#include "runtime/host_tensor.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"

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

// What random inputs need of the graph (taken before the driver consumes it).
struct InputSpec {
  std::vector<SymbolInfo> symbols;
  std::vector<TensorType> inputs;
};

InputSpec SpecOf(const Graph& graph) {
  InputSpec spec{graph.symbols(), {}};
  for (const Value* in : graph.inputs()) spec.inputs.push_back(in->type());
  return spec;
}

// Seeded random inputs at the symbols' hints (or `dims`): floats uniform in [-1, 1), integers
// in [0, 10).
absl::StatusOr<std::vector<HostTensor>> RandomInputs(
    const InputSpec& spec, const absl::flat_hash_map<std::string, int64_t>& dims) {
  absl::flat_hash_map<std::string, int64_t> hints;
  for (const SymbolInfo& s : spec.symbols) hints[s.name] = s.hint > 0 ? s.hint : 1;
  for (const auto& [name, size] : dims) hints[name] = size;
  std::mt19937_64 rng(0);
  std::vector<HostTensor> out;
  for (const TensorType& type : spec.inputs) {
    std::vector<int64_t> shape;
    int64_t n = 1;
    for (const SymExpr& d : type.shape) {
      absl::StatusOr<int64_t> v = d.Evaluate(hints);
      if (!v.ok()) return v.status();
      shape.push_back(*v);
      n *= *v;
    }
    std::vector<double> values(n);
    const bool floating = IsFloating(type.dtype);
    for (double& v : values) {
      v = floating ? std::uniform_real_distribution<double>(-1, 1)(rng)
                   : static_cast<double>(rng() % 10);
    }
    out.push_back(HostTensor::FromDoubles(type.dtype, shape, values));
  }
  return out;
}

struct Stages {
  Time import, prims, inductor, codegen, load, cold, warm;
  int kernels = 0;
  double run_ms = 0;
};

// One compile: ONNX import, then the compile driver (capture -> prims -> inductor -> codegen ->
// load, or on a cache hit capture -> cache key -> lookup -> load). Each driver stage's wall time
// is its StageTiming in the report; its CPU time is read as the stage finishes (on_stage). The
// import column holds the ONNX import and the driver's "capture" (the graph verified).
absl::Status CompileOnce(const Flags& flags, const std::string& model, Stages& st,
                         CompileCache* cache, std::unique_ptr<driver::Executable>& program,
                         bool& cache_hit, InputSpec* spec_out) {
  const std::string model_dir = std::filesystem::path(model).parent_path().string();
  driver::CpuBackendOptions cpu;
  cpu.codegen = flags.codegen;
  cpu.runtime.num_threads = flags.threads;
  cpu.runtime.external_data_dir = model_dir;
  driver::DriverOptions options;
  options.backend = driver::CpuBackend(cpu);
  options.cache = cache;
  options.keep_intermediates = false;  // as `coil compile`: the weights move, never copied
  options.external_data_dir = model_dir;
  absl::flat_hash_map<std::string, double> stage_cpu;  // CPU seconds per driver stage
  double last_cpu = 0;
  options.on_stage = [&](const driver::StageEvent& e) {
    const double now = CpuSeconds();
    stage_cpu[e.stage] += now - last_cpu;
    last_cpu = now;
  };

  Time import;  // this compile's ONNX import
  absl::StatusOr<driver::CompileResult> r = absl::UnknownError("not compiled");
  absl::Status s = Timed(cache == nullptr ? st.cold : st.warm, [&]() -> absl::Status {
    absl::StatusOr<Graph> g = absl::UnknownError("not imported");
    if (absl::Status i = Timed(import, [&]() -> absl::Status {
          g = onnx::ImportOnnxFileAsGraph(model);
          return g.status();
        });
        !i.ok()) {
      return i;
    }
    if (spec_out != nullptr) *spec_out = SpecOf(*g);
    last_cpu = CpuSeconds();
    r = driver::CompileGraph(*std::move(g), options);
    return r.status();
  });
  if (!s.ok()) return s;
  if (r->executable == nullptr) return r->load_error;
  cache_hit = r->cache_hit;
  program = std::move(r->executable);
  if (cache != nullptr) return absl::OkStatus();  // only the warm total is reported

  absl::flat_hash_map<std::string, double> stage_wall;
  for (const proto::StageTiming& t : r->report.timings()) stage_wall[t.stage()] += t.seconds();
  // Folds the driver stages `names` (plus `extra`) into `t`, the minimum over compiles.
  auto fold = [&](Time& t, std::initializer_list<const char*> names, Time extra) {
    for (const char* name : names) {
      extra.wall += stage_wall[name];
      extra.cpu += stage_cpu[name];
    }
    t.wall = std::min(t.wall, extra.wall);
    t.cpu = std::min(t.cpu, extra.cpu);
  };
  fold(st.import, {"capture"}, import);
  fold(st.prims, {"prims"}, {0, 0});
  fold(st.inductor, {"inductor"}, {0, 0});
  fold(st.codegen, {"codegen_cpu"}, {0, 0});
  fold(st.load, {"load"}, {0, 0});
  st.kernels = static_cast<int>(driver::AsCpuProgram(*program)->module().kernels_size());
  return absl::OkStatus();
}

absl::Status Measure(const Flags& flags, const std::string& model, Stages& st) {
  std::unique_ptr<driver::Executable> program;
  InputSpec spec;
  bool hit = false;
  for (int r = 0; r < flags.repeat; ++r) {
    program.reset();
    if (absl::Status s = CompileOnce(flags, model, st, nullptr, program, hit, &spec); !s.ok()) {
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
  absl::Status warm = CompileOnce(flags, model, fill, &cache, program, hit, nullptr);
  for (int r = 0; r < flags.repeat && warm.ok(); ++r) {
    program.reset();
    warm = CompileOnce(flags, model, st, &cache, program, hit, nullptr);
    if (warm.ok() && !hit) {
      warm = absl::InternalError(absl::StrCat("no compile-cache hit in ", dir.string()));
    }
  }
  std::filesystem::remove_all(dir, ec);
  if (!warm.ok()) return warm;

  absl::StatusOr<std::vector<HostTensor>> inputs = RandomInputs(spec, flags.dims);
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
