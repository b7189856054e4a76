// Decomposition of scaled_dot_product_attention (ir/ops/nn_ops_attention.cc): matmuls, a
// softmax and, with train=true and dropout_p > 0, aten.dropout's mask on the weights.
#include <algorithm>
#include <cmath>
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

// scaled_dot_product_attention(q, k, v, mask?, dropout_p, is_causal, scale, train, seed, offset)
//   -> dropout(softmax(q @ k^T * scale (+ mask | masked -inf), -1)) @ v, in f32 for f16/bf16;
// dropout as aten.dropout's decomposition, over the weights broadcast to [batch..., L, S]:
//   where(philox_uniform([batch..., L, S], seed, offset, f32) < 1 - p, w * (1 / (1 - p)), 0)
// (p = 1: zeros), so autograd's rule draws the same mask again from (seed, offset).
std::vector<Val> Sdpa(const OpCall& c) {
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
  const double dropout = c.Bool("train") ? c.Float("dropout_p") : 0.0;
  if (dropout > 0) {
    SymList weights(c.out_shape().begin(), c.out_shape().end() - 2);
    weights.push_back(l);
    weights.push_back(s);
    p = BroadcastTo(p, weights);
    if (dropout == 1) {
      p = FullLike(p, 0.0);
    } else {
      Val u = PhiloxUniform(e, weights, c.Int("seed"), c.Sym("offset"), proto::FLOAT32);
      p = Where(Lt(u, 1 - dropout), p * (1 / (1 - dropout)), 0.0);
    }
  }
  return {Cast(Matmul(p, v, c.out_shape()), c.out_dtype())};
}

}  // namespace

void RegisterAttentionDecompositions(DecompositionRegistry& r) {
  // scaled_dot_product_attention(q, k, v, mask?) -> softmax(q @ k^T * scale + mask) @ v
  r.Add("aten.scaled_dot_product_attention", Sdpa);
}

}  // namespace coil::prims::nn_internal
