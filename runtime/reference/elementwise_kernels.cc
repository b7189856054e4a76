// Reference kernels of the unary elementwise ops (the ops of ir/ops/elementwise_ops.cc): unary
// math, activations, clamps and the cast. Binary, tensor-scalar and ternary kernels are in
// binary_kernels.cc, creation kernels in creation_kernels.cc.
//
// Floating outputs are computed in double from inputs rounded to the output dtype and stored
// rounded (HostTensor::StoreDouble); integral and bool outputs are computed in int64 and stored
// wrapped, as PyTorch's integer kernels.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>

#include "ir/check.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"

namespace coil {
namespace {

using Ctx = const KernelContext&;
using Result = absl::StatusOr<std::vector<HostTensor>>;
using DFn = std::function<double(double)>;
using IFn = std::function<int64_t(int64_t)>;

// Output dtype == compute dtype: a floating output runs `fd`, any other runs `fi`.
Result RunUnary(Ctx ctx, const DFn& fd, const IFn& fi) {
  DType out = ctx.output_dtypes[0];
  const std::vector<int64_t>& shape = ctx.output_shapes[0];
  if (IsFloating(out)) {
    return std::vector<HostTensor>{
        MapDouble(ctx.inputs, shape, out, out, [&](const double* v) { return fd(v[0]); })};
  }
  COIL_CHECK(fi != nullptr) << "no integer path for a " << DTypeName(out) << " output";
  return std::vector<HostTensor>{
      MapInt(ctx.inputs, shape, out, out, [&](const int64_t* v) { return fi(v[0]); })};
}

// A bool result of a predicate on the input in its own dtype.
Result RunPredicate(Ctx ctx, const std::function<bool(double)>& fd,
                    const std::function<bool(int64_t)>& fi) {
  DType in = ctx.inputs[0].dtype();
  DType out = ctx.output_dtypes[0];
  const std::vector<int64_t>& shape = ctx.output_shapes[0];
  if (IsFloating(in)) {
    return std::vector<HostTensor>{MapDouble(
        ctx.inputs, shape, out, in, [&](const double* v) { return fd(v[0]) ? 1.0 : 0.0; })};
  }
  return std::vector<HostTensor>{
      MapInt(ctx.inputs, shape, out, in, [&](const int64_t* v) { return fi(v[0]) ? 1 : 0; })};
}

double Attr(Ctx ctx, const char* name) { return *GetFloat(ctx.attrs, name); }
const Attribute& RawAttr(Ctx ctx, const char* name) { return ctx.attrs.find(name)->second; }

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

// min(max(x, lo), hi) with NaN propagating from x and from the bounds.
double ClampD(double x, bool has_lo, double lo, bool has_hi, double hi) {
  if (std::isnan(x)) return x;
  if (has_lo) x = std::isnan(lo) ? lo : std::max(x, lo);
  if (has_hi) x = std::isnan(hi) ? hi : std::min(x, hi);
  return x;
}
int64_t ClampI(int64_t x, bool has_lo, int64_t lo, bool has_hi, int64_t hi) {
  if (has_lo) x = std::max(x, lo);
  if (has_hi) x = std::min(x, hi);
  return x;
}

double Sign(double x) { return (0 < x) - (x < 0); }
double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

void RegisterMath(ReferenceKernels& k) {
  struct FloatFn {
    const char* name;
    double (*fn)(double);
  };
  static const FloatFn kFloatFns[] = {
      {"aten.exp", [](double x) { return std::exp(x); }},
      {"aten.exp2", [](double x) { return std::exp2(x); }},
      {"aten.expm1", [](double x) { return std::expm1(x); }},
      {"aten.log", [](double x) { return std::log(x); }},
      {"aten.log2", [](double x) { return std::log2(x); }},
      {"aten.log10", [](double x) { return std::log10(x); }},
      {"aten.log1p", [](double x) { return std::log1p(x); }},
      {"aten.sqrt", [](double x) { return std::sqrt(x); }},
      {"aten.rsqrt", [](double x) { return 1.0 / std::sqrt(x); }},
      {"aten.sin", [](double x) { return std::sin(x); }},
      {"aten.cos", [](double x) { return std::cos(x); }},
      {"aten.tan", [](double x) { return std::tan(x); }},
      {"aten.asin", [](double x) { return std::asin(x); }},
      {"aten.acos", [](double x) { return std::acos(x); }},
      {"aten.atan", [](double x) { return std::atan(x); }},
      {"aten.sinh", [](double x) { return std::sinh(x); }},
      {"aten.cosh", [](double x) { return std::cosh(x); }},
      {"aten.tanh", [](double x) { return std::tanh(x); }},
      {"aten.asinh", [](double x) { return std::asinh(x); }},
      {"aten.acosh", [](double x) { return std::acosh(x); }},
      {"aten.atanh", [](double x) { return std::atanh(x); }},
      {"aten.sigmoid", Sigmoid},
      {"aten.erf", [](double x) { return std::erf(x); }},
      {"aten.erfc", [](double x) { return std::erfc(x); }},
      {"aten.reciprocal", [](double x) { return 1.0 / x; }},
      {"aten.frac", [](double x) { return x - std::trunc(x); }},
  };
  for (const FloatFn& f : kFloatFns) {
    double (*fn)(double) = f.fn;
    k.Register(f.name, [fn](Ctx ctx) { return RunUnary(ctx, fn, nullptr); });
  }
  IFn identity = [](int64_t x) { return x; };
  k.Register("aten.floor", [identity](Ctx c) {
    return RunUnary(
        c, [](double x) { return std::floor(x); }, identity);
  });
  k.Register("aten.ceil", [identity](Ctx c) {
    return RunUnary(
        c, [](double x) { return std::ceil(x); }, identity);
  });
  k.Register("aten.trunc", [identity](Ctx c) {
    return RunUnary(
        c, [](double x) { return std::trunc(x); }, identity);
  });
  k.Register("aten.round", [identity](Ctx c) {
    return RunUnary(
        c, [](double x) { return std::nearbyint(x); }, identity);
  });
  k.Register("aten.abs", [](Ctx c) {
    return RunUnary(
        c, [](double x) { return std::fabs(x); },
        [](int64_t x) { return x < 0 ? WrapSub(0, x) : x; });
  });
  k.Register("aten.neg", [](Ctx c) {
    return RunUnary(
        c, [](double x) { return -x; }, [](int64_t x) { return WrapSub(0, x); });
  });
  k.Register("aten.sign", [](Ctx c) {
    return RunUnary(c, Sign, [](int64_t x) -> int64_t { return (0 < x) - (x < 0); });
  });
  k.Register("aten.square", [](Ctx c) {
    return RunUnary(
        c, [](double x) { return x * x; }, [](int64_t x) { return WrapMul(x, x); });
  });
  k.Register("aten.bitwise_not", [](Ctx c) {
    bool is_bool = IsBool(c.output_dtypes[0]);
    return RunUnary(c, nullptr, [is_bool](int64_t x) { return is_bool ? int64_t{x == 0} : ~x; });
  });
  k.Register("aten.nan_to_num", [](Ctx c) {
    DType out = c.output_dtypes[0];
    double nan = Attr(c, "nan");
    double pos = *GetBool(c.attrs, "has_posinf") ? Attr(c, "posinf") : MaxFinite(out);
    double neg = *GetBool(c.attrs, "has_neginf") ? Attr(c, "neginf") : -MaxFinite(out);
    return RunUnary(
        c,
        [=](double x) {
          if (std::isnan(x)) return nan;
          if (std::isinf(x)) return x > 0 ? pos : neg;
          return x;
        },
        [](int64_t x) { return x; });
  });

  using Pred = std::function<bool(double)>;
  using IPred = std::function<bool(int64_t)>;
  struct PredFn {
    const char* name;
    Pred fd;
    IPred fi;
  };
  const PredFn preds[] = {
      {"aten.isnan", [](double x) { return std::isnan(x); }, [](int64_t) { return false; }},
      {"aten.isinf", [](double x) { return std::isinf(x); }, [](int64_t) { return false; }},
      {"aten.isfinite", [](double x) { return std::isfinite(x); }, [](int64_t) { return true; }},
      {"aten.isposinf", [](double x) { return std::isinf(x) && x > 0; },
       [](int64_t) { return false; }},
      {"aten.isneginf", [](double x) { return std::isinf(x) && x < 0; },
       [](int64_t) { return false; }},
      {"aten.signbit", [](double x) { return std::signbit(x); }, [](int64_t x) { return x < 0; }},
      {"aten.logical_not", [](double x) { return x == 0.0; }, [](int64_t x) { return x == 0; }},
  };
  for (const PredFn& p : preds) {
    Pred fd = p.fd;
    IPred fi = p.fi;
    k.Register(p.name, [fd, fi](Ctx c) { return RunPredicate(c, fd, fi); });
  }
}

// Activations whose bounds are cast to the input dtype (integral inputs allowed).
void RegisterClampLike(ReferenceKernels& k) {
  // (has_lo, lo attr, has_hi, hi attr) -> clamp kernel.
  auto clamp = [](Ctx c, bool has_lo, const Attribute& lo, bool has_hi, const Attribute& hi) {
    DType out = c.output_dtypes[0];
    double lo_d = ScalarAsDouble(lo, out), hi_d = ScalarAsDouble(hi, out);
    int64_t lo_i = IsFloating(out) ? 0 : ScalarAsInt(lo, out);
    int64_t hi_i = IsFloating(out) ? 0 : ScalarAsInt(hi, out);
    return RunUnary(
        c, [=](double x) { return ClampD(x, has_lo, lo_d, has_hi, hi_d); },
        [=](int64_t x) { return ClampI(x, has_lo, lo_i, has_hi, hi_i); });
  };
  const Attribute zero(int64_t{0}), six(int64_t{6});
  k.Register("aten.clamp", [clamp](Ctx c) {
    return clamp(c, *GetBool(c.attrs, "has_min"), RawAttr(c, "min"), *GetBool(c.attrs, "has_max"),
                 RawAttr(c, "max"));
  });
  k.Register("aten.clamp_min", [clamp](Ctx c) {
    return clamp(c, true, RawAttr(c, "min"), false, RawAttr(c, "min"));
  });
  k.Register("aten.clamp_max", [clamp](Ctx c) {
    return clamp(c, false, RawAttr(c, "max"), true, RawAttr(c, "max"));
  });
  k.Register("aten.relu", [clamp, zero](Ctx c) { return clamp(c, true, zero, false, zero); });
  k.Register("aten.relu6", [clamp, zero, six](Ctx c) { return clamp(c, true, zero, true, six); });
  k.Register("aten.hardtanh", [clamp](Ctx c) {
    return clamp(c, true, RawAttr(c, "min_val"), true, RawAttr(c, "max_val"));
  });
  k.Register("aten.threshold", [](Ctx c) {
    DType out = c.output_dtypes[0];
    const Attribute& th = RawAttr(c, "threshold");
    const Attribute& val = RawAttr(c, "value");
    double th_d = ScalarAsDouble(th, out), val_d = ScalarAsDouble(val, out);
    int64_t th_i = IsFloating(out) ? 0 : ScalarAsInt(th, out);
    int64_t val_i = IsFloating(out) ? 0 : ScalarAsInt(val, out);
    return RunUnary(
        c, [=](double x) { return x <= th_d ? val_d : x; },
        [=](int64_t x) { return x <= th_i ? val_i : x; });
  });
}

// Floating-only activations.
void RegisterActivations(ReferenceKernels& k) {
  auto reg = [&k](const char* name, std::function<DFn(Ctx)> make) {
    k.Register(name, [make](Ctx c) { return RunUnary(c, make(c), nullptr); });
  };
  reg("aten.gelu", [](Ctx c) -> DFn {
    if (*GetString(c.attrs, "approximate") == "tanh") {
      return [](double x) {
        const double k = std::sqrt(2.0 / M_PI);
        return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
      };
    }
    return [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); };
  });
  reg("aten.silu", [](Ctx) -> DFn { return [](double x) { return x * Sigmoid(x); }; });
  reg("aten.mish",
      [](Ctx) -> DFn { return [](double x) { return x * std::tanh(std::log1p(std::exp(x))); }; });
  reg("aten.hardswish", [](Ctx) -> DFn {
    return [](double x) { return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0; };
  });
  reg("aten.hardsigmoid", [](Ctx) -> DFn {
    return [](double x) {
      if (std::isnan(x)) return x;
      return std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    };
  });
  reg("aten.softplus", [](Ctx c) -> DFn {
    double beta = Attr(c, "beta"), threshold = Attr(c, "threshold");
    return
        [=](double x) { return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta; };
  });
  reg("aten.leaky_relu", [](Ctx c) -> DFn {
    double slope = Attr(c, "negative_slope");
    return [=](double x) { return x > 0 ? x : x * slope; };
  });
  reg("aten.elu", [](Ctx c) -> DFn {
    double alpha = Attr(c, "alpha"), scale = Attr(c, "scale"), in = Attr(c, "input_scale");
    return [=](double x) { return x > 0 ? scale * x : alpha * scale * std::expm1(x * in); };
  });
  reg("aten.selu", [](Ctx) -> DFn {
    return [](double x) {
      const double alpha = 1.6732632423543772848170429916717;
      const double scale = 1.0507009873554804934193349852946;
      return x > 0 ? scale * x : scale * alpha * std::expm1(x);
    };
  });
  reg("aten.celu", [](Ctx c) -> DFn {
    double alpha = Attr(c, "alpha");
    return [=](double x) { return x > 0 ? x : alpha * std::expm1(x / alpha); };
  });
  reg("aten.hardshrink", [](Ctx c) -> DFn {
    double l = Attr(c, "lambd");
    return [=](double x) { return (x >= -l && x <= l) ? 0.0 : x; };
  });
  reg("aten.softshrink", [](Ctx c) -> DFn {
    double l = Attr(c, "lambd");
    return [=](double x) { return x > l ? x - l : x < -l ? x + l : 0.0; };  // NaN gives 0, as torch
  });
  reg("aten.log_sigmoid", [](Ctx) -> DFn {
    return [](double x) { return std::min(x, 0.0) - std::log1p(std::exp(-std::fabs(x))); };
  });
}

}  // namespace

void RegisterElementwiseKernels(ReferenceKernels& k) {
  RegisterMath(k);
  RegisterClampLike(k);
  RegisterActivations(k);
  k.Register("aten.to_dtype", [](Ctx c) -> Result {
    return std::vector<HostTensor>{c.inputs[0].To(c.output_dtypes[0])};
  });
}

}  // namespace coil
