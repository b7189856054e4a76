// Schemas and meta functions of the elementwise op family.
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/register_ops.h"

namespace coil {

void RegisterElementwiseOps(OpRegistry& registry) {}

}  // namespace coil
