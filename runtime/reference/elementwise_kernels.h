// Private to the elementwise reference kernels: part 2's registration, called by
// RegisterElementwiseKernels (elementwise_kernels.cc).
#ifndef COIL_RUNTIME_REFERENCE_ELEMENTWISE_KERNELS_H_
#define COIL_RUNTIME_REFERENCE_ELEMENTWISE_KERNELS_H_

#include "runtime/reference/kernel_registry.h"

namespace coil {

// Binary, tensor-scalar, ternary and creation kernels (elementwise_kernels_2.cc).
void RegisterElementwiseKernels2(ReferenceKernels& k);

}  // namespace coil

#endif  // COIL_RUNTIME_REFERENCE_ELEMENTWISE_KERNELS_H_
