// The LLVM target a CpuCodegen run compiles for (host CPU or a named one), and the check that a
// KernelModule's object code can run on this CPU. Not an API: used by codegen_cpu.cc / jit.cc.
//
//   absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = CreateTargetMachine("", 3);
//   std::string features = IsaFeatures(**tm);          // "+avx,+avx2,+fma,..."
//   absl::Status ok = CheckRunsOnHost(triple, features);
#ifndef COIL_CODEGEN_CPU_INTERNAL_TARGET_H_
#define COIL_CODEGEN_CPU_INTERNAL_TARGET_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Target/TargetMachine.h"

namespace coil::codegen_cpu_internal {

// Initializes the native target once (thread-safe).
void InitializeNativeTarget();

// A TargetMachine for this process's triple and `cpu` ("" or "native": the host CPU with the
// host's detected features), at `opt_level` (0-3), with PIC relocations so the object can be
// loaded anywhere. Errors: an unknown CPU name (InvalidArgument).
absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const std::string& cpu,
                                                                        int opt_level);

// The ISA features `tm` generates code with, as "+a,+b,..." (sorted): only features the host
// feature detection knows about (tuning flags are left out, they do not affect correctness).
std::string IsaFeatures(const llvm::TargetMachine& tm);

// The width in bits of the vector registers LLVM's cost model uses for `tm` (128 for SSE2,
// 256 for AVX2, 512 where AVX-512 registers are preferred).
int VectorRegisterBits(const llvm::TargetMachine& tm);

// [Note: 512-bit vectors] LLVM prefers 256-bit vectors on Intel's AVX-512 server CPUs (and
// generic x86-64-v4), a hedge against the clock drop of early AVX-512 parts; AMD Zen 4 gets
// 512. Generated kernels are loops of vector arithmetic (tanh, erf, exp chains) where twice
// the lanes per instruction is what counts, and only whole 64-byte stores can stream
// (streaming_stores.h): on a 16-core Sapphire Rapids VM the fused gelu kernel took 2.5x the
// time per element of the Zen 4 machine with 256-bit vectors. So on every target with
// AVX-512F kernels carry "prefer-vector-width"="512" (kPreferVectorWidthAttr), and
// VectorRegisterBits reports 512 there.
bool HasAvx512(const llvm::TargetMachine& tm);
inline constexpr char kPreferVectorWidthAttr[] = "prefer-vector-width";

// A CPU as the compatibility check sees it: triple, LLVM CPU name, and every ISA feature LLVM's
// host detection knows, present or not.
struct CpuDescription {
  std::string triple;
  std::string name;
  llvm::StringMap<bool> features;
};

// This machine's CPU.
CpuDescription HostCpu();

// OK when code for `triple` using `features` ("+a,+b,...") can run on `cpu`; otherwise
// FailedPrecondition naming what is missing. Tests describe CPUs this way, so no test depends
// on the machine it runs on.
absl::Status CheckRunsOn(const std::string& triple, const std::string& features,
                         const CpuDescription& cpu);

// CheckRunsOn for this machine's CPU (HostCpu()).
// OK when code for `triple` using `features` ("+a,+b,...") can run on this CPU; otherwise
// FailedPrecondition, e.g. "object code for x86_64 with avx512f, this CPU lacks avx512f".
// A "+feature" unknown to this LLVM's host detection (a newer LLVM's name, a typo) counts as
// lacking: nothing shows the CPU has it.
absl::Status CheckRunsOnHost(const std::string& triple, const std::string& features);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_TARGET_H_
