// Shared pieces of the binary family's decompositions (binary.cc, binary_2.cc).
#ifndef COIL_PRIMS_DECOMPOSITIONS_BINARY_INTERNAL_H_
#define COIL_PRIMS_DECOMPOSITIONS_BINARY_INTERNAL_H_

#include "absl/strings/string_view.h"
#include "ir/attribute.h"
#include "prims/emitter.h"

namespace coil::prims {

class DecompositionRegistry;

namespace binary_internal {

// The Python-number attribute `attr` of the op as a `prims.full` of `shape` (rank 0 by
// default) and `dtype`, converted as torch converts a number to a tensor's dtype (ints wrap,
// floats truncate toward zero, bool tests != 0): the prim receives the attribute as given.
Val Number(const OpCall& c, absl::string_view attr, DType dtype, SymList shape = {});

// Ternary ops (where, lerp, addcmul, addcdiv, masked_fill) and creation ops.
void RegisterTernaryAndCreation(DecompositionRegistry& r);  // binary_2.cc

}  // namespace binary_internal
}  // namespace coil::prims

#endif  // COIL_PRIMS_DECOMPOSITIONS_BINARY_INTERNAL_H_
