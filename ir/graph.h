// Graph: the in-memory SSA graph every pass works on, with use-def links.
//
// A Graph owns its Values and Nodes. A Value is defined exactly once: as a graph input, a
// constant, or an output of a Node. Nodes are kept in a topological order; passes that insert
// out of order call SortTopologically(). Proto conversion (ToProto/FromProto) is lossless.
//
//   Graph g("f");
//   Value* x = g.AddInput(TensorType(proto::FLOAT32, {2, 3}), "x");
//   Node* n = g.AddNode("aten.relu", {x}, {}, {x->type()});
//   g.SetOutputs({n->output(0)});
//
// Most code builds graphs through GraphBuilder (ir/builder.h), which infers output types from
// the op registry; Graph itself does not know any op.
#ifndef COIL_IR_GRAPH_H_
#define COIL_IR_GRAPH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/proto/graph.pb.h"
#include "ir/tensor_type.h"

namespace coil {

class Node;
class Graph;

struct SourceLoc {
  std::string file;
  int32_t line = 0;
  int32_t column = 0;
  std::string function;
  bool empty() const { return file.empty() && line == 0; }
  std::string ToString() const;  // "file:line:column" or "" when empty
};

// Bytes of a constant: inline (little-endian, contiguous) or a reference to external data.
struct ConstantData {
  std::string raw;            // used when external_path is empty
  std::string external_path;  // relative to the graph file's folder (ir/io/data_path.h's rules)
  int64_t external_offset = 0;
  int64_t external_length = 0;
  bool is_external() const { return !external_path.empty(); }
};

class Value {
 public:
  enum class Kind { kInput, kConstant, kNodeOutput };

  int64_t id() const { return id_; }
  Kind kind() const { return kind_; }
  const TensorType& type() const { return type_; }
  void set_type(TensorType t) { type_ = std::move(t); }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // The node that defines this value, or nullptr for inputs and constants.
  Node* producer() const { return producer_; }
  int output_index() const { return output_index_; }
  // Constant data; only for kConstant values.
  const ConstantData& constant() const;
  // The static sizes of an inline constant whose bytes are all there, dense and row-major
  // (no external data, no strides, raw size = elements x element size); nullopt otherwise
  // (inputs and node outputs included). What passes that rewrite weights may read in place.
  std::optional<std::vector<int64_t>> InlineDenseShape() const;
  // The same, to change (or to take its bytes from a graph about to be dropped).
  ConstantData& mutable_constant();
  // Nodes that read this value, one entry per use (a node using it twice appears twice).
  const std::vector<Node*>& users() const { return users_; }
  bool HasUsers() const { return !users_.empty(); }

 private:
  friend class Graph;
  friend class Node;
  Value(int64_t id, Kind kind, TensorType type) : id_(id), kind_(kind), type_(std::move(type)) {}

  int64_t id_;
  Kind kind_;
  TensorType type_;
  std::string name_;
  Node* producer_ = nullptr;
  int output_index_ = 0;
  std::unique_ptr<ConstantData> constant_;
  std::vector<Node*> users_;
};

class Node {
 public:
  const std::string& op() const { return op_; }
  absl::Span<Value* const> inputs() const { return inputs_; }
  Value* input(int i) const { return inputs_.at(i); }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  absl::Span<Value* const> outputs() const { return outputs_; }
  Value* output(int i) const { return outputs_.at(i); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }

  const AttrMap& attrs() const { return attrs_; }
  AttrMap& mutable_attrs() { return attrs_; }
  const SourceLoc& loc() const { return loc_; }
  void set_loc(SourceLoc loc) { loc_ = std::move(loc); }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Replaces input i, keeping use lists right.
  void ReplaceInput(int i, Value* v);

  // "%3 = aten.add(%1, %2)" style description for error messages.
  std::string Describe() const;

 private:
  friend class Graph;
  Node() = default;

  std::string op_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  AttrMap attrs_;
  SourceLoc loc_;
  std::string name_;
};

struct SymbolInfo {
  std::string name;
  int64_t min = 0;
  int64_t max = 0;  // 0: unbounded
  int64_t hint = 0;
  // Non-empty: bound from the value of the 0-d int64 graph input of this name, not from a
  // shape (graph.proto's Symbol.value_of); never used in a shape.
  std::string value_of;
};

struct GuardInfo {
  proto::Guard::Relation relation = proto::Guard::EQ;
  SymExpr lhs;
  SymExpr rhs;
  std::string reason;
  SourceLoc loc;
};

class Graph {
 public:
  explicit Graph(std::string name = "graph") : name_(std::move(name)) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  Value* AddInput(TensorType type, std::string name = "");
  Value* AddConstant(TensorType type, ConstantData data, std::string name = "");
  // Appends a node (after every existing node). Types are taken as given; see GraphBuilder
  // for inference.
  Node* AddNode(std::string op, std::vector<Value*> inputs, AttrMap attrs,
                std::vector<TensorType> output_types);
  // Inserts a node immediately before `before`.
  Node* InsertNodeBefore(Node* before, std::string op, std::vector<Value*> inputs, AttrMap attrs,
                         std::vector<TensorType> output_types);
  void SetOutputs(std::vector<Value*> outputs) { outputs_ = std::move(outputs); }

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& constants() const { return constants_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  bool IsOutput(const Value* v) const;
  // Nodes in their current (topological) order.
  std::vector<Node*> nodes() const;
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  // nullptr if no value has that id.
  Value* FindValue(int64_t id) const;

  // Points every use of `from` (node inputs and graph outputs) at `to`.
  void ReplaceAllUsesWith(Value* from, Value* to);
  // Removes a node whose outputs have no users and are not graph outputs (CHECKed).
  void RemoveNode(Node* node);
  // Dead-code elimination: removes nodes and constants that no graph output depends on.
  // Returns the number of nodes removed. Graph does not know ops, so nodes with side effects
  // (in-place ops, prims.copy_to: graphs before or right after prims::Functionalize) survive
  // only when `keep` says so: nodes for which it returns true are kept with everything they
  // depend on. Without `keep`, run it on functional graphs only.
  int RemoveDeadCode(const std::function<bool(const Node&)>& keep = nullptr);
  // Reorders nodes topologically (stable: keeps the current order where it is already valid).
  // Fails with a message naming a node on a cycle.
  absl::Status SortTopologically();

  std::vector<SymbolInfo>& symbols() { return symbols_; }
  const std::vector<SymbolInfo>& symbols() const { return symbols_; }
  std::vector<GuardInfo>& guards() { return guards_; }
  const std::vector<GuardInfo>& guards() const { return guards_; }
  // Ranges of the graph's symbols, for SymExpr relations.
  SymRanges SymbolRanges() const;

  // Lossless conversion to the protobuf contract. On an rvalue (std::move(g).ToProto()) the
  // constants' bytes move into the proto instead of being copied (weights are most of a
  // graph's bytes); the graph is left with empty constants, fit only to be destroyed.
  proto::Graph ToProto() const&;
  proto::Graph ToProto() &&;
  // Rebuilds the graph from a proto. Structural problems (duplicate or undefined value ids,
  // malformed types or attributes, an external data path outside the graph's folder, see
  // ir/io/data_path.h) are InvalidArgument naming the node. Op semantics are not
  // checked here: run Verify (ir/verifier.h) for that.
  static absl::StatusOr<Graph> FromProto(const proto::Graph& proto);
  // The same, moving the constants' bytes out of `proto` (left with empty raw constants).
  static absl::StatusOr<Graph> FromProto(proto::Graph&& proto);

  // A deep copy (value ids preserved).
  Graph Clone() const;

 private:
  // `movable`, when not null, is `p` itself: constant bytes are moved out of it.
  static absl::StatusOr<Graph> FromProtoImpl(const proto::Graph& p, proto::Graph* movable);
  Value* NewValue(Value::Kind kind, TensorType type, int64_t id = -1);
  Node* MakeNode(std::string op, std::vector<Value*> inputs, AttrMap attrs,
                 std::vector<TensorType> output_types, const std::vector<int64_t>& ids = {});

  std::string name_;
  std::vector<std::unique_ptr<Value>> values_;
  absl::flat_hash_map<int64_t, Value*> values_by_id_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<Value*> constants_;
  std::vector<Value*> outputs_;
  std::vector<SymbolInfo> symbols_;
  std::vector<GuardInfo> guards_;
  int64_t next_id_ = 0;
};

}  // namespace coil

#endif  // COIL_IR_GRAPH_H_
