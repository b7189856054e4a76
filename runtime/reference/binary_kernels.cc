// Reference kernels of the binary elementwise ops (the ops of ir/ops/binary_ops.cc):
// tensor-tensor ops (arithmetic, comparisons, logical and bitwise ops), their tensor-scalar
// forms and the ternary ops (where, lerp, addcmul, addcdiv, masked_fill).
//
// Binary ops convert both operands to the dtype torch computes in (the promoted dtype; for
// true division and atan2 the floating output dtype) before applying the function, so e.g. an
// int64 compared with a float32 is compared as float32, and a Python-number `other` is cast as
// torch casts a wrapped number. Integer division by zero is an error, as in torch.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"

namespace coil {
namespace {

using Ctx = const KernelContext&;
using Result = absl::StatusOr<std::vector<HostTensor>>;

// One binary function in both arithmetic flavours. `fi` sets *div_by_zero on an integer
// division by zero.
struct BinaryFn {
  std::function<double(double, double)> fd;
  std::function<int64_t(int64_t, int64_t, bool* div_by_zero)> fi;
};

// Makes the function of an op for one call; `compute` is the dtype operands are converted to.
using BinaryFactory = std::function<BinaryFn(Ctx ctx, DType compute)>;

int64_t PowInt(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp % 2 == 0) ? 1 : -1;
    return 0;
  }
  int64_t result = 1;
  while (exp > 0) {
    if (exp & 1) result = WrapMul(result, base);
    base = WrapMul(base, base);
    exp >>= 1;
  }
  return result;
}

// Integer division rounding toward zero / -inf; `b` nonzero. INT64_MIN / -1 wraps.
int64_t DivTruncInt(int64_t a, int64_t b) { return b == -1 ? WrapSub(0, a) : a / b; }
int64_t DivFloorInt(int64_t a, int64_t b) {
  if (b == -1) return WrapSub(0, a);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t FmodInt(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }
int64_t RemainderInt(int64_t a, int64_t b) {
  int64_t r = FmodInt(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// torch's div_floor_floating, each step rounded to the compute dtype.
double DivFloorFloat(double a, double b, DType t) {
  if (b == 0) return a / b;
  double mod = std::fmod(a, b);
  double div = CastDouble((a - mod) / b, t);
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1;
  return floordiv;
}

double RemainderFloat(double a, double b, DType t) {
  double mod = std::fmod(a, b);
  if (mod != 0 && ((b < 0) != (mod < 0))) mod = CastDouble(mod + b, t);
  return mod;
}

template <typename F>
BinaryFn IntDiv(F f) {
  BinaryFn fn;
  fn.fi = [f](int64_t a, int64_t b, bool* zero) -> int64_t {
    if (b == 0) {
      *zero = true;
      return 0;
    }
    return f(a, b);
  };
  return fn;
}

// alpha as the dtype torch multiplies in (float for reduced floating types).
double AlphaD(Ctx c, DType compute) {
  return CastDouble(*GetFloat(c.attrs, "alpha"),
                    compute == proto::FLOAT64 ? proto::FLOAT64 : proto::FLOAT32);
}
int64_t AlphaI(Ctx c, DType compute) { return ScalarAsInt(c.attrs.find("alpha")->second, compute); }

BinaryFn Cmp(std::function<bool(double, double)> fd, std::function<bool(int64_t, int64_t)> fi) {
  return {[fd](double a, double b) { return fd(a, b) ? 1.0 : 0.0; },
          [fi](int64_t a, int64_t b, bool*) -> int64_t { return fi(a, b) ? 1 : 0; }};
}

const absl::flat_hash_map<std::string, BinaryFactory>& BinaryFns() {
  static const auto* fns = new absl::flat_hash_map<std::string, BinaryFactory>{
      {"add",
       [](Ctx c, DType t) -> BinaryFn {
         double ad = AlphaD(c, t);
         int64_t ai = IsFloating(t) ? 0 : AlphaI(c, t);
         return {[ad](double a, double b) { return a + ad * b; },
                 [ai](int64_t a, int64_t b, bool*) { return WrapAdd(a, WrapMul(ai, b)); }};
       }},
      {"sub",
       [](Ctx c, DType t) -> BinaryFn {
         double ad = AlphaD(c, t);
         int64_t ai = IsFloating(t) ? 0 : AlphaI(c, t);
         return {[ad](double a, double b) { return a - ad * b; },
                 [ai](int64_t a, int64_t b, bool*) { return WrapSub(a, WrapMul(ai, b)); }};
       }},
      {"mul",
       [](Ctx, DType) -> BinaryFn {
         return {[](double a, double b) { return a * b; },
                 [](int64_t a, int64_t b, bool*) { return WrapMul(a, b); }};
       }},
      {"div",
       [](Ctx c, DType t) -> BinaryFn {
         std::string mode = *GetString(c.attrs, "rounding_mode");
         if (mode == "trunc") {
           BinaryFn fn = IntDiv(DivTruncInt);
           fn.fd = [t](double a, double b) { return std::trunc(CastDouble(a / b, t)); };
           return fn;
         }
         if (mode == "floor") {
           BinaryFn fn = IntDiv(DivFloorInt);
           fn.fd = [t](double a, double b) { return DivFloorFloat(a, b, t); };
           return fn;
         }
         return {[](double a, double b) { return a / b; }, nullptr};
       }},
      {"floor_divide",
       [](Ctx, DType t) -> BinaryFn {
         BinaryFn fn = IntDiv(DivFloorInt);
         fn.fd = [t](double a, double b) { return DivFloorFloat(a, b, t); };
         return fn;
       }},
      {"remainder",
       [](Ctx, DType t) -> BinaryFn {
         BinaryFn fn = IntDiv(RemainderInt);
         fn.fd = [t](double a, double b) { return RemainderFloat(a, b, t); };
         return fn;
       }},
      {"fmod",
       [](Ctx, DType) -> BinaryFn {
         BinaryFn fn = IntDiv(FmodInt);
         fn.fd = [](double a, double b) { return std::fmod(a, b); };
         return fn;
       }},
      {"pow",
       [](Ctx, DType) -> BinaryFn {
         return {[](double a, double b) { return std::pow(a, b); },
                 [](int64_t a, int64_t b, bool*) { return PowInt(a, b); }};
       }},
      {"maximum",
       [](Ctx, DType) -> BinaryFn {
         return {[](double a, double b) {
                   return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
                 },
                 [](int64_t a, int64_t b, bool*) { return std::max(a, b); }};
       }},
      {"minimum",
       [](Ctx, DType) -> BinaryFn {
         return {[](double a, double b) {
                   return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
                 },
                 [](int64_t a, int64_t b, bool*) { return std::min(a, b); }};
       }},
      {"fmax",
       [](Ctx, DType) -> BinaryFn {
         // NaN is ignored; on a tie a (torch: fmax(-0., 0.) is -0., fmax(0., -0.) is 0.;
         // std::fmax may give +0 for both).
         return {[](double a, double b) {
                   return std::isnan(b) ? a : std::isnan(a) ? b : (a < b ? b : a);
                 },
                 [](int64_t a, int64_t b, bool*) { return std::max(a, b); }};
       }},
      {"fmin",
       [](Ctx, DType) -> BinaryFn {
         return {[](double a, double b) {  // as fmax: fmin(-0., 0.) is -0., fmin(0., -0.) 0.
                   return std::isnan(b) ? a : std::isnan(a) ? b : (b < a ? b : a);
                 },
                 [](int64_t a, int64_t b, bool*) { return std::min(a, b); }};
       }},
      {"atan2",
       [](Ctx, DType) -> BinaryFn {
         return {[](double a, double b) { return std::atan2(a, b); }, nullptr};
       }},
      {"copysign",
       [](Ctx, DType) -> BinaryFn {
         return {[](double a, double b) { return std::copysign(a, b); }, nullptr};
       }},
      {"hypot",
       [](Ctx, DType) -> BinaryFn {
         return {[](double a, double b) { return std::hypot(a, b); }, nullptr};
       }},
      {"eq", [](Ctx, DType) { return Cmp(std::equal_to<double>(), std::equal_to<int64_t>()); }},
      {"ne",
       [](Ctx, DType) { return Cmp(std::not_equal_to<double>(), std::not_equal_to<int64_t>()); }},
      {"lt", [](Ctx, DType) { return Cmp(std::less<double>(), std::less<int64_t>()); }},
      {"le", [](Ctx, DType) { return Cmp(std::less_equal<double>(), std::less_equal<int64_t>()); }},
      {"gt", [](Ctx, DType) { return Cmp(std::greater<double>(), std::greater<int64_t>()); }},
      {"ge",
       [](Ctx, DType) { return Cmp(std::greater_equal<double>(), std::greater_equal<int64_t>()); }},
      {"bitwise_and",
       [](Ctx, DType) -> BinaryFn {
         return {nullptr, [](int64_t a, int64_t b, bool*) { return a & b; }};
       }},
      {"bitwise_or",
       [](Ctx, DType) -> BinaryFn {
         return {nullptr, [](int64_t a, int64_t b, bool*) { return a | b; }};
       }},
      {"bitwise_xor",
       [](Ctx, DType) -> BinaryFn {
         return {nullptr, [](int64_t a, int64_t b, bool*) { return a ^ b; }};
       }},
  };
  return *fns;
}

// Applies `fn` to two broadcast operands converted to `compute`.
Result RunBinary(Ctx c, const std::vector<HostTensor>& ins, DType compute, const BinaryFn& fn) {
  DType out = c.output_dtypes[0];
  const std::vector<int64_t>& shape = c.output_shapes[0];
  if (IsFloating(compute)) {
    COIL_CHECK(fn.fd != nullptr) << "no floating path";
    return std::vector<HostTensor>{
        MapDouble(ins, shape, out, compute, [&](const double* v) { return fn.fd(v[0], v[1]); })};
  }
  COIL_CHECK(fn.fi != nullptr) << "no integer path";
  bool div_by_zero = false;
  HostTensor r = MapInt(ins, shape, out, compute,
                        [&](const int64_t* v) { return fn.fi(v[0], v[1], &div_by_zero); });
  if (div_by_zero) return absl::InvalidArgumentError("integer division by zero");
  return std::vector<HostTensor>{r};
}

bool IsComparison(const std::string& base) {
  return base == "eq" || base == "ne" || base == "lt" || base == "le" || base == "gt" ||
         base == "ge";
}

// A rank-0 tensor holding a Python-number attribute converted to `compute`.
HostTensor ScalarTensor(const Attribute& a, DType compute) {
  HostTensor t = HostTensor::Zeros(compute, {});
  if (IsFloating(compute)) {
    t.StoreDouble(0, ScalarAsDouble(a, compute));
  } else {
    t.StoreInt(0, ScalarAsInt(a, compute));
  }
  return t;
}

// Registers aten.<base> (tensor-tensor) and, when `scalar`, aten.<base>_scalar. `fn_name` is the
// function's key in BinaryFns(); `swap` computes fn(other, self) (rsub).
void RegisterBinary(ReferenceKernels& k, const std::string& base, const std::string& fn_name,
                    bool scalar, bool swap = false) {
  const BinaryFactory& make = BinaryFns().at(fn_name);
  bool cmp = IsComparison(base);
  k.Register(absl::StrCat("aten.", base), [&make, cmp, swap](Ctx c) -> Result {
    DType compute = cmp ? ComputeDType(c.inputs) : c.output_dtypes[0];
    std::vector<HostTensor> ins = {c.inputs[0], c.inputs[1]};
    if (swap) std::swap(ins[0], ins[1]);
    return RunBinary(c, ins, compute, make(c, compute));
  });
  if (!scalar) return;
  k.Register(absl::StrCat("aten.", base, "_scalar"), [&make, cmp, swap](Ctx c) -> Result {
    const Attribute& other = c.attrs.find("other")->second;
    const Attribute* scalars[] = {&other};
    DType compute = cmp ? ComputeDType(c.inputs, scalars) : c.output_dtypes[0];
    std::vector<HostTensor> ins = {c.inputs[0], ScalarTensor(other, compute)};
    if (swap) std::swap(ins[0], ins[1]);
    return RunBinary(c, ins, compute, make(c, compute));
  });
}

void RegisterTensorAndScalarKernels(ReferenceKernels& k) {
  for (const char* name : {"add", "sub", "mul", "div", "remainder", "fmod", "pow", "eq", "ne", "lt",
                           "le", "gt", "ge"}) {
    RegisterBinary(k, name, name, /*scalar=*/true);
  }
  RegisterBinary(k, "rsub", "sub", /*scalar=*/true, /*swap=*/true);
  for (const char* name : {"floor_divide", "maximum", "minimum", "fmax", "fmin", "atan2",
                           "copysign", "hypot", "bitwise_and", "bitwise_or", "bitwise_xor"}) {
    RegisterBinary(k, name, name, /*scalar=*/false);
  }
  struct Logical {
    const char* name;
    bool (*fn)(bool, bool);
  };
  for (Logical l : {Logical{"aten.logical_and", [](bool a, bool b) { return a && b; }},
                    Logical{"aten.logical_or", [](bool a, bool b) { return a || b; }},
                    Logical{"aten.logical_xor", [](bool a, bool b) { return a != b; }}}) {
    bool (*fn)(bool, bool) = l.fn;
    k.Register(l.name, [fn](Ctx c) -> Result {
      // Truthiness in each input's own dtype (NaN is true).
      return std::vector<HostTensor>{
          MapDouble(c.inputs, c.output_shapes[0], c.output_dtypes[0], proto::FLOAT64,
                    [fn](const double* v) { return fn(v[0] != 0.0, v[1] != 0.0) ? 1.0 : 0.0; })};
    });
  }
}

void RegisterTernaryKernels(ReferenceKernels& k) {
  k.Register("aten.where", [](Ctx c) -> Result {
    DType out = c.output_dtypes[0];
    HostTensor r = HostTensor::Zeros(out, c.output_shapes[0]);
    const HostTensor& cond = c.inputs[0];
    ForEachBroadcast(c.inputs, c.output_shapes[0], [&](int64_t flat, absl::Span<const int64_t> o) {
      int which = cond.LoadInt(o[0]) != 0 ? 1 : 2;
      if (IsFloating(out)) {
        r.StoreDouble(flat, LoadAsDouble(c.inputs[which], o[which], out));
      } else {
        r.StoreInt(flat, LoadAsInt(c.inputs[which], o[which], out));
      }
    });
    return std::vector<HostTensor>{r};
  });
  k.Register("aten.lerp", [](Ctx c) -> Result {
    DType out = c.output_dtypes[0];
    return std::vector<HostTensor>{
        MapDouble(c.inputs, c.output_shapes[0], out, out, [](const double* v) {
          double s = v[0], e = v[1], w = v[2];
          return std::fabs(w) < 0.5 ? s + w * (e - s) : e - (e - s) * (1.0 - w);
        })};
  });
  k.Register("aten.addcmul", [](Ctx c) -> Result {
    DType out = c.output_dtypes[0];
    const Attribute& value = c.attrs.find("value")->second;
    if (IsFloating(out)) {
      double vd = ScalarAsDouble(value, out == proto::FLOAT64 ? out : proto::FLOAT32);
      return std::vector<HostTensor>{
          MapDouble(c.inputs, c.output_shapes[0], out, out,
                    [vd](const double* v) { return v[0] + vd * v[1] * v[2]; })};
    }
    int64_t vi = ScalarAsInt(value, out);
    return std::vector<HostTensor>{
        MapInt(c.inputs, c.output_shapes[0], out, out,
               [vi](const int64_t* v) { return WrapAdd(v[0], WrapMul(vi, WrapMul(v[1], v[2]))); })};
  });
  k.Register("aten.addcdiv", [](Ctx c) -> Result {
    DType out = c.output_dtypes[0];
    double vd =
        ScalarAsDouble(c.attrs.find("value")->second, out == proto::FLOAT64 ? out : proto::FLOAT32);
    return std::vector<HostTensor>{
        MapDouble(c.inputs, c.output_shapes[0], out, out,
                  [vd](const double* v) { return v[0] + vd * (v[1] / v[2]); })};
  });
  k.Register("aten.masked_fill", [](Ctx c) -> Result {
    DType out = c.output_dtypes[0];
    const Attribute& value = c.attrs.find("value")->second;
    HostTensor r = HostTensor::Zeros(out, c.output_shapes[0]);
    const HostTensor& self = c.inputs[0];
    const HostTensor& mask = c.inputs[1];
    ForEachBroadcast(c.inputs, c.output_shapes[0], [&](int64_t flat, absl::Span<const int64_t> o) {
      bool fill = mask.LoadInt(o[1]) != 0;
      if (IsFloating(out)) {
        r.StoreDouble(flat, fill ? ScalarAsDouble(value, out) : self.LoadDouble(o[0]));
      } else {
        r.StoreInt(flat, fill ? ScalarAsInt(value, out) : self.LoadInt(o[0]));
      }
    });
    return std::vector<HostTensor>{r};
  });
}

}  // namespace

void RegisterBinaryKernels(ReferenceKernels& k) {
  RegisterTensorAndScalarKernels(k);
  RegisterTernaryKernels(k);
}

}  // namespace coil
