// In-place variants of out-of-place ops (`aten.add_`).
#include "ir/op_registry.h"
#include "ir/ops/register_ops.h"

namespace coil {

void RegisterInplaceOps(OpRegistry& registry) {}

}  // namespace coil
