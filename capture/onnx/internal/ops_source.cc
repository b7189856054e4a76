// Ops that create tensors from attributes or shapes: Constant, ConstantOfShape, Range, Shape,
// Size, EyeLike. Shape and Size always give known values (symbolic when the input's shape is);
// small integer constants are kept known so that shape arithmetic on them folds.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/op_table.h"
#include "capture/onnx/internal/tensor_data.h"

namespace coil::onnx_internal {
namespace {

absl::Status DefineConstant(OnnxNode& n, const KnownValue& k) {
  OnnxTensor t;
  t.known = k;
  n.ctx().Define(n.proto().output(0), std::move(t));
  return absl::OkStatus();
}

absl::Status ImportConstant(OnnxNode& n) {
  if (n.num_outputs() != 1) return n.Invalid("must have one output");
  if (const ::onnx::TensorProto* t = n.Tensor("value")) {
    COIL_ASSIGN_OR_RETURN(TensorData data, LoadTensor(*t, "", true));
    std::optional<KnownValue> known = KnownFromBytes(data.dtype, data.shape, data.bytes);
    if (known) return DefineConstant(n, *known);
    std::vector<SymExpr> shape(data.shape.begin(), data.shape.end());
    Value* v = n.ctx().builder().Constant(TensorType(data.dtype, std::move(shape)), std::move(data.bytes));
    return n.SetOutput(0, v);
  }
  if (n.HasAttr("value_float")) return DefineConstant(n, KnownValue::Floats(proto::FLOAT32, {}, {n.Float("value_float", 0)}));
  if (n.HasAttr("value_int")) return DefineConstant(n, KnownValue::Ints(proto::INT64, {}, {n.Int("value_int", 0)}));
  if (n.HasAttr("value_floats")) {
    std::vector<double> v = n.Floats("value_floats");
    if (static_cast<int64_t>(v.size()) > kMaxKnownElements) return n.Unsupported("a huge value_floats");
    const int64_t size = static_cast<int64_t>(v.size());
    return DefineConstant(n, KnownValue::Floats(proto::FLOAT32, {size}, std::move(v)));
  }
  if (n.HasAttr("value_ints")) {
    std::vector<int64_t> v = n.Ints("value_ints");
    if (static_cast<int64_t>(v.size()) > kMaxKnownElements) return n.Unsupported("a huge value_ints");
    std::vector<SymExpr> syms(v.begin(), v.end());
    return DefineConstant(n, KnownValue::Ints(proto::INT64, {static_cast<int64_t>(v.size())}, std::move(syms)));
  }
  if (n.HasAttr("sparse_value")) return n.UnsupportedAttr("sparse_value", "(sparse tensor)");
  if (n.HasAttr("value_string") || n.HasAttr("value_strings")) return n.Unsupported("element type STRING");
  return n.Invalid("has no value attribute");
}

absl::Status ImportConstantOfShape(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(std::vector<SymExpr> shape, n.KnownSyms(0, "shape"));
  DType dtype = proto::FLOAT32;
  double value = 0;
  if (const ::onnx::TensorProto* t = n.Tensor("value")) {
    COIL_ASSIGN_OR_RETURN(TensorData data, LoadTensor(*t, "", true));
    std::optional<KnownValue> k = KnownFromBytes(data.dtype, data.shape, data.bytes);
    if (!k || k->numel() != 1) return n.Invalid("value must have one element");
    dtype = data.dtype;
    value = k->AsDouble(0);
  }
  int64_t numel = 1;
  bool is_static = true;
  for (const SymExpr& d : shape) {
    std::optional<int64_t> c = d.AsConstant();
    if (c && *c < 0) return n.Invalid(absl::StrCat("negative dimension ", *c));
    if (!c) {
      is_static = false;
    } else if (numel <= kMaxKnownElements) {
      numel *= *c;
    }
  }
  if (is_static && numel <= kMaxKnownElements && !IsFloating(dtype)) {
    std::vector<int64_t> dims;
    for (const SymExpr& d : shape) dims.push_back(d.constant());
    return DefineConstant(n, KnownValue::Ints(dtype, dims, std::vector<SymExpr>(numel, SymExpr(static_cast<int64_t>(value)))));
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.full", {}, {{"size", SymList(shape)}, {"value", value},
                                                        {"dtype", dtype}, {"has_dtype", true}}));
  return n.SetOutput(0, y);
}

// Range with a symbolic integer start (and any limit): start + delta * arange(count), count =
// max(ceil((limit - start) / delta), 0).
absl::Status ImportSymbolicStartRange(OnnxNode& n, const KnownValue& start, const KnownValue& limit,
                                      const KnownValue& delta) {
  if (start.is_float() || limit.is_float()) {
    return n.Unsupported("a floating-point Range with a symbolic start");
  }
  const int64_t d = delta.ints[0].constant();
  if (d == 0) return n.Invalid("delta must not be 0");
  const SymExpr span = d > 0 ? limit.ints[0] - start.ints[0] : start.ints[0] - limit.ints[0];
  const int64_t step = d > 0 ? d : -d;
  const SymExpr count = SymExpr::Max(SymExpr::FloorDiv(span + (step - 1), step), 0);
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.arange", {}, {{"start", 0.0}, {"end", count}, {"step", 1.0},
                                                          {"dtype", start.dtype}, {"has_dtype", true}}));
  if (d != 1) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.mul_scalar", {y}, {{"other", static_cast<double>(d)}}));
  }
  COIL_ASSIGN_OR_RETURN(Value* s, n.In(0));
  COIL_ASSIGN_OR_RETURN(y, n.Op("aten.add", {y, s}));
  COIL_ASSIGN_OR_RETURN(y, n.Cast(y, start.dtype));
  return n.SetOutput(0, y);
}

absl::Status ImportRange(OnnxNode& n) {
  const KnownValue* start = n.Known(0);
  const KnownValue* limit = n.Known(1);
  const KnownValue* delta = n.Known(2);
  if (start == nullptr || limit == nullptr || delta == nullptr) {
    COIL_RETURN_IF_ERROR(n.In(0).status());
    COIL_RETURN_IF_ERROR(n.In(1).status());
    COIL_RETURN_IF_ERROR(n.In(2).status());
    return n.Unsupported("Range bounds computed at run time (data-dependent shape)");
  }
  if (start->numel() != 1 || limit->numel() != 1 || delta->numel() != 1) {
    return n.Invalid("start, limit and delta must be scalars");
  }
  const DType dtype = start->dtype;
  if (!delta->IsConstant()) {
    return n.Unsupported(absl::StrCat("a symbolic Range delta (", delta->ints[0].ToString(),
                                      "): the element count needs a known step"));
  }
  if (!start->IsConstant()) return ImportSymbolicStartRange(n, *start, *limit, *delta);
  const double s = start->AsDouble(0), d = delta->AsDouble(0);
  if (d == 0) return n.Invalid("delta must not be 0");
  if (limit->IsConstant()) {
    const double l = limit->AsDouble(0);
    const double count_d = std::max(std::ceil((l - s) / d), 0.0);
    if (!(count_d < double{int64_t{1} << 40})) return n.Invalid("Range is too long");
    const int64_t count = static_cast<int64_t>(count_d);
    if (!IsFloating(dtype) && count <= kMaxKnownElements) {
      std::vector<SymExpr> v;
      for (int64_t i = 0; i < count; ++i) v.emplace_back(static_cast<int64_t>(s) + i * static_cast<int64_t>(d));
      return DefineConstant(n, KnownValue::Ints(dtype, {count}, std::move(v)));
    }
    if (IsFloating(dtype) && count <= kMaxKnownElements) {
      std::vector<double> v;
      for (int64_t i = 0; i < count; ++i) v.push_back(s + static_cast<double>(i) * d);
      KnownValue k = KnownValue::Floats(dtype, {count}, std::move(v));
      if (auto rounded = FoldCast(k, dtype)) return DefineConstant(n, *rounded);
    }
    COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.arange", {}, {{"start", 0.0}, {"end", SymExpr(count)},
                                                            {"step", 1.0}, {"dtype", dtype},
                                                            {"has_dtype", true}}));
    if (d != 1) {
      COIL_ASSIGN_OR_RETURN(y, n.Op("aten.mul_scalar", {y}, {{"other", d}}));
    }
    if (s != 0) {
      COIL_ASSIGN_OR_RETURN(y, n.Op("aten.add_scalar", {y}, {{"other", s}}));
    }
    COIL_ASSIGN_OR_RETURN(y, n.Cast(y, dtype));
    return n.SetOutput(0, y);
  }
  if (IsFloating(dtype) || s != std::floor(s) || d != std::floor(d)) {
    return n.Unsupported("a floating-point Range with a symbolic limit");
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.arange", {}, {{"start", s}, {"end", limit->ints[0]}, {"step", d},
                                                          {"dtype", dtype}, {"has_dtype", true}}));
  return n.SetOutput(0, y);
}

absl::Status ImportShape(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(TensorType t, n.InType(0));
  const int64_t r = t.rank();
  int64_t start = n.Int("start", 0), end = n.Int("end", r);
  auto clamp = [r](int64_t v) { return std::max<int64_t>(0, std::min(v < 0 ? v + r : v, r)); };
  start = clamp(start);
  end = clamp(end);
  std::vector<SymExpr> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(t.shape[d]);
  const int64_t size = static_cast<int64_t>(dims.size());
  return n.SetKnownOutput(0, KnownValue::Ints(proto::INT64, {size}, std::move(dims)));
}

absl::Status ImportSize(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(TensorType t, n.InType(0));
  return n.SetKnownOutput(0, KnownValue::Scalar(t.NumElements()));
}

absl::Status ImportEyeLike(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(TensorType t, n.InType(0));
  std::optional<std::vector<int64_t>> shape = t.StaticShape();
  if (!shape || shape->size() != 2) return n.Unsupported("EyeLike needs a static 2-D input");
  DType dtype = t.dtype;
  if (n.HasAttr("dtype")) {
    absl::StatusOr<DType> d = DTypeFromOnnx(static_cast<int32_t>(n.Int("dtype", 1)));
    if (!d.ok()) return n.UnsupportedAttr("dtype", OnnxTypeName(static_cast<int32_t>(n.Int("dtype", 1))));
    dtype = *d;
  }
  const int64_t k = n.Int("k", 0), rows = (*shape)[0], cols = (*shape)[1];
  if (rows * cols > (int64_t{1} << 24)) return n.Unsupported("a huge EyeLike");
  std::vector<double> v(rows * cols, 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    if (i + k >= 0 && i + k < cols) v[i * cols + i + k] = 1;
  }
  KnownValue eye = KnownValue::Floats(proto::FLOAT64, *shape, std::move(v));
  std::optional<KnownValue> cast = FoldCast(eye, dtype);
  return n.SetOutput(0, n.Const(*cast));
}

}  // namespace

void RegisterSourceOps(OpTable& t) {
  t["Constant"].emit = ImportConstant;
  t["ConstantOfShape"].emit = ImportConstantOfShape;
  t["Range"].emit = ImportRange;
  t["Shape"].emit = ImportShape;
  t["Size"].emit = ImportSize;
  t["EyeLike"].emit = ImportEyeLike;
}

}  // namespace coil::onnx_internal
