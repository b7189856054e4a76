// CodegenPart: one timed part of a backend's code generation (building LLVM IR, optimizing it,
// machine code; writing CUDA C++, NVRTC). Code generators fill a list of them when asked
// (codegen_cpu::GenerateCpu, codegen_cuda::GenerateCuda), and the compile driver records them
// as pass records under the codegen stage (pipeline "codegen_cpu", "codegen_cuda"), so the
// inspector's Timings chart shows what the stage's time went to.
//
//   std::vector<CodegenPart> parts;
//   absl::StatusOr<proto::KernelModule> m = GenerateCpu(schedule, options, &parts);
//   // parts: {"llvm_ir", 0.04}, {"optimize", 0.31}, {"link", 0.01}, {"machine_code", 0.12}
//
// Parts are in order and each is wall time inside the call, so together they are at most the
// call's wall time.
#ifndef COIL_IR_CODEGEN_PART_H_
#define COIL_IR_CODEGEN_PART_H_

#include <string>

namespace coil {

struct CodegenPart {
  std::string name;
  double seconds = 0;
};

}  // namespace coil

#endif  // COIL_IR_CODEGEN_PART_H_
