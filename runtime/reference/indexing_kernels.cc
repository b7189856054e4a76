// Reference kernels of the indexing op family.
#include "runtime/reference/kernel_registry.h"

namespace coil {

void RegisterIndexingKernels(ReferenceKernels& k) {}

}  // namespace coil
