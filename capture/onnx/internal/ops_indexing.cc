// Indexing: Gather, GatherElements, ScatterElements (and the older Scatter), OneHot, TopK.
// ONNX indices may be negative (counting from the end); they are normalized with the
// dimension's size, at import time when known, else with aten ops.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/op_table.h"

namespace coil::onnx_internal {
namespace {

// Indices as int64 with negative entries wrapped by `dim` (known indices are wrapped at import
// time; others get where(i < 0, i + dim, i)).
absl::StatusOr<Value*> WrapIndices(OnnxNode& n, int input, const SymExpr& dim) {
  if (const KnownValue* k = n.Known(input); k != nullptr && k->IsConstant() && !k->is_float()) {
    KnownValue w = *k;
    w.dtype = proto::INT64;
    for (SymExpr& e : w.ints) {
      if (e.constant() < 0) e = e + dim;
    }
    return n.ctx().MaterializeKnown(w, n.proto().name());
  }
  COIL_ASSIGN_OR_RETURN(Value* idx, n.In(input));
  if (IsFloating(idx->type().dtype) || IsBool(idx->type().dtype)) return n.Invalid("indices must be integers");
  COIL_ASSIGN_OR_RETURN(idx, n.Cast(idx, proto::INT64));
  COIL_ASSIGN_OR_RETURN(Value* size, n.ctx().MaterializeKnown(KnownValue::Scalar(dim), n.proto().name()));
  COIL_ASSIGN_OR_RETURN(Value* neg, n.Op("aten.lt_scalar", {idx}, {{"other", 0.0}}));
  COIL_ASSIGN_OR_RETURN(Value* wrapped, n.Op("aten.add", {idx, size}));
  return n.Op("aten.where", {neg, wrapped, idx});
}

absl::Status ImportGather(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const TensorType xt = x->type();
  COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), xt.rank()));
  COIL_ASSIGN_OR_RETURN(TensorType it, n.InType(1));
  const KnownValue* k = n.Known(1);
  if (k != nullptr && k->rank() == 0 && k->IsConstant() && !k->is_float()) {
    COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.select", {x}, {{"dim", axis}, {"index", k->ints[0]}}));
    return n.SetOutput(0, y);
  }
  // aten.index_tensor is ONNX Gather: x[(:,)*axis + (idx,)], negative indices wrap.
  COIL_ASSIGN_OR_RETURN(Value* idx, n.In(1));
  if (!IsIntegral(it.dtype)) return n.Invalid("indices must be integers");
  COIL_ASSIGN_OR_RETURN(idx, n.Cast(idx, proto::INT64));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.index_tensor", {x, idx}, {{"dim", axis}}));
  return n.SetOutput(0, y);
}

absl::Status ImportGatherElements(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), x->type().rank()));
  COIL_ASSIGN_OR_RETURN(Value* idx, WrapIndices(n, 1, x->type().shape[axis]));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.gather", {x, idx}, {{"dim", axis}}));
  return n.SetOutput(0, y);
}

absl::Status ImportScatterElements(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* updates, n.In(2));
  COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), x->type().rank()));
  const std::string reduction = n.String("reduction", "none");
  if (reduction != "none" && reduction != "add") return n.UnsupportedAttr("reduction", reduction);
  COIL_ASSIGN_OR_RETURN(Value* idx, WrapIndices(n, 1, x->type().shape[axis]));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op(reduction == "add" ? "aten.scatter_add" : "aten.scatter",
                                       {x, idx, updates}, {{"dim", axis}}));
  return n.SetOutput(0, y);
}

// one_hot = where(unsqueeze(i, axis) == arange(depth) (along axis), on, off); indices outside
// [-depth, depth) match nothing, as ONNX says.
absl::Status ImportOneHot(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(double depth_d, n.KnownScalar(1, "depth"));
  const int64_t depth = static_cast<int64_t>(depth_d);
  if (depth <= 0) return n.Invalid("depth must be positive");
  COIL_ASSIGN_OR_RETURN(Value* idx, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* values, n.In(2));
  const int64_t r = idx->type().rank();
  int64_t axis = n.Int("axis", -1);
  if (axis < -(r + 1) || axis > r) return n.Invalid(absl::StrCat("axis ", axis, " is out of range"));
  if (axis < 0) axis += r + 1;
  COIL_ASSIGN_OR_RETURN(idx, n.Cast(idx, proto::INT64));
  COIL_ASSIGN_OR_RETURN(Value* neg, n.Op("aten.lt_scalar", {idx}, {{"other", 0.0}}));
  COIL_ASSIGN_OR_RETURN(Value* wrapped, n.Op("aten.add_scalar", {idx}, {{"other", static_cast<double>(depth)}}));
  COIL_ASSIGN_OR_RETURN(idx, n.Op("aten.where", {neg, wrapped, idx}));
  COIL_ASSIGN_OR_RETURN(idx, n.Op("aten.unsqueeze", {idx}, {{"dim", axis}}));
  COIL_ASSIGN_OR_RETURN(Value* classes, n.Op("aten.arange", {}, {{"end", SymExpr(depth)}, {"dtype", proto::INT64},
                                                                 {"has_dtype", true}}));
  SymList cshape = {SymExpr(depth)};
  for (int64_t d = axis; d < r; ++d) cshape.push_back(1);
  COIL_ASSIGN_OR_RETURN(classes, n.Op("aten.reshape", {classes}, {{"shape", cshape}}));
  COIL_ASSIGN_OR_RETURN(Value* mask, n.Op("aten.eq", {idx, classes}));
  if (values->type().NumElements() != SymExpr(2)) return n.Invalid("values must have two elements");
  COIL_ASSIGN_OR_RETURN(values, n.Op("aten.reshape", {values}, {{"shape", SymList{2}}}));
  COIL_ASSIGN_OR_RETURN(Value* off, n.Op("aten.select", {values}, {{"dim", int64_t{0}}, {"index", SymExpr(0)}}));
  COIL_ASSIGN_OR_RETURN(Value* on, n.Op("aten.select", {values}, {{"dim", int64_t{0}}, {"index", SymExpr(1)}}));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.where", {mask, on, off}));
  return n.SetOutput(0, y);
}

// TopK for a small static k: k rounds of max_dim (min_dim), each masking the winner. Ties
// go to the lower index, as ONNX requires, because max_dim returns the first maximum.
absl::Status ImportTopK(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const TensorType xt = x->type();
  int64_t k = 0;
  if (n.opset() < 10) {
    k = n.Int("k", 0);
  } else {
    COIL_ASSIGN_OR_RETURN(double kd, n.KnownScalar(1, "k"));
    k = static_cast<int64_t>(kd);
  }
  COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", -1), xt.rank()));
  const bool largest = n.Int("largest", 1) != 0;
  if (n.Int("sorted", 1) == 0) return n.UnsupportedAttr("sorted", "0");
  if (k < 0) return n.Invalid("k must be non-negative");
  if (k > 64) return n.Unsupported(absl::StrCat("TopK with k = ", k, " > 64"));
  if (!IsFloating(xt.dtype)) return n.Unsupported("TopK on integer inputs");
  if (k == 0 || k > 64) return n.Unsupported("TopK with k = 0");
  const double fill = largest ? -std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::infinity();
  Value* cur = x;
  std::vector<Value*> values, indices;
  for (int64_t i = 0; i < k; ++i) {
    COIL_ASSIGN_OR_RETURN(std::vector<Value*> vi, n.OpMulti(largest ? "aten.max_dim" : "aten.min_dim", {cur},
                                                            {{"dim", axis}, {"keepdim", true}}));
    values.push_back(vi[0]);
    indices.push_back(vi[1]);
    if (i + 1 < k) {
      COIL_ASSIGN_OR_RETURN(Value* f, n.Op("aten.full_like", {vi[0]}, {{"value", fill}}));
      COIL_ASSIGN_OR_RETURN(cur, n.Op("aten.scatter", {cur, vi[1], f}, {{"dim", axis}}));
    }
  }
  COIL_ASSIGN_OR_RETURN(Value* v, n.Op("aten.cat", values, {{"dim", axis}}));
  COIL_ASSIGN_OR_RETURN(Value* idx, n.Op("aten.cat", indices, {{"dim", axis}}));
  COIL_RETURN_IF_ERROR(n.SetOutput(0, v));
  return n.SetOutput(1, idx);
}

}  // namespace

void RegisterIndexingOps(OpTable& t) {
  t["Gather"].emit = ImportGather;
  t["GatherElements"].emit = ImportGatherElements;
  t["ScatterElements"].emit = ImportScatterElements;
  t["Scatter"].emit = ImportScatterElements;
  t["OneHot"].emit = ImportOneHot;
  t["TopK"].emit = ImportTopK;
}

}  // namespace coil::onnx_internal
