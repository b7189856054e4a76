// Shared by the decompositions of binary.cc and creation.cc: a Python-number attribute as a
// prims.full.
#ifndef COIL_PRIMS_DECOMPOSITIONS_BINARY_INTERNAL_H_
#define COIL_PRIMS_DECOMPOSITIONS_BINARY_INTERNAL_H_

#include "absl/strings/string_view.h"
#include "ir/attribute.h"
#include "prims/emitter.h"

namespace coil::prims {
namespace binary_internal {

// The Python-number attribute `attr` of the op as a `prims.full` of `shape` (rank 0 by
// default) and `dtype`, converted as torch converts a number to a tensor's dtype (ints wrap,
// floats truncate toward zero, bool tests != 0): the prim receives the attribute as given.
Val Number(const OpCall& c, absl::string_view attr, DType dtype, SymList shape = {});

}  // namespace binary_internal
}  // namespace coil::prims

#endif  // COIL_PRIMS_DECOMPOSITIONS_BINARY_INTERNAL_H_
