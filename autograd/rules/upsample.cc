// Derivative rules of upsample_nearest2d and upsample_bilinear2d (ir/ops/nn_ops_upsample.cc).
// Both are separable gathers along H and W at source indices computed as PyTorch's CPU kernel
// and prims' decomposition compute them (scales rounded to the computing dtype), so the
// input's gradient sums g (times the interpolation weights) into those positions:
// index_put(zeros, src, g, dim, accumulate=true) per axis.
//   nearest:  src = min(floor(o * scale), in - 1), scale = in / out or 1 / scale_factor (f32)
//   bilinear: src = scale * o (align_corners) or max(scale * (o + 0.5) - 0.5, 0);
//             i0 = trunc(src), i1 = min(i0 + 1, in - 1), w = clamp(src - i0, 0, 1):
//             x[i0] <- g (1 - w), x[i1] <- g w; in == out copies
#include <cstdint>
#include <vector>

#include "autograd/derivative_registry.h"
#include "autograd/rules/register.h"

namespace coil::autograd {
namespace {

using namespace coil::prims;  // NOLINT: the rule language

// The forward's nearest source index of each output position along one axis.
Val NearestIndex(Emitter& e, const SymExpr& in, const SymExpr& out, double scale_factor) {
  const DType f32 = proto::FLOAT32;
  Val scale;
  if (scale_factor > 0) {
    scale = Full(e, {}, static_cast<double>(static_cast<float>(1.0 / scale_factor)), f32);
  } else if (in.is_constant() && out.is_constant()) {
    scale = Full(e, {},
                 static_cast<double>(static_cast<float>(in.constant()) /
                                     static_cast<float>(out.constant())),
                 f32);
  } else {
    scale = SymValue(e, in, f32) / SymValue(e, out, f32);
  }
  Val o = Cast(Iota(e, out, 0, 1, proto::INT64), f32);
  Val src = Cast(Floor(o * scale), proto::INT64);
  return Minimum(src, SymValue(e, in, proto::INT64) - 1.0);
}

// num / den as a rank-0 tensor of dtype t, rounded as PyTorch's CPU kernel computes it in t.
Val Ratio(Emitter& e, const SymExpr& num, const SymExpr& den, DType t) {
  if (num.is_constant() && den.is_constant()) {
    double n = static_cast<double>(num.constant()), d = static_cast<double>(den.constant());
    double v = t == proto::FLOAT64 ? n / d
                                   : static_cast<double>(static_cast<float>(n) /
                                                         static_cast<float>(d));
    return Full(e, {}, v, t);
  }
  return SymValue(e, num, t) / SymValue(e, den, t);
}

// g [.., out, ..] summed into zeros [.., in, ..] along `axis` at `idx` [out].
Val AddAt(Emitter& e, Val g, int64_t axis, const SymExpr& in, Val idx) {
  SymList shape = g.shape();
  shape[axis] = in;
  return e.Op1("aten.index_put", {Full(e, shape, 0.0, g.dtype()), idx, g},
               {{"dim", axis}, {"accumulate", true}});
}

// The gradient through linear interpolation along `axis` (g of compute dtype t).
Val LerpAxisGrad(Emitter& e, Val g, int64_t axis, const SymExpr& in, bool align_corners,
                 double scale_factor) {
  DType t = g.dtype();
  SymExpr out = g.size(axis);
  if (in == out) return g;
  Val scale;
  if (align_corners) {
    scale = Ratio(e, in - 1, SymExpr::Max(out - 1, 1), t);
  } else if (scale_factor > 0) {
    double v = 1.0 / scale_factor;
    scale = Full(e, {}, t == proto::FLOAT64 ? v : static_cast<double>(static_cast<float>(v)), t);
  } else {
    scale = Ratio(e, in, out, t);
  }
  Val o = Cast(Iota(e, out, 0, 1, proto::INT64), t);
  Val src = align_corners ? scale * o : Maximum(scale * (o + 0.5) - 0.5, 0.0);
  Val last = SymValue(e, in, proto::INT64) - 1.0;
  Val i0 = Minimum(Cast(src, proto::INT64), last);
  Val i1 = Minimum(i0 + 1.0, last);
  Val w = Minimum(Maximum(src - Cast(i0, t), 0.0), 1.0);
  if (!in.is_constant() || !out.is_constant()) {  // sizes equal at run time copy
    Val same = Eq(SymValue(e, in, proto::INT64), SymValue(e, out, proto::INT64));
    Val oi = Iota(e, out, 0, 1, proto::INT64);
    i0 = Where(same, oi, i0);
    i1 = Where(same, oi, i1);
    w = Where(same, 0.0, w);
  }
  Val wb = BroadcastInDim(w, g.shape(), {axis});
  return AddAt(e, g * (1.0 - wb), axis, in, i0) + AddAt(e, g * wb, axis, in, i1);
}

}  // namespace

void RegisterUpsampleRules(DerivativeRegistry& r) {
  // upsample_bilinear2d(x): per axis (W, then H), g times the weights summed into i0 and i1
  r.Add("aten.upsample_bilinear2d", [](const GradCall& c) -> std::vector<Val> {
    Emitter& e = c.e();
    Val x = c.in(0), g = c.grad();
    FloatList scales = c.Floats("scale_factors");
    for (int64_t axis = 3; axis >= 2; --axis) {
      g = LerpAxisGrad(e, g, axis, x.size(axis), c.Bool("align_corners"),
                       scales.empty() ? 0.0 : scales[axis - 2]);
    }
    return {g};
  });
  // upsample_nearest2d(x): per axis (W, then H), g summed into the source positions
  r.Add("aten.upsample_nearest2d", [](const GradCall& c) -> std::vector<Val> {
    Emitter& e = c.e();
    Val x = c.in(0), g = c.grad();
    FloatList scales = c.Floats("scale_factors");
    for (int64_t axis = 3; axis >= 2; --axis) {
      Val idx = NearestIndex(e, x.size(axis), g.size(axis), scales.empty() ? 0.0 : scales[axis - 2]);
      SymList shape = g.shape();
      shape[axis] = x.size(axis);
      g = e.Op1("aten.index_put", {Full(e, shape, 0.0, g.dtype()), idx, g},
                {{"dim", axis}, {"accumulate", true}});
    }
    return {g};
  });
}

}  // namespace coil::autograd
