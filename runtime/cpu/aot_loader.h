// Loads an AOT package (runtime/cpu/aot_package.h; codegen_cpu/aot.h writes them) into a
// CpuExecutable, without LLVM: this is all a program that links an AOT object needs, and what
// the generated `<name>.h` calls.
//
//   #include "mlp.h"   // generated: declares coil_aot_mlp_package, wraps the calls below
//   absl::StatusOr<std::unique_ptr<CpuExecutable>> exe = CreateAotExecutable(coil_aot_mlp_package);
//   absl::StatusOr<std::vector<HostTensor>> out = (*exe)->Run({x});
//
// Nothing of a package runs before CheckAotPackage has passed: an object compiled for a CPU
// with features this one lacks gets a FailedPrecondition naming them, never a SIGILL or a
// wrong answer.
#ifndef COIL_RUNTIME_CPU_AOT_LOADER_H_
#define COIL_RUNTIME_CPU_AOT_LOADER_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/cpu/aot_package.h"
#include "runtime/cpu/executable.h"

namespace coil::cpu {

// OK when `package` is a well-formed descriptor of this ABI version whose code can run here.
// Errors: not a descriptor or a field missing (DataLoss); another descriptor version, another
// architecture or OS, CPU features this CPU lacks or this runtime cannot detect
// (FailedPrecondition, e.g. "AOT object 'mlp' was compiled for CPU 'sapphirerapids' and needs
// amx-tile, avx512fp16; this CPU (AMD EPYC 9654) lacks them").
absl::Status CheckAotPackage(const CoilAotPackage& package);

// The package's embedded Schedule (constants inline). Does not check the CPU, so tools can
// inspect any package. Errors: a malformed descriptor or bytes that do not parse (DataLoss).
absl::StatusOr<proto::Schedule> AotPackageSchedule(const CoilAotPackage& package);

// CheckAotPackage, then the Schedule and the kernel table into CpuExecutable::Create.
// Errors: CheckAotPackage's; a kernel table with a null function or a repeated kernel id
// (DataLoss); CpuExecutable::Create's (e.g. a kernel without a function), prefixed with the
// package name.
absl::StatusOr<std::unique_ptr<CpuExecutable>> CreateAotExecutable(
    const CoilAotPackage& package, const CpuExecutableOptions& options = {});

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_AOT_LOADER_H_
