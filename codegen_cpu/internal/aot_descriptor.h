// Turns the optimized kernel module into an AOT package module: every definition becomes a
// local symbol (two packages never clash), and one exported constant, the CoilAotPackage
// descriptor of runtime/cpu/aot_package.h, points at the embedded Schedule bytes, the kernel
// table and the target description. Not an API: aot.cc runs it as GenerateCpu's pre-emit hook.
//
//   AotDescriptor d{.name = "mlp", .cpu = "znver4", ..., .schedule_bytes = bytes};
//   absl::Status s = AddAotDescriptor(module, kernels, d);   // defines coil_aot_mlp_package
#ifndef COIL_CODEGEN_CPU_INTERNAL_AOT_DESCRIPTOR_H_
#define COIL_CODEGEN_CPU_INTERNAL_AOT_DESCRIPTOR_H_

#include <string>

#include "absl/status/status.h"
#include "ir/proto/kernel_module.pb.h"
#include "llvm/IR/Module.h"

namespace coil::codegen_cpu_internal {

struct AotDescriptor {
  std::string name;          // a valid C identifier (aot.cc checks)
  std::string cpu;           // the LLVM CPU name the code is compiled for
  std::string cpu_features;  // "+a,+b,..." (IsaFeatures)
  std::string compiler;      // "LLVM 16.0.6"
  std::string options;       // "opt_level=3 cpu=..."
  std::string schedule_bytes;  // the serialized Schedule, constants inline
};

// The exported symbol of package `name`: "coil_aot_<name>_package".
std::string AotPackageSymbol(const std::string& name);

// Internalizes `module`'s definitions and adds the descriptor (its target triple is the
// module's). Errors (Internal: these are codegen bugs): a kernel of `kernels` whose symbol is
// not a function of the module, a module that already defines the descriptor's symbol, or one
// with static constructors or destructors (they would run before the CPU check).
absl::Status AddAotDescriptor(llvm::Module& module, const proto::KernelModule& kernels,
                              const AotDescriptor& descriptor);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_AOT_DESCRIPTOR_H_
