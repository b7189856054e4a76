// CpuProgram: a Schedule compiled for the CPU and ready to run — the KernelModule
// (GenerateCpu), its object code loaded by the JIT (CpuJitModule), and the runtime's
// CpuExecutable holding the arena, the thread pool and the externs.
//
//   absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Compile(schedule);
//   absl::StatusOr<std::vector<HostTensor>> out = (*p)->Run(inputs);
//
// The schedule should be built with CpuCapabilities(): the runtime runs a pointwise epilogue
// after every extern (aten.mm, aten.bmm, aten.convolution).
#ifndef COIL_CODEGEN_CPU_CPU_PROGRAM_H_
#define COIL_CODEGEN_CPU_CPU_PROGRAM_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/jit.h"
#include "inductor/schedule.h"
#include "ir/proto/kernel_module.pb.h"
#include "runtime/cpu/executable.h"
#include "runtime/host_tensor.h"

namespace coil {

// What the CPU backend tells inductor it can do.
inductor::Capabilities CpuCapabilities();

class CpuProgram {
 public:
  // Generates code for `schedule` and loads it.
  static absl::StatusOr<std::unique_ptr<CpuProgram>> Compile(
      const proto::Schedule& schedule, const CpuCodegenOptions& codegen = {},
      const cpu::CpuExecutableOptions& runtime = {});
  // Loads a module generated before (its object code must suit this CPU).
  static absl::StatusOr<std::unique_ptr<CpuProgram>> Load(
      proto::KernelModule module, const cpu::CpuExecutableOptions& runtime = {});

  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) {
    return executable_->Run(inputs);
  }
  const proto::KernelModule& module() const { return module_; }
  double codegen_seconds() const { return codegen_seconds_; }
  double load_seconds() const { return load_seconds_; }

 private:
  CpuProgram() = default;

  proto::KernelModule module_;
  std::unique_ptr<CpuJitModule> jit_;  // owns the code the executable calls
  std::unique_ptr<cpu::CpuExecutable> executable_;
  double codegen_seconds_ = 0;
  double load_seconds_ = 0;
};

}  // namespace coil

#endif  // COIL_CODEGEN_CPU_CPU_PROGRAM_H_
