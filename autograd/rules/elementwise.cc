// Derivative rules of unary math and activations (the ops of ir/ops/elementwise_ops.cc).
// Each entry's comment is its formula (derivatives.yaml's, for the differentiable input
// `self`); x is the input and y the output, both in the computing dtype, g the gradient.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/derivative_registry.h"
#include "autograd/rules/register.h"

namespace coil::autograd {
namespace {

using namespace coil::prims;  // NOLINT: the rule language

constexpr double kSqrtPi = 1.7724538509055160273;
constexpr double kSelfAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// A rule of a one-input op as grad_x = f(call, x, y, g).
using UnaryFn = std::function<Val(const GradCall& c, Val x, Val y, Val g)>;

void AddUnary(DerivativeRegistry& r, std::string op, UnaryFn fn) {
  r.Add(std::move(op), [fn](const GradCall& c) -> std::vector<Val> {
    return {fn(c, Upcast(c.in(0)), Upcast(c.out()), c.grad())};
  });
}

// g where `keep` holds, else 0.
Val Mask(Val keep, Val g) { return Where(keep, g, 0.0); }

Val And(Val a, Val b) { return BitwiseAnd(a, b); }
Val Or(Val a, Val b) { return BitwiseOr(a, b); }

Val Sigmoid(Val x) { return 1.0 / (1.0 + Exp(-x)); }

}  // namespace

void RegisterElementwiseRules(DerivativeRegistry& r) {
  // abs: g * sign(x)
  AddUnary(r, "aten.abs", [](const GradCall&, Val x, Val, Val g) { return g * Sign(x); });
  // neg: -g
  AddUnary(r, "aten.neg", [](const GradCall&, Val, Val, Val g) { return -g; });
  // exp: g * y
  AddUnary(r, "aten.exp", [](const GradCall&, Val, Val y, Val g) { return g * y; });
  // exp2: g * y * ln 2
  AddUnary(r, "aten.exp2", [](const GradCall&, Val, Val y, Val g) { return g * y * M_LN2; });
  // expm1: g * (y + 1)
  AddUnary(r, "aten.expm1", [](const GradCall&, Val, Val y, Val g) { return g * (y + 1.0); });
  // log: g / x
  AddUnary(r, "aten.log", [](const GradCall&, Val x, Val, Val g) { return g / x; });
  // log2: g / (x ln 2)
  AddUnary(r, "aten.log2", [](const GradCall&, Val x, Val, Val g) { return g / (x * M_LN2); });
  // log10: g / (x ln 10)
  AddUnary(r, "aten.log10", [](const GradCall&, Val x, Val, Val g) { return g / (x * M_LN10); });
  // log1p: g / (x + 1)
  AddUnary(r, "aten.log1p", [](const GradCall&, Val x, Val, Val g) { return g / (x + 1.0); });
  // sqrt: g / (2 y)
  AddUnary(r, "aten.sqrt", [](const GradCall&, Val, Val y, Val g) { return g / (2.0 * y); });
  // rsqrt: -g y^3 / 2
  AddUnary(r, "aten.rsqrt",
           [](const GradCall&, Val, Val y, Val g) { return -0.5 * g * y * y * y; });
  // reciprocal: -g y^2
  AddUnary(r, "aten.reciprocal", [](const GradCall&, Val, Val y, Val g) { return -g * y * y; });
  // square: 2 g x
  AddUnary(r, "aten.square", [](const GradCall&, Val x, Val, Val g) { return 2.0 * g * x; });
  // sin: g cos(x); cos: -g sin(x); tan: g (1 + y^2)
  AddUnary(r, "aten.sin", [](const GradCall&, Val x, Val, Val g) { return g * Cos(x); });
  AddUnary(r, "aten.cos", [](const GradCall&, Val x, Val, Val g) { return -g * Sin(x); });
  AddUnary(r, "aten.tan", [](const GradCall&, Val, Val y, Val g) { return g * (1.0 + y * y); });
  // asin: g / sqrt(1 - x^2); acos: -g / sqrt(1 - x^2); atan: g / (1 + x^2)
  AddUnary(r, "aten.asin",
           [](const GradCall&, Val x, Val, Val g) { return g * Rsqrt(1.0 - x * x); });
  AddUnary(r, "aten.acos",
           [](const GradCall&, Val x, Val, Val g) { return -g * Rsqrt(1.0 - x * x); });
  AddUnary(r, "aten.atan", [](const GradCall&, Val x, Val, Val g) { return g / (1.0 + x * x); });
  // sinh: g cosh(x); cosh: g sinh(x); tanh: g (1 - y^2)
  AddUnary(r, "aten.sinh", [](const GradCall&, Val x, Val, Val g) { return g * Cosh(x); });
  AddUnary(r, "aten.cosh", [](const GradCall&, Val x, Val, Val g) { return g * Sinh(x); });
  AddUnary(r, "aten.tanh", [](const GradCall&, Val, Val y, Val g) { return g * (1.0 - y * y); });
  // asinh: g / sqrt(x^2 + 1); acosh: g / sqrt((x - 1)(x + 1)); atanh: g / (1 - x^2)
  AddUnary(r, "aten.asinh",
           [](const GradCall&, Val x, Val, Val g) { return g * Rsqrt(x * x + 1.0); });
  AddUnary(r, "aten.acosh",
           [](const GradCall&, Val x, Val, Val g) { return g * Rsqrt((x - 1.0) * (x + 1.0)); });
  AddUnary(r, "aten.atanh", [](const GradCall&, Val x, Val, Val g) { return g / (1.0 - x * x); });
  // erf: g 2/sqrt(pi) exp(-x^2); erfc: the negation
  AddUnary(r, "aten.erf", [](const GradCall&, Val x, Val, Val g) {
    return g * (2.0 / kSqrtPi) * Exp(-(x * x));
  });
  AddUnary(r, "aten.erfc", [](const GradCall&, Val x, Val, Val g) {
    return g * (-2.0 / kSqrtPi) * Exp(-(x * x));
  });
  // sigmoid: g y (1 - y)
  AddUnary(r, "aten.sigmoid",
           [](const GradCall&, Val, Val y, Val g) { return g * y * (1.0 - y); });
  // log_sigmoid: g sigmoid(-x)
  AddUnary(r, "aten.log_sigmoid",
           [](const GradCall&, Val x, Val, Val g) { return g * Sigmoid(-x); });
  // relu: g where y > 0
  AddUnary(r, "aten.relu", [](const GradCall&, Val, Val y, Val g) { return Mask(Gt(y, 0.0), g); });
  // relu6 (hardtanh(0, 6)): g where 0 < x < 6
  AddUnary(r, "aten.relu6", [](const GradCall&, Val x, Val, Val g) {
    return Mask(And(Gt(x, 0.0), Lt(x, 6.0)), g);
  });
  // hardtanh(min, max): g where min < x < max
  AddUnary(r, "aten.hardtanh", [](const GradCall& c, Val x, Val, Val g) {
    return Mask(And(Gt(x, c.Float("min_val")), Lt(x, c.Float("max_val"))), g);
  });
  // gelu: g (cdf(x) + x pdf(x)); tanh: derivative of 0.5 x (1 + tanh(k (x + 0.044715 x^3)))
  AddUnary(r, "aten.gelu", [](const GradCall& c, Val x, Val, Val g) {
    if (c.Str("approximate") == "tanh") {
      double k = std::sqrt(2.0 / M_PI);
      Val t = Tanh(k * (x + 0.044715 * x * x * x));
      Val dinner = k * (1.0 + 3.0 * 0.044715 * x * x);
      return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner);
    }
    Val cdf = 0.5 * (1.0 + Erf(x * M_SQRT1_2));
    Val pdf = Exp(-0.5 * x * x) * (1.0 / std::sqrt(2.0 * M_PI));
    return g * (cdf + x * pdf);
  });
  // silu: g s (1 + x (1 - s)), s = sigmoid(x)
  AddUnary(r, "aten.silu", [](const GradCall&, Val x, Val, Val g) {
    Val s = Sigmoid(x);
    return g * s * (1.0 + x * (1.0 - s));
  });
  // mish: g (t + x sigmoid(x) (1 - t^2)), t = tanh(softplus(x))
  AddUnary(r, "aten.mish", [](const GradCall&, Val x, Val, Val g) {
    Val t = Tanh(Log1p(Exp(x)));
    return g * (t + x * Sigmoid(x) * (1.0 - t * t));
  });
  // hardswish: 0 for x < -3, g for x > 3, else g (2x + 3) / 6
  AddUnary(r, "aten.hardswish", [](const GradCall&, Val x, Val, Val g) {
    return Where(Lt(x, -3.0), 0.0, Where(Le(x, 3.0), g * (x / 3.0 + 0.5), g));
  });
  // hardsigmoid: g / 6 where -3 < x < 3
  AddUnary(r, "aten.hardsigmoid", [](const GradCall&, Val x, Val, Val g) {
    return Mask(And(Gt(x, -3.0), Lt(x, 3.0)), g / 6.0);
  });
  // softplus(beta, threshold): g where x beta > threshold, else g z / (z + 1), z = exp(x beta)
  AddUnary(r, "aten.softplus", [](const GradCall& c, Val x, Val, Val g) {
    Val xb = x * c.Float("beta");
    Val z = Exp(xb);
    return Where(Gt(xb, c.Float("threshold")), g, g * z / (z + 1.0));
  });
  // leaky_relu(slope): g where x > 0, else g slope
  AddUnary(r, "aten.leaky_relu", [](const GradCall& c, Val x, Val, Val g) {
    return Where(Gt(x, 0.0), g, g * c.Float("negative_slope"));
  });
  // elu(alpha, scale, input_scale): g scale for x > 0, else g input_scale alpha scale exp(x is)
  AddUnary(r, "aten.elu", [](const GradCall& c, Val x, Val, Val g) {
    double alpha = c.Float("alpha"), scale = c.Float("scale"), is = c.Float("input_scale");
    return Where(Gt(x, 0.0), g * scale, g * (is * alpha * scale) * Exp(x * is));
  });
  // selu: elu with selu's alpha and scale
  AddUnary(r, "aten.selu", [](const GradCall&, Val x, Val, Val g) {
    return Where(Gt(x, 0.0), g * kSeluScale, g * (kSelfAlpha * kSeluScale) * Exp(x));
  });
  // celu(alpha): g for x > 0, else g exp(x / alpha)
  AddUnary(r, "aten.celu", [](const GradCall& c, Val x, Val, Val g) {
    return Where(Gt(x, 0.0), g, g * Exp(x / c.Float("alpha")));
  });
  // threshold(threshold, value): g where x > threshold
  AddUnary(r, "aten.threshold", [](const GradCall& c, Val x, Val, Val g) {
    return Mask(Gt(x, c.Float("threshold")), g);
  });
  // hardshrink(l), softshrink(l): g where |x| > l
  for (const char* op : {"aten.hardshrink", "aten.softshrink"}) {
    AddUnary(r, op, [](const GradCall& c, Val x, Val, Val g) {
      double l = c.Float("lambd");
      return Mask(Or(Lt(x, -l), Gt(x, l)), g);
    });
  }
  // clamp(min?, max?): g where min <= x <= max (each bound only when given)
  AddUnary(r, "aten.clamp", [](const GradCall& c, Val x, Val, Val g) {
    Val keep = FullLike(x, 1.0, proto::BOOL);
    if (c.Bool("has_min")) keep = And(keep, Ge(x, c.Float("min")));
    if (c.Bool("has_max")) keep = And(keep, Le(x, c.Float("max")));
    return Mask(keep, g);
  });
  // clamp_min(min): g where x >= min; clamp_max(max): g where x <= max
  AddUnary(r, "aten.clamp_min",
           [](const GradCall& c, Val x, Val, Val g) { return Mask(Ge(x, c.Float("min")), g); });
  AddUnary(r, "aten.clamp_max",
           [](const GradCall& c, Val x, Val, Val g) { return Mask(Le(x, c.Float("max")), g); });
  // nan_to_num: g where x is finite (x - x == 0 exactly for finite x)
  AddUnary(r, "aten.nan_to_num",
           [](const GradCall&, Val x, Val, Val g) { return Mask(Eq(x - x, 0.0), g); });
  // frac (x - trunc(x)), clone, contiguous, to_dtype: g (to_dtype's converts back to x's
  // dtype in the builder)
  for (const char* op : {"aten.frac", "aten.clone", "aten.contiguous", "aten.to_dtype"}) {
    AddUnary(r, op, [](const GradCall&, Val, Val, Val g) { return g; });
  }
  // Piecewise constant: zero gradient almost everywhere (as torch's zeros_like(grad)).
  for (const char* op : {"aten.ceil", "aten.floor", "aten.round", "aten.trunc", "aten.sign"}) {
    AddUnary(r, op, [](const GradCall&, Val, Val, Val g) { return FullLike(g, 0.0); });
  }
}

}  // namespace coil::autograd
