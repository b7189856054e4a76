// Registration entry points, one per family file in prims/decompositions/.
// DecompositionRegistry::Global() calls each once.
#ifndef COIL_PRIMS_DECOMPOSITIONS_REGISTER_H_
#define COIL_PRIMS_DECOMPOSITIONS_REGISTER_H_

namespace coil::prims {

class DecompositionRegistry;

// Unary math, activations, casts (the ops of ir/ops/elementwise_ops.cc).
void RegisterElementwiseDecompositions(DecompositionRegistry& r);  // elementwise.cc
// Binary and ternary math, comparisons, logical ops (ir/ops/binary_ops.cc).
void RegisterBinaryDecompositions(DecompositionRegistry& r);       // binary.cc
// full, zeros, ones, *_like, arange (ir/ops/creation_ops.cc).
void RegisterCreationDecompositions(DecompositionRegistry& r);     // creation.cc
// Reductions, scans, normalizations (softmax, layer_norm, batch_norm, ...).
void RegisterReductionDecompositions(DecompositionRegistry& r);    // reduction*.cc
// Views, reshapes, concatenation, padding, indexing (gather/scatter/index).
void RegisterShapeDecompositions(DecompositionRegistry& r);        // shape*.cc
// Matmul family, convolution wrappers, pooling, upsampling, embedding, attention, dropout.
void RegisterNnDecompositions(DecompositionRegistry& r);           // nn*.cc
// slice_scatter / select_scatter, which prims::Functionalize emits.
void RegisterViewScatterDecompositions(DecompositionRegistry& r);  // view_scatter.cc

}  // namespace coil::prims

#endif  // COIL_PRIMS_DECOMPOSITIONS_REGISTER_H_
