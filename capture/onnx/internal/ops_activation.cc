// Activation functions. Most map to one aten op; the ones whose ONNX parameters aten lacks
// (HardSigmoid's alpha/beta, Shrink's bias, Softsign, PRelu) are small compositions.
#include <cmath>

#include "capture/onnx/internal/op_table.h"

namespace coil::onnx_internal {
namespace {

absl::Status Emit(OnnxNode& n, absl::string_view op, AttrMap attrs = {}) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op(op, {x}, std::move(attrs)));
  return n.SetOutput(0, y);
}

absl::Status ImportLeakyRelu(OnnxNode& n) {
  return Emit(n, "aten.leaky_relu", {{"negative_slope", n.Float("alpha", 0.01)}});
}

absl::Status ImportElu(OnnxNode& n) { return Emit(n, "aten.elu", {{"alpha", n.Float("alpha", 1.0)}}); }

absl::Status ImportSelu(OnnxNode& n) {
  // gamma * (x > 0 ? x : alpha * (exp(x) - 1)) is elu with scale = gamma.
  return Emit(n, "aten.elu", {{"alpha", n.Float("alpha", 1.67326319217681884765625)},
                              {"scale", n.Float("gamma", 1.05070102214813232421875)}});
}

absl::Status ImportCelu(OnnxNode& n) {
  const double alpha = n.Float("alpha", 1.0);
  if (alpha == 0) return n.Invalid("alpha must not be 0");
  return Emit(n, "aten.celu", {{"alpha", alpha}});
}

absl::Status ImportThresholdedRelu(OnnxNode& n) {
  return Emit(n, "aten.threshold", {{"threshold", n.Float("alpha", 1.0)}, {"value", 0.0}});
}

absl::Status ImportHardSigmoid(OnnxNode& n) {
  // max(0, min(1, alpha * x + beta))
  const double alpha = n.Float("alpha", 0.2), beta = n.Float("beta", 0.5);
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.mul_scalar", {x}, {{"other", alpha}}));
  COIL_ASSIGN_OR_RETURN(y, n.Op("aten.add_scalar", {y}, {{"other", beta}}));
  COIL_ASSIGN_OR_RETURN(y, n.Op("aten.clamp", {y}, {{"min", 0.0}, {"max", 1.0},
                                                    {"has_min", true}, {"has_max", true}}));
  return n.SetOutput(0, y);
}

absl::Status ImportSoftsign(OnnxNode& n) {
  // x / (1 + |x|)
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* d, n.Op("aten.abs", {x}));
  COIL_ASSIGN_OR_RETURN(d, n.Op("aten.add_scalar", {d}, {{"other", 1.0}}));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.div", {x, d}));
  return n.SetOutput(0, y);
}

absl::Status ImportSoftplus(OnnxNode& n) {
  // log(1 + exp(x)); torch's threshold 20 returns x beyond it (within float rounding).
  return Emit(n, "aten.softplus", {{"beta", 1.0}, {"threshold", 20.0}});
}

absl::Status ImportPRelu(OnnxNode& n) {
  // x < 0 ? slope * x : x, slope broadcast to x.
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* slope, n.In(1));
  // Opset < 7 (and exporters since): a 1-D slope of C entries is per channel (dimension 1).
  const TensorType& xt = x->type();
  if (slope->type().rank() == 1 && xt.rank() > 2 && slope->type().shape[0] != SymExpr(1) &&
      slope->type().shape[0] == xt.shape[1] && slope->type().shape[0] != xt.shape[xt.rank() - 1]) {
    SymList shape = {slope->type().shape[0]};
    for (int64_t d = 2; d < xt.rank(); ++d) shape.push_back(1);
    COIL_ASSIGN_OR_RETURN(slope, n.Op("aten.reshape", {slope}, {{"shape", shape}}));
  }
  COIL_ASSIGN_OR_RETURN(Value* neg, n.Op("aten.lt_scalar", {x}, {{"other", 0.0}}));
  COIL_ASSIGN_OR_RETURN(Value* scaled, n.Op("aten.mul", {x, slope}));
  COIL_ASSIGN_OR_RETURN(scaled, n.Cast(scaled, x->type().dtype));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.where", {neg, scaled, x}));
  if (y->type().shape != x->type().shape) {
    return n.Invalid("slope must broadcast to the input's shape");
  }
  return n.SetOutput(0, y);
}

absl::Status ImportShrink(OnnxNode& n) {
  // x < -lambd ? x + bias : (x > lambd ? x - bias : 0)
  const double lambd = n.Float("lambd", 0.5), bias = n.Float("bias", 0.0);
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const DType t = x->type().dtype;
  COIL_ASSIGN_OR_RETURN(Value* lo, n.Op("aten.lt_scalar", {x}, {{"other", -lambd}}));
  COIL_ASSIGN_OR_RETURN(Value* hi, n.Op("aten.gt_scalar", {x}, {{"other", lambd}}));
  COIL_ASSIGN_OR_RETURN(Value* plus, n.Op("aten.add_scalar", {x}, {{"other", bias}}));
  COIL_ASSIGN_OR_RETURN(Value* minus, n.Op("aten.sub_scalar", {x}, {{"other", bias}}));
  COIL_ASSIGN_OR_RETURN(plus, n.Cast(plus, t));
  COIL_ASSIGN_OR_RETURN(minus, n.Cast(minus, t));
  COIL_ASSIGN_OR_RETURN(Value* zero, n.Op("aten.zeros_like", {x}, {{"dtype", t}, {"has_dtype", true}}));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.where", {hi, minus, zero}));
  COIL_ASSIGN_OR_RETURN(y, n.Op("aten.where", {lo, plus, y}));
  return n.SetOutput(0, y);
}

absl::Status ImportGelu(OnnxNode& n) {
  std::string approximate = n.String("approximate", "none");
  if (approximate != "none" && approximate != "tanh") return n.UnsupportedAttr("approximate", approximate);
  return Emit(n, "aten.gelu", {{"approximate", approximate}});
}

}  // namespace

void RegisterActivationOps(OpTable& t) {
  t["Relu"].emit = [](OnnxNode& n) { return Emit(n, "aten.relu"); };
  t["Sigmoid"].emit = [](OnnxNode& n) { return Emit(n, "aten.sigmoid"); };
  t["HardSwish"].emit = [](OnnxNode& n) { return Emit(n, "aten.hardswish"); };
  t["Mish"].emit = [](OnnxNode& n) { return Emit(n, "aten.mish"); };
  t["LeakyRelu"].emit = ImportLeakyRelu;
  t["Elu"].emit = ImportElu;
  t["Selu"].emit = ImportSelu;
  t["Celu"].emit = ImportCelu;
  t["ThresholdedRelu"].emit = ImportThresholdedRelu;
  t["HardSigmoid"].emit = ImportHardSigmoid;
  t["Softsign"].emit = ImportSoftsign;
  t["Softplus"].emit = ImportSoftplus;
  t["PRelu"].emit = ImportPRelu;
  t["Shrink"].emit = ImportShrink;
  t["Gelu"].emit = ImportGelu;
}

}  // namespace coil::onnx_internal
