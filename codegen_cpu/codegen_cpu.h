// codegen_cpu: a Schedule (ir/proto/schedule.proto) -> LLVM 16 IR -> O3 -> an ELF object in a
// KernelModule (ir/proto/kernel_module.proto), loadable with CpuJitModule (jit.h).
//
// Every POINTWISE and REDUCTION kernel, and every EXTERN kernel with epilogue Loops, becomes one
// C-ABI function with the calling convention of runtime/cpu/kernel_abi.h (CoilKernelFn); the
// runtime calls it over [begin, end) slices of the kernel's parallel prefix. EXTERN library
// calls themselves are the runtime's business (the epilogue function runs after them).
//
//   absl::StatusOr<proto::KernelModule> m = GenerateCpu(schedule);
//   absl::StatusOr<std::unique_ptr<CpuJitModule>> jit = CpuJitModule::Load(*m);
//   CoilKernelFn fn = (*jit)->Find(kernel_id);
//
// Numerics follow the Schedule interpreter (runtime/schedule_interpreter.h): values are rounded
// to their dtype after every expression; f32 arithmetic (+ - * / sqrt) gives the interpreter's
// exact values; transcendental functions for f32/f16/bf16 are coil's own vector polynomials
// (tanh, erf, exp) or libm's / libmvec's f32 functions, within a few ulp of the interpreter's
// f64 libm rounded to f32 (docs/cpu_backend.md, "Fast-math"); floating sum/prod accumulate in
// f64 with reassociation allowed (the only fast-math flag used), so results match the
// interpreter up to summation order.
#ifndef COIL_CODEGEN_CPU_CODEGEN_CPU_H_
#define COIL_CODEGEN_CPU_CODEGEN_CPU_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/codegen_part.h"
#include "ir/proto/kernel_module.pb.h"
#include "ir/proto/schedule.pb.h"

namespace coil {

struct CpuCodegenOptions {
  // The new pass manager's pipeline level (0-3) and the code generator's.
  int opt_level = 3;
  // Target CPU: "" (or "native") is the host CPU with its detected features; otherwise an LLVM
  // CPU name ("x86-64-v3", "skylake-avx512", ...).
  std::string cpu = "";
  // Threads that optimize kernels (each kernel is optimized on its own, so the object code is
  // the same for any count); 0: every hardware thread.
  int compile_threads = 0;
};

// Generates a KernelModule: backend "cpu", the schedule, one CompiledKernel per generated
// function (kernel_id, name, symbol, source = that function's LLVM IR after optimization), the
// object code, target triple, cpu, cpu_features ("+avx2,+fma,..."), compiler_version and
// options. Errors: a malformed schedule (InvalidArgument naming the kernel, Loop and
// expression), an unknown CPU name (InvalidArgument), an LLVM failure (Internal).
// `schedule` moves into the module (pass std::move(s) to spare a copy of its constants).
// `parts` (when not null) gets the wall time of each part (ir/codegen_part.h): "llvm_ir"
// (the target machine and every kernel's LLVM IR, emitted and verified), "optimize" (every
// kernel's O3 pipeline and streaming-store marking), "link" (the kernels' modules joined into
// one) and "machine_code" (the object file). Kernels are emitted and optimized on
// `compile_threads` threads at once: that phase's wall time is divided between "llvm_ir" and
// "optimize" in proportion to the two steps' summed thread times (exact with one thread).
absl::StatusOr<proto::KernelModule> GenerateCpu(proto::Schedule schedule,
                                                const CpuCodegenOptions& options = {},
                                                std::vector<CodegenPart>* parts = nullptr);

// The symbol of a kernel's function: "coil_k<id>_<name with non-identifier chars as _>".
std::string CpuKernelSymbol(const proto::Kernel& kernel);

}  // namespace coil

#endif  // COIL_CODEGEN_CPU_CODEGEN_CPU_H_
