// CpuJitModule: a KernelModule's object code (codegen_cpu.h) loaded into an ORC LLJIT, with
// its kernels' entry points by Schedule kernel id. No recompilation: the ELF object is added
// to the JIT's object layer as is; libm and other external symbols resolve from this process.
//
//   absl::StatusOr<std::unique_ptr<CpuJitModule>> jit = CpuJitModule::Load(module);
//   CoilKernelFn fn = (*jit)->Find(kernel.id());   // nullptr: no generated function
//   fn(0, p, buffers, symbols);
#ifndef COIL_CODEGEN_CPU_JIT_H_
#define COIL_CODEGEN_CPU_JIT_H_

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/proto/kernel_module.pb.h"
#include "runtime/cpu/kernel_abi.h"

namespace llvm::orc {
class LLJIT;
}  // namespace llvm::orc

namespace coil {

class CpuJitModule {
 public:
  // Errors: a module of another backend (InvalidArgument); object code for another target or
  // CPU features this CPU lacks (FailedPrecondition, e.g. "object code for x86_64 with
  // avx512f, this CPU (znver3) lacks avx512f"); object code that does not load or a kernel
  // symbol missing from it (DataLoss).
  static absl::StatusOr<std::unique_ptr<CpuJitModule>> Load(const proto::KernelModule& module);

  ~CpuJitModule();

  // The function of Schedule kernel `kernel_id`, or nullptr when the module has none (an
  // EXTERN kernel without epilogue).
  CoilKernelFn Find(int kernel_id) const;

 private:
  CpuJitModule();

  std::unique_ptr<llvm::orc::LLJIT> jit_;
  absl::flat_hash_map<int, CoilKernelFn> kernels_;
};

}  // namespace coil

#endif  // COIL_CODEGEN_CPU_JIT_H_
