// CpuProgram: a Schedule compiled for the CPU and ready to run — the KernelModule
// (GenerateCpu), its object code loaded by the JIT (CpuJitModule), and the runtime's
// CpuExecutable holding the arena, the thread pool and the externs.
//
//   absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Compile(schedule);
//   absl::StatusOr<std::vector<HostTensor>> out = (*p)->Run(inputs);
//
//   // The same through the on-disk compile cache (runtime/compile_cache.h); from a Graph, use
//   // CompileGraphForCpu (cpu_pipeline.h), which caches before prims and inductor:
//   p = CpuProgram::CompileCached(schedule, CompileCache::Default());
//   bool hit = (*p)->cache_hit();
//
// The schedule should be built with CpuCapabilities(): the runtime runs a pointwise epilogue
// after every extern (aten.mm, aten.bmm, aten.convolution).
#ifndef COIL_CODEGEN_CPU_CPU_PROGRAM_H_
#define COIL_CODEGEN_CPU_CPU_PROGRAM_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/jit.h"
#include "inductor/schedule.h"
#include "ir/proto/kernel_module.pb.h"
#include "runtime/compile_cache.h"
#include "runtime/cpu/executable.h"
#include "runtime/host_tensor.h"

namespace coil {

// What the CPU backend tells inductor it can do.
inductor::Capabilities CpuCapabilities();

// The host CPU as code generation sees it: "<cpu name>;+a,+b,..." (enabled ISA features, sorted);
// part of every compile-cache key.
const std::string& HostCpuDescription();

class CpuProgram {
 public:
  // Generates code for `schedule` and loads it.
  static absl::StatusOr<std::unique_ptr<CpuProgram>> Compile(
      const proto::Schedule& schedule, const CpuCodegenOptions& codegen = {},
      const cpu::CpuExecutableOptions& runtime = {});
  // Compile through `cache` (schedule-level keys; a Graph compiles through CompileGraphForCpu,
  // cpu_pipeline.h): a hit loads the cached module (no code generation), trusted by its full
  // 128-bit key; a miss, or a cached module that does not load on this CPU, generates code and
  // stores it. Cache I/O errors never fail the compile (a warning on stderr).
  static absl::StatusOr<std::unique_ptr<CpuProgram>> CompileCached(
      const proto::Schedule& schedule, CompileCache& cache, const CpuCodegenOptions& codegen = {},
      const cpu::CpuExecutableOptions& runtime = {});
  // The cache key CompileCached uses: schedule, options, LLVM version, host CPU and features.
  static std::string CacheKeyFor(const proto::Schedule& schedule,
                                 const CpuCodegenOptions& codegen = {});
  // Loads a module generated before (its object code must suit this CPU). The program keeps
  // `module`; its constants are not copied again.
  static absl::StatusOr<std::unique_ptr<CpuProgram>> Load(
      proto::KernelModule module, const cpu::CpuExecutableOptions& runtime = {});

  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) {
    return executable_->Run(inputs);
  }
  const proto::KernelModule& module() const { return module_; }
  // The runtime side (threads, per-kernel profiling: CpuExecutable::SetProfiling).
  cpu::CpuExecutable& executable() { return *executable_; }
  double codegen_seconds() const { return codegen_seconds_; }
  double load_seconds() const { return load_seconds_; }
  // Whether CompileCached found the module in the cache (false for Compile and Load).
  bool cache_hit() const { return cache_hit_; }

 private:
  CpuProgram() = default;

  // Ownership: module_ holds the schedule whose dense constant bytes the executable uses in
  // place (CpuExecutable::CreateBorrowing), and jit_ owns the code it calls; both are declared
  // before executable_, so they are destroyed after it.
  proto::KernelModule module_;
  std::unique_ptr<CpuJitModule> jit_;
  std::unique_ptr<cpu::CpuExecutable> executable_;
  double codegen_seconds_ = 0;
  double load_seconds_ = 0;
  bool cache_hit_ = false;
};

}  // namespace coil

#endif  // COIL_CODEGEN_CPU_CPU_PROGRAM_H_
