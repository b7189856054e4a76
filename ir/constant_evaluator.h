// ConstantEvaluator: how a compile-time pass computes the outputs of a graph that has no inputs
// (only constants and the nodes over them). Passes that fold constants (inductor's
// fold_constants) take one instead of linking an interpreter, so a stage never depends on the
// runtime; the compile driver injects the reference interpreter (runtime/constant_evaluator.h).
//
//   ConstantEvaluator evaluate = ReferenceConstantEvaluator(model_dir);
//   absl::StatusOr<std::vector<ConstantData>> values = evaluate(constant_only_graph);
#ifndef COIL_IR_CONSTANT_EVALUATOR_H_
#define COIL_IR_CONSTANT_EVALUATOR_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace coil {

// Returns one dense ConstantData (contiguous bytes of the output's declared dtype and static
// shape) per graph output, in order; or the error evaluating it raised (e.g. an index out of
// range), which the caller may treat as "leave it to run time".
using ConstantEvaluator =
    std::function<absl::StatusOr<std::vector<ConstantData>>(const Graph& graph)>;

}  // namespace coil

#endif  // COIL_IR_CONSTANT_EVALUATOR_H_
