// CompileGraphForCpu: THE way to compile a coil Graph for the CPU — prims::Decompose ->
// inductor::BuildSchedule -> GenerateCpu -> CpuProgram, behind a graph-level compile cache
// (runtime/compile_cache.h) that, on a hit, loads the cached KernelModule and skips all of it.
//
//   CpuPipelineOptions options;                                // CPU capabilities, O3, ...
//   absl::StatusOr<CpuPipelineResult> r =
//       CompileGraphForCpu(graph, options, &CompileCache::Default());   // nullptr: no cache
//   r->program->Run(inputs);  r->cache_hit;  r->stages  // per-stage milliseconds
//
// Cache key (CpuPipelineCacheKey): CacheKeyOf("graph:" + StructuralHash128(graph), every
// option that changes the generated module (ScheduleOptions: capabilities, fusion,
// reuse_memory, fold_constants; CpuCodegenOptions: opt_level, cpu; LLVM version; process
// triple), host CPU name and features) — CacheKeyOf adds kCoilVersion, the cache format
// version, the C++ compiler and the running binary's identity. The structural hash covers
// every byte of dense constants (ir/bulk_hash.h, a few ms for 46 MB) but only the path,
// offset and length of external ones, so graphs with external constants bypass the cache
// (their file could change under the same key). Options that do not change the module
// (compile_threads, the runtime's thread count and external_data_dir) are not in the key.
//
// On a hit the module is loaded as is (CpuProgram::Load: JIT + runtime, constants used in
// place); a hit that does not load on this CPU is rebuilt. Cache I/O errors never fail the
// compile (a warning on stderr). Callers holding a Schedule rather than a Graph use
// CpuProgram::CompileCached (schedule-level keys).
#ifndef COIL_CODEGEN_CPU_CPU_PIPELINE_H_
#define COIL_CODEGEN_CPU_CPU_PIPELINE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/cpu_program.h"
#include "inductor/schedule.h"
#include "ir/graph.h"
#include "runtime/compile_cache.h"
#include "runtime/cpu/executable.h"

namespace coil {

struct CpuPipelineOptions {
  // Defaults to the CPU backend's capabilities (CpuCapabilities()).
  inductor::ScheduleOptions schedule = DefaultSchedule();
  CpuCodegenOptions codegen;
  cpu::CpuExecutableOptions runtime;

  static inductor::ScheduleOptions DefaultSchedule() {
    inductor::ScheduleOptions s;
    s.capabilities = CpuCapabilities();
    return s;
  }
};

struct CpuPipelineStage {
  std::string name;  // "prims decompose", "cache lookup (read, checksum, parse)", ...
  double ms = 0;
};

struct CpuPipelineResult {
  std::unique_ptr<CpuProgram> program;
  bool cache_hit = false;
  std::string cache_key;  // "" without a cache (or for graphs that bypass it)
  int kernels = 0;        // kernels in the schedule
  // In pipeline order; a hit has "cache key (graph hash)", "cache lookup (...)" and "load
  // (JIT + runtime)"; a miss adds prims, graph to proto, inductor, codegen and the store.
  std::vector<CpuPipelineStage> stages;
  double total_ms() const;
};

// Errors name the stage ("inductor schedule: ..."); cache trouble is not an error.
absl::StatusOr<CpuPipelineResult> CompileGraphForCpu(const Graph& graph,
                                                     const CpuPipelineOptions& options,
                                                     CompileCache* cache);
// The same, consuming `graph`: a miss decomposes it in place instead of cloning it (for
// resnet18, one copy of 46 MB of weights fewer).
absl::StatusOr<CpuPipelineResult> CompileGraphForCpu(Graph&& graph,
                                                     const CpuPipelineOptions& options,
                                                     CompileCache* cache);

// The key CompileGraphForCpu stores `graph` under; "" when the graph bypasses the cache.
std::string CpuPipelineCacheKey(const Graph& graph, const CpuPipelineOptions& options);

}  // namespace coil

#endif  // COIL_CODEGEN_CPU_CPU_PIPELINE_H_
