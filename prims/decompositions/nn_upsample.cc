// Decompositions of the ops that resample NCHW images (ir/ops/nn_ops_upsample.cc): the 2-D
// upsampling ops (gathers at iota-computed source indices, linear interpolation) and pixel
// (un)shuffle (a reshape, permute, reshape).
#include <cstdint>
#include <vector>

#include "ir/dtype.h"
#include "prims/decomposition_registry.h"
#include "prims/decompositions/nn_internal.h"

namespace coil::prims::nn_internal {
namespace {

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

// 1 / scale_factor, as PyTorch's CPU kernel rounds it to t.
Val InverseScale(Emitter& e, double scale_factor, DType t) {
  double v = 1.0 / scale_factor;
  return Full(e, {}, t == proto::FLOAT64 ? v : static_cast<double>(static_cast<float>(v)), t);
}

Val OutIota(Emitter& e, const SymExpr& out, DType t) {
  return Cast(Iota(e, out, 0, 1, proto::INT64), t);
}

// x gathered along `axis` at the 1-D positions idx.
Val GatherAxis(Val x, int64_t axis, Val idx) {
  SymList shape = x.shape();
  shape[axis] = idx.size(0);
  return Gather(x, axis, BroadcastInDim(idx, shape, {axis}));
}

// Nearest source index of each output position: min(floor(o * scale), in - 1), in f32.
Val NearestIndex(Emitter& e, const SymExpr& in, const SymExpr& out, double scale_factor) {
  const DType f32 = proto::FLOAT32;
  Val scale = scale_factor > 0 ? InverseScale(e, scale_factor, f32) : Ratio(e, in, out, f32);
  Val src = Floor(OutIota(e, out, f32) * scale);
  return Minimum(Cast(src, proto::INT64), Int64Of(e, in) - 1.0);
}

// Linear interpolation along `axis` (x of compute dtype t): out[o] = x[i0] * (1 - w) + x[i1] * w
// with src = scale * o (align_corners) or max(scale * (o + 0.5) - 0.5, 0), i0 = trunc(src),
// i1 = min(i0 + 1, in - 1), w = clamp(src - i0, 0, 1); in == out copies.
Val LerpAxis(Val x, int64_t axis, const SymExpr& out, bool align_corners, double scale_factor) {
  Emitter& e = x.emitter();
  DType t = x.dtype();
  SymExpr in = x.size(axis);
  if (in == out) return x;
  Val scale = align_corners  ? Ratio(e, in - 1, SymExpr::Max(out - 1, 1), t)
              : scale_factor > 0 ? InverseScale(e, scale_factor, t)
                                 : Ratio(e, in, out, t);
  Val o = OutIota(e, out, t);
  Val src = align_corners ? scale * o : Maximum(scale * (o + 0.5) - 0.5, 0.0);
  Val last = Int64Of(e, in) - 1.0;
  Val i0 = Minimum(Cast(src, proto::INT64), last);
  Val i1 = Minimum(i0 + 1.0, last);
  Val w = Minimum(Maximum(src - Cast(i0, t), 0.0), 1.0);
  if (!in.is_constant() || !out.is_constant()) {  // sizes equal at run time copy
    Val same = Eq(Int64Of(e, in), Int64Of(e, out));
    Val oi = Iota(e, out, 0, 1, proto::INT64);
    i0 = Where(same, oi, i0);
    i1 = Where(same, oi, i1);
    w = Where(same, 0.0, w);
  }
  SymList shape = x.shape();
  shape[axis] = out;
  Val wb = BroadcastInDim(w, shape, {axis});
  return GatherAxis(x, axis, i0) * (1.0 - wb) + GatherAxis(x, axis, i1) * wb;
}

double ScaleFactor(const OpCall& c, int64_t i) {
  FloatList f = c.Floats("scale_factors");
  return f.empty() ? 0.0 : f[i];
}

}  // namespace

void RegisterUpsampleDecompositions(DecompositionRegistry& r) {
  // upsample_nearest2d(x) -> x gathered on H and W at min(floor(o * scale), in - 1)
  r.Add("aten.upsample_nearest2d", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    for (int64_t axis = 2; axis < 4; ++axis) {
      x = GatherAxis(x, axis,
                     NearestIndex(c.e(), x.size(axis), c.out_shape()[axis],
                                  ScaleFactor(c, axis - 2)));
    }
    return {x};
  });
  // upsample_bilinear2d(x) -> linear interpolation along H, then along W
  r.Add("aten.upsample_bilinear2d", [](const OpCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0));
    for (int64_t axis = 2; axis < 4; ++axis) {
      x = LerpAxis(x, axis, c.out_shape()[axis], c.Bool("align_corners"),
                   ScaleFactor(c, axis - 2));
    }
    return {Cast(x, c.out_dtype())};
  });
  // pixel_shuffle(x [*, C*r*r, H, W], r) -> reshape [*, C, r, r, H, W], permute
  //   [*, C, H, r, W, r], reshape [*, C, H*r, W*r]
  r.Add("aten.pixel_shuffle", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    int64_t rf = c.Int("upscale_factor"), n = x.rank();
    SymList lead(x.shape().begin(), x.shape().end() - 3);
    SymList split = lead;
    split.insert(split.end(), {c.out_shape()[n - 3], rf, rf, x.size(-2), x.size(-1)});
    IntList perm;
    for (int64_t i = 0; i < n - 3; ++i) perm.push_back(i);
    int64_t b = n - 3;
    perm.insert(perm.end(), {b, b + 3, b + 1, b + 4, b + 2});
    return {Reshape(Permute(Reshape(x, split), perm), c.out_shape())};
  });
  // pixel_unshuffle(x [*, C, H*r, W*r], r) -> reshape [*, C, H, r, W, r], permute
  //   [*, C, r, r, H, W], reshape [*, C*r*r, H, W]
  r.Add("aten.pixel_unshuffle", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    int64_t rf = c.Int("downscale_factor"), n = x.rank();
    SymList split(x.shape().begin(), x.shape().end() - 3);
    split.insert(split.end(), {x.size(-3), c.out_shape()[n - 2], rf, c.out_shape()[n - 1], rf});
    IntList perm;
    for (int64_t i = 0; i < n - 3; ++i) perm.push_back(i);
    int64_t b = n - 3;
    perm.insert(perm.end(), {b, b + 2, b + 4, b + 1, b + 3});
    return {Reshape(Permute(Reshape(x, split), perm), c.out_shape())};
  });
}

}  // namespace coil::prims::nn_internal
