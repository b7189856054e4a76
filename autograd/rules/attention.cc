// Derivative rule of scaled_dot_product_attention (ir/ops/nn_ops_attention.cc), dropout_p = 0.
// The attention weights are recomputed from q and k (as FlashAttention's backward does):
//   s = q k^T * scale (+ causal / boolean mask as -inf, + float mask), p = softmax(s, -1)
//   v <- p^T g;  gp = g v^T;  gs = p (gp - sum(gp p, -1))
//   q <- gs k * scale;  k <- gs^T q * scale;  float mask <- gs;  boolean mask: none
// Each summed to its operand's size (q/k/v/mask batch dims may broadcast).
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/derivative_registry.h"
#include "autograd/rules/register.h"

namespace coil::autograd {
namespace {

using namespace coil::prims;  // NOLINT: the rule language

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<Val> SdpaGrad(const GradCall& c) {
  Emitter& e = c.e();
  if (c.Float("dropout_p") != 0) {
    e.Fail(absl::UnimplementedError(
        "aten.scaled_dot_product_attention: no derivative with dropout_p != 0 (no seed)"));
    return {};
  }
  Val q = Upcast(c.in(0)), k = Upcast(c.in(1)), v = Upcast(c.in(2)), g = c.grad();
  auto mm = [&e](Val a, Val b) { return e.Op1("aten.matmul", {a, b}); };
  auto t = [](Val x) { return Transpose(x, -2, -1); };
  Val scale;
  if (c.Float("scale") != 0) {
    scale = Full(e, {}, c.Float("scale"), q.dtype());
  } else if (q.size(-1).is_constant()) {
    scale = Full(e, {}, 1.0 / std::sqrt(static_cast<double>(q.size(-1).constant())), q.dtype());
  } else {
    scale = Rsqrt(SymValue(e, q.size(-1), q.dtype()));
  }
  Val s = mm(q, t(k)) * scale;
  if (c.Bool("is_causal")) {
    Val i = Unsqueeze(Iota(e, q.size(-2), 0, 1, proto::INT64), 1);
    Val j = Unsqueeze(Iota(e, k.size(-2), 0, 1, proto::INT64), 0);
    s = Where(Gt(j, i), -kInf, s);
  }
  bool float_mask = c.has_in(3) && !IsBool(c.in(3).dtype());
  if (c.has_in(3)) s = float_mask ? s + Upcast(c.in(3)) : Where(c.in(3), s, -kInf);
  Val p = e.Op1("aten.softmax", {s}, {{"dim", int64_t{-1}}});
  Val gp = mm(g, t(v));
  Val gs = p * (gp - Sum(gp * p, {-1}, /*keepdim=*/true));
  std::vector<Val> out = {c.SumTo(0, mm(gs, k) * scale), c.SumTo(1, mm(t(gs), q) * scale),
                          c.SumTo(2, mm(t(p), g))};
  if (c.has_in(3)) out.push_back(float_mask ? c.SumTo(3, gs) : Val());
  return out;
}

}  // namespace

void RegisterAttentionRules(DerivativeRegistry& r) {
  r.Add("aten.scaled_dot_product_attention", SdpaGrad);
}

}  // namespace coil::autograd
