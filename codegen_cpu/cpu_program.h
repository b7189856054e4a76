// CpuProgram: a KernelModule from the CPU code generator, ready to run — its object code
// loaded by the JIT (CpuJitModule) and the runtime's CpuExecutable holding the arena, the
// thread pool and the externs. Programs are made by the compile driver's CPU backend
// (tools/driver/cpu_backend.h), which is how a Graph or Schedule gets compiled and cached.
//
//   absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Load(GenerateCpu(s).value());
//   absl::StatusOr<std::vector<HostTensor>> out = (*p)->Run(inputs);
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
#include "runtime/cpu/executable.h"
#include "runtime/host_tensor.h"

namespace coil {

// What the CPU backend tells inductor it can do: epilogues after mm/bmm/convolution, and
// channels-last activations between convolutions (off when COIL_CHANNELS_LAST=0 is set).
inductor::Capabilities CpuCapabilities();

// The host CPU as code generation sees it: "<cpu name>;+a,+b,..." (enabled ISA features, sorted);
// part of every compile-cache key.
const std::string& HostCpuDescription();

class CpuProgram {
 public:
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
  double load_seconds() const { return load_seconds_; }

 private:
  CpuProgram() = default;

  // Ownership: module_ holds the schedule whose dense constant bytes the executable uses in
  // place (CpuExecutable::CreateBorrowing), and jit_ owns the code it calls; both are declared
  // before executable_, so they are destroyed after it.
  proto::KernelModule module_;
  std::unique_ptr<CpuJitModule> jit_;
  std::unique_ptr<cpu::CpuExecutable> executable_;
  double load_seconds_ = 0;
};

}  // namespace coil

#endif  // COIL_CODEGEN_CPU_CPU_PROGRAM_H_
