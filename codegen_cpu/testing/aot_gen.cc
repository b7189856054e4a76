// Test-only AOT generator, for build-time genrules (tests/aot/BUILD): a model file -> the real
// pipeline (the compile driver's prims and inductor, with the CPU backend's capabilities) ->
// WriteAotPackage.
// `coil compile --aot DIR` is the user-facing command; this tool exists so tests do not depend
// on the CLI.
//
//   aot_gen MODEL --name=NAME --out_dir=DIR [--cpu=CPU] [--opt_level=N] [--foreign_cpu]
//
// MODEL is text IR (ir/parser.h) or, when it ends in ".onnx", an ONNX model. --foreign_cpu
// picks the first of several LLVM CPUs whose package needs an ISA feature this machine lacks
// (to test the runtime's refusal), and fails when this machine has them all.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "capture/onnx/onnx_importer.h"
#include "codegen_cpu/aot.h"
#include "ir/graph.h"
#include "ir/parser.h"
#include "runtime/cpu/aot_cpu_features.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"

namespace coil {
namespace {

struct Args {
  std::string model, name, out_dir, cpu;
  int opt_level = 3;
  bool foreign_cpu = false;
};

absl::StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag, std::string* out) {
      const std::string prefix = absl::StrCat(flag, "=");
      if (!absl::StartsWith(arg, prefix)) return false;
      *out = arg.substr(prefix.size());
      return true;
    };
    std::string level;
    if (value("--name", &a.name) || value("--out_dir", &a.out_dir) || value("--cpu", &a.cpu)) {
      continue;
    }
    if (value("--opt_level", &level)) {
      if (!absl::SimpleAtoi(level, &a.opt_level)) {
        return absl::InvalidArgumentError(absl::StrCat("bad --opt_level '", level, "'"));
      }
    } else if (arg == "--foreign_cpu") {
      a.foreign_cpu = true;
    } else if (absl::StartsWith(arg, "--") || !a.model.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", arg, "'"));
    } else {
      a.model = arg;
    }
  }
  if (a.model.empty() || a.name.empty() || a.out_dir.empty()) {
    return absl::InvalidArgumentError(
        "usage: aot_gen MODEL --name=NAME --out_dir=DIR [--cpu=CPU] [--opt_level=N] "
        "[--foreign_cpu]");
  }
  if (a.foreign_cpu && !a.cpu.empty()) {
    return absl::InvalidArgumentError("--foreign_cpu and --cpu exclude each other");
  }
  return a;
}

absl::StatusOr<Graph> LoadModel(const std::string& path) {
  if (absl::EndsWith(path, ".onnx")) return onnx::ImportOnnxFileAsGraph(path);
  std::ifstream f(path);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream text;
  text << f.rdbuf();
  absl::StatusOr<Graph> g = ParseGraph(text.str());
  if (!g.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ":", g.status().message()));
  return g;
}

// prims and inductor (the CPU backend's capabilities, constants folded) through the compile
// driver, stopping at the Schedule: the AOT package is made from it below.
absl::StatusOr<proto::Schedule> Lower(Graph graph) {
  driver::DriverOptions options;
  options.backend = driver::CpuBackend();
  options.stop_after = driver::Stage::kInductor;
  options.cache = nullptr;
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(std::move(graph), options);
  if (!r.ok()) return r.status();
  return *std::move(r->schedule);
}

// The first candidate CPU whose package this machine cannot run.
absl::StatusOr<AotPackage> ForeignPackage(const proto::Schedule& schedule, AotOptions options) {
  // Intel server parts with AMX / AVX512-FP16, Xeon Phi (AVX512-ER/PF), AMD with XOP/FMA4/TBM:
  // no single x86 CPU has all of them.
  for (const char* cpu : {"sapphirerapids", "knl", "bdver4", "graniterapids"}) {
    options.cpu = cpu;
    absl::StatusOr<AotPackage> p = GenerateAotPackage(schedule, options);
    if (!p.ok()) return p.status();
    const cpu::CpuFeatureCheck check = cpu::CheckCpuFeatures(p->module.cpu_features());
    if (!check.missing.empty()) {
      std::fprintf(stderr, "aot_gen: --foreign_cpu: %s (this CPU lacks %s)\n", cpu,
                   absl::StrJoin(check.missing, ", ").c_str());
      return p;
    }
  }
  return absl::FailedPreconditionError("--foreign_cpu: this CPU has every candidate's features");
}

absl::Status Main(int argc, char** argv) {
  absl::StatusOr<Args> args = ParseArgs(argc, argv);
  if (!args.ok()) return args.status();
  absl::StatusOr<Graph> graph = LoadModel(args->model);
  if (!graph.ok()) return graph.status();
  absl::StatusOr<proto::Schedule> schedule = Lower(*std::move(graph));
  if (!schedule.ok()) return schedule.status();
  AotOptions options;
  options.name = args->name;
  options.cpu = args->cpu;
  options.opt_level = args->opt_level;
  absl::StatusOr<AotPackage> package = args->foreign_cpu
                                           ? ForeignPackage(*schedule, options)
                                           : GenerateAotPackage(*schedule, options);
  if (!package.ok()) return package.status();
  return WriteAotFiles(*package, args->out_dir);
}

}  // namespace
}  // namespace coil

int main(int argc, char** argv) {
  absl::Status s = coil::Main(argc, argv);
  if (!s.ok()) {
    std::fprintf(stderr, "aot_gen: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
