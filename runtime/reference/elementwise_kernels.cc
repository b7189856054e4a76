// Reference kernels of the elementwise op family.
#include "runtime/reference/kernel_registry.h"

namespace coil {

void RegisterElementwiseKernels(ReferenceKernels& k) {}

}  // namespace coil
