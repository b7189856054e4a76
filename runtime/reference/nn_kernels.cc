// Reference kernels of the nn op family.
#include "runtime/reference/kernel_registry.h"

namespace coil {

void RegisterNnKernels(ReferenceKernels& k) {}

}  // namespace coil
