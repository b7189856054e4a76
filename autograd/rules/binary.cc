// Derivative rules of binary and ternary math (ir/ops/binary_ops.cc): add/sub/mul/div/pow and
// their scalar forms, maximum/minimum, atan2, hypot, fmod/remainder, addcmul/addcdiv, lerp,
// where, masked_fill. Broadcast operands get their gradient summed to their size (SumTo).
// x is `self`, y `other` (both in the computing dtype), g the gradient, out the result.
#include <vector>

#include "autograd/derivative_registry.h"
#include "autograd/rules/register.h"

namespace coil::autograd {
namespace {

using namespace coil::prims;  // NOLINT: the rule language

Val X(const GradCall& c, int i = 0) { return Upcast(c.in(i)); }

// Both operands' gradients, each summed to its operand's size.
std::vector<Val> Two(const GradCall& c, Val gx, Val gy) {
  return {c.needs_grad(0) ? c.SumTo(0, gx) : Val(), c.needs_grad(1) ? c.SumTo(1, gy) : Val()};
}

}  // namespace

void RegisterBinaryRules(DerivativeRegistry& r) {
  // add(x, y, alpha): x <- g, y <- alpha g
  r.Add("aten.add", [](const GradCall& c) -> std::vector<Val> {
    return Two(c, c.grad(), c.grad() * c.Float("alpha"));
  });
  // sub(x, y, alpha): x <- g, y <- -alpha g
  r.Add("aten.sub", [](const GradCall& c) -> std::vector<Val> {
    return Two(c, c.grad(), c.grad() * -c.Float("alpha"));
  });
  // rsub(x, y, alpha) = y - alpha x: x <- -alpha g, y <- g
  r.Add("aten.rsub", [](const GradCall& c) -> std::vector<Val> {
    return Two(c, c.grad() * -c.Float("alpha"), c.grad());
  });
  // mul: x <- g y, y <- g x
  r.Add("aten.mul", [](const GradCall& c) -> std::vector<Val> {
    return Two(c, c.grad() * X(c, 1), c.grad() * X(c, 0));
  });
  // div (true division): x <- g / y, y <- -g x / y^2; rounding modes: zero
  r.Add("aten.div", [](const GradCall& c) -> std::vector<Val> {
    if (!c.Str("rounding_mode").empty()) {
      return Two(c, FullLike(c.grad(), 0.0), FullLike(c.grad(), 0.0));
    }
    Val y = X(c, 1);
    return Two(c, c.grad() / y, -c.grad() * X(c, 0) / (y * y));
  });
  // pow(x, y): x <- g y x^(y-1); y <- g out log(x), 0 where x == 0 and y >= 0
  r.Add("aten.pow", [](const GradCall& c) -> std::vector<Val> {
    Val x = X(c, 0), y = X(c, 1), g = c.grad();
    Val gx = Where(Eq(y, 0.0), 0.0, g * y * Pow(x, y - 1.0));
    Val gy = Where(BitwiseAnd(Eq(x, 0.0), Ge(y, 0.0)), 0.0, g * Upcast(c.out()) * Log(x));
    return Two(c, gx, gy);
  });
  // maximum: ties split the gradient; x <- g where x > y, y <- g where y > x
  // minimum: the same with < ; fmax/fmin as maximum/minimum (NaN operands: see docs)
  for (bool is_max : {true, false}) {
    for (const char* op : {is_max ? "aten.maximum" : "aten.minimum",
                           is_max ? "aten.fmax" : "aten.fmin"}) {
      r.Add(op, [is_max](const GradCall& c) -> std::vector<Val> {
        Val x = X(c, 0), y = X(c, 1), g = c.grad();
        Val half = Where(Eq(x, y), g / 2.0, g);
        Val x_wins = is_max ? Gt(x, y) : Lt(x, y);
        Val y_wins = is_max ? Lt(x, y) : Gt(x, y);
        return Two(c, Where(y_wins, 0.0, half), Where(x_wins, 0.0, half));
      });
    }
  }
  // atan2(x, y): x <- g y / (x^2 + y^2), y <- -g x / (x^2 + y^2)
  r.Add("aten.atan2", [](const GradCall& c) -> std::vector<Val> {
    Val x = X(c, 0), y = X(c, 1);
    Val inv = 1.0 / (x * x + y * y);
    return Two(c, c.grad() * y * inv, -c.grad() * x * inv);
  });
  // hypot(x, y): x <- g x / out, y <- g y / out
  r.Add("aten.hypot", [](const GradCall& c) -> std::vector<Val> {
    Val out = Upcast(c.out());
    return Two(c, c.grad() * X(c, 0) / out, c.grad() * X(c, 1) / out);
  });
  // copysign(x, y): x <- g sign(x) sign(out) (0 at x == 0), y <- 0
  r.Add("aten.copysign", [](const GradCall& c) -> std::vector<Val> {
    return Two(c, c.grad() * Sign(X(c, 0)) * Sign(Upcast(c.out())), FullLike(c.grad(), 0.0));
  });
  // fmod(x, y): x <- g, y <- -g trunc(x / y); remainder: y <- -g floor(x / y)
  r.Add("aten.fmod", [](const GradCall& c) -> std::vector<Val> {
    return Two(c, c.grad(), -c.grad() * Trunc(X(c, 0) / X(c, 1)));
  });
  r.Add("aten.remainder", [](const GradCall& c) -> std::vector<Val> {
    return Two(c, c.grad(), -c.grad() * Floor(X(c, 0) / X(c, 1)));
  });

  // Scalar forms (the scalar is an attribute, so only self has a gradient).
  // add_scalar, sub_scalar, fmod_scalar, remainder_scalar: g
  for (const char* op : {"aten.add_scalar", "aten.sub_scalar", "aten.fmod_scalar",
                         "aten.remainder_scalar"}) {
    r.Add(op, [](const GradCall& c) -> std::vector<Val> { return {c.grad()}; });
  }
  // rsub_scalar(x, other, alpha) = other - alpha x: -alpha g
  r.Add("aten.rsub_scalar", [](const GradCall& c) -> std::vector<Val> {
    return {c.grad() * -c.Float("alpha")};
  });
  // mul_scalar(x, other): g other
  r.Add("aten.mul_scalar", [](const GradCall& c) -> std::vector<Val> {
    return {c.grad() * c.Float("other")};
  });
  // div_scalar(x, other): g / other; rounding modes: zero
  r.Add("aten.div_scalar", [](const GradCall& c) -> std::vector<Val> {
    if (!c.Str("rounding_mode").empty()) return {FullLike(c.grad(), 0.0)};
    return {c.grad() / c.Float("other")};
  });
  // pow_scalar(x, p): g p x^(p-1) (0 for p == 0)
  r.Add("aten.pow_scalar", [](const GradCall& c) -> std::vector<Val> {
    double p = c.Float("other");
    if (p == 0) return {FullLike(c.grad(), 0.0)};
    return {c.grad() * p * Pow(X(c), p - 1.0)};
  });

  // addcmul(x, t1, t2, value): x <- g, t1 <- g value t2, t2 <- g value t1
  r.Add("aten.addcmul", [](const GradCall& c) -> std::vector<Val> {
    Val gv = c.grad() * c.Float("value");
    return {c.SumTo(0, c.grad()), c.SumTo(1, gv * X(c, 2)), c.SumTo(2, gv * X(c, 1))};
  });
  // addcdiv(x, t1, t2, value): x <- g, t1 <- g value / t2, t2 <- -g value t1 / t2^2
  r.Add("aten.addcdiv", [](const GradCall& c) -> std::vector<Val> {
    Val gv = c.grad() * c.Float("value");
    Val t2 = X(c, 2);
    return {c.SumTo(0, c.grad()), c.SumTo(1, gv / t2), c.SumTo(2, -gv * X(c, 1) / (t2 * t2))};
  });
  // lerp(x, end, w) = x + w (end - x): x <- g (1 - w), end <- g w, w <- g (end - x)
  r.Add("aten.lerp", [](const GradCall& c) -> std::vector<Val> {
    Val x = X(c, 0), end = X(c, 1), w = X(c, 2), g = c.grad();
    return {c.SumTo(0, g * (1.0 - w)), c.SumTo(1, g * w), c.SumTo(2, g * (end - x))};
  });
  // where(cond, x, y): x <- g where cond, y <- g where !cond; cond: none
  r.Add("aten.where", [](const GradCall& c) -> std::vector<Val> {
    Val cond = c.in(0), g = c.grad();
    return {Val(), c.needs_grad(1) ? c.SumTo(1, Where(cond, g, 0.0)) : Val(),
            c.needs_grad(2) ? c.SumTo(2, Where(cond, 0.0, g)) : Val()};
  });
  // masked_fill(x, mask, value): x <- g where !mask; mask: none
  r.Add("aten.masked_fill", [](const GradCall& c) -> std::vector<Val> {
    return {c.SumTo(0, Where(c.in(1), 0.0, c.grad())), Val()};
  });
}

}  // namespace coil::autograd
