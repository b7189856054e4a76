// Decompositions of scaled_dot_product_attention (matmuls and a softmax) and of the 2-D
// upsampling ops (gathers at iota-computed source indices, linear interpolation).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ir/dtype.h"
#include "prims/decomposition_registry.h"
#include "prims/decompositions/nn_internal.h"

namespace coil::prims::nn_internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// numpy broadcasting of two shapes known to broadcast (checked by the op's meta).
SymList BroadcastShape(const SymList& a, const SymList& b) {
  size_t n = std::max(a.size(), b.size());
  SymList out(n, SymExpr(1));
  for (size_t i = 0; i < n; ++i) {
    const SymExpr* x = i < a.size() ? &a[a.size() - 1 - i] : nullptr;
    const SymExpr* y = i < b.size() ? &b[b.size() - 1 - i] : nullptr;
    out[n - 1 - i] = x == nullptr || *x == SymExpr(1) ? (y ? *y : *x) : *x;
  }
  return out;
}

SymList Batch(const Val& x) { return SymList(x.shape().begin(), x.shape().end() - 2); }

// scaled_dot_product_attention(q, k, v, mask?, dropout_p=0, is_causal, scale) ->
//   softmax(q @ k^T * scale (+ mask | masked -inf), -1) @ v, in f32 for f16/bf16
std::vector<Val> Sdpa(const OpCall& c) {
  if (c.Float("dropout_p") != 0) {
    c.e().Fail("aten.scaled_dot_product_attention: dropout_p != 0 needs a seed (the op has none)");
    return {};
  }
  Emitter& e = c.e();
  Val q = Upcast(c.in(0)), k = Upcast(c.in(1)), v = Upcast(c.in(2));
  SymExpr l = q.size(-2), s = k.size(-2);
  SymList scores_shape = BroadcastShape(Batch(q), Batch(k));
  scores_shape.push_back(l);
  scores_shape.push_back(s);
  Val scores = Matmul(q, Transpose(k, -2, -1), scores_shape);
  double scale = c.Float("scale");
  if (scale != 0) {
    scores = scores * scale;
  } else if (q.size(-1).is_constant()) {
    scores = scores * (1.0 / std::sqrt(static_cast<double>(q.size(-1).constant())));
  } else {
    scores = scores * Rsqrt(SymValue(e, q.size(-1), q.dtype()));
  }
  if (c.Bool("is_causal")) {  // top-left aligned: key j is hidden from query i when j > i
    Val i = Unsqueeze(Iota(e, l, 0, 1, proto::INT64), 1);
    Val j = Unsqueeze(Iota(e, s, 0, 1, proto::INT64), 0);
    scores = Where(Gt(j, i), -kInf, scores);
  }
  if (c.has_in(3)) {
    Val mask = c.in(3);
    scores = IsBool(mask.dtype()) ? Where(mask, scores, -kInf) : scores + Upcast(mask);
  }
  // A fully masked row has max -inf, so exp(-inf - -inf) = NaN: NaN out, as PyTorch.
  Val ex = Exp(scores - Amax(scores, {-1}, /*keepdim=*/true));
  Val p = ex / Sum(ex, {-1}, /*keepdim=*/true);
  return {Cast(Matmul(p, v, c.out_shape()), c.out_dtype())};
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

void RegisterMiscDecompositions(DecompositionRegistry& r) {
  // scaled_dot_product_attention(q, k, v, mask?) -> softmax(q @ k^T * scale + mask) @ v
  r.Add("aten.scaled_dot_product_attention", Sdpa);
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
}

}  // namespace coil::prims::nn_internal
