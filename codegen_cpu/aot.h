// AOT packages: a Schedule compiled ahead of time into `<name>.o` + `<name>.h`, which any C++
// program links with //runtime/cpu:aot_runtime (no LLVM, no code generation at run time).
//
//   coil::AotOptions options{.name = "resnet18", .cpu = "x86-64-v3"};
//   absl::Status s = coil::WriteAotPackage(schedule, options, "out/");
//   // out/resnet18.o: one relocatable ELF object: the kernels (local symbols), the serialized
//   //                 Schedule with every constant inline, the kernel table, the target CPU
//   //                 and the CPU features the code needs, behind one exported descriptor,
//   //                 coil_aot_resnet18_package (runtime/cpu/aot_package.h).
//   // out/resnet18.h: documents the model's inputs and outputs and declares
//   //                 coil_aot::resnet18::Create() -> StatusOr<unique_ptr<CpuExecutable>>.
//
// The object is emitted from the same LLVM module as the kernels (GenerateCpu with a pre-emit
// hook adds the descriptor), so no linker is needed at AOT time. Consumers link the object,
// //runtime/cpu:aot_runtime, and -lmvec -lm (glibc's vector math and libm, which kernels call).
// At run time Create() refuses, with a FailedPrecondition naming the missing features, to run
// code compiled for a CPU this one does not match (docs/cpu_backend.md, "AOT objects").
#ifndef COIL_CODEGEN_CPU_AOT_H_
#define COIL_CODEGEN_CPU_AOT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/proto/kernel_module.pb.h"
#include "ir/proto/schedule.pb.h"

namespace coil {

struct AotOptions {
  // The package name: letters, digits and '_', starting with a letter, without "__", not
  // ending in '_', not a C++ keyword. It names the files, the C++ namespace coil_aot::<name>
  // and the exported symbol coil_aot_<name>_package, so packages of different names link
  // together.
  std::string name;
  // Target CPU, as CpuCodegenOptions.cpu: "" (or "native") is the host CPU with all its
  // features; an LLVM CPU name ("x86-64-v3", "skylake-avx512", ...) makes a package for every
  // CPU that has that CPU's features.
  std::string cpu = "";
  // The optimization level (0-3), as CpuCodegenOptions.opt_level.
  int opt_level = 3;
  // Folder that the schedule's external constant paths are relative to: their data is read
  // and embedded in the object.
  std::string external_data_dir;
};

// A package in memory: the object is `module.object_code()`.
struct AotPackage {
  std::string name;
  std::string header;  // the text of <name>.h
  // The code generation result (backend "cpu"; its schedule has every constant inline; its
  // kernels' symbols are local to the object, so CpuJitModule cannot load it).
  proto::KernelModule module;
};

// Generates a package. Errors: a bad name or opt_level, an unknown CPU (InvalidArgument); an
// external constant that cannot be read (NotFound / DataLoss, naming the constant and file) or
// whose path leaves `external_data_dir` (InvalidArgument, ir/io/data_path.h); a
// schedule that code generation rejects (GenerateCpu's errors).
absl::StatusOr<AotPackage> GenerateAotPackage(const proto::Schedule& schedule,
                                              const AotOptions& options);

// Writes `package` as DIR/<name>.o and DIR/<name>.h (DIR is created if missing) with
// ir/io/write_file.h's WriteFileAtomically, durably: readers never see half a file, and a symbolic
// link, folder or device node where a file goes is refused. Errors name the path.
absl::Status WriteAotFiles(const AotPackage& package, const std::string& dir);

// GenerateAotPackage, then WriteAotFiles.
absl::Status WriteAotPackage(const proto::Schedule& schedule, const AotOptions& options,
                             const std::string& dir);

// OK when `name` can name a package (see AotOptions::name); InvalidArgument saying why not.
absl::Status ValidateAotName(const std::string& name);

}  // namespace coil

#endif  // COIL_CODEGEN_CPU_AOT_H_
