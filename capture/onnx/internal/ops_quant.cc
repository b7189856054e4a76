// Linear quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (8-bit
// integer types only), composed from element-wise aten ops. Rounding is half to even.
#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/op_table.h"

namespace coil::onnx_internal {
namespace {

// A per-axis (1-D) scale or zero point reshaped to broadcast along `axis` of x.
absl::StatusOr<Value*> AlongAxis(OnnxNode& n, Value* v, const TensorType& x) {
  if (v->type().rank() == 0 || (v->type().rank() == 1 && v->type().shape[0] == SymExpr(1) && x.rank() != 1)) {
    return v;
  }
  if (v->type().rank() != 1) return n.Unsupported("blocked quantization");
  COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 1), x.rank()));
  SymList shape(x.rank(), SymExpr(1));
  shape[axis] = v->type().shape[0];
  return n.Op("aten.reshape", {v}, {{"shape", shape}});
}

absl::StatusOr<Value*> Saturate(OnnxNode& n, Value* v, DType to) {
  const double lo = to == proto::UINT8 ? 0 : -128, hi = to == proto::UINT8 ? 255 : 127;
  COIL_ASSIGN_OR_RETURN(v, n.Op("aten.clamp", {v}, {{"min", lo}, {"max", hi}, {"has_min", true}, {"has_max", true}}));
  return n.Cast(v, to);
}

absl::Status ImportQuantize(OnnxNode& n) {
  if (n.Int("block_size", 0) != 0) return n.UnsupportedAttr("block_size", absl::StrCat(n.Int("block_size", 0)));
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* scale, n.In(1));
  DType to = proto::UINT8;
  Value* zp = nullptr;
  if (n.has_input(2)) {
    COIL_ASSIGN_OR_RETURN(zp, n.In(2));
    to = zp->type().dtype;
  }
  if (to != proto::UINT8 && to != proto::INT8) return n.Unsupported(absl::StrCat("element type ", DTypeName(to)));
  COIL_ASSIGN_OR_RETURN(scale, AlongAxis(n, scale, x->type()));
  COIL_ASSIGN_OR_RETURN(Value* q, n.Op("aten.div", {x, scale}));
  COIL_ASSIGN_OR_RETURN(q, n.Op("aten.round", {q}));
  if (zp != nullptr) {
    COIL_ASSIGN_OR_RETURN(zp, AlongAxis(n, zp, x->type()));
    COIL_ASSIGN_OR_RETURN(Value* zf, n.Cast(zp, q->type().dtype));
    COIL_ASSIGN_OR_RETURN(q, n.Op("aten.add", {q, zf}));
  }
  COIL_ASSIGN_OR_RETURN(Value* y, Saturate(n, q, to));
  return n.SetOutput(0, y);
}

absl::Status ImportDequantize(OnnxNode& n) {
  if (n.Int("block_size", 0) != 0) return n.UnsupportedAttr("block_size", absl::StrCat(n.Int("block_size", 0)));
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* scale, n.In(1));
  const DType xd = x->type().dtype;
  if (xd != proto::UINT8 && xd != proto::INT8 && xd != proto::INT32) {
    return n.Unsupported(absl::StrCat("element type ", DTypeName(xd)));
  }
  const DType out = scale->type().dtype;
  COIL_ASSIGN_OR_RETURN(scale, AlongAxis(n, scale, x->type()));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Cast(x, out));
  if (n.has_input(2)) {
    COIL_ASSIGN_OR_RETURN(Value* zp, n.In(2));
    COIL_ASSIGN_OR_RETURN(zp, AlongAxis(n, zp, x->type()));
    COIL_ASSIGN_OR_RETURN(zp, n.Cast(zp, out));
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.sub", {y, zp}));
  }
  COIL_ASSIGN_OR_RETURN(y, n.Op("aten.mul", {y, scale}));
  return n.SetOutput(0, y);
}

absl::Status ImportDynamicQuantize(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  AttrMap all = {{"dim", IntList{}}, {"keepdim", false}};
  COIL_ASSIGN_OR_RETURN(Value* mx, n.Op("aten.amax", {x}, all));
  COIL_ASSIGN_OR_RETURN(mx, n.Op("aten.clamp_min", {mx}, {{"min", 0.0}}));
  COIL_ASSIGN_OR_RETURN(Value* mn, n.Op("aten.amin", {x}, all));
  COIL_ASSIGN_OR_RETURN(mn, n.Op("aten.clamp_max", {mn}, {{"max", 0.0}}));
  COIL_ASSIGN_OR_RETURN(Value* scale, n.Op("aten.sub", {mx, mn}));
  COIL_ASSIGN_OR_RETURN(scale, n.Op("aten.div_scalar", {scale}, {{"other", 255.0}}));
  COIL_ASSIGN_OR_RETURN(Value* zpf, n.Op("aten.div", {mn, scale}));
  COIL_ASSIGN_OR_RETURN(zpf, n.Op("aten.neg", {zpf}));
  COIL_ASSIGN_OR_RETURN(zpf, n.Op("aten.round", {zpf}));
  COIL_ASSIGN_OR_RETURN(zpf, n.Op("aten.clamp", {zpf}, {{"min", 0.0}, {"max", 255.0}, {"has_min", true},
                                                        {"has_max", true}}));
  COIL_ASSIGN_OR_RETURN(Value* q, n.Op("aten.div", {x, scale}));
  COIL_ASSIGN_OR_RETURN(q, n.Op("aten.round", {q}));
  COIL_ASSIGN_OR_RETURN(q, n.Op("aten.add", {q, zpf}));
  COIL_ASSIGN_OR_RETURN(Value* y, Saturate(n, q, proto::UINT8));
  COIL_ASSIGN_OR_RETURN(Value* zp, n.Cast(zpf, proto::UINT8));
  COIL_RETURN_IF_ERROR(n.SetOutput(0, y));
  COIL_RETURN_IF_ERROR(n.SetOutput(1, scale));
  return n.SetOutput(2, zp);
}

}  // namespace

void RegisterQuantOps(OpTable& t) {
  t["QuantizeLinear"].emit = ImportQuantize;
  t["DequantizeLinear"].emit = ImportDequantize;
  t["DynamicQuantizeLinear"].emit = ImportDynamicQuantize;
}

}  // namespace coil::onnx_internal
