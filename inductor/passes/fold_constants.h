// FoldConstants: evaluates, at compile time, the nodes of a graph whose inputs are all
// constants, and replaces their results by new constants, so that work on weights (a Linear's
// transposed weight, slices of a packed QKV weight, arithmetic on normalization parameters)
// is done once instead of by a kernel on every run.
//
//   absl::StatusOr<bool> changed = inductor::FoldConstants(prims_graph);
//
// It never grows the model. Constants connected through foldable nodes form a group (a weight
// and every view of it, the parameters of one normalization); a group is folded only when the
// constants it adds (its results that unfolded code still reads) are no larger, give or take
// 64 bytes, than the constants it makes dead. So an expanded or broadcast bias, a pad of a
// weight, or the transpose of a tied embedding that a gather also reads stay as they are,
// while a scalar broadcast inside arithmetic that ends in a vector folds. Nodes without
// inputs (iota, full) are never folded.
// Never folded: random ops, ops with side effects (prims.copy_to, in-place ops), results with
// a symbolic shape, strides or attributes, and constants stored as external data when
// `external_data_dir` is empty. Values are computed in each value's own dtype by the injected
// FoldConstantsOptions::evaluate (the compile driver passes the reference interpreter,
// runtime/constant_evaluator.h), so inductor links no interpreter; without an evaluator
// nothing is folded. A group whose evaluation fails (a data-dependent kernel error) is left
// for the runtime to report.
#ifndef COIL_INDUCTOR_PASSES_FOLD_CONSTANTS_H_
#define COIL_INDUCTOR_PASSES_FOLD_CONSTANTS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "ir/constant_evaluator.h"
#include "ir/graph.h"

namespace coil::inductor {

struct FoldConstantsOptions {
  // Computes a constant-only subgraph's outputs; empty: FoldConstants folds nothing.
  ConstantEvaluator evaluate;
  // Folder that external constant data paths are relative to; empty: constants stored
  // externally are not folded (inductor does not know where the model came from).
  std::string external_data_dir;
};

struct FoldConstantsStats {
  int nodes_folded = 0;
  int constants_added = 0;
  int groups_rejected = 0;       // would have grown the model
  int64_t constant_bytes_before = 0;  // every constant of the graph, before and after
  int64_t constant_bytes_after = 0;
};

// Returns whether the graph changed. Errors: only internal ones (the interpreter returned a
// value of another type than the graph says), as InternalError naming the node.
absl::StatusOr<bool> FoldConstants(Graph& graph, const FoldConstantsOptions& options = {},
                                   FoldConstantsStats* stats = nullptr);

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_PASSES_FOLD_CONSTANTS_H_
