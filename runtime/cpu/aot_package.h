// The binary contract between an AOT object (codegen_cpu/aot.h writes it) and the runtime that
// loads it (runtime/cpu/aot_loader.h): one C-ABI descriptor per package.
//
// An AOT package `<name>.o` exports exactly one symbol, `coil_aot_<name>_package`, a
// CoilAotPackage that points at everything else in the object: the embedded serialized
// Schedule (constants inline), the kernel functions (runtime/cpu/kernel_abi.h; local symbols
// of the object, so packages never clash), and the target the code was compiled for.
//
//   extern "C" const CoilAotPackage coil_aot_mlp_package;   // in the generated mlp.h
//   absl::StatusOr<std::unique_ptr<CpuExecutable>> exe =
//       coil::cpu::CreateAotExecutable(coil_aot_mlp_package);
//
// Every field is 8 bytes wide, so the layout has no padding and is the same in the LLVM IR
// that codegen_cpu/internal/aot_descriptor.cc emits. Changing the layout or the meaning of a
// field means bumping kAotAbiVersion: the runtime refuses descriptors of another version, and
// generated headers static_assert the version they were written for.
#ifndef COIL_RUNTIME_CPU_AOT_PACKAGE_H_
#define COIL_RUNTIME_CPU_AOT_PACKAGE_H_

#include <cstdint>

#include "runtime/cpu/kernel_abi.h"

extern "C" {

// One generated kernel function: the Schedule kernel it implements.
struct CoilAotKernel {
  int64_t kernel_id;   // Schedule Kernel.id
  CoilKernelFn fn;     // never null
  const char* symbol;  // the function's (local) symbol name, for messages and profilers
};

struct CoilAotPackage {
  uint64_t magic;             // coil::cpu::kAotMagic
  uint64_t abi_version;       // coil::cpu::kAotAbiVersion
  const char* name;           // the package name, a C identifier ("mlp")
  const char* target_triple;  // LLVM triple of the object code ("x86_64-pc-linux-gnu")
  const char* cpu;            // LLVM CPU name it was compiled for ("znver4", "x86-64-v3")
  const char* cpu_features;   // ISA features the code may use ("+avx,+avx2,+fma,...")
  const char* compiler;       // "LLVM 16.0.6"
  const char* options;        // codegen options ("opt_level=3 cpu=x86-64-v3")
  const unsigned char* schedule;  // serialized coil.proto.Schedule, constants inline
  uint64_t schedule_size;
  const CoilAotKernel* kernels;
  uint64_t num_kernels;
};

}  // extern "C"

namespace coil::cpu {

// "COILAOT1" read as a little-endian uint64.
inline constexpr uint64_t kAotMagic = 0x31544f414c494f43ULL;
// 2: kernels take a CoilKernelError*; 3: kernels take the split of Kernel.parallel_dims (the
// kernel calling convention's kKernelAbiVersion).
inline constexpr uint64_t kAotAbiVersion = 3;
static_assert(kAotAbiVersion >= kKernelAbiVersion, "a new kernel ABI needs a new AOT version");

// The exported symbol of package `name`.
inline constexpr char kAotSymbolPrefix[] = "coil_aot_";
inline constexpr char kAotSymbolSuffix[] = "_package";

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_AOT_PACKAGE_H_
