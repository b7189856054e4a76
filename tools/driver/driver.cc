// CompileGraph: the stages in order, each timed and recorded once.
#include "tools/driver/driver.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/constant_refs.h"
#include "ir/graph_hash.h"
#include "ir/pass_pipeline.h"
#include "ir/verifier.h"
#include "runtime/constant_evaluator.h"
#include "tools/driver/stage_clock.h"

namespace coil::driver {
namespace {

absl::Status InStage(const std::string& stage, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(stage, ": ", s.message()));
}

void WarnOnce(const std::string& message) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) {
    std::fprintf(stderr, "coil: compile cache: %s (continuing without it)\n", message.c_str());
  }
}

bool HasExternalConstants(const Graph& graph) {
  for (const Value* c : graph.constants()) {
    if (c->constant().is_external()) return true;
  }
  return false;
}

std::string Plural(int64_t n, const char* word) {
  return absl::StrCat(n, " ", word, n == 1 ? "" : "s");
}

// Every option that changes the module, besides the backend's identity.
std::string OptionsText(const DriverOptions& o) {
  std::vector<std::string> epilogues =
      o.backend->capabilities().inductor.extern_epilogues;
  std::sort(epilogues.begin(), epilogues.end());
  std::vector<std::string> keep = EffectiveDecompose(o).keep;
  std::sort(keep.begin(), keep.end());
  std::vector<std::string> channels_last;
  for (proto::DType t : o.backend->capabilities().inductor.channels_last) {
    channels_last.push_back(proto::DType_Name(t));
  }
  std::sort(channels_last.begin(), channels_last.end());
  return absl::StrCat("driver=1 extern_epilogues=", absl::StrJoin(epilogues, ","),
                      " channels_last=", absl::StrJoin(channels_last, ","),
                      " split_reductions=", o.backend->capabilities().inductor.split_reductions,
                      o.backend->capabilities().inductor.extern_input_views.empty()
                          ? ""
                          : absl::StrCat(" extern_input_views=",
                                         absl::StrJoin(
                                             o.backend->capabilities().inductor.extern_input_views,
                                             ",")),
                      o.backend->capabilities().inductor.extern_epilogue_in_place.empty()
                          ? ""
                          : absl::StrCat(" extern_epilogue_in_place=",
                                         absl::StrJoin(o.backend->capabilities()
                                                           .inductor.extern_epilogue_in_place,
                                                       ",")),
                      " fusion=", o.schedule.fusion, " reuse_memory=", o.schedule.reuse_memory,
                      " fold_constants=", o.schedule.fold_constants,
                      " keep=", absl::StrJoin(keep, ","),
                      EffectiveDecompose(o).merge_matmuls ? " merge_matmuls=1" : "",
                      EffectiveDecompose(o).fold_weight_scales ? " fold_weight_scales=1" : "",
                      o.precision == prims::Precision::kF32
                          ? ""
                          : absl::StrCat(" precision=", prims::PrecisionName(o.precision)),
                      " ", o.backend->CacheIdentity());
}

// One compile: the state the stages share and the one place they are recorded.
class Compilation {
 public:
  Compilation(const DriverOptions& options, CompileResult& result)
      : options_(options), result_(result) {
    passes_.verify = options.verify_passes;
    passes_.verify_each_pass = options.verify_each_pass;
    passes_.dump_pattern = options.dump_pattern;
    if (passes_.dump_pattern.empty()) {
      if (const char* env = std::getenv("COIL_DUMP")) passes_.dump_pattern = env;
    }
    auto& o = *result_.report.mutable_options();
    o["backend"] = options.backend->name();
    o["stop_after"] = StageName(options.stop_after, *options.backend);
    o["compile_cache"] = options.cache != nullptr && options.cache->enabled() ? "on" : "off";
    o["fusion"] = options.schedule.fusion ? "on" : "off";
    o["reuse_memory"] = options.schedule.reuse_memory ? "on" : "off";
    o["fold_constants"] = options.schedule.fold_constants ? "on" : "off";
    if (options.precision != prims::Precision::kF32) {
      o["precision"] = prims::PrecisionName(options.precision);
    }
    if (!passes_.dump_pattern.empty()) o["dump_pattern"] = passes_.dump_pattern;
  }

  // The import stage; `graph` receives the imported graph.
  absl::Status Import(const Importer& import, Graph& graph) {
    StageClock t;
    absl::StatusOr<Graph> g = import();
    if (!g.ok()) return InStage("import", g.status());
    graph = *std::move(g);
    result_.report.set_model(graph.name());
    if (proto::StageArtifact* a = Done("import", t, GraphDetail(graph))) {
      *a->mutable_graph() = graph.ToProto();
    }
    imported_ = true;
    return absl::OkStatus();
  }

  absl::Status Run(Graph& graph) {
    const std::string codegen = StageName(Stage::kCodegen, *options_.backend);
    StageClock t;
    if (absl::Status s = Verify(graph); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("capture: ", s.message()));
    }
    // An imported graph is the import stage's artifact already: not stored twice.
    if (proto::StageArtifact* a = Done("capture", t, GraphDetail(graph), !imported_)) {
      *a->mutable_graph() = graph.ToProto();
    }

    if (CacheUsable()) {
      t = StageClock();
      // One pass over the weights serves the key and the entry's constant references.
      const ConstantDigests digests = DigestConstants(graph);
      result_.cache_key = CacheKey(graph, options_, &digests);
      // Entries hold code and plan, not the input's weights: remember what the input holds.
      if (!result_.cache_key.empty()) input_constants_.AddDigests(digests);
      Done("cache key", t, "structural hash of the graph and its constants", false);
      if (absl::Status s = TryCacheHit(graph); !s.ok() || result_.cache_hit) return s;
    }

    t = StageClock();
    std::vector<PassRecord> records;
    const int nodes_before = graph.num_nodes();
    // The capture stage verified this graph and nothing changed it since.
    PassPipelineOptions prims_passes = passes_;
    prims_passes.verify_input = false;
    absl::StatusOr<bool> decomposed =
        prims::Decompose(graph, EffectiveDecompose(options_), prims_passes, &records);
    Record(records);
    if (!decomposed.ok()) return InStage("prims", decomposed.status());
    const bool keep = options_.keep_intermediates || options_.stop_after == Stage::kPrims;
    std::optional<proto::Graph> prims_graph;
    if (keep || options_.record_artifacts) prims_graph = graph.ToProto();
    if (proto::StageArtifact* a =
            Done("prims", t,
                 absl::StrCat(nodes_before, " -> ", Plural(graph.num_nodes(), "node"),
                              " (functionalize + decompose)"))) {
      *a->mutable_graph() = *prims_graph;
    }
    if (keep) result_.prims_graph = std::move(prims_graph);
    if (options_.stop_after == Stage::kPrims) return absl::OkStatus();

    t = StageClock();
    inductor::ScheduleOptions schedule_options = options_.schedule;
    schedule_options.capabilities = options_.backend->capabilities().inductor;
    schedule_options.constant_evaluator = ReferenceConstantEvaluator(options_.external_data_dir);
    schedule_options.external_data_dir = options_.external_data_dir;
    schedule_options.passes = passes_;
    // Inductor's input is the prims pipeline's result, verified there when verifiers are on.
    schedule_options.passes.verify_input = !passes_.verify;
    records.clear();
    // The graph moves into inductor, and its weights into the Schedule.
    absl::StatusOr<proto::Schedule> schedule =
        inductor::BuildSchedule(std::move(graph), schedule_options, &records);
    Record(records);
    if (!schedule.ok()) return InStage("inductor", schedule.status());
    if (proto::StageArtifact* a = Done("inductor", t, ScheduleDetail(*schedule))) {
      *a->mutable_schedule() = *schedule;
    }
    if (options_.stop_after == Stage::kInductor) {
      result_.schedule = *std::move(schedule);
      return absl::OkStatus();
    }

    t = StageClock();
    absl::StatusOr<proto::KernelModule> module;
    std::vector<CodegenPart> parts;  // recorded as the codegen stage's passes
    if (options_.keep_intermediates) {
      // A copy: the caller keeps the original.
      module = options_.backend->GenerateTimed(*schedule, &parts);
      result_.schedule = *std::move(schedule);
    } else {
      module = options_.backend->GenerateTimed(*std::move(schedule), &parts);
    }
    if (!module.ok()) return InStage(codegen, module.status());
    for (const CodegenPart& part : parts) {
      proto::PassRun* run = result_.report.add_passes();
      run->set_pipeline(codegen);
      run->set_pass(part.name);
      run->set_seconds(part.seconds);
      run->set_changed(true);
    }
    if (proto::StageArtifact* a = Done(codegen, t, ModuleDetail(*module))) {
      *a->mutable_kernel_module() = *module;
    }
    if (!result_.cache_key.empty()) {
      t = StageClock();
      // The input graph's constants are stored by reference (the next compile of this graph
      // holds them); constants the compile made (folded ones) are stored whole.
      std::vector<DetachedConstant> lent =
          DetachKnownConstants(*module->mutable_schedule()->mutable_graph(), input_constants_);
      int64_t lent_bytes = 0;
      for (const DetachedConstant& d : lent) lent_bytes += static_cast<int64_t>(d.bytes.size());
      absl::Status stored = options_.cache->Store(result_.cache_key, *module);
      const int64_t entry_bytes = static_cast<int64_t>(module->ByteSizeLong());
      ReattachConstants(lent);
      if (!stored.ok()) WarnOnce(std::string(stored.message()));
      Done("cache store", t,
           absl::StrCat(options_.cache->EntryPath(result_.cache_key), ": ", entry_bytes,
                        " B; ", lent_bytes, " B of the input's constants by reference"),
           false);
    }
    result_.module = *std::move(module);
    if (options_.stop_after == Stage::kCodegen) return absl::OkStatus();
    return Load(*result_.module);
  }

 private:
  bool CacheUsable() const {
    return options_.cache != nullptr && options_.cache->enabled() &&
           options_.stop_after >= Stage::kCodegen;
  }

  // `graph` is the input; on a hit its constants' bytes move into the module (it is not used
  // again), else it is left as it was.
  absl::Status TryCacheHit(Graph& graph) {
    if (result_.cache_key.empty()) return absl::OkStatus();  // bypassed
    StageClock t;
    absl::StatusOr<std::optional<proto::KernelModule>> cached =
        options_.cache->Lookup(result_.cache_key);
    if (!cached.ok()) {
      WarnOnce(std::string(cached.status().message()));
      Done("cache lookup", t, "error", false);
      return absl::OkStatus();
    }
    // The entry's references to the input's constants get the bytes from the input (moved:
    // the graph is not needed after a hit; given back if the module does not load).
    ConstantStore weights;
    if (cached->has_value()) {
      proto::Graph& entry_graph = *(*cached)->mutable_schedule()->mutable_graph();
      if (HasConstantReferences(entry_graph)) {
        weights.AddGraphToMove(graph);
        if (absl::Status s = ResolveConstantReferences(entry_graph, weights); !s.ok()) {
          std::fprintf(stderr, "coil: cached module %s is unusable (%s); rebuilding\n",
                       options_.cache->EntryPath(result_.cache_key).c_str(),
                       std::string(s.message()).c_str());
          cached->reset();
        }
      }
    }
    Done("cache lookup", t, cached->has_value() ? "hit" : "miss", false);
    result_.report.mutable_options()->insert(
        {"compile_cache_result", cached->has_value() ? "hit" : "miss"});
    if (!cached->has_value()) return absl::OkStatus();
    if (options_.stop_after == Stage::kCodegen) {
      result_.module = **std::move(cached);
      result_.cache_hit = true;
      return absl::OkStatus();
    }
    t = StageClock();
    const std::string entry = options_.cache->EntryPath(result_.cache_key);
    if (options_.keep_intermediates) {
      // The module is kept for the caller: the executable gets a copy.
      absl::StatusOr<std::unique_ptr<Executable>> exe = options_.backend->Load(**cached);
      if (!exe.ok() && exe.status().code() == absl::StatusCode::kFailedPrecondition) {
        // Code this machine cannot run (a CUDA module without a driver): a hit all the same.
        result_.module = **std::move(cached);
        return SkippedLoad(t, exe.status());
      }
      if (!exe.ok()) {
        weights.ReturnMoved();  // the rebuild compiles the graph whole
        std::fprintf(stderr, "coil: cached module %s does not load (%s); rebuilding\n",
                     entry.c_str(), std::string(exe.status().message()).c_str());
        return absl::OkStatus();
      }
      result_.executable = *std::move(exe);
      result_.module = **std::move(cached);
    } else {
      // The weights move on into the executable; nothing is left to rebuild from if this
      // checksummed, same-CPU entry does not load (not seen in practice): the entry goes, and
      // the error says to compile again.
      absl::StatusOr<std::unique_ptr<Executable>> exe =
          options_.backend->Load(**std::move(cached));
      if (!exe.ok() && exe.status().code() == absl::StatusCode::kFailedPrecondition) {
        return SkippedLoad(t, exe.status());  // the entry is fine: this machine cannot run it
      }
      if (!exe.ok()) {
        std::remove(entry.c_str());
        return absl::UnavailableError(absl::StrCat(
            "load: the cached module ", entry, " does not load (", exe.status().message(),
            "); it was removed, compile again"));
      }
      result_.executable = *std::move(exe);
    }
    result_.cache_hit = true;
    Done("load", t, "cached module", false);
    return absl::OkStatus();
  }

  // A cache hit whose code cannot run here (FailedPrecondition from Load: no CUDA driver,
  // another CPU): reported like a fresh compile's skipped load, the entry kept.
  absl::Status SkippedLoad(const StageClock& t, const absl::Status& why) {
    result_.cache_hit = true;
    result_.load_error = why;
    Done("load", t, absl::StrCat("skipped: ", why.message()), false);
    return absl::OkStatus();
  }

  absl::Status Load(const proto::KernelModule& module) {
    StageClock t;
    absl::StatusOr<std::unique_ptr<Executable>> exe = options_.backend->Load(module);
    if (!exe.ok()) {
      if (exe.status().code() != absl::StatusCode::kFailedPrecondition) {
        return InStage("load", exe.status());
      }
      // Code for another machine (e.g. `--cpu` for a CPU this host lacks): generated, not run.
      result_.load_error = exe.status();
      Done("load", t, absl::StrCat("skipped: ", exe.status().message()), false);
      return absl::OkStatus();
    }
    result_.executable = *std::move(exe);
    Done("load", t, "", false);
    return absl::OkStatus();
  }

  // The one place a finished stage is recorded: a StageTiming, the progress callback, and
  // (returned, when artifacts are recorded and `artifact`) a StageArtifact to fill.
  proto::StageArtifact* Done(const std::string& stage, const StageClock& start,
                             const std::string& detail, bool artifact = true) {
    proto::StageTiming* timing = result_.report.add_timings();
    timing->set_stage(stage);
    start.Record(*timing);
    const double seconds = timing->seconds();
    if (options_.on_stage) options_.on_stage(StageEvent{stage, seconds, detail});
    if (!artifact || !options_.record_artifacts) return nullptr;
    proto::StageArtifact* a = result_.report.add_stages();
    a->set_stage(stage);
    a->set_seconds(seconds);
    return a;
  }

  void Record(const std::vector<PassRecord>& records) {
    for (const PassRecord& r : records) {
      proto::PassRun* run = result_.report.add_passes();
      run->set_pipeline(r.pipeline);
      run->set_pass(r.pass);
      run->set_seconds(r.seconds);
      run->set_changed(r.changed);
      run->set_dump(r.dump);
    }
  }

  static std::string GraphDetail(const Graph& g) {
    return absl::StrCat(Plural(g.num_nodes(), "node"), ", ", Plural(g.inputs().size(), "input"),
                        ", ", Plural(g.outputs().size(), "output"));
  }

  static std::string ScheduleDetail(const proto::Schedule& s) {
    return absl::StrCat(Plural(s.stats().kernels(), "kernel"), " (",
                        Plural(s.stats().externs(), "extern"), ") from ",
                        s.stats().kernels_unfused(), " unfused, arena ",
                        s.memory_plan().arena_bytes_hint(), " B");
  }

  static std::string ModuleDetail(const proto::KernelModule& m) {
    // CUDA: every NVRTC program's CUBIN, and how many distinct functions the kernels share.
    size_t bytes = m.object_code().size();
    for (const proto::ObjectImage& im : m.images()) bytes += im.object_code().size();
    absl::flat_hash_set<std::string> symbols;
    for (const proto::CompiledKernel& k : m.kernels()) symbols.insert(k.symbol());
    const bool shared = m.backend() == "cuda" && symbols.size() < static_cast<size_t>(m.kernels_size());
    return absl::StrCat(Plural(m.kernels_size(), "kernel"),
                        shared ? absl::StrCat(" (", symbols.size(), " distinct)") : "", ", ", bytes,
                        " B object code", m.images_size() > 0 ? absl::StrCat(" in ", m.images_size() + 1, " images") : "",
                        m.cpu().empty() ? "" : " for ", m.cpu());
  }

  const DriverOptions& options_;
  CompileResult& result_;
  PassPipelineOptions passes_;
  bool imported_ = false;
  ConstantStore input_constants_;  // digests of the input graph's constants (cache entries)
};

}  // namespace

void StoreConstantsOnce(proto::CompileReport& report) {
  ConstantStore earlier;
  for (proto::StageArtifact& a : *report.mutable_stages()) {
    proto::Graph* g = a.has_graph()           ? a.mutable_graph()
                      : a.has_schedule()      ? a.mutable_schedule()->mutable_graph()
                      : a.has_kernel_module() ? a.mutable_kernel_module()
                                                    ->mutable_schedule()
                                                    ->mutable_graph()
                                              : nullptr;
    if (g == nullptr) continue;
    ReferenceKnownConstants(*g, earlier);
    earlier.AddGraph(*g);
  }
}

namespace {

absl::Status Failed(const absl::Status& s, CompileResult& result,
                    proto::CompileReport* report_on_error) {
  if (report_on_error != nullptr) {
    StoreConstantsOnce(result.report);
    proto::LogLine* line = result.report.add_logs();
    line->set_channel("error");
    line->set_text(std::string(s.message()));
    *report_on_error = std::move(result.report);
  }
  return s;
}

}  // namespace

double CompileResult::total_seconds() const {
  double total = 0;
  for (const proto::StageTiming& t : report.timings()) total += t.seconds();
  return total;
}

std::string StageName(Stage stage, const Backend& backend) {
  switch (stage) {
    case Stage::kPrims:
      return "prims";
    case Stage::kInductor:
      return "inductor";
    case Stage::kCodegen:
      return "codegen_" + backend.name();
    case Stage::kLoad:
      return "load";
  }
  return "?";
}

std::string CacheKey(const Graph& graph, const DriverOptions& options,
                     const ConstantDigests* digests) {
  if (HasExternalConstants(graph)) return "";
  const Hash128 h = digests != nullptr ? StructuralHash128(graph, *digests) : StructuralHash128(graph);
  return CacheKeyOf(absl::StrCat("graph:", h.Hex()), OptionsText(options), "");
}

prims::DecomposeOptions EffectiveDecompose(const DriverOptions& o) {
  prims::DecomposeOptions d = o.decompose;
  d.precision = o.precision;
  const BackendCapabilities caps = o.backend->capabilities();
  for (const std::string& op : caps.externs) {
    if (op == "aten.mm" || op == "aten.bmm" || op == "aten.convolution") continue;
    if (std::find(d.keep.begin(), d.keep.end(), op) == d.keep.end()) d.keep.push_back(op);
  }
  if (!d.keep_attention) d.keep_attention = caps.keep_attention;
  d.merge_matmuls = d.merge_matmuls || caps.merge_matmuls;
  d.fold_weight_scales = d.fold_weight_scales || caps.fold_weight_scales;
  if (!d.evaluate_constants) d.evaluate_constants = ReferenceConstantEvaluator(o.external_data_dir);
  return d;
}

absl::StatusOr<CompileResult> CompileGraph(Graph graph, const DriverOptions& options,
                                           proto::CompileReport* report_on_error) {
  if (options.backend == nullptr) {
    return absl::InvalidArgumentError("the compile driver needs a backend");
  }
  CompileResult result;
  result.report.set_model(graph.name());
  result.report.set_coil_version(std::string(kCoilVersion));
  Compilation compilation(options, result);
  if (absl::Status s = compilation.Run(graph); !s.ok()) {
    return Failed(s, result, report_on_error);
  }
  StoreConstantsOnce(result.report);
  return result;
}

absl::StatusOr<CompileResult> CompileImported(const Importer& import, const DriverOptions& options,
                                              proto::CompileReport* report_on_error) {
  if (options.backend == nullptr) {
    return absl::InvalidArgumentError("the compile driver needs a backend");
  }
  CompileResult result;
  result.report.set_coil_version(std::string(kCoilVersion));
  Compilation compilation(options, result);
  Graph graph;
  absl::Status s = compilation.Import(import, graph);
  if (s.ok()) s = compilation.Run(graph);
  if (!s.ok()) return Failed(s, result, report_on_error);
  StoreConstantsOnce(result.report);
  return result;
}

}  // namespace coil::driver
