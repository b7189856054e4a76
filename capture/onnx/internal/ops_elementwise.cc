// Element-wise math, comparison, logical and selection ops: ONNX's same-type operands map
// directly onto aten ops (PyTorch broadcasting equals ONNX's multidirectional broadcasting);
// where aten would change the dtype (integer division, pow promotion) the result is cast
// back to ONNX's type.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/op_table.h"
#include "capture/onnx/internal/tensor_data.h"

namespace coil::onnx_internal {
namespace {

// y = op(x), cast back to x's dtype when aten changes it (and the result is not boolean).
OpHandler Unary(std::string op, bool bool_result = false) {
  return [op, bool_result](OnnxNode& n) -> absl::Status {
    COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
    COIL_ASSIGN_OR_RETURN(Value* y, n.Op(op, {x}));
    if (!bool_result) {
      COIL_ASSIGN_OR_RETURN(y, n.Cast(y, x->type().dtype));
    }
    return n.SetOutput(0, y);
  };
}

// z = op(x, y), cast back to x's dtype unless the result is boolean.
OpHandler Binary(std::string op, bool bool_result = false, AttrMap attrs = {}) {
  return [op, bool_result, attrs](OnnxNode& n) -> absl::Status {
    COIL_ASSIGN_OR_RETURN(Value* a, n.In(0));
    COIL_ASSIGN_OR_RETURN(Value* b, n.In(1));
    COIL_ASSIGN_OR_RETURN(Value* y, n.Op(op, {a, b}, attrs));
    if (!bool_result) {
      COIL_ASSIGN_OR_RETURN(y, n.Cast(y, a->type().dtype));
    }
    return n.SetOutput(0, y);
  };
}

// Max, Min, Sum, Mean over one or more inputs.
OpHandler Variadic(std::string op, bool mean = false) {
  return [op, mean](OnnxNode& n) -> absl::Status {
    if (n.num_inputs() == 0) return n.Invalid("needs at least one input");
    COIL_ASSIGN_OR_RETURN(Value* acc, n.In(0));
    const DType dtype = acc->type().dtype;
    for (int i = 1; i < n.num_inputs(); ++i) {
      COIL_ASSIGN_OR_RETURN(Value* x, n.In(i));
      COIL_ASSIGN_OR_RETURN(acc, n.Op(op, {acc, x}));
    }
    if (mean && n.num_inputs() > 1) {
      COIL_ASSIGN_OR_RETURN(acc, n.Op("aten.div_scalar", {acc},
                                      {{"other", static_cast<double>(n.num_inputs())}}));
    }
    if (n.num_inputs() == 1) {
      // A lone input is copied so that the output is its own value.
      COIL_ASSIGN_OR_RETURN(acc, n.Op("aten.clone", {acc}));
    }
    COIL_ASSIGN_OR_RETURN(acc, n.Cast(acc, dtype));
    return n.SetOutput(0, acc);
  };
}

absl::Status ImportDiv(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* a, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* b, n.In(1));
  const DType t = a->type().dtype;
  AttrMap attrs;
  if (!IsFloating(t)) attrs["rounding_mode"] = std::string("trunc");  // ONNX integer division
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.div", {a, b}, attrs));
  COIL_ASSIGN_OR_RETURN(y, n.Cast(y, t));
  return n.SetOutput(0, y);
}

absl::Status ImportMod(OnnxNode& n) {
  const bool fmod = n.Int("fmod", 0) != 0;
  COIL_ASSIGN_OR_RETURN(TensorType t, n.InType(0));
  if (!fmod && IsFloating(t.dtype)) return n.Invalid("fmod must be 1 for floating-point inputs");
  return Binary(fmod ? "aten.fmod" : "aten.remainder")(n);
}

absl::Status ImportClip(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const DType t = x->type().dtype;
  Value* lo = nullptr;
  Value* hi = nullptr;
  if (n.opset() < 11) {
    const double inf = std::numeric_limits<double>::infinity();
    double mn = n.Float("min", -inf), mx = n.Float("max", inf);
    if (mn != -inf) lo = n.Scalar(t, mn);
    if (mx != inf) hi = n.Scalar(t, mx);
  } else {
    if (n.has_input(1)) {
      COIL_ASSIGN_OR_RETURN(lo, n.In(1));
    }
    if (n.has_input(2)) {
      COIL_ASSIGN_OR_RETURN(hi, n.In(2));
    }
  }
  for (Value* bound : {lo, hi}) {
    if (bound != nullptr && bound->type().rank() != 0 &&
        !(bound->type().rank() == 1 && bound->type().shape[0] == SymExpr(1))) {
      return n.Invalid("min and max must be scalars");
    }
  }
  Value* y = x;
  // maximum/minimum with 0-D bounds of x's dtype: no promotion, exact for every type.
  if (lo != nullptr) {
    COIL_ASSIGN_OR_RETURN(lo, n.Cast(lo, t));
    if (lo->type().rank() == 1) {
      COIL_ASSIGN_OR_RETURN(lo, n.Op("aten.reshape", {lo}, {{"shape", SymList{}}}));
    }
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.maximum", {y, lo}));
  }
  if (hi != nullptr) {
    COIL_ASSIGN_OR_RETURN(hi, n.Cast(hi, t));
    if (hi->type().rank() == 1) {
      COIL_ASSIGN_OR_RETURN(hi, n.Op("aten.reshape", {hi}, {{"shape", SymList{}}}));
    }
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.minimum", {y, hi}));
  }
  if (y == x) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.clone", {x}));
  }
  return n.SetOutput(0, y);
}

absl::Status ImportCast(OnnxNode& n) {
  DType to;
  if (n.op_type() == "CastLike") {
    COIL_ASSIGN_OR_RETURN(TensorType like, n.InType(1));
    to = like.dtype;
  } else {
    if (!n.HasAttr("to")) return n.Invalid("attribute 'to' is required");
    absl::StatusOr<DType> t = DTypeFromOnnx(static_cast<int32_t>(n.Int("to", 0)));
    if (!t.ok()) return n.UnsupportedAttr("to", OnnxTypeName(static_cast<int32_t>(n.Int("to", 0))));
    to = *t;
  }
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.to_dtype", {x}, {{"dtype", to}}));
  return n.SetOutput(0, y);
}

absl::Status ImportWhere(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* c, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* a, n.In(1));
  COIL_ASSIGN_OR_RETURN(Value* b, n.In(2));
  COIL_ASSIGN_OR_RETURN(c, n.Cast(c, proto::BOOL));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.where", {c, a, b}));
  return n.SetOutput(0, y);
}

absl::Status ImportIsInf(OnnxNode& n) {
  const bool pos = n.Int("detect_positive", 1) != 0, neg = n.Int("detect_negative", 1) != 0;
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  Value* y;
  if (pos && neg) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.isinf", {x}));
  } else if (pos) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.isposinf", {x}));
  } else if (neg) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.isneginf", {x}));
  } else {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.zeros_like", {x}, {{"dtype", proto::BOOL}, {"has_dtype", true}}));
  }
  return n.SetOutput(0, y);
}

// Identity keeps known elements known.
absl::Status ImportIdentity(OnnxNode& n) {
  if (n.Known(0) != nullptr) {
    const OnnxTensor* t = n.ctx().Find(n.proto().input(0));
    OnnxTensor out = *t;
    n.ctx().Define(n.proto().output(0), std::move(out));
    return absl::OkStatus();
  }
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  return n.SetOutput(0, x);
}

absl::Status ImportDropout(OnnxNode& n) {
  if (n.opset() >= 12 && n.has_input(2)) {
    COIL_ASSIGN_OR_RETURN(double training, n.KnownScalar(2, "training_mode"));
    if (training != 0) return n.UnsupportedAttr("training_mode", "true");
  }
  COIL_RETURN_IF_ERROR(ImportIdentity(n));
  if (n.wants_output(1)) {
    COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
    COIL_ASSIGN_OR_RETURN(Value* mask, n.Op("aten.ones_like", {x}, {{"dtype", proto::BOOL},
                                                                   {"has_dtype", true}}));
    return n.SetOutput(1, mask);
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterElementwiseOps(OpTable& t) {
  for (const auto& [onnx, aten] : std::vector<std::pair<std::string, std::string>>{
           {"Abs", "aten.abs"},   {"Neg", "aten.neg"},     {"Acos", "aten.acos"},
           {"Acosh", "aten.acosh"}, {"Asin", "aten.asin"},   {"Asinh", "aten.asinh"},
           {"Atan", "aten.atan"},   {"Atanh", "aten.atanh"}, {"Cos", "aten.cos"},
           {"Cosh", "aten.cosh"},   {"Sin", "aten.sin"},     {"Sinh", "aten.sinh"},
           {"Tan", "aten.tan"},     {"Tanh", "aten.tanh"},   {"Exp", "aten.exp"},
           {"Log", "aten.log"},     {"Sqrt", "aten.sqrt"},   {"Erf", "aten.erf"},
           {"Ceil", "aten.ceil"},   {"Floor", "aten.floor"}, {"Round", "aten.round"},
           {"Sign", "aten.sign"},   {"Reciprocal", "aten.reciprocal"},
           {"BitwiseNot", "aten.bitwise_not"}}) {
    t[onnx].emit = Unary(aten);
  }
  t["Not"].emit = Unary("aten.logical_not", true);
  t["IsNaN"].emit = Unary("aten.isnan", true);
  t["IsInf"].emit = ImportIsInf;
  t["Add"].emit = Binary("aten.add");
  t["Sub"].emit = Binary("aten.sub");
  t["Mul"].emit = Binary("aten.mul");
  t["Div"].emit = ImportDiv;
  t["Pow"].emit = Binary("aten.pow");
  t["Mod"].emit = ImportMod;
  t["BitwiseAnd"].emit = Binary("aten.bitwise_and");
  t["BitwiseOr"].emit = Binary("aten.bitwise_or");
  t["BitwiseXor"].emit = Binary("aten.bitwise_xor");
  t["And"].emit = Binary("aten.logical_and", true);
  t["Or"].emit = Binary("aten.logical_or", true);
  t["Xor"].emit = Binary("aten.logical_xor", true);
  t["Equal"].emit = Binary("aten.eq", true);
  t["Greater"].emit = Binary("aten.gt", true);
  t["Less"].emit = Binary("aten.lt", true);
  t["GreaterOrEqual"].emit = Binary("aten.ge", true);
  t["LessOrEqual"].emit = Binary("aten.le", true);
  t["Max"].emit = Variadic("aten.maximum");
  t["Min"].emit = Variadic("aten.minimum");
  t["Sum"].emit = Variadic("aten.add");
  t["Mean"].emit = Variadic("aten.add", /*mean=*/true);
  t["Clip"].emit = ImportClip;
  t["Cast"].emit = ImportCast;
  t["CastLike"].emit = ImportCast;
  t["Where"].emit = ImportWhere;
  t["Identity"].emit = ImportIdentity;
  t["Dropout"].emit = ImportDropout;
}

}  // namespace coil::onnx_internal
