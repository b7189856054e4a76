// CompileGraphForCpu: the graph-level cache in front of prims -> inductor -> codegen -> load.
#include "codegen_cpu/cpu_pipeline.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/graph_hash.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Host.h"
#include "prims/decompose.h"

namespace coil {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

absl::Status InStage(const char* stage, const absl::Status& s) {
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

// Every option that changes the generated module, as text.
std::string OptionsText(const CpuPipelineOptions& o) {
  std::vector<std::string> epilogues = o.schedule.capabilities.extern_epilogues;
  std::sort(epilogues.begin(), epilogues.end());
  return absl::StrCat("pipeline=cpu_graph extern_epilogues=", absl::StrJoin(epilogues, ","),
                      " fusion=", o.schedule.fusion, " reuse_memory=", o.schedule.reuse_memory,
                      " fold_constants=", o.schedule.fold_constants,
                      " opt_level=", o.codegen.opt_level, " cpu=", o.codegen.cpu,
                      " compiler=LLVM ", LLVM_VERSION_STRING,
                      " triple=", llvm::sys::getProcessTriple());
}

absl::StatusOr<CpuPipelineResult> Compile(const Graph& graph, Graph* owned,
                                          const CpuPipelineOptions& options,
                                          CompileCache* cache);

}  // namespace

double CpuPipelineResult::total_ms() const {
  double total = 0;
  for (const CpuPipelineStage& s : stages) total += s.ms;
  return total;
}

std::string CpuPipelineCacheKey(const Graph& graph, const CpuPipelineOptions& options) {
  if (HasExternalConstants(graph)) return "";
  return CacheKeyOf(absl::StrCat("graph:", StructuralHash128(graph).Hex()), OptionsText(options),
                    HostCpuDescription());
}

absl::StatusOr<CpuPipelineResult> CompileGraphForCpu(const Graph& graph,
                                                     const CpuPipelineOptions& options,
                                                     CompileCache* cache) {
  return Compile(graph, nullptr, options, cache);
}

absl::StatusOr<CpuPipelineResult> CompileGraphForCpu(Graph&& graph,
                                                     const CpuPipelineOptions& options,
                                                     CompileCache* cache) {
  return Compile(graph, &graph, options, cache);
}

namespace {

// `owned`, when not null, is `graph` itself and may be decomposed in place (no clone).
absl::StatusOr<CpuPipelineResult> Compile(const Graph& graph, Graph* owned,
                                          const CpuPipelineOptions& options,
                                          CompileCache* cache) {
  CpuPipelineResult r;
  auto stage = [&r](const char* name, Clock::time_point start) {
    r.stages.push_back({name, MsSince(start)});
  };
  auto t = Clock::now();
  if (cache != nullptr && cache->enabled()) {
    r.cache_key = CpuPipelineCacheKey(graph, options);
    stage("cache key (graph hash)", t);
  }
  if (!r.cache_key.empty()) {
    t = Clock::now();
    absl::StatusOr<std::optional<proto::KernelModule>> cached = cache->Lookup(r.cache_key);
    stage("cache lookup (read, checksum, parse)", t);
    if (!cached.ok()) {
      WarnOnce(std::string(cached.status().message()));
    } else if (cached->has_value()) {
      t = Clock::now();
      const int kernels = (*cached)->schedule().kernels_size();
      absl::StatusOr<std::unique_ptr<CpuProgram>> program =
          CpuProgram::Load(**std::move(cached), options.runtime);
      if (program.ok()) {
        stage("load (JIT + runtime)", t);
        r.program = *std::move(program);
        r.cache_hit = true;
        r.kernels = kernels;
        return r;
      }
      std::fprintf(stderr, "coil: cached module %s does not load (%s); rebuilding\n",
                   cache->EntryPath(r.cache_key).c_str(),
                   std::string(program.status().message()).c_str());
    }
  }

  t = Clock::now();
  Graph clone;
  if (owned == nullptr) clone = graph.Clone();
  Graph& g = owned != nullptr ? *owned : clone;
  if (absl::StatusOr<bool> changed = prims::Decompose(g); !changed.ok()) {
    return InStage("prims decompose", changed.status());
  }
  stage("prims decompose", t);

  t = Clock::now();
  proto::Graph graph_proto = g.ToProto();
  stage("graph to proto", t);

  t = Clock::now();
  absl::StatusOr<proto::Schedule> schedule = inductor::BuildSchedule(graph_proto, options.schedule);
  if (!schedule.ok()) return InStage("inductor schedule", schedule.status());
  stage("inductor schedule", t);
  r.kernels = schedule->kernels_size();

  t = Clock::now();
  absl::StatusOr<proto::KernelModule> module = GenerateCpu(*schedule, options.codegen);
  if (!module.ok()) return InStage("codegen", module.status());
  stage("codegen (LLVM O3 -> object)", t);

  if (!r.cache_key.empty()) {
    t = Clock::now();
    if (absl::Status stored = cache->Store(r.cache_key, *module); !stored.ok()) {
      WarnOnce(std::string(stored.message()));
    }
    stage("cache store", t);
  }

  t = Clock::now();
  absl::StatusOr<std::unique_ptr<CpuProgram>> program =
      CpuProgram::Load(*std::move(module), options.runtime);
  if (!program.ok()) return InStage("load", program.status());
  stage("load (JIT + runtime)", t);
  r.program = *std::move(program);
  return r;
}

}  // namespace
}  // namespace coil
