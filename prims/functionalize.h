// Functionalize: removes mutation and observable aliasing from a graph (the role of PyTorch's
// functionalization in AOTAutograd / PrimTorch).
//
// The input graph has eager semantics (runtime/interpreter.h): in-place ops (`aten.add_`,
// OpSchema::mutated_input >= 0) write into their input's storage, and view ops
// (OpSchema::is_view) share storage with their input. The output graph computes the same
// outputs and the same final input contents with pure ops only:
//   - `op_(self, ...)` becomes `op(self, ...)` (+ `aten.to_dtype` to self's dtype; copy_ gets
//     `aten.expand` of src), fill_ / zero_ become full_like / zeros_like;
//   - a mutation through a view is written back into its base with inverse ops
//     (slice/narrow/split/chunk -> aten.slice_scatter, select -> aten.select_scatter,
//     permute/transpose/t/movedim -> the inverse reordering, reshape-like -> aten.reshape);
//   - a later read of any alias of the mutated storage (the value, its base, other views)
//     reads the updated value; views are regenerated from the new base by replaying their
//     view chain;
//   - a mutated graph input gets `prims.copy_to(input, final_value)` after every other node.
// Graph inputs are assumed contiguous when deciding whether a reshape aliases (as the
// reference interpreter's reshape does for contiguous inputs).
//
//   absl::StatusOr<bool> changed = prims::Functionalize(graph);
//
// A graph without in-place ops (prims.copy_to write-backs alone do not count: such a graph is
// functional already) is left unchanged (false). Errors are InvalidArgument naming
// the node: a mutation through an expanded (broadcast) view, an in-place result that cannot
// be cast to self's dtype or shape, a view chain it cannot invert (diagonal) or whose
// aliasing it cannot decide (a reshape of a view with symbolic sizes).
#ifndef COIL_PRIMS_FUNCTIONALIZE_H_
#define COIL_PRIMS_FUNCTIONALIZE_H_

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/proto/graph.pb.h"

namespace coil::prims {

// Rewrites `graph` in place; returns whether anything changed.
absl::StatusOr<bool> Functionalize(Graph& graph);

// The same on the protobuf contract (the graph is rebuilt with FromProto first).
absl::StatusOr<proto::Graph> Functionalize(const proto::Graph& graph);

}  // namespace coil::prims

#endif  // COIL_PRIMS_FUNCTIONALIZE_H_
