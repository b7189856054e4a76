// Decompositions of the unary elementwise ops (see register.h): the unary math,
// activations, clamps and the cast of ir/ops/elementwise_ops.cc (clone/contiguous, registered
// in ir/ops/shape_ops.cc, are decomposed in shape.cc).
//
// Conventions: "float(x)" is x converted to the op's (floating) output dtype and, for
// f16/bf16, upcast to f32 (PyTorch's opmath); results are converted back once at the end.
// Clamp-like bounds are "x's dtype" constants: prims.full truncates and wraps them for
// integral dtypes exactly as the reference kernels cast their bounds.
#include <cfloat>
#include <cmath>
#include <functional>
#include <optional>
#include <string>

#include "prims/decomposition_registry.h"
#include "prims/decompositions/register.h"

namespace coil::prims {
namespace {

constexpr double kInf = INFINITY;

// A rank-0 constant of x's dtype (broadcast by the binary helpers).
Val Const(const Val& x, double v) { return x.ok() ? Full(x.emitter(), {}, v, x.dtype()) : Val(); }

// min(max(x, lo), hi) in x's dtype; NaN propagates from x and from the bounds.
Val Clamp(Val x, std::optional<double> lo, std::optional<double> hi) {
  if (lo) x = Maximum(x, Const(x, *lo));
  if (hi) x = Minimum(x, Const(x, *hi));
  return x;
}

// The largest finite value of a floating dtype.
double MaxFinite(DType t) {
  switch (t) {
    case proto::FLOAT64:
      return DBL_MAX;
    case proto::FLOAT16:
      return 65504.0;
    case proto::BFLOAT16:
      return 3.3895313892515355e38;
    default:
      return FLT_MAX;
  }
}

using FloatFn = std::function<Val(const OpCall&, Val)>;

// Registers `op` as cast(f(float(x)), out_dtype).
void AddFloat(DecompositionRegistry& r, std::string op, FloatFn f) {
  r.Add(std::move(op), [f = std::move(f)](const OpCall& c) -> std::vector<Val> {
    Val x = Upcast(Cast(c.in(0), c.out_dtype()));
    return {Cast(f(c, x), c.out_dtype())};
  });
}

// Registers a predicate: `f(x)` on floating inputs, the constant `other` on integral/bool ones.
void AddPredicate(DecompositionRegistry& r, std::string op, Val (*f)(Val), bool other) {
  r.Add(std::move(op), [f, other](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    if (!IsFloating(x.dtype())) return {FullLike(x, other ? 1 : 0, proto::BOOL)};
    return {f(x)};
  });
}

// Registers an op that is identity on integral inputs and the prim `f` on floating ones.
void AddRounding(DecompositionRegistry& r, std::string op, Val (*f)(Val)) {
  r.Add(std::move(op), [f](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    return {IsFloating(x.dtype()) ? f(x) : x};
  });
}

Val Sigmoid(Val x) { return 1.0 / (1.0 + Exp(-x)); }

void RegisterMath(DecompositionRegistry& r) {
  // name(x) -> prims.name(float(x))
  struct Rule {
    const char* op;
    Val (*fn)(Val);
  };
  static const Rule kFloatPrims[] = {
      {"aten.exp", Exp},     {"aten.exp2", Exp2},   {"aten.expm1", Expm1}, {"aten.log", Log},
      {"aten.log2", Log2},   {"aten.log1p", Log1p}, {"aten.sqrt", Sqrt},   {"aten.rsqrt", Rsqrt},
      {"aten.sin", Sin},     {"aten.cos", Cos},     {"aten.tan", Tan},     {"aten.asin", Asin},
      {"aten.acos", Acos},   {"aten.atan", Atan},   {"aten.sinh", Sinh},   {"aten.cosh", Cosh},
      {"aten.tanh", Tanh},   {"aten.asinh", Asinh}, {"aten.acosh", Acosh}, {"aten.atanh", Atanh},
      {"aten.erf", Erf},     {"aten.erfc", Erfc},
  };
  for (const Rule& rule : kFloatPrims) {
    Val (*fn)(Val) = rule.fn;
    AddFloat(r, rule.op, [fn](const OpCall&, Val x) { return fn(x); });
  }
  // log10(x) -> log(x) / ln 10
  AddFloat(r, "aten.log10", [](const OpCall&, Val x) { return Log(x) / M_LN10; });
  // sigmoid(x) -> 1 / (1 + exp(-x))
  AddFloat(r, "aten.sigmoid", [](const OpCall&, Val x) { return Sigmoid(x); });
  // reciprocal(x) -> 1 / x
  AddFloat(r, "aten.reciprocal", [](const OpCall&, Val x) { return 1.0 / x; });
  // frac(x) -> x - trunc(x)
  AddFloat(r, "aten.frac", [](const OpCall&, Val x) { return x - Trunc(x); });

  // abs(x) -> prims.abs(x)
  r.Add("aten.abs", [](const OpCall& c) -> std::vector<Val> { return {Abs(c.in(0))}; });
  // neg(x) -> prims.neg(x)
  r.Add("aten.neg", [](const OpCall& c) -> std::vector<Val> { return {Neg(c.in(0))}; });
  // floor/ceil/trunc/round(x) -> the prim on floats; x on integers
  AddRounding(r, "aten.floor", Floor);
  AddRounding(r, "aten.ceil", Ceil);
  AddRounding(r, "aten.trunc", Trunc);
  AddRounding(r, "aten.round", Round);
  // sign(x) -> prims.sign(x); x on bool
  r.Add("aten.sign", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    return {IsBool(x.dtype()) ? x : Sign(x)};
  });
  // signbit(x) -> prims.signbit(x); false on bool
  r.Add("aten.signbit", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    return {IsBool(x.dtype()) ? FullLike(x, 0, proto::BOOL) : Signbit(x)};
  });
  // square(x) -> x * x (bool: in i64)
  r.Add("aten.square", [](const OpCall& c) -> std::vector<Val> {
    Val x = Upcast(Cast(c.in(0), c.out_dtype()));
    return {Cast(x * x, c.out_dtype())};
  });
  // bitwise_not(x) -> prims.bitwise_not(x)
  r.Add("aten.bitwise_not",
        [](const OpCall& c) -> std::vector<Val> { return {BitwiseNot(c.in(0))}; });
  // logical_not(x) -> x == 0
  r.Add("aten.logical_not", [](const OpCall& c) -> std::vector<Val> { return {Eq(c.in(0), 0.0)}; });
  // isnan(x) -> x != x; false on integers
  AddPredicate(r, "aten.isnan", [](Val x) { return Ne(x, x); }, false);
  // isinf(x) -> |x| == inf; false on integers
  AddPredicate(r, "aten.isinf", [](Val x) { return Eq(Abs(x), kInf); }, false);
  // isfinite(x) -> |x| < inf; true on integers
  AddPredicate(r, "aten.isfinite", [](Val x) { return Lt(Abs(x), kInf); }, true);
  // isposinf(x) -> x == inf; false on integers
  AddPredicate(r, "aten.isposinf", [](Val x) { return Eq(x, kInf); }, false);
  // isneginf(x) -> x == -inf; false on integers
  AddPredicate(r, "aten.isneginf", [](Val x) { return Eq(x, -kInf); }, false);
  // nan_to_num(x, nan, posinf, neginf) -> where(isnan, nan, where(x == inf, posinf, ...)); x on
  // integers
  r.Add("aten.nan_to_num", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    if (!IsFloating(x.dtype())) return {x};
    double big = MaxFinite(x.dtype());
    double pos = c.Bool("has_posinf") ? c.Float("posinf") : big;
    double neg = c.Bool("has_neginf") ? c.Float("neginf") : -big;
    Val y = Where(Eq(x, kInf), Const(x, pos), Where(Eq(x, -kInf), Const(x, neg), x));
    return {Where(Ne(x, x), Const(x, c.Float("nan")), y)};
  });
}

void RegisterActivations(DecompositionRegistry& r) {
  // relu(x) -> max(x, 0)
  r.Add("aten.relu", [](const OpCall& c) -> std::vector<Val> { return {Clamp(c.in(0), 0, {})}; });
  // relu6(x) -> min(max(x, 0), 6)
  r.Add("aten.relu6", [](const OpCall& c) -> std::vector<Val> { return {Clamp(c.in(0), 0, 6)}; });
  // hardtanh(x, min_val, max_val) -> min(max(x, min_val), max_val), bounds in x's dtype
  r.Add("aten.hardtanh", [](const OpCall& c) -> std::vector<Val> {
    return {Clamp(c.in(0), c.Float("min_val"), c.Float("max_val"))};
  });
  // threshold(x, th, v) -> where(x <= th, v, x), th and v in x's dtype
  r.Add("aten.threshold", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    return {Where(Le(x, Const(x, c.Float("threshold"))), Const(x, c.Float("value")), x)};
  });
  // gelu(x) -> x/2 (1 + erf(x / sqrt 2)); tanh: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  AddFloat(r, "aten.gelu", [](const OpCall& c, Val x) {
    if (c.Str("approximate") == "tanh") {
      Val inner = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
      return 0.5 * x * (1.0 + Tanh(inner));
    }
    return 0.5 * x * (1.0 + Erf(x * M_SQRT1_2));
  });
  // silu(x) -> x / (1 + exp(-x))
  AddFloat(r, "aten.silu", [](const OpCall&, Val x) { return x / (1.0 + Exp(-x)); });
  // mish(x) -> x tanh(log1p(exp(x)))
  AddFloat(r, "aten.mish", [](const OpCall&, Val x) { return x * Tanh(Log1p(Exp(x))); });
  // hardswish(x) -> x min(max(x + 3, 0), 6) / 6
  AddFloat(r, "aten.hardswish",
           [](const OpCall&, Val x) { return x * Clamp(x + 3.0, 0, 6) / 6.0; });
  // hardsigmoid(x) -> min(max(x + 3, 0), 6) / 6
  AddFloat(r, "aten.hardsigmoid", [](const OpCall&, Val x) { return Clamp(x + 3.0, 0, 6) / 6.0; });
  // softplus(x, beta, th) -> where(x beta > th, x, log1p(exp(x beta)) / beta)
  AddFloat(r, "aten.softplus", [](const OpCall& c, Val x) {
    double beta = c.Float("beta");
    Val xb = x * beta;
    return Where(Gt(xb, c.Float("threshold")), x, Log1p(Exp(xb)) / beta);
  });
  // leaky_relu(x, slope) -> where(x > 0, x, x slope)
  AddFloat(r, "aten.leaky_relu", [](const OpCall& c, Val x) {
    return Where(Gt(x, 0.0), x, x * c.Float("negative_slope"));
  });
  // elu(x, alpha, scale, input_scale) -> where(x > 0, scale x, alpha scale expm1(x input_scale))
  AddFloat(r, "aten.elu", [](const OpCall& c, Val x) {
    double scale = c.Float("scale");
    Val neg = Expm1(x * c.Float("input_scale")) * (c.Float("alpha") * scale);
    return Where(Gt(x, 0.0), x * scale, neg);
  });
  // selu(x) -> where(x > 0, scale x, scale alpha expm1(x))
  AddFloat(r, "aten.selu", [](const OpCall&, Val x) {
    constexpr double kAlpha = 1.6732632423543772848170429916717;
    constexpr double kScale = 1.0507009873554804934193349852946;
    return Where(Gt(x, 0.0), x * kScale, Expm1(x) * (kAlpha * kScale));
  });
  // celu(x, alpha) -> where(x > 0, x, alpha expm1(x / alpha))
  AddFloat(r, "aten.celu", [](const OpCall& c, Val x) {
    double alpha = c.Float("alpha");
    return Where(Gt(x, 0.0), x, Expm1(x * (1.0 / alpha)) * alpha);
  });
  // hardshrink(x, l) -> where(|x| <= l, 0, x)
  AddFloat(r, "aten.hardshrink", [](const OpCall& c, Val x) {
    return Where(Le(Abs(x), c.Float("lambd")), 0.0, x);
  });
  // softshrink(x, l) -> where(x > l, x - l, where(x < -l, x + l, 0))   (NaN gives 0)
  AddFloat(r, "aten.softshrink", [](const OpCall& c, Val x) {
    double l = c.Float("lambd");
    return Where(Gt(x, l), x - l, Where(Lt(x, -l), x + l, 0.0));
  });
  // log_sigmoid(x) -> min(x, 0) - log1p(exp(-|x|))
  AddFloat(r, "aten.log_sigmoid",
           [](const OpCall&, Val x) { return Minimum(x, 0.0) - Log1p(Exp(-Abs(x))); });
}

void RegisterClampsAndCasts(DecompositionRegistry& r) {
  // clamp(x, min?, max?) -> min(max(x, min), max) in the promoted dtype
  r.Add("aten.clamp", [](const OpCall& c) -> std::vector<Val> {
    std::optional<double> lo, hi;
    if (c.Bool("has_min")) lo = c.Float("min");
    if (c.Bool("has_max")) hi = c.Float("max");
    return {Clamp(Cast(c.in(0), c.out_dtype()), lo, hi)};
  });
  // clamp_min(x, min) -> max(x, min) in the promoted dtype
  r.Add("aten.clamp_min", [](const OpCall& c) -> std::vector<Val> {
    return {Clamp(Cast(c.in(0), c.out_dtype()), c.Float("min"), {})};
  });
  // clamp_max(x, max) -> min(x, max) in the promoted dtype
  r.Add("aten.clamp_max", [](const OpCall& c) -> std::vector<Val> {
    return {Clamp(Cast(c.in(0), c.out_dtype()), {}, c.Float("max"))};
  });
  // to_dtype(x, dtype) -> prims.convert_element_type(x, dtype)
  r.Add("aten.to_dtype",
        [](const OpCall& c) -> std::vector<Val> { return {Cast(c.in(0), c.out_dtype())}; });
}

}  // namespace

void RegisterElementwiseDecompositions(DecompositionRegistry& r) {
  RegisterMath(r);
  RegisterActivations(r);
  RegisterClampsAndCasts(r);
}

}  // namespace coil::prims
