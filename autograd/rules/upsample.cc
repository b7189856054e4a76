// Derivative rule of upsample_nearest2d (ir/ops/nn_ops_upsample.cc): the forward gathers along
// H and W at src = min(floor(o * scale), in - 1) (scale = in / out, or 1 / scale_factor, in f32
// as PyTorch's CPU kernel and prims' decomposition compute it), so the input's gradient sums g
// into those positions: index_put(zeros, src, g, dim, accumulate=true) per axis.
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

}  // namespace

void RegisterUpsampleRules(DerivativeRegistry& r) {
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
