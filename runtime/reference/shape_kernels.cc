// Reference kernels of the shape op family.
#include "runtime/reference/kernel_registry.h"

namespace coil {

void RegisterShapeKernels(ReferenceKernels& k) {}

}  // namespace coil
