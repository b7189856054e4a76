// The one seam AOT packages need in GenerateCpu: a callback that sees the optimized LLVM module
// just before the object file is emitted, so the AOT descriptor (internal/aot_descriptor.h)
// lands in the same object as the kernels, with no linker. Not an API: codegen_cpu.cc defines
// GenerateCpuWithPreEmit (GenerateCpu is it without a callback); aot.cc calls it.
#ifndef COIL_CODEGEN_CPU_INTERNAL_AOT_HOOK_H_
#define COIL_CODEGEN_CPU_INTERNAL_AOT_HOOK_H_

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen_cpu/codegen_cpu.h"
#include "ir/proto/kernel_module.pb.h"
#include "ir/proto/schedule.pb.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace coil::codegen_cpu_internal {

// Called with the optimized module (every kernel function defined), the TargetMachine that
// will emit it, and `kernels` (CompiledKernel kernel ids and symbols filled in); an error
// aborts code generation and is returned as is.
using PreEmitHook = std::function<absl::Status(
    llvm::Module& module, const llvm::TargetMachine& tm, const proto::KernelModule& kernels)>;

// GenerateCpu, running `pre_emit` (when set) before the object code is emitted.
absl::StatusOr<proto::KernelModule> GenerateCpuWithPreEmit(
    proto::Schedule schedule, const CpuCodegenOptions& options, const PreEmitHook& pre_emit,
    std::vector<CodegenPart>* parts = nullptr);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_AOT_HOOK_H_
