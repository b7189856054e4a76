// Autotune: schedule variants x thread counts, each compiled, timed and compared.
#include "tools/coil/compile_autotune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"

namespace coil::cli {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What the generated code depends on: buffers, kernels, outputs and the memory plan. Fusion
// decisions and statistics are left out, so variants that only explain themselves differently
// (e.g. epilogue fusion on a graph without externs) compare equal.
std::string CodeRelevantBytes(const proto::Schedule& schedule) {
  proto::Schedule copy = schedule;
  copy.clear_decisions();
  copy.clear_stats();
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  copy.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

absl::Status Named(const absl::Status& s, const std::string& where) {
  return absl::Status(s.code(), absl::StrCat("autotune ", where, ": ", s.message()));
}

// Runs `program` warmup + timed times on `inputs`; the timed runs' seconds. Stops early
// (after one timed run) when that run is over `cutoff` seconds: such a candidate cannot win.
absl::StatusOr<std::vector<double>> TimeRuns(driver::Executable& program,
                                             absl::Span<const HostTensor> inputs, int warmup,
                                             int timed, double cutoff) {
  std::vector<double> seconds;
  for (int i = 0; i < warmup + timed; ++i) {
    auto start = Clock::now();
    absl::StatusOr<std::vector<HostTensor>> out = program.Run(inputs);
    double elapsed = Since(start);
    if (!out.ok()) return out.status();
    if (i < warmup) continue;
    seconds.push_back(elapsed);
    if (elapsed > cutoff) break;
  }
  return seconds;
}

// A stage's seconds from a compile's report (0 when it did not run, e.g. on a cache hit).
double StageSeconds(const driver::CompileResult& r, const std::string& stage) {
  for (const proto::StageTiming& t : r.report.timings()) {
    if (t.stage() == stage) return t.seconds();
  }
  return 0;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<ScheduleVariant> ScheduleVariants() {
  std::vector<ScheduleVariant> variants(3);
  variants[0].name = "fused+epilogues";
  variants[0].extern_epilogues = CpuCapabilities().extern_epilogues;
  variants[1].name = "fused";
  variants[2].name = "fused+epilogues,no-reuse";
  variants[2].extern_epilogues = CpuCapabilities().extern_epilogues;
  variants[2].options.reuse_memory = false;
  return variants;
}

std::vector<int> AutotuneThreadCounts(int hardware_threads) {
  std::vector<int> counts = {1, std::max(1, hardware_threads / 2), std::max(1, hardware_threads)};
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

absl::StatusOr<AutotuneResult> Autotune(const Graph& graph,
                                        absl::Span<const HostTensor> inputs,
                                        const AutotuneOptions& options, CompileCache& cache) {
  if (options.variants.empty()) return absl::InvalidArgumentError("autotune: no schedule variants");
  if (options.timed_runs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("autotune: timed runs must be at least 1, got ", options.timed_runs));
  }
  std::vector<int> threads = options.thread_counts;
  if (threads.empty()) {
    threads = AutotuneThreadCounts(static_cast<int>(std::thread::hardware_concurrency()));
  }
  for (int t : threads) {
    if (t < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("autotune: thread counts must be positive, got ", t));
    }
  }

  AutotuneResult result;
  std::vector<std::pair<std::string, std::string>> seen;  // code-relevant bytes, variant
  double best_seconds = 0;
  for (const ScheduleVariant& variant : options.variants) {
    // The candidate's backend: its epilogues, the first thread count.
    auto backend_for = [&](int num_threads) {
      driver::CpuBackendOptions b;
      b.codegen = options.codegen;
      b.runtime.external_data_dir = options.external_data_dir;
      b.runtime.num_threads = num_threads;
      b.extern_epilogues = variant.extern_epilogues;
      return driver::CpuBackend(b);
    };
    driver::DriverOptions compile;
    compile.backend = backend_for(threads[0]);
    compile.cache = &cache;
    compile.schedule = variant.options;
    compile.external_data_dir = options.external_data_dir;
    // The schedule first (cheap), so a variant equal to an earlier one generates no code.
    compile.stop_after = driver::Stage::kInductor;
    absl::StatusOr<driver::CompileResult> scheduled = driver::CompileGraph(graph.Clone(), compile);
    if (!scheduled.ok()) return Named(scheduled.status(), variant.name);
    const double inductor_seconds = StageSeconds(*scheduled, "inductor");
    const std::string bytes = CodeRelevantBytes(*scheduled->schedule);
    auto same = std::find_if(seen.begin(), seen.end(),
                             [&](const auto& s) { return s.first == bytes; });
    if (same != seen.end()) {
      result.duplicates.push_back(
          absl::StrCat(variant.name, " (same schedule as ", same->second, ")"));
      if (options.on_duplicate) options.on_duplicate(variant.name, same->second);
      continue;
    }
    seen.emplace_back(bytes, variant.name);

    // One code generation per variant; each thread count loads the same object code.
    compile.stop_after = driver::Stage::kLoad;
    absl::StatusOr<driver::CompileResult> compiled = driver::CompileGraph(graph.Clone(), compile);
    if (!compiled.ok()) return Named(compiled.status(), variant.name);
    if (compiled->executable == nullptr) return Named(compiled->load_error, variant.name);
    const double codegen_seconds = StageSeconds(*compiled, "codegen_cpu");
    const double first_load_seconds = StageSeconds(*compiled, "load");
    const proto::KernelModule& module = *compiled->module;
    const bool cache_hit = compiled->cache_hit;
    for (size_t ti = 0; ti < threads.size(); ++ti) {
      const std::string where = absl::StrCat(variant.name, ", ", threads[ti], " threads");
      std::unique_ptr<driver::Executable> program;
      double load_seconds = first_load_seconds;
      if (ti == 0) {
        program = std::move(compiled->executable);
      } else {
        auto start = Clock::now();
        absl::StatusOr<std::unique_ptr<driver::Executable>> loaded =
            backend_for(threads[ti])->Load(module);
        if (!loaded.ok()) return Named(loaded.status(), where + " (load)");
        program = *std::move(loaded);
        load_seconds = Since(start);
      }
      absl::StatusOr<std::vector<double>> runs =
          TimeRuns(*program, inputs, options.warmup_runs, options.timed_runs,
                   result.program == nullptr ? INFINITY : options.prune_factor * best_seconds);
      if (!runs.ok()) return Named(runs.status(), where + " (run)");
      AutotuneCandidate c;
      c.variant = variant.name;
      c.num_threads = threads[ti];
      c.run_seconds = *runs;
      c.median_seconds = Median(*runs);
      c.pruned = static_cast<int>(runs->size()) < options.timed_runs;
      c.inductor_seconds = inductor_seconds;
      c.codegen_seconds = codegen_seconds;
      c.load_seconds = load_seconds;
      c.cache_hit = cache_hit;
      c.kernels = module.kernels_size();
      if (options.on_candidate) options.on_candidate(c);
      if (result.program == nullptr || c.median_seconds < best_seconds) {
        best_seconds = c.median_seconds;
        result.best = static_cast<int>(result.candidates.size());
        result.schedule = *scheduled->schedule;
        result.module = module;
        result.program = std::move(program);  // the previous best is released here
      }
      result.candidates.push_back(std::move(c));
    }
  }
  return result;
}

}  // namespace coil::cli
