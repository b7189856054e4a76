// The importer's state and the view of one ONNX node that op handlers work with.
//
// ImportContext maps ONNX tensor names to coil Values and/or KnownValues (elements known at
// import time, see known_value.h), owns the shape symbols, and turns known values into graph
// values when a consumer needs real data. OnnxNode wraps one NodeProto: typed attribute
// reads with ONNX defaults, inputs (materialized or known), outputs, op emission through
// GraphBuilder, and error constructors that name the node:
//
//   absl::Status ImportRelu(OnnxNode& n) {
//     COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
//     COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.relu", {x}));
//     return n.SetOutput(0, y);
//   }
#ifndef COIL_CAPTURE_ONNX_INTERNAL_CONTEXT_H_
#define COIL_CAPTURE_ONNX_INTERNAL_CONTEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "capture/onnx/internal/known_value.h"
#include "capture/onnx/onnx/onnx.pb.h"
#include "ir/builder.h"
#include "ir/graph.h"

#define COIL_ONNX_CONCAT_INNER(a, b) a##b
#define COIL_ONNX_CONCAT(a, b) COIL_ONNX_CONCAT_INNER(a, b)
// `COIL_ASSIGN_OR_RETURN(T x, expr);` returns expr's error status or binds its value.
#define COIL_ASSIGN_OR_RETURN(lhs, expr) \
  COIL_ASSIGN_OR_RETURN_IMPL(COIL_ONNX_CONCAT(_status_or_, __LINE__), lhs, expr)
#define COIL_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
#define COIL_RETURN_IF_ERROR(expr)              \
  do {                                          \
    absl::Status _coil_status = (expr);         \
    if (!_coil_status.ok()) return _coil_status; \
  } while (0)

namespace coil::onnx_internal {

// What an ONNX tensor name refers to: a graph value, known elements, or both.
struct OnnxTensor {
  Value* value = nullptr;
  std::optional<KnownValue> known;
  // For a value computed from known inputs but not itself known (a fold that a SymExpr cannot
  // express, an op without import-time folding), and for values computed from it: why, naming
  // the first node where knowledge was lost. Empty for values computed from tensor data.
  std::string unknown_why;
};

class ImportContext {
 public:
  ImportContext(Graph& graph, int64_t opset) : graph_(graph), builder_(graph), opset_(opset) {}

  Graph& graph() { return graph_; }
  GraphBuilder& builder() { return builder_; }
  int64_t opset() const { return opset_; }

  const OnnxTensor* Find(const std::string& name) const;
  void Define(const std::string& name, OnnxTensor t);

  // The graph value of a name, materializing a known value as a constant (or, for symbolic
  // elements, as aten ops on symbol sizes). `node_name` labels nodes made for it.
  absl::StatusOr<Value*> Materialize(const std::string& name, const std::string& node_name = "");
  // The graph value of known elements (see Materialize).
  absl::StatusOr<Value*> MaterializeKnown(const KnownValue& k, const std::string& node_name);
  // The type of a name without materializing it.
  absl::StatusOr<TensorType> TypeOf(const std::string& name) const;

  // The symbol for an ONNX dim_param (sanitized into an identifier; declared in the graph).
  SymExpr SymbolForParam(const std::string& dim_param);
  // A fresh symbol for an unknown dimension.
  SymExpr FreshSymbol();
  // The declared ranges of the graph's symbols (dynamic axes are >= 1), for proofs of signs.
  SymRanges Ranges() const;

 private:
  absl::StatusOr<Value*> SymbolValue(const std::string& symbol, const std::string& node_name);
  absl::StatusOr<Value*> ExprValue(const proto::SymExpr& e, const std::string& node_name);
  SymExpr DeclareSymbol(std::string base);

  Graph& graph_;
  GraphBuilder builder_;
  int64_t opset_;
  absl::flat_hash_map<std::string, OnnxTensor> tensors_;
  absl::flat_hash_map<std::string, SymExpr> params_;
  absl::flat_hash_map<std::string, Value*> symbol_values_;
  int next_fresh_ = 0;
};

class OnnxNode {
 public:
  OnnxNode(ImportContext& ctx, const ::onnx::NodeProto& node, int index)
      : ctx_(ctx), node_(node), index_(index) {}

  ImportContext& ctx() { return ctx_; }
  const ::onnx::NodeProto& proto() const { return node_; }
  const std::string& op_type() const { return node_.op_type(); }
  int64_t opset() const { return ctx_.opset(); }
  // "'name'" or "#index" when the node has no name.
  std::string Name() const;

  // ---- inputs (ONNX optional inputs may be missing or named "")
  int num_inputs() const { return node_.input_size(); }
  bool has_input(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }
  absl::StatusOr<Value*> In(int i);
  // The known elements of input i, or nullptr.
  const KnownValue* Known(int i) const;
  absl::StatusOr<TensorType> InType(int i) const;
  // Input i as a list of known integers (a 1-D or 0-D tensor), for shape inputs. Unimplemented
  // when the values are only known at run time.
  absl::StatusOr<std::vector<SymExpr>> KnownSyms(int i, absl::string_view what);
  // The same, but every element must be a constant.
  absl::StatusOr<std::vector<int64_t>> KnownInts(int i, absl::string_view what);
  // A known scalar (or 1-element) input as a double.
  absl::StatusOr<double> KnownScalar(int i, absl::string_view what);

  // ---- attributes (a present attribute of the wrong type is an error reported after the
  // handler returns; the getter then gives the default)
  bool HasAttr(absl::string_view name) const { return FindAttr(name) != nullptr; }
  int64_t Int(absl::string_view name, int64_t def);
  double Float(absl::string_view name, double def);
  std::string String(absl::string_view name, const std::string& def);
  std::vector<int64_t> Ints(absl::string_view name, std::vector<int64_t> def = {});
  std::vector<double> Floats(absl::string_view name);
  const ::onnx::TensorProto* Tensor(absl::string_view name);
  absl::Status attr_error() const { return attr_error_; }

  // ---- import-time folding: a folder that gives up on known inputs says why here (kept in
  // OnnxTensor::unknown_why of the outputs, reported when a shape operand needs them).
  void set_fold_failure(std::string why) { fold_failure_ = std::move(why); }
  const std::string& fold_failure() const { return fold_failure_; }

  // ---- outputs
  int num_outputs() const { return node_.output_size(); }
  bool wants_output(int i) const { return i < node_.output_size() && !node_.output(i).empty(); }
  absl::Status SetOutput(int i, Value* v);
  absl::Status SetKnownOutput(int i, KnownValue k);

  // ---- errors
  // InvalidArgument "node NAME (OP): msg".
  absl::Status Invalid(absl::string_view msg) const;
  // Unimplemented "op OP: what (node NAME)".
  absl::Status Unsupported(absl::string_view what) const;
  // Unimplemented "op OP attribute attr=value is not supported (node NAME)".
  absl::Status UnsupportedAttr(absl::string_view attr, absl::string_view value) const;

  // ---- emitting aten ops (builder errors become Invalid naming this node)
  absl::StatusOr<Value*> Op(absl::string_view op, std::vector<Value*> inputs, AttrMap attrs = {});
  absl::StatusOr<std::vector<Value*>> OpMulti(absl::string_view op, std::vector<Value*> inputs,
                                              AttrMap attrs = {});
  // A constant holding known elements.
  Value* Const(const KnownValue& k);
  // A 0-D constant of `dtype` holding v.
  Value* Scalar(DType dtype, double v);
  // aten.to_dtype unless v already has dtype t.
  absl::StatusOr<Value*> Cast(Value* v, DType t);
  // Normalizes an axis in [-rank, rank) to [0, rank); Invalid naming `what` otherwise.
  absl::StatusOr<int64_t> Axis(int64_t axis, int64_t rank, absl::string_view what = "axis") const;

 private:
  const ::onnx::AttributeProto* FindAttr(absl::string_view name) const;
  bool CheckAttrType(const ::onnx::AttributeProto* a, int type);

  ImportContext& ctx_;
  const ::onnx::NodeProto& node_;
  int index_;
  absl::Status attr_error_;
  std::string fold_failure_;
};

}  // namespace coil::onnx_internal

#endif  // COIL_CAPTURE_ONNX_INTERNAL_CONTEXT_H_
