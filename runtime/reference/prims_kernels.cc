// Reference kernels of the prims opset (docs/prims.md).
#include "runtime/reference/kernel_registry.h"

namespace coil {

void RegisterPrimsKernels(ReferenceKernels& k) {}

}  // namespace coil
