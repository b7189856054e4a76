// Shape guards: the assumptions meta functions make about symbolic sizes
// (ir/shape_assumption.h) as graph guards, and the check every runner makes of a graph's guards
// once the inputs bind its symbols (BindSymbols in runtime/interpreter.h calls CheckGuards).
// PyTorch's equivalent is the deferred runtime assert (torch._check on symbolic sizes).
//
//   absl::StatusOr<bool> added = AddShapeGuards(graph);   // once per compile (prims' first pass)
//   absl::Status ok = CheckGuards(graph, bindings);       // at each run
#ifndef COIL_IR_SHAPE_GUARDS_H_
#define COIL_IR_SHAPE_GUARDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "ir/shape_assumption.h"

namespace coil {

// Whether `lhs RELATION rhs` holds (false for an unspecified relation), and its symbol
// ("==", "!=", "<", "<="; "?" when unspecified). Shared with capture's guard programs.
bool GuardHolds(proto::Guard::Relation relation, int64_t lhs, int64_t rhs);
const char* GuardRelationSymbol(proto::Guard::Relation relation);

// Runs every node's meta function again under a ShapeAssumptionScope and adds each assumption
// as a guard (EQ or LE) whose reason names the node ("%3 = aten.view(%1): element counts ..."),
// unless the graph has that guard already. Returns whether a guard was added. Errors: a node
// whose op is unknown or whose meta function fails (the graph does not verify).
absl::StatusOr<bool> AddShapeGuards(Graph& graph);

// The same for `nodes` of `graph` only; with a `source` (a node of another graph: the aten node
// these prims were decomposed from), each reason names the source, as the user wrote it, and
// then the prim ("%3 = aten.narrow(%1): a slice ends within its input (prims.slice)"), and the
// guard takes the source's location.
absl::StatusOr<bool> AddShapeGuardsFor(Graph& graph, absl::Span<Node* const> nodes,
                                       const Node* source);

// The assumptions node `node`'s meta function made (ShapeAssumptionScope), collected where
// its types were inferred anyway, e.g. by prims' Emitter as it emits a node.
struct NodeAssumptions {
  const Node* node = nullptr;
  std::vector<ShapeAssumption> assumptions;
};

// AddShapeGuardsFor with the assumptions already collected: the same guards, in the same order,
// without running the meta functions again. Returns whether a guard was added.
bool AddGuardsForAssumptions(Graph& graph, absl::Span<const NodeAssumptions> nodes,
                             const Node* source);

// How a guard's reason names node `n`: n.Describe() ("%3 = aten.view(%1)", with " at FILE:LINE"
// when it has a location), then " (node 'NAME')" when it has a name (an ONNX node's).
std::string GuardSource(const Node& n);

// Whether `bindings` satisfy every guard of `graph`. The error (InvalidArgument) names the
// guard's reason and both sides' values, or the symbol no input binds.
absl::Status CheckGuards(const Graph& graph,
                         const absl::flat_hash_map<std::string, int64_t>& bindings);

}  // namespace coil

#endif  // COIL_IR_SHAPE_GUARDS_H_
