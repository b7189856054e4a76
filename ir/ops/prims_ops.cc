// Schemas and meta functions of the prims opset (docs/prims.md).
#include "ir/op_registry.h"
#include "ir/ops/register_ops.h"

namespace coil {

void RegisterPrimsOps(OpRegistry& registry) {}

}  // namespace coil
