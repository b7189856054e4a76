// Internal to prims/decompositions/reduction*.cc and normalization.cc: the second registration
// entry point of the reduction family and the helpers both files share.
#ifndef COIL_PRIMS_DECOMPOSITIONS_REDUCTION_INTERNAL_H_
#define COIL_PRIMS_DECOMPOSITIONS_REDUCTION_INTERNAL_H_

#include "prims/decomposition_registry.h"
#include "prims/emitter.h"

namespace coil::prims::reduction_internal {

// softmax, log_softmax, the normalizations and dropout (normalization.cc).
void RegisterNormalizationDecompositions(DecompositionRegistry& r);

// Whether x has statically no elements (some dim is the constant 0).
bool StaticallyEmpty(const Val& x);

// A tensor of the op's output type `i` filled with `value`.
Val FullOut(const OpCall& c, double value, int i = 0);

}  // namespace coil::prims::reduction_internal

#endif  // COIL_PRIMS_DECOMPOSITIONS_REDUCTION_INTERNAL_H_
