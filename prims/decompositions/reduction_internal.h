// Internal to prims/decompositions/reduction*.cc and normalization.cc: the second registration
// entry point of the reduction family and the helpers both files share.
#ifndef COIL_PRIMS_DECOMPOSITIONS_REDUCTION_INTERNAL_H_
#define COIL_PRIMS_DECOMPOSITIONS_REDUCTION_INTERNAL_H_

#include "prims/decomposition_registry.h"
#include "prims/emitter.h"

namespace coil::prims::reduction_internal {

// softmax, log_softmax and the normalizations (normalization.cc).
void RegisterNormalizationDecompositions(DecompositionRegistry& r);

// Whether reducing x over `dims` ([] = all) may combine no element: the graph's symbol ranges
// do not prove the number of reduced elements positive.
bool MayBeEmpty(const Val& x, const IntList& dims);

// amax (`is_max`) or amin of x over `dims` ([] = all) where the reduction may be empty (which
// prims.amax/amin reject): unless provably non-empty, each reduced dim is first padded with one
// `pad` element. `pad` must not change a non-empty result (-inf for a max); an empty reduction
// gives `pad`.
Val PaddedExtreme(Val x, IntList dims, bool keepdim, bool is_max, double pad);

}  // namespace coil::prims::reduction_internal

#endif  // COIL_PRIMS_DECOMPOSITIONS_REDUCTION_INTERNAL_H_
