// Registration entry points, one per op family file in ir/ops/. OpRegistry::Global() calls
// RegisterAllOps; each family file defines its Register*Ops function.
#ifndef COIL_IR_OPS_REGISTER_OPS_H_
#define COIL_IR_OPS_REGISTER_OPS_H_

namespace coil {

class OpRegistry;

void RegisterElementwiseOps(OpRegistry& registry);   // elementwise_ops.cc
void RegisterReductionOps(OpRegistry& registry);     // reduction_ops.cc (+ normalization_ops.cc)
void RegisterShapeOps(OpRegistry& registry);         // shape_ops.cc
void RegisterIndexingOps(OpRegistry& registry);      // indexing_ops.cc
void RegisterNnOps(OpRegistry& registry);            // nn_ops*.cc: matmul, conv, pool, sdpa, upsample
void RegisterPrimsOps(OpRegistry& registry);         // prims_ops*.cc: the prims opset (docs/prims.md)
void RegisterPrimsSymOps(OpRegistry& registry);      // prims_sym_ops.cc: prims.sym_value
// In-place variants (`aten.add_`) derived from the out-of-place schemas registered before.
void RegisterInplaceOps(OpRegistry& registry);       // inplace_ops.cc

inline void RegisterAllOps(OpRegistry& registry) {
  RegisterElementwiseOps(registry);
  RegisterReductionOps(registry);
  RegisterShapeOps(registry);
  RegisterIndexingOps(registry);
  RegisterNnOps(registry);
  RegisterPrimsOps(registry);
  RegisterPrimsSymOps(registry);
  RegisterInplaceOps(registry);  // last: derives from the schemas above
}

}  // namespace coil

#endif  // COIL_IR_OPS_REGISTER_OPS_H_
