// Max-autotune for `coil compile --mode max-autotune`: builds inductor schedule variants of one
// prims graph, compiles each for the CPU, times each (per thread count) on the same inputs and
// keeps the fastest.
//
//   AutotuneOptions options;
//   options.on_candidate = [](const AutotuneCandidate& c) { print(c); };
//   absl::StatusOr<AutotuneResult> r =
//       Autotune(graph, inputs, options, CompileCache::Default());
//   r->program->Run(...);   // the fastest candidate, loaded with its thread count
//
// The search space: every ScheduleVariants() entry (a variant whose schedule equals an earlier
// one's is skipped) x every thread count. A candidate's time is the median of `timed_runs`
// runs after `warmup_runs` runs, all on the same inputs (fewer for a candidate that is far
// behind, see prune_factor).
#ifndef COIL_TOOLS_COIL_COMPILE_AUTOTUNE_H_
#define COIL_TOOLS_COIL_COMPILE_AUTOTUNE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "codegen_cpu/codegen_cpu.h"
#include "ir/graph.h"
#include "ir/proto/kernel_module.pb.h"
#include "inductor/schedule.h"
#include "ir/proto/graph.pb.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/compile_cache.h"
#include "runtime/host_tensor.h"
#include "tools/driver/backend.h"

namespace coil::cli {

// One inductor configuration the autotuner tries: schedule options, and the extern epilogues
// the CPU backend declares.
struct ScheduleVariant {
  std::string name;  // "fused+epilogues", ...
  inductor::ScheduleOptions options;
  std::vector<std::string> extern_epilogues;
};

// The variants, the default configuration (what `--mode default` compiles) first:
//   fused+epilogues      fusion, pointwise epilogues fused into the CPU externs, memory reuse
//   fused                fusion, but no epilogue fusion across externs
//   fused+epilogues,no-reuse   as the first, every intermediate in its own arena slot
// (Unfused schedules are left out: one kernel per prim moves the most bytes and costs the most
// code generation.)
std::vector<ScheduleVariant> ScheduleVariants();

// The default thread counts for a machine with `hardware_threads` threads: 1, half, all
// (deduplicated, ascending).
std::vector<int> AutotuneThreadCounts(int hardware_threads);

// One (schedule variant, thread count) pair, timed.
struct AutotuneCandidate {
  std::string variant;
  int num_threads = 0;
  double median_seconds = 0;
  std::vector<double> run_seconds;  // the timed runs, in order
  bool pruned = false;              // stopped after one timed run (see prune_factor)
  // Of its schedule variant (shared by the candidates of that variant).
  double inductor_seconds = 0;
  double codegen_seconds = 0;  // code generation, or the cache lookup on a hit
  double load_seconds = 0;
  bool cache_hit = false;
  int kernels = 0;
};

struct AutotuneOptions {
  std::vector<ScheduleVariant> variants = ScheduleVariants();
  std::vector<int> thread_counts;  // empty: AutotuneThreadCounts(hardware concurrency)
  int warmup_runs = 2;
  int timed_runs = 5;
  // A candidate whose first timed run takes over prune_factor x the best median so far is not
  // timed further (its median is that one run): it cannot win, and slow candidates (a thread
  // count that oversubscribes the machine) would otherwise dominate the autotuning time.
  double prune_factor = 3;
  CpuCodegenOptions codegen;
  std::string external_data_dir;
  // Called as each candidate has been timed; and with the variant's name when a variant is
  // skipped because its schedule equals an earlier variant's (named second).
  std::function<void(const AutotuneCandidate&)> on_candidate;
  std::function<void(const std::string& skipped, const std::string& same_as)> on_duplicate;
};

struct AutotuneResult {
  std::vector<AutotuneCandidate> candidates;  // in the order timed
  int best = 0;                               // index into candidates
  std::vector<std::string> duplicates;        // "fused (same schedule as fused+epilogues)"
  proto::Schedule schedule;                   // the best candidate's
  proto::KernelModule module;                 // the best candidate's
  std::unique_ptr<driver::Executable> program;  // loaded with the best thread count
};

// Errors (naming the variant and thread count): inductor, code generation, loading or a run
// failing; options with no variants, no thread counts or fewer than one timed run
// (InvalidArgument).
// Every candidate compiles through the compile driver (tools/driver), `graph` being the
// captured or imported graph.
absl::StatusOr<AutotuneResult> Autotune(const Graph& graph,
                                        absl::Span<const HostTensor> inputs,
                                        const AutotuneOptions& options, CompileCache& cache);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_COMPILE_AUTOTUNE_H_
