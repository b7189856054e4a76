// Reference kernels of in-place ops: the out-of-place kernel, then a write into the input.
#include "runtime/reference/kernel_registry.h"

namespace coil {

void RegisterInplaceKernels(ReferenceKernels& k) {}

}  // namespace coil
