// GraphBuilder: appends ops to a Graph, inferring output types from the op registry.
//
//   Graph g("mlp");
//   GraphBuilder b(g);
//   Value* x = b.Input(TensorType(proto::FLOAT32, {SymExpr::Symbol("batch"), 64}), "x");
//   absl::StatusOr<Value*> y = b.Op("aten.relu", {x});
//
// Every node the builder makes has normalized attributes (defaults filled in) and output types
// equal to its meta function's answer, so the graph verifies by construction.
#ifndef COIL_IR_BUILDER_H_
#define COIL_IR_BUILDER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"
#include "ir/op_registry.h"

namespace coil {

class GraphBuilder {
 public:
  explicit GraphBuilder(Graph& graph, const OpRegistry& registry = OpRegistry::Global())
      : graph_(graph), registry_(registry) {}

  Value* Input(TensorType type, std::string name = "") {
    return graph_.AddInput(std::move(type), std::move(name));
  }
  // A constant from raw little-endian contiguous bytes (size CHECKed against the type).
  Value* Constant(TensorType type, std::string raw, std::string name = "");

  // Adds a node; errors name the op and say what is wrong (unknown op, arity, attributes,
  // shapes). Nothing is added on error.
  absl::StatusOr<std::vector<Value*>> OpMulti(absl::string_view op, std::vector<Value*> inputs,
                                              AttrMap attrs = {}, SourceLoc loc = {});
  // The same for single-output ops (error if the op has another number of outputs).
  absl::StatusOr<Value*> Op(absl::string_view op, std::vector<Value*> inputs, AttrMap attrs = {},
                            SourceLoc loc = {});

  Graph& graph() { return graph_; }

 private:
  Graph& graph_;
  const OpRegistry& registry_;
};

}  // namespace coil

#endif  // COIL_IR_BUILDER_H_
