// Internal to prims/decompositions/shape*.cc and indexing.cc: the parts of the shape family
// (see register.h) that live in their own files, and helpers they share.
#ifndef COIL_PRIMS_DECOMPOSITIONS_SHAPE_INTERNAL_H_
#define COIL_PRIMS_DECOMPOSITIONS_SHAPE_INTERNAL_H_

#include "prims/decomposition_registry.h"
#include "prims/emitter.h"

namespace coil::prims::shape_internal {

// Joining, splitting, slicing, padding and repetition (ir/ops/shape_ops_join_slice.cc).
void RegisterJoinSliceDecompositions(DecompositionRegistry& r);  // shape_join_slice.cc
// gather, scatter, index_select, index_tensor, index_put, one_hot
// (ir/ops/indexing_ops.cc).
void RegisterIndexingDecompositions(DecompositionRegistry& r);  // indexing.cc

// `dim` normalized against `rank` (rank 0 counts as 1, as torch); records an error and
// returns 0 when out of range.
int64_t NormDim(Emitter& e, int64_t dim, int64_t rank);

}  // namespace coil::prims::shape_internal

#endif  // COIL_PRIMS_DECOMPOSITIONS_SHAPE_INTERNAL_H_
