// `coil compile MODEL`: import -> prims -> inductor -> codegen_cpu -> load as a straight list
// of named stages, each timed, printed as it finishes and recorded in a CompileReport; plus
// max-autotune, --check and --aot (see compile_commands.h). Flags: compile_flags.h; the --dump
// files: compile_dump.h.
#include "tools/coil/compile_commands.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen_cpu/aot.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/cpu_program.h"
#include "inductor/schedule.h"
#include "ir/proto/report.pb.h"
#include "ir/verifier.h"
#include "runtime/compile_cache.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/tensor_compare.h"
#include "tools/coil/args.h"
#include "tools/coil/backend_run.h"
#include "tools/coil/compile_autotune.h"
#include "tools/coil/compile_dump.h"
#include "tools/coil/compile_train.h"
#include "tools/coil/compile_flags.h"
#include "tools/coil/graph_io.h"
#include "runtime/cuda/cuda_package.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"
#include "tools/driver/stage_clock.h"
#include "tools/driver/schedule_backend.h"

namespace coil::cli {
namespace {


std::string HumanBytes(int64_t n) {
  if (n < 1024) return absl::StrCat(n, " B");
  if (n < 1024 * 1024) return absl::StrFormat("%.1f KiB", n / 1024.0);
  return absl::StrFormat("%.1f MiB", n / (1024.0 * 1024.0));
}

std::string Plural(int64_t n, const char* word) {
  return absl::StrCat(n, " ", word, n == 1 ? "" : "s");
}

// Independent copies (runs may write mutated inputs back).
std::vector<HostTensor> Copies(const std::vector<HostTensor>& inputs) {
  std::vector<HostTensor> out;
  for (const HostTensor& t : inputs) out.push_back(t.Contiguous().To(t.dtype()));
  return out;
}

// One `coil compile`: the driver's stages (import, capture, prims, inductor, codegen, load) with
// progress lines, then max-autotune, --check and --aot; the report and the dump files.
class CompileRun {
 public:
  explicit CompileRun(CompileFlags flags) : flags_(std::move(flags)) {}

  absl::Status Run() {
    start_ = driver::StageClock();
    std::printf("coil compile %s (backend %s, mode %s)\n", flags_.model.c_str(),
                flags_.backend.c_str(), flags_.mode.c_str());
    std::fflush(stdout);
    if (!flags_.dump_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(flags_.dump_dir, ec);
      if (ec) {
        stage_ = "dump";
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot create --dump directory '", flags_.dump_dir, "': ", ec.message()));
      }
    }
    if (absl::Status s = Compile(); !s.ok()) return s;
    if (flags_.mode == "max-autotune") {
      if (absl::Status s = AutotuneStage(); !s.ok()) return s;
    }
    if (flags_.check) {
      if (absl::Status s = Check(); !s.ok()) return s;
    }
    if (!flags_.aot_dir.empty()) {
      if (absl::Status s = Aot(); !s.ok()) return s;
    }
    std::printf("  %-12s %10.3f ms  (CPU %.3f ms, every thread)\n", "total",
                start_.WallSeconds() * 1e3, start_.CpuSeconds() * 1e3);
    return absl::OkStatus();
  }

  const std::string& failed_stage() const { return stage_; }

  // --dump: DIR/report.pb and one file per stage artifact, also after a failure (the error is
  // in the logs).
  absl::Status WriteReport(const absl::Status& outcome) {
    if (flags_.dump_dir.empty()) return absl::OkStatus();
    if (!outcome.ok() && !has_error_log_) {
      Log("error", absl::StrCat(stage_, ": ", outcome.message()));
    }
    absl::StatusOr<int> files = WriteCompileDump(report_, flags_.dump_dir);
    if (!files.ok()) return files.status();
    const std::string path = flags_.dump_dir + "/report.pb";
    std::printf("wrote %s (%d stages) and %s in %s\n", path.c_str(), report_.stages_size(),
                Plural(*files, "stage file").c_str(), flags_.dump_dir.c_str());
    return absl::OkStatus();
  }

 private:
  void Progress(const std::string& stage, double seconds, const std::string& detail) {
    std::printf("  %-12s %10.3f ms  %s\n", stage.c_str(), seconds * 1e3, detail.c_str());
    std::fflush(stdout);
  }

  // A stage run here rather than by the driver (autotune, check, aot): progress + timing.
  void Finish(const std::string& stage, const driver::StageClock& timer,
              const std::string& detail) {
    proto::StageTiming* t = report_.add_timings();
    t->set_stage(stage);
    timer.Record(*t);
    Progress(stage, t->seconds(), detail);
  }
  // A row timed by someone else (autotune's best candidate): wall time only.
  void Finish(const std::string& stage, double seconds, const std::string& detail) {
    Progress(stage, seconds, detail);
    proto::StageTiming* t = report_.add_timings();
    t->set_stage(stage);
    t->set_seconds(seconds);
  }

  void Log(const std::string& channel, const std::string& text) {
    proto::LogLine* line = report_.add_logs();
    line->set_channel(channel);
    line->set_text(text);
  }

  // External constant data paths are relative to the model's folder.
  std::string ModelDir() const {
    return std::filesystem::path(flags_.model).parent_path().string();
  }

  CpuCodegenOptions CodegenOptions() const {
    CpuCodegenOptions o;
    o.cpu = flags_.cpu;
    return o;
  }

  // --train: import, autograd, the forward's and the backward's stages (compile_train.h).
  absl::Status CompileTrain(const driver::DriverOptions& options) {
    stage_ = "import";
    const std::string model = flags_.model;
    absl::StatusOr<driver::TrainingCompileResult> r = CompileForTraining(
        [&]() { return LoadGraph(model); }, options, &report_);
    report_.set_model(flags_.model);
    auto& o = *report_.mutable_options();
    o["mode"] = flags_.mode;
    o["cpu"] = flags_.cpu.empty() ? "host" : flags_.cpu;
    if (!r.ok()) {
      stage_ = "train";
      return r.status();
    }
    std::printf("  %-12s %10.3f ms  joint graph, decomposition, partition; %s\n", "autograd",
                r->autograd_seconds * 1e3, o["train"].c_str());
    return absl::OkStatus();
  }

  // The driver: import -> ... -> load (default mode), or up to prims (max-autotune, which
  // compiles its candidates through the driver itself).
  absl::Status Compile() {
    driver::DriverOptions options;
    if (flags_.backend == "cpu") {
      driver::CpuBackendOptions cpu;
      cpu.codegen = CodegenOptions();
      cpu.runtime.external_data_dir = ModelDir();
      options.backend = driver::CpuBackend(cpu);
    } else if (flags_.backend == "cuda") {
      driver::CudaBackendOptions cuda;
      cuda.runtime.external_data_dir = ModelDir();
      options.backend = driver::CudaBackend(cuda);  // no driver: generated, not loaded
    } else {
      // The Schedule interpreter claims no extern epilogues (as `coil run --backend schedule`),
      // unless the schedule is for an AOT package, which the CPU runtime runs.
      options.backend = driver::ScheduleInterpreterBackend(
          flags_.aot_dir.empty() ? std::vector<std::string>{}
                                 : CpuCapabilities().extern_epilogues,
          ModelDir());
      options.stop_after = driver::Stage::kInductor;
    }
    if (flags_.mode == "max-autotune") options.stop_after = driver::Stage::kPrims;
    options.external_data_dir = ModelDir();
    options.precision = flags_.precision;
    options.record_artifacts = !flags_.dump_dir.empty();
    // --check and --aot read the Schedule; otherwise the weights move through the stages.
    options.keep_intermediates = flags_.check || !flags_.aot_dir.empty();
    options.on_stage = [this](const driver::StageEvent& e) {
      stage_ = e.stage;
      if (e.stage == "load" && absl::StartsWith(e.detail, "skipped")) {
        std::printf("  %-12s %10s     %s\n", "load", "-",
                    absl::StrCat("skipped, the code does not run on this host: ",
                                 e.detail.substr(e.detail.find(':') + 2))
                        .c_str());
        return;
      }
      Progress(e.stage, e.seconds, e.detail);
    };
    if (flags_.train) return CompileTrain(options);
    const std::string model = flags_.model;
    // --check and max-autotune need the imported graph after the driver consumed it.
    const bool keep_graph = flags_.check || flags_.mode == "max-autotune";
    stage_ = "import";
    absl::StatusOr<driver::CompileResult> r = driver::CompileImported(
        [&]() -> absl::StatusOr<Graph> {
          absl::StatusOr<Graph> g = LoadGraph(model);  // verified by the driver's capture
          if (!g.ok()) return g.status();
          if (keep_graph) graph_ = g->Clone();
          return g;
        },
        options, &report_);
    if (!r.ok()) {
      has_error_log_ = true;
      report_.set_model(flags_.model);
      return StripStage(r.status());
    }
    result_ = *std::move(r);
    const double compile_seconds = result_.total_seconds();
    report_ = std::move(result_.report);
    report_.set_model(flags_.model);
    auto& o = *report_.mutable_options();
    o["mode"] = flags_.mode;
    o["cpu"] = flags_.cpu.empty() ? "host" : flags_.cpu;
    o["seed"] = absl::StrCat(flags_.seed);
    if (!flags_.dims.empty()) o["dim"] = flags_.dims;
    if (!flags_.aot_dir.empty()) {
      o["aot"] = flags_.aot_dir;
      o["aot_name"] = flags_.name;
    }
    if (flags_.backend == "cpu" && flags_.mode == "default") {
      const char* cache = !CompileCache::Default().enabled() ? "cache off"
                          : result_.cache_hit                ? "cache hit"
                                                             : "cache miss";
      o["compile_cache_result"] = cache;
      std::printf("  %-12s %10.3f ms  %s (%s)\n", "compile", compile_seconds * 1e3,
                  result_.cache_hit ? "cached module loaded" : "every stage", cache);
      if (result_.executable != nullptr) {
        o["num_threads"] = absl::StrCat(std::max(1u, std::thread::hardware_concurrency()));
      } else if (!result_.load_error.ok()) {
        Log("load", absl::StrCat("skipped, the code does not run on this host: ",
                                 result_.load_error.message()));
      }
    }
    if (keep_graph) {
      stage_ = "inputs";
      absl::StatusOr<std::vector<HostTensor>> inputs =
          RandomInputs(*graph_, flags_.dims, flags_.seed);
      if (!inputs.ok()) return inputs.status();
      inputs_ = *std::move(inputs);
    }
    return absl::OkStatus();
  }

  // "prims: message" from the driver -> stage_ = "prims", message.
  absl::Status StripStage(const absl::Status& s) {
    const std::string m(s.message());
    for (const char* stage : {"import", "capture", "prims", "inductor", "codegen_cpu",
                              "codegen_schedule", "load"}) {
      const std::string prefix = absl::StrCat(stage, ": ");
      if (absl::StartsWith(m, prefix)) {
        stage_ = stage;
        return absl::Status(s.code(), m.substr(prefix.size()));
      }
    }
    return s;
  }

  const proto::Schedule& schedule() const {
    return result_.schedule.has_value() ? *result_.schedule : result_.module->schedule();
  }

  absl::Status AutotuneStage() {
    stage_ = "autotune";
    AutotuneOptions options;
    options.timed_runs = flags_.runs;
    options.codegen = CodegenOptions();
    options.external_data_dir = ModelDir();
    options.thread_counts =
        AutotuneThreadCounts(static_cast<int>(std::thread::hardware_concurrency()));
    std::printf("  autotune: %s x thread counts {",
                Plural(options.variants.size(), "schedule variant").c_str());
    for (size_t i = 0; i < options.thread_counts.size(); ++i) {
      std::printf("%s%d", i ? ", " : "", options.thread_counts[i]);
    }
    std::printf("}, median of %d runs after %s\n", options.timed_runs,
                Plural(options.warmup_runs, "warm-up").c_str());
    std::fflush(stdout);
    options.on_candidate = [](const AutotuneCandidate& c) {
      const std::string codegen = absl::StrFormat("%.1f ms%s", c.codegen_seconds * 1e3,
                                                  c.cache_hit ? " cache hit" : "");
      std::printf("    %-26s %2d %-7s %10.3f ms  (inductor %.1f ms, codegen %s, %s%s)\n",
                  c.variant.c_str(), c.num_threads, c.num_threads == 1 ? "thread" : "threads",
                  c.median_seconds * 1e3, c.inductor_seconds * 1e3, codegen.c_str(),
                  Plural(c.kernels, "kernel").c_str(),
                  c.pruned ? "; 1 run: far behind the best" : "");
      std::fflush(stdout);
    };
    options.on_duplicate = [](const std::string& skipped, const std::string& same_as) {
      std::printf("    %-26s skipped: same schedule as %s\n", skipped.c_str(), same_as.c_str());
      std::fflush(stdout);
    };
    const driver::StageClock timer;
    absl::StatusOr<AutotuneResult> result =
        Autotune(*graph_, inputs_, options, CompileCache::Default());
    if (!result.ok()) return result.status();

    const AutotuneCandidate& best = result->candidates[result->best];
    // The default configuration: the first variant with every thread.
    const AutotuneCandidate* baseline = nullptr;
    for (const AutotuneCandidate& c : result->candidates) {
      if (c.variant == options.variants[0].name &&
          c.num_threads == options.thread_counts.back()) {
        baseline = &c;
      }
    }
    for (const AutotuneCandidate& c : result->candidates) {
      Log("autotune", absl::StrFormat("%s, %s: median %.6f ms of %s%s", c.variant,
                                      Plural(c.num_threads, "thread"), c.median_seconds * 1e3,
                                      Plural(c.run_seconds.size(), "run"),
                                      &c == &best ? " (best)" : ""));
    }
    for (const std::string& d : result->duplicates) Log("autotune", "skipped " + d);
    const std::string choice = absl::StrCat(best.variant, ", ", Plural(best.num_threads, "thread"));
    auto& opts = *report_.mutable_options();
    opts["autotune_choice"] = choice;
    opts["autotune_variant"] = best.variant;
    opts["num_threads"] = absl::StrCat(best.num_threads);
    opts["autotune_best_ms"] = absl::StrFormat("%.6f", best.median_seconds * 1e3);
    std::string versus;
    if (baseline != nullptr) {
      opts["autotune_default_ms"] = absl::StrFormat("%.6f", baseline->median_seconds * 1e3);
      versus = absl::StrFormat(", %.2fx the default configuration",
                               baseline->median_seconds / best.median_seconds);
    }
    Finish("autotune", timer,
           absl::StrCat(Plural(result->candidates.size(), "candidate"), "; best ", choice,
                        absl::StrFormat(" at %.3f ms", best.median_seconds * 1e3), versus));
    // The best candidate's stages, as the default mode's driver records them.
    const proto::Schedule& best_schedule = result->schedule;
    Finish("inductor", best.inductor_seconds,
           absl::StrCat(Plural(best_schedule.stats().kernels(), "kernel"), " (",
                        Plural(best_schedule.stats().externs(), "extern"), ") from ",
                        best_schedule.stats().kernels_unfused(), " unfused (best candidate)"));
    Finish("codegen_cpu", best.codegen_seconds,
           absl::StrCat(Plural(result->module.kernels_size(), "kernel"), ", ",
                        HumanBytes(result->module.object_code().size()), " object code (",
                        best.cache_hit ? "cache hit" : "best candidate", ")"));
    Finish("load", best.load_seconds, absl::StrCat("JIT + executable, ",
                                                   Plural(best.num_threads, "thread")));
    if (!flags_.dump_dir.empty()) {
      proto::StageArtifact* a = report_.add_stages();
      a->set_stage("inductor");
      a->set_seconds(best.inductor_seconds);
      *a->mutable_schedule() = result->schedule;
      a = report_.add_stages();
      a->set_stage("codegen_cpu");
      a->set_seconds(best.codegen_seconds);
      *a->mutable_kernel_module() = result->module;
    }
    result_.schedule = result->schedule;
    result_.module = result->module;
    result_.executable = std::move(result->program);
    return absl::OkStatus();
  }

  absl::Status Check() {
    stage_ = "check";
    if (flags_.backend == "cpu" && result_.executable == nullptr) {
      return absl::FailedPreconditionError(
          "--check runs the compiled code, which was generated for another CPU (--cpu)");
    }
    const driver::StageClock timer;
    std::vector<HostTensor> oracle_inputs = Copies(inputs_);
    absl::StatusOr<std::vector<HostTensor>> got, want;
    std::string what;
    if (flags_.backend == "cpu") {
      what = "cpu vs Schedule interpreter";
      got = result_.executable->Run(Copies(inputs_));
      if (!got.ok()) return got.status();
      want = InterpretSchedule(schedule(), oracle_inputs, {.poison_dead_buffers = true});
    } else {
      what = "Schedule interpreter vs graph interpreter";
      got = InterpretSchedule(schedule(), Copies(inputs_), {.poison_dead_buffers = true});
      if (!got.ok()) return got.status();
      want = Interpret(*graph_, oracle_inputs);
    }
    if (!want.ok()) return want.status();
    double worst = 0;
    for (size_t i = 0; i < want->size() && i < got->size(); ++i) {
      worst = std::max(worst, MaxRelativeError((*got)[i], (*want)[i], NanPolicy::kNanMatchesNan));
    }
    const std::string line = absl::StrFormat("%s, seed %d: max relative error %.3g over %s",
                                             what, flags_.seed, worst,
                                             Plural(got->size(), "output"));
    Finish("check", timer, line);
    Log("check", line);
    if (got->size() != want->size()) {
      return absl::InternalError(absl::StrCat(what, ": ", got->size(), " outputs, expected ",
                                              want->size()));
    }
    if (!(worst <= 1e-4)) {
      return absl::InternalError(
          absl::StrFormat("%s: max relative error %.3g is above 1e-4", what, worst));
    }
    return absl::OkStatus();
  }

  absl::Status Aot() {
    stage_ = "aot";
    const driver::StageClock timer;
    if (flags_.backend == "cuda") {
      const std::string path =
          absl::StrCat(flags_.aot_dir, "/", flags_.name, cuda::kCudaPackageExtension);
      std::error_code ec;
      std::filesystem::create_directories(flags_.aot_dir, ec);
      if (!result_.module.has_value()) return absl::InternalError("the compile kept no module");
      if (absl::Status s = cuda::WriteCudaPackage(*result_.module, path); !s.ok()) return s;
      const std::uintmax_t size = std::filesystem::file_size(path, ec);
      Finish("aot", timer,
             absl::StrCat("wrote ", path, ec ? "" : absl::StrCat(" (", HumanBytes(size), ")")));
      return absl::OkStatus();
    }
    const AotOptions options{.name = flags_.name,
                             .cpu = flags_.cpu,
                             .external_data_dir = ModelDir()};
    if (absl::Status s = WriteAotPackage(schedule(), options, flags_.aot_dir); !s.ok()) return s;
    std::string detail = "wrote";
    std::error_code ec;
    for (const char* ext : {".o", ".h"}) {
      const std::string path = absl::StrCat(flags_.aot_dir, "/", flags_.name, ext);
      std::uintmax_t size = std::filesystem::file_size(path, ec);
      absl::StrAppend(&detail, ext[1] == 'o' ? " " : ", ", path,
                      ec ? "" : absl::StrCat(" (", HumanBytes(size), ")"));
    }
    Finish("aot", timer, detail);
    return absl::OkStatus();
  }

  CompileFlags flags_;
  proto::CompileReport report_;
  std::string stage_;  // the stage running (or failed)
  bool has_error_log_ = false;  // the driver logged the error into report_ already
  driver::StageClock start_;
  driver::CompileResult result_;
  absl::StatusOr<Graph> graph_ = absl::UnknownError("not loaded");
  std::vector<HostTensor> inputs_;  // seeded random inputs (--check, max-autotune)
};

}  // namespace

int CompileCommand(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> args =
      ParseArgs(argv,
                {"backend", "mode", "dump", "aot", "name", "cpu", "dim", "seed", "runs",
                 "precision"},
                {"check", "help", "train"});
  if (!args.ok()) {
    std::cerr << "coil compile: " << args.status().message() << "\n";
    return 1;
  }
  if (args->positional.size() != 1 || args->Has("help")) {
    return Usage(kCompileUsage, args->Has("help"));
  }
  absl::StatusOr<CompileFlags> flags = ParseCompileFlags(*args);
  if (!flags.ok()) {
    std::cerr << "coil compile: " << flags.status().message() << "\n";
    return 1;
  }
  CompileRun driver(*std::move(flags));
  absl::Status outcome = driver.Run();
  if (!outcome.ok()) {
    std::fflush(stdout);
    std::cerr << "coil compile: failed at " << driver.failed_stage() << ": "
              << outcome.message() << "\n";
  }
  if (absl::Status s = driver.WriteReport(outcome); !s.ok()) {
    std::cerr << "coil compile: " << s.message() << "\n";
    return 1;
  }
  return outcome.ok() ? 0 : 1;
}

}  // namespace coil::cli
