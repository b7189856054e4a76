// Reference kernels of the prims opset (docs/prims.md), part 1: elementwise prims, reductions
// and scans. Shape, creation, random, indexing and copy_to kernels are in prims_kernels_2.cc.
//
// The meta functions guarantee equal operand shapes and dtypes, so every elementwise kernel
// computes in the operands' own dtype: floating values in double (rounded to the dtype on
// store), integers and bools in int64 (wrapped to the dtype on store).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "ir/ops/meta_util.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"

namespace coil {

void RegisterPrimsKernels2(ReferenceKernels& k);  // prims_kernels_2.cc

namespace {

using Ctx = const KernelContext&;
using Result = absl::StatusOr<std::vector<HostTensor>>;
using DFn = std::function<double(const double*)>;
// Integer functions may fail on data (division by zero): they set `err` and return 0.
using IFn = std::function<int64_t(const int64_t*, std::string& err)>;

// Runs `fd` on floating operands and `fi` on integer/bool operands; the output has
// ctx.output_dtypes[0] (a bool output stores v != 0).
Result Run(Ctx ctx, const char* prim, const DFn& fd, const IFn& fi) {
  DType in = ctx.inputs[ctx.inputs.size() - 1].dtype();  // where: the value operands' dtype
  DType out = ctx.output_dtypes[0];
  const std::vector<int64_t>& shape = ctx.output_shapes[0];
  if (IsFloating(in)) {
    COIL_CHECK(fd != nullptr) << prim << " has no floating path";
    return std::vector<HostTensor>{MapDouble(ctx.inputs, shape, out, in, fd)};
  }
  COIL_CHECK(fi != nullptr) << prim << " has no integer path";
  std::string err;
  HostTensor t = MapInt(ctx.inputs, shape, out, in, [&](const int64_t* v) {
    return err.empty() ? fi(v, err) : int64_t{0};
  });
  if (!err.empty()) return absl::InvalidArgumentError(absl::StrCat(prim, ": ", err));
  return std::vector<HostTensor>{t};
}

void Reg(ReferenceKernels& k, const std::string& name, DFn fd, IFn fi) {
  std::string prim = "prims." + name;
  k.Register(prim, [prim, fd, fi](Ctx ctx) { return Run(ctx, prim.c_str(), fd, fi); });
}

double Sign(double x) { return (0 < x) - (x < 0); }  // NaN gives 0, as torch.sign

// Python's % on integers (the result has the divisor's sign); b != 0.
int64_t PyMod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // also avoids INT64_MIN % -1
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Integer power by squaring, wrapping on overflow; e >= 0.
int64_t IPow(int64_t base, int64_t e) {
  int64_t r = 1;
  while (e > 0) {
    if (e & 1) r = WrapMul(r, base);
    base = WrapMul(base, base);
    e >>= 1;
  }
  return r;
}

double NanMax(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double NanMin(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

void RegisterElementwise(ReferenceKernels& k) {
  struct FloatFn {
    const char* name;
    double (*fn)(double);
  };
  static const FloatFn kFloat[] = {
      {"exp", [](double x) { return std::exp(x); }},
      {"exp2", [](double x) { return std::exp2(x); }},
      {"expm1", [](double x) { return std::expm1(x); }},
      {"log", [](double x) { return std::log(x); }},
      {"log2", [](double x) { return std::log2(x); }},
      {"log1p", [](double x) { return std::log1p(x); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},
      {"rsqrt", [](double x) { return 1.0 / std::sqrt(x); }},
      {"sin", [](double x) { return std::sin(x); }},
      {"cos", [](double x) { return std::cos(x); }},
      {"tan", [](double x) { return std::tan(x); }},
      {"asin", [](double x) { return std::asin(x); }},
      {"acos", [](double x) { return std::acos(x); }},
      {"atan", [](double x) { return std::atan(x); }},
      {"sinh", [](double x) { return std::sinh(x); }},
      {"cosh", [](double x) { return std::cosh(x); }},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"asinh", [](double x) { return std::asinh(x); }},
      {"acosh", [](double x) { return std::acosh(x); }},
      {"atanh", [](double x) { return std::atanh(x); }},
      {"erf", [](double x) { return std::erf(x); }},
      {"erfc", [](double x) { return std::erfc(x); }},
      {"ceil", [](double x) { return std::ceil(x); }},
      {"floor", [](double x) { return std::floor(x); }},
      {"round", [](double x) { return std::nearbyint(x); }},  // default mode: half to even
      {"trunc", [](double x) { return std::trunc(x); }},
  };
  for (const FloatFn& f : kFloat) {
    double (*fn)(double) = f.fn;
    Reg(k, f.name, [fn](const double* v) { return fn(v[0]); }, nullptr);
  }
  Reg(k, "abs", [](const double* v) { return std::fabs(v[0]); },
      [](const int64_t* v, std::string&) { return v[0] < 0 ? WrapSub(0, v[0]) : v[0]; });
  Reg(k, "neg", [](const double* v) { return -v[0]; },
      [](const int64_t* v, std::string&) { return WrapSub(0, v[0]); });
  Reg(k, "sign", [](const double* v) { return Sign(v[0]); },
      [](const int64_t* v, std::string&) { return int64_t{(0 < v[0]) - (v[0] < 0)}; });
  Reg(k, "signbit", [](const double* v) { return std::signbit(v[0]) ? 1.0 : 0.0; },
      [](const int64_t* v, std::string&) { return int64_t{v[0] < 0}; });
  k.Register("prims.bitwise_not", [](Ctx ctx) -> Result {
    bool logical = IsBool(ctx.inputs[0].dtype());
    return Run(ctx, "prims.bitwise_not", nullptr, [logical](const int64_t* v, std::string&) {
      return logical ? int64_t{v[0] == 0} : ~v[0];
    });
  });
  // Bool operands arrive as 0/1 and the bool output stores v != 0, so bool add and mul are
  // logical or and and.
  Reg(k, "add", [](const double* v) { return v[0] + v[1]; },
      [](const int64_t* v, std::string&) { return WrapAdd(v[0], v[1]); });
  Reg(k, "sub", [](const double* v) { return v[0] - v[1]; },
      [](const int64_t* v, std::string&) { return WrapSub(v[0], v[1]); });
  Reg(k, "mul", [](const double* v) { return v[0] * v[1]; },
      [](const int64_t* v, std::string&) { return WrapMul(v[0], v[1]); });
  Reg(k, "div", [](const double* v) { return v[0] / v[1]; },
      [](const int64_t* v, std::string& err) -> int64_t {
        if (v[1] == 0) {
          err = "integer division by zero";
          return 0;
        }
        if (v[1] == -1) return WrapSub(0, v[0]);  // INT64_MIN / -1 wraps
        return v[0] / v[1];
      });
  Reg(k, "remainder",
      [](const double* v) {
        double m = std::fmod(v[0], v[1]);
        if (m != 0 && ((v[1] < 0) != (m < 0))) m += v[1];
        return m;
      },
      [](const int64_t* v, std::string& err) -> int64_t {
        if (v[1] == 0) {
          err = "integer remainder by zero";
          return 0;
        }
        return PyMod(v[0], v[1]);
      });
  Reg(k, "fmod", [](const double* v) { return std::fmod(v[0], v[1]); },
      [](const int64_t* v, std::string& err) -> int64_t {
        if (v[1] == 0) {
          err = "integer fmod by zero";
          return 0;
        }
        return v[1] == -1 ? 0 : v[0] % v[1];
      });
  Reg(k, "pow", [](const double* v) { return std::pow(v[0], v[1]); },
      [](const int64_t* v, std::string& err) -> int64_t {
        if (v[1] < 0) {
          err = absl::StrCat("integer ", v[0], " to the negative power ", v[1],
                             " is not allowed");
          return 0;
        }
        return IPow(v[0], v[1]);
      });
  Reg(k, "maximum", [](const double* v) { return NanMax(v[0], v[1]); },
      [](const int64_t* v, std::string&) { return std::max(v[0], v[1]); });
  Reg(k, "minimum", [](const double* v) { return NanMin(v[0], v[1]); },
      [](const int64_t* v, std::string&) { return std::min(v[0], v[1]); });
  Reg(k, "atan2", [](const double* v) { return std::atan2(v[0], v[1]); }, nullptr);
  Reg(k, "hypot", [](const double* v) { return std::hypot(v[0], v[1]); }, nullptr);
  Reg(k, "bitwise_and", nullptr, [](const int64_t* v, std::string&) { return v[0] & v[1]; });
  Reg(k, "bitwise_or", nullptr, [](const int64_t* v, std::string&) { return v[0] | v[1]; });
  Reg(k, "bitwise_xor", nullptr, [](const int64_t* v, std::string&) { return v[0] ^ v[1]; });
  // Comparisons: NaN compares unequal to everything (C++ semantics, as torch).
  Reg(k, "eq", [](const double* v) { return v[0] == v[1] ? 1.0 : 0.0; },
      [](const int64_t* v, std::string&) { return int64_t{v[0] == v[1]}; });
  Reg(k, "ne", [](const double* v) { return v[0] != v[1] ? 1.0 : 0.0; },
      [](const int64_t* v, std::string&) { return int64_t{v[0] != v[1]}; });
  Reg(k, "lt", [](const double* v) { return v[0] < v[1] ? 1.0 : 0.0; },
      [](const int64_t* v, std::string&) { return int64_t{v[0] < v[1]}; });
  Reg(k, "le", [](const double* v) { return v[0] <= v[1] ? 1.0 : 0.0; },
      [](const int64_t* v, std::string&) { return int64_t{v[0] <= v[1]}; });
  Reg(k, "gt", [](const double* v) { return v[0] > v[1] ? 1.0 : 0.0; },
      [](const int64_t* v, std::string&) { return int64_t{v[0] > v[1]}; });
  Reg(k, "ge", [](const double* v) { return v[0] >= v[1] ? 1.0 : 0.0; },
      [](const int64_t* v, std::string&) { return int64_t{v[0] >= v[1]}; });
  // where(cond, a, b): Run computes in b's dtype; cond arrives as 0/1.
  Reg(k, "where", [](const double* v) { return v[0] != 0 ? v[1] : v[2]; },
      [](const int64_t* v, std::string&) { return v[0] != 0 ? v[1] : v[2]; });
  k.Register("prims.convert_element_type", [](Ctx ctx) -> Result {
    return std::vector<HostTensor>{ctx.inputs[0].To(ctx.output_dtypes[0])};
  });
}

// --- reductions and scans --------------------------------------------------------------------

enum class Red { kSum, kProd, kMax, kMin };

template <typename T>
T Combine(Red r, T acc, T v) {
  switch (r) {
    case Red::kSum:
      if constexpr (std::is_integral_v<T>) return WrapAdd(acc, v);
      return acc + v;
    case Red::kProd:
      if constexpr (std::is_integral_v<T>) return WrapMul(acc, v);
      return acc * v;
    case Red::kMax:
      if constexpr (std::is_floating_point_v<T>) return NanMax(acc, v);
      return std::max(acc, v);
    case Red::kMin:
      if constexpr (std::is_floating_point_v<T>) return NanMin(acc, v);
      return std::min(acc, v);
  }
  return acc;
}

template <typename T>
T Identity(Red r) {
  switch (r) {
    case Red::kSum:
      return 0;
    case Red::kProd:
      return 1;
    case Red::kMax:
      return std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity()
                                         : std::numeric_limits<T>::lowest();
    case Red::kMin:
      return std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity()
                                         : std::numeric_limits<T>::max();
  }
  return 0;
}

// For every element of x in row-major order: fn(flat output position, storage offset).
template <typename Fn>
void ForEachReduced(const HostTensor& x, const IntList& reduced, Fn&& fn) {
  const int64_t rank = x.rank();
  std::vector<bool> is_reduced(rank, false);
  for (int64_t d : reduced) is_reduced[d] = true;
  std::vector<int64_t> ostride(rank, 0);
  int64_t s = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (is_reduced[d]) continue;
    ostride[d] = s;
    s *= x.shape()[d];
  }
  ForEachIndex(x.shape(), [&](absl::Span<const int64_t> idx) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d) o += idx[d] * ostride[d];
    fn(o, x.StorageOffset(idx));
  });
}

template <typename T>
Result ReduceT(Ctx ctx, Red r) {
  const HostTensor& x = ctx.inputs[0];
  IntList dims = meta::IntsAttr(ctx.attrs, "dims");
  HostTensor out = NewOutput(ctx);
  std::vector<T> acc(out.numel(), Identity<T>(r));
  ForEachReduced(x, dims, [&](int64_t o, int64_t off) {
    T v;
    if constexpr (std::is_integral_v<T>) {
      v = x.LoadInt(off);
    } else {
      v = x.LoadDouble(off);
    }
    acc[o] = Combine(r, acc[o], v);
  });
  for (int64_t i = 0; i < out.numel(); ++i) {
    if constexpr (std::is_integral_v<T>) {
      out.StoreInt(i, acc[i]);
    } else {
      out.StoreDouble(i, acc[i]);
    }
  }
  return std::vector<HostTensor>{out};
}

ReferenceKernel Reduce(const char* prim, Red r) {
  return [prim, r](Ctx ctx) -> Result {
    const HostTensor& x = ctx.inputs[0];
    if (r == Red::kMax || r == Red::kMin) {
      for (int64_t d : meta::IntsAttr(ctx.attrs, "dims")) {
        if (x.shape()[d] == 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              prim, ": cannot reduce over dim ", d, " of size 0 (the reduction has no identity)"));
        }
      }
    }
    return IsFloating(x.dtype()) ? ReduceT<double>(ctx, r) : ReduceT<int64_t>(ctx, r);
  };
}

// argmax / argmin: the first extreme along `dim`; NaN counts as the extreme.
template <typename T>
Result ArgReduceT(Ctx ctx, bool is_max) {
  const HostTensor& x = ctx.inputs[0];
  int64_t dim = meta::IntAttr(ctx.attrs, "dim");
  HostTensor out = NewOutput(ctx);
  std::vector<T> best(out.numel());
  std::vector<int64_t> arg(out.numel(), -1);
  std::vector<int64_t> pos(out.numel(), 0);  // position along dim of the next element
  ForEachReduced(x, {dim}, [&](int64_t o, int64_t off) {
    int64_t k = pos[o]++;
    T v;
    if constexpr (std::is_integral_v<T>) {
      v = x.LoadInt(off);
    } else {
      v = x.LoadDouble(off);
    }
    bool take;
    if (arg[o] < 0) {
      take = true;
    } else if constexpr (std::is_floating_point_v<T>) {
      take = !std::isnan(best[o]) && (std::isnan(v) || (is_max ? v > best[o] : v < best[o]));
    } else {
      take = is_max ? v > best[o] : v < best[o];
    }
    if (take) {
      best[o] = v;
      arg[o] = k;
    }
  });
  for (int64_t i = 0; i < out.numel(); ++i) out.StoreInt(i, arg[i]);
  return std::vector<HostTensor>{out};
}

ReferenceKernel ArgReduce(const char* prim, bool is_max) {
  return [prim, is_max](Ctx ctx) -> Result {
    const HostTensor& x = ctx.inputs[0];
    if (x.shape()[meta::IntAttr(ctx.attrs, "dim")] == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(prim, ": cannot reduce over a dim of size 0"));
    }
    return IsFloating(x.dtype()) ? ArgReduceT<double>(ctx, is_max)
                                 : ArgReduceT<int64_t>(ctx, is_max);
  };
}

ReferenceKernel Scan(Red r) {
  return [r](Ctx ctx) -> Result {
    const HostTensor& x = ctx.inputs[0];
    HostTensor out = NewOutput(ctx);
    int64_t dim = meta::IntAttr(ctx.attrs, "dim");
    bool fp = IsFloating(x.dtype());
    ForEachLine(x, out, dim, [&](const std::vector<int64_t>& xo, const std::vector<int64_t>& oo) {
      double dacc = Identity<double>(r);
      int64_t iacc = Identity<int64_t>(r);
      for (size_t i = 0; i < xo.size(); ++i) {
        if (fp) {
          dacc = Combine(r, dacc, x.LoadDouble(xo[i]));
          out.StoreDouble(oo[i], dacc);
        } else {
          iacc = Combine(r, iacc, x.LoadInt(xo[i]));
          out.StoreInt(oo[i], iacc);
        }
      }
    });
    return std::vector<HostTensor>{out};
  };
}

void RegisterReductions(ReferenceKernels& k) {
  k.Register("prims.sum", Reduce("prims.sum", Red::kSum));
  k.Register("prims.prod", Reduce("prims.prod", Red::kProd));
  k.Register("prims.amax", Reduce("prims.amax", Red::kMax));
  k.Register("prims.amin", Reduce("prims.amin", Red::kMin));
  k.Register("prims.argmax", ArgReduce("prims.argmax", true));
  k.Register("prims.argmin", ArgReduce("prims.argmin", false));
  k.Register("prims.cumsum", Scan(Red::kSum));
  k.Register("prims.cumprod", Scan(Red::kProd));
}

}  // namespace

void RegisterPrimsKernels(ReferenceKernels& k) {
  RegisterElementwise(k);
  RegisterReductions(k);
  RegisterPrimsKernels2(k);
}

}  // namespace coil
