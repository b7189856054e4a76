// The CPU backend as a driver::Backend: codegen_cpu (Schedule -> LLVM -> object code) and
// runtime/cpu (CpuExecutable: arena, thread pool, oneDNN externs), loaded through the ORC JIT.
//
//   std::shared_ptr<driver::Backend> cpu = driver::CpuBackend({.codegen = {.cpu = "x86-64-v3"}});
//   // Programs that need the runtime side (threads, profiling) reach it through CpuLoaded:
//   CpuProgram* p = driver::AsCpuProgram(*executable);
#ifndef COIL_TOOLS_DRIVER_CPU_BACKEND_H_
#define COIL_TOOLS_DRIVER_CPU_BACKEND_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/cpu_program.h"
#include "runtime/cpu/executable.h"
#include "tools/driver/backend.h"

namespace coil::driver {

struct CpuBackendOptions {
  CpuCodegenOptions codegen;         // target CPU ("" = this host), optimization level
  cpu::CpuExecutableOptions runtime;  // threads, external data folder
  // The externs whose pointwise epilogues the backend declares it fuses (the runtime runs an
  // epilogue after any extern). Default: CpuCapabilities()'s; max-autotune also tries none.
  std::optional<std::vector<std::string>> extern_epilogues;
  // aten.scaled_dot_product_attention kept whole and run by the runtime's fused attention
  // kernel (runtime/cpu/internal/attention.h) instead of decomposed into matmuls and a
  // softmax: true every call, false none. Default (unset): the calls where the kernel measured
  // faster on a 16-core Xeon: f32, no mask, not causal, query rows a multiple of 32 and keys
  // of 64 (docs/cpu_backend.md, "Fused attention"). COIL_CPU_ATTENTION=1 / 0 in the
  // environment means true / false.
  std::optional<bool> fused_attention;
};

std::shared_ptr<Backend> CpuBackend(const CpuBackendOptions& options = {});

// The CpuProgram behind an Executable the CPU backend loaded; null for other backends'.
CpuProgram* AsCpuProgram(Executable& executable);

}  // namespace coil::driver

#endif  // COIL_TOOLS_DRIVER_CPU_BACKEND_H_
