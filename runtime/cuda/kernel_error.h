// The error record generated kernels fill (kernel_abi.h's CoilCudaError) as a Status naming
// the kernel, the expression and, for an index out of bounds, the buffer, the index and the
// dimension: OutOfRange for indices, InvalidArgument for integer division / remainder / fmod
// by zero and negative integer powers. CudaExecutable reports it after a run.
#ifndef COIL_RUNTIME_CUDA_KERNEL_ERROR_H_
#define COIL_RUNTIME_CUDA_KERNEL_ERROR_H_

#include "absl/status/status.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/cuda/kernel_abi.h"

namespace coil::cuda {

absl::Status KernelErrorStatus(const proto::Schedule& schedule, const CoilCudaError& e);

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_KERNEL_ERROR_H_
