// The compile driver: the one place where coil's stages meet. It runs a straight, named list of
// stages on a Graph, for one driver::Backend:
//
//   [import]  a model file read into a Graph (CompileImported)
//   capture   the input graph (verified; its artifact unless imported)
//   cache     graph-level compile-cache lookup: a hit skips prims, inductor and codegen
//   prims     PrimsPipeline: functionalize, decompose            (prims/decompose.h)
//   inductor  GraphPipeline, lower, ProgramPipeline               (inductor/pipeline.h), with
//             the backend's capabilities and the reference interpreter for constant folding
//   codegen_<backend>   Backend::Generate, then the cache store
//   load      Backend::Load
//
// Each stage is timed by one mechanism and recorded in the CompileReport in one place (its
// artifact too when `record_artifacts` is on); every pass's time and changed-flag is there as
// well, with IR dumps of passes matching `dump_pattern`.
//
//   driver::DriverOptions options;
//   options.backend = driver::CpuBackend();
//   absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(std::move(graph), options);
//   r->executable->Run(inputs);   r->cache_hit;   r->report   // timings, passes, artifacts
//
// Cache (one policy): the key is the graph's 128-bit structural hash (every dense constant byte
// included), every option that changes the generated module, and the backend's CacheIdentity()
// (target, versions, host CPU), through runtime/compile_cache.h's CacheKeyOf. Graphs with
// external constants bypass the cache (their files could change under one key). Cache I/O
// errors never fail a compile (a warning on stderr); a hit that does not load is rebuilt.
// Entries hold code and plan, not the input's weights: a constant of the input graph is stored
// as a ConstantRef (ir/constant_refs.h) and a hit takes its bytes from the graph being compiled;
// constants the compile made (folded ones) are stored whole.
//
// Reports hold each constant's bytes once: an artifact refers to constants an earlier artifact
// holds (resolve with ir/constant_refs.h before Graph::FromProto).
#ifndef COIL_TOOLS_DRIVER_DRIVER_H_
#define COIL_TOOLS_DRIVER_DRIVER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "inductor/schedule.h"
#include "ir/graph.h"
#include "ir/graph_hash.h"
#include "ir/pass_pipeline.h"
#include "ir/proto/kernel_module.pb.h"
#include "ir/proto/report.pb.h"
#include "ir/proto/schedule.pb.h"
#include "prims/decompose.h"
#include "runtime/compile_cache.h"
#include "tools/driver/backend.h"

namespace coil::driver {

// Where a compile stops; later stages do not run.
enum class Stage { kPrims, kInductor, kCodegen, kLoad };

// A finished stage, as `on_stage` sees it (also a StageTiming in the report).
struct StageEvent {
  std::string stage;   // "prims", "inductor", "codegen_cpu", "load", "cache lookup", ...
  double seconds = 0;
  std::string detail;  // "212 -> 540 nodes", "14 kernels (3 extern) from 58 unfused", ...
};

struct DriverOptions {
  // Required: the code generator and runtime.
  std::shared_ptr<Backend> backend;
  Stage stop_after = Stage::kLoad;
  // The compile cache; null: none. Default: the process-wide cache configured by COIL_CACHE.
  CompileCache* cache = &CompileCache::Default();
  // Inductor's options; `capabilities` and `constant_evaluator` are the driver's to fill (the
  // backend's capabilities, the reference interpreter).
  inductor::ScheduleOptions schedule;
  prims::DecomposeOptions decompose;
  // kBF16: torch.autocast's bf16 policy (prims/autocast.h) as the prims stage's "autocast"
  // pass; overrides decompose.precision.
  prims::Precision precision = prims::Precision::kF32;
  // Folder external constant paths are relative to (the model file's folder).
  std::string external_data_dir;
  // The verifiers on each pipeline's input and result (ir/pass_pipeline.h). Off only for speed
  // in release use; tests keep it on.
  bool verify_passes = true;
  // With verify_passes: after every pass too (names the pass that broke the IR). The default
  // is on in tests and debug builds, off in optimized ones (kVerifyEachPassByDefault).
  bool verify_each_pass = kVerifyEachPassByDefault;
  // Passes whose "pipeline.pass" name matches this regular expression have their IR dumped
  // into the report. Empty: COIL_DUMP from the environment, if set.
  std::string dump_pattern;
  // Put each stage's artifact (graphs, schedule, module) into the report.
  bool record_artifacts = false;
  // Keep the prims graph and the Schedule in CompileResult after a compile that went further
  // (each a copy of the weights). Off: the weights move from stage to stage, never copied
  // (for large models; the module still holds the Schedule).
  bool keep_intermediates = true;
  // Called as each stage finishes (progress output).
  std::function<void(const StageEvent&)> on_stage;
};

struct CompileResult {
  // Null when the compile stopped before kLoad, or when the module does not run on this
  // machine (load_error says why: code for another CPU).
  std::unique_ptr<Executable> executable;
  absl::Status load_error;
  // What the stages produced (absent for stages that did not run, e.g. on a cache hit only the
  // module is there, or were not kept: DriverOptions::keep_intermediates).
  std::optional<proto::Graph> prims_graph;
  std::optional<proto::Schedule> schedule;
  std::optional<proto::KernelModule> module;
  bool cache_hit = false;
  std::string cache_key;  // "" without a cache or for a graph that bypasses it
  proto::CompileReport report;
  double total_seconds() const;
};

// The aten ops the prims stage keeps whole: the options' and the backend's externs (those
// that are not prims' own externs, e.g. the CPU backend's fused attention and convolution
// weight gradient). CompileGraph and CompileTraining's joint graph decompose with these.
prims::DecomposeOptions EffectiveDecompose(const DriverOptions& o);

// Compiles `graph` (aten or prims ops; consumed, so prims decomposes it in place). Errors name
// the stage: "prims: ...", "inductor: ...", "codegen_cpu: ...", "load: ..."; a load refused
// with FailedPrecondition (foreign CPU) is not an error but CompileResult::load_error.
// When `report_on_error` is not null, a failed compile leaves there the report of the stages
// that finished, with the error as a log line on channel "error".
absl::StatusOr<CompileResult> CompileGraph(Graph graph, const DriverOptions& options,
                                           proto::CompileReport* report_on_error = nullptr);

// The same with an import stage first: `import` (e.g. reading an ONNX file) is timed and recorded
// as stage "import" with the graph as its artifact; errors are "import: ...".
using Importer = std::function<absl::StatusOr<Graph>()>;
absl::StatusOr<CompileResult> CompileImported(const Importer& import, const DriverOptions& options,
                                              proto::CompileReport* report_on_error = nullptr);

// The cache key CompileGraph uses for `graph`; "" when it bypasses the cache.
// `digests` (DigestConstants of `graph`) saves hashing the constants again.
std::string CacheKey(const Graph& graph, const DriverOptions& options,
                     const ConstantDigests* digests = nullptr);

// Each constant's bytes once per report: an artifact's graph refers (ConstantRef) to constants
// an earlier artifact holds. CompileGraph does this to its report; callers that append
// artifacts call it again.
void StoreConstantsOnce(proto::CompileReport& report);

// Stage names, as in reports: "codegen_" + backend name for kCodegen.
std::string StageName(Stage stage, const Backend& backend);

}  // namespace coil::driver

#endif  // COIL_TOOLS_DRIVER_DRIVER_H_
