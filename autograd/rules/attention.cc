// Derivative rule of scaled_dot_product_attention (ir/ops/nn_ops_attention.cc), with the
// dropout of its weights. The attention weights are recomputed from q and k (as
// FlashAttention's backward does), and so is the dropout mask, from the forward's seed and
// offset (aten.dropout draws it, as the op's decomposition does):
//   s = q k^T * scale (+ causal / boolean mask as -inf, + float mask), p = softmax(s, -1)
//   d(x) = dropout(x, dropout_p, seed, offset) over [batch..., L, S] (identity without dropout)
//   v <- d(p)^T g;  gp = d(g v^T);  gs = p (gp - sum(gp p, -1))
//   q <- gs k * scale;  k <- gs^T q * scale;  float mask <- gs;  boolean mask: none
// Each summed to its operand's size (q/k/v/mask batch dims may broadcast).
#include <cmath>
#include <functional>
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
  // The forward's dropout of the weights, over [batch..., L, S] (g's batch is the output's).
  const double dropout = c.Bool("train") ? c.Float("dropout_p") : 0.0;
  std::function<Val(Val)> drop = [](Val x) { return x; };
  if (dropout > 0) {
    SymList weights(g.shape().begin(), g.shape().end() - 1);
    weights.push_back(k.size(-2));
    p = BroadcastTo(p, weights);
    AttrMap attrs = {{"p", dropout}, {"train", true}, {"seed", c.Int("seed")}};
    attrs["offset"] = *c.Raw("offset");
    drop = [&e, dropout, attrs](Val x) {
      return dropout == 1 ? FullLike(x, 0.0) : e.Op1("aten.dropout", {x}, attrs);
    };
  }
  Val gp = drop(mm(g, t(v)));
  Val gs = p * (gp - Sum(gp * p, {-1}, /*keepdim=*/true));
  std::vector<Val> out = {c.SumTo(0, mm(gs, k) * scale), c.SumTo(1, mm(t(gs), q) * scale),
                          c.SumTo(2, mm(t(drop(p)), g))};
  if (c.has_in(3)) out.push_back(float_mask ? c.SumTo(3, gs) : Val());
  return out;
}

}  // namespace

void RegisterAttentionRules(DerivativeRegistry& r) {
  r.Add("aten.scaled_dot_product_attention", SdpaGrad);
}

}  // namespace coil::autograd
