// Registration entry points, one per op family file in ir/ops/. OpRegistry::Global() calls
// RegisterAllOps; each family file defines its Register*Ops function.
#ifndef COIL_IR_OPS_REGISTER_OPS_H_
#define COIL_IR_OPS_REGISTER_OPS_H_

namespace coil {

class OpRegistry;

void RegisterElementwiseOps(OpRegistry& registry);    // elementwise_ops.cc: unary, activations
void RegisterBinaryOps(OpRegistry& registry);         // binary_ops.cc: binary, scalar, ternary
void RegisterCreationOps(OpRegistry& registry);       // creation_ops.cc: full, arange, *_like
void RegisterReductionOps(OpRegistry& registry);      // reduction_ops.cc (+ normalization_ops.cc)
void RegisterShapeOps(OpRegistry& registry);          // shape_ops*.cc: views, join and slice
void RegisterIndexingOps(OpRegistry& registry);       // indexing_ops.cc
void RegisterNnOps(OpRegistry& registry);             // nn_ops*.cc (see nn_ops_internal.h)
// The prims opset (docs/prims.md).
void RegisterPrimsOps(OpRegistry& registry);          // prims_ops.cc: elementwise, reductions
void RegisterPrimsShapeOps(OpRegistry& registry);     // prims_shape_ops.cc: shape and layout
void RegisterPrimsCreationOps(OpRegistry& registry);  // prims_creation_ops.cc: full, iota, random
void RegisterPrimsIndexingOps(OpRegistry& registry);  // prims_indexing_ops.cc (+ copy_to)
void RegisterPrimsSymOps(OpRegistry& registry);       // prims_sym_ops.cc: prims.sym_value
// In-place variants (`aten.add_`) derived from the out-of-place schemas registered before.
void RegisterInplaceOps(OpRegistry& registry);        // inplace_ops.cc

inline void RegisterAllOps(OpRegistry& registry) {
  RegisterElementwiseOps(registry);
  RegisterBinaryOps(registry);
  RegisterCreationOps(registry);
  RegisterReductionOps(registry);
  RegisterShapeOps(registry);
  RegisterIndexingOps(registry);
  RegisterNnOps(registry);
  RegisterPrimsOps(registry);
  RegisterPrimsShapeOps(registry);
  RegisterPrimsCreationOps(registry);
  RegisterPrimsIndexingOps(registry);
  RegisterPrimsSymOps(registry);
  RegisterInplaceOps(registry);  // last: derives from the schemas above
}

}  // namespace coil

#endif  // COIL_IR_OPS_REGISTER_OPS_H_
