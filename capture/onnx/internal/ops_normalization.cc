// Normalization: BatchNormalization (inference), InstanceNormalization, LayerNormalization,
// GroupNormalization, LpNormalization, MeanVarianceNormalization, LRN.
#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/op_table.h"

namespace coil::onnx_internal {
namespace {

absl::Status ImportBatchNorm(OnnxNode& n) {
  if (n.Int("training_mode", 0) != 0) return n.UnsupportedAttr("training_mode", "1");
  for (int i = 1; i < n.num_outputs(); ++i) {
    if (n.wants_output(i)) return n.Unsupported("training outputs (running mean/var)");
  }
  std::vector<Value*> in;
  for (int i : {0, 3, 4, 1, 2}) {  // aten order: input, mean, var, weight, bias
    COIL_ASSIGN_OR_RETURN(Value* v, n.In(i));
    in.push_back(v);
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.batch_norm", in, {{"training", false},
                                                               {"eps", n.Float("epsilon", 1e-5)}}));
  return n.SetOutput(0, y);
}

absl::Status ImportInstanceNorm(OnnxNode& n) {
  std::vector<Value*> in;
  for (int i = 0; i < 3; ++i) {
    COIL_ASSIGN_OR_RETURN(Value* v, n.In(i));
    in.push_back(v);
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.instance_norm", in, {{"eps", n.Float("epsilon", 1e-5)}}));
  return n.SetOutput(0, y);
}

absl::Status ImportLayerNorm(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* scale, n.In(1));
  const TensorType xt = x->type();
  COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", -1), xt.rank()));
  const double eps = n.Float("epsilon", 1e-5);
  SymList normalized(xt.shape.begin() + axis, xt.shape.end());
  Value* bias = nullptr;
  if (n.has_input(2)) {
    COIL_ASSIGN_OR_RETURN(bias, n.In(2));
  }
  Value* y;
  const bool exact = scale->type().shape == normalized && (bias == nullptr || bias->type().shape == normalized);
  if (exact) {
    std::vector<Value*> in = {x, scale};
    if (bias != nullptr) in.push_back(bias);
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.layer_norm", in, {{"normalized_shape", normalized}, {"eps", eps}}));
  } else {
    // Scale and bias broadcast to the normalized shape.
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.layer_norm", {x}, {{"normalized_shape", normalized}, {"eps", eps}}));
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.mul", {y, scale}));
    if (bias != nullptr) {
      COIL_ASSIGN_OR_RETURN(y, n.Op("aten.add", {y, bias}));
    }
    COIL_ASSIGN_OR_RETURN(y, n.Cast(y, xt.dtype));
  }
  COIL_RETURN_IF_ERROR(n.SetOutput(0, y));
  if (n.wants_output(1) || n.wants_output(2)) {
    IntList dims;
    for (int64_t d = axis; d < xt.rank(); ++d) dims.push_back(d);
    COIL_ASSIGN_OR_RETURN(Value* xf, n.Cast(x, proto::FLOAT32));
    COIL_ASSIGN_OR_RETURN(Value* mean, n.Op("aten.mean", {xf}, {{"dim", dims}, {"keepdim", true}}));
    COIL_RETURN_IF_ERROR(n.SetOutput(1, mean));
    if (n.wants_output(2)) {
      COIL_ASSIGN_OR_RETURN(Value* var, n.Op("aten.var", {xf}, {{"dim", dims}, {"correction", int64_t{0}},
                                                                {"keepdim", true}}));
      COIL_ASSIGN_OR_RETURN(var, n.Op("aten.add_scalar", {var}, {{"other", eps}}));
      COIL_ASSIGN_OR_RETURN(Value* inv, n.Op("aten.rsqrt", {var}));
      COIL_RETURN_IF_ERROR(n.SetOutput(2, inv));
    }
  }
  return absl::OkStatus();
}

absl::Status ImportGroupNorm(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* scale, n.In(1));
  COIL_ASSIGN_OR_RETURN(Value* bias, n.In(2));
  const int64_t groups = n.Int("num_groups", 0);
  if (groups <= 0) return n.Invalid("num_groups must be positive");
  const TensorType& xt = x->type();
  if (xt.rank() < 2) return n.Invalid("input must have a channel dimension");
  const SymExpr channels = xt.shape[1];
  // Opset 18 gives one scale/bias per group: repeat each over its channels.
  if (scale->type().NumElements() == SymExpr(groups) && channels != SymExpr(groups)) {
    const SymExpr per = SymExpr::FloorDiv(channels, groups);
    for (Value** v : {&scale, &bias}) {
      COIL_ASSIGN_OR_RETURN(*v, n.Op("aten.reshape", {*v}, {{"shape", SymList{groups, 1}}}));
      COIL_ASSIGN_OR_RETURN(*v, n.Op("aten.expand", {*v}, {{"size", SymList{groups, per}}}));
      COIL_ASSIGN_OR_RETURN(*v, n.Op("aten.reshape", {*v}, {{"shape", SymList{channels}}}));
    }
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.group_norm", {x, scale, bias},
                                       {{"num_groups", groups}, {"eps", n.Float("epsilon", 1e-5)}}));
  return n.SetOutput(0, y);
}

absl::Status ImportLpNorm(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", -1), x->type().rank()));
  const int64_t p = n.Int("p", 2);
  if (p != 1 && p != 2) return n.UnsupportedAttr("p", absl::StrCat(p));
  Value* norm;
  if (p == 1) {
    COIL_ASSIGN_OR_RETURN(Value* a, n.Op("aten.abs", {x}));
    COIL_ASSIGN_OR_RETURN(norm, n.Op("aten.sum", {a}, {{"dim", IntList{axis}}, {"keepdim", true}}));
  } else {
    COIL_ASSIGN_OR_RETURN(Value* sq, n.Op("aten.mul", {x, x}));
    COIL_ASSIGN_OR_RETURN(norm, n.Op("aten.sum", {sq}, {{"dim", IntList{axis}}, {"keepdim", true}}));
    COIL_ASSIGN_OR_RETURN(norm, n.Op("aten.sqrt", {norm}));
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.div", {x, norm}));
  return n.SetOutput(0, y);
}

absl::Status ImportMvn(OnnxNode& n) {
  // (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9) over `axes`.
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  IntList dims;
  for (int64_t a : n.Ints("axes", {0, 2, 3})) {
    COIL_ASSIGN_OR_RETURN(int64_t d, n.Axis(a, x->type().rank()));
    dims.push_back(d);
  }
  AttrMap attrs = {{"dim", dims}, {"keepdim", true}};
  COIL_ASSIGN_OR_RETURN(Value* mean, n.Op("aten.mean", {x}, attrs));
  COIL_ASSIGN_OR_RETURN(Value* d, n.Op("aten.sub", {x, mean}));
  COIL_ASSIGN_OR_RETURN(Value* sq, n.Op("aten.mul", {d, d}));
  COIL_ASSIGN_OR_RETURN(Value* var, n.Op("aten.mean", {sq}, attrs));
  COIL_ASSIGN_OR_RETURN(Value* sd, n.Op("aten.sqrt", {var}));
  COIL_ASSIGN_OR_RETURN(sd, n.Op("aten.add_scalar", {sd}, {{"other", 1e-9}}));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.div", {d, sd}));
  return n.SetOutput(0, y);
}

absl::Status ImportLrn(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const int64_t size = n.Int("size", 0);
  if (size <= 0) return n.Invalid("size must be positive");
  if (size % 2 == 0) return n.UnsupportedAttr("size", absl::StrCat(size, " (even)"));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.local_response_norm", {x},
                                       {{"size", size}, {"alpha", n.Float("alpha", 1e-4)},
                                        {"beta", n.Float("beta", 0.75)}, {"k", n.Float("bias", 1.0)}}));
  return n.SetOutput(0, y);
}

}  // namespace

void RegisterNormalizationOps(OpTable& t) {
  t["BatchNormalization"].emit = ImportBatchNorm;
  t["InstanceNormalization"].emit = ImportInstanceNorm;
  t["LayerNormalization"].emit = ImportLayerNorm;
  t["GroupNormalization"].emit = ImportGroupNorm;
  t["LpNormalization"].emit = ImportLpNorm;
  t["MeanVarianceNormalization"].emit = ImportMvn;
  t["LRN"].emit = ImportLrn;
}

}  // namespace coil::onnx_internal
