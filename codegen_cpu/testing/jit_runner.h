// A test-only driver for JIT-loaded KernelModules: runs every kernel of the module's schedule in
// order on one arena, as the runtime will (runtime/cpu/ is the real one). EXTERN kernels call
// the op's reference kernel (runtime/reference/kernel_registry.h) as the Schedule interpreter
// does, then their epilogue function. Kernels are called over [0, P) in `chunks` slices, to
// exercise the ABI's [begin, end) split. The arena starts as all-ones bytes (NaN in every float
// dtype), so a read of memory nobody wrote shows up.
//
//   absl::StatusOr<std::vector<HostTensor>> out = RunWithJit(module, *jit, inputs);
#ifndef COIL_CODEGEN_CPU_TESTING_JIT_RUNNER_H_
#define COIL_CODEGEN_CPU_TESTING_JIT_RUNNER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "codegen_cpu/jit.h"
#include "ir/proto/kernel_module.pb.h"
#include "runtime/host_tensor.h"

namespace coil::testing {

// Outputs in Schedule.outputs order. `inputs` are copied (stores into INPUT buffers do not
// write through).
absl::StatusOr<std::vector<HostTensor>> RunWithJit(const proto::KernelModule& module,
                                                   const CpuJitModule& jit,
                                                   absl::Span<const HostTensor> inputs,
                                                   int chunks = 3);

}  // namespace coil::testing

#endif  // COIL_CODEGEN_CPU_TESTING_JIT_RUNNER_H_
