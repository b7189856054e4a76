// Scalar values as CUDA C++ text (see value_source.h).
#include "codegen_cuda/internal/value_source.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/half.h"

namespace coil::codegen_cuda_internal {
namespace {

bool IsF32Like(DType t) {
  return t == proto::FLOAT32 || t == proto::FLOAT16 || t == proto::BFLOAT16 || t == proto::BOOL;
}

std::string FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return absl::StrFormat("__int_as_float(0x%08x)", u);
}

std::string DoubleBits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return absl::StrFormat("__longlong_as_double(0x%016xLL)", u);
}

// The floating-path expression of `op` over compute-type operands `a` (`f`: the f32 suffix).
std::string FloatExpr(ScalarOp op, const std::vector<std::string>& a, bool f32) {
  auto fn = [&](const char* name) { return absl::StrCat(name, f32 ? "f" : "", "(", a[0], ")"); };
  auto fn2 = [&](const char* name) {
    return absl::StrCat(name, f32 ? "f" : "", "(", a[0], ", ", a[1], ")");
  };
  const char* one = f32 ? "1.0f" : "1.0";
  switch (op) {
    case ScalarOp::kExp: return fn("exp");
    case ScalarOp::kExp2: return fn("exp2");
    case ScalarOp::kExpm1: return fn("expm1");
    case ScalarOp::kLog: return fn("log");
    case ScalarOp::kLog2: return fn("log2");
    case ScalarOp::kLog1p: return fn("log1p");
    case ScalarOp::kSqrt: return fn("sqrt");
    case ScalarOp::kRsqrt: return absl::StrCat("(", one, " / ", fn("sqrt"), ")");
    case ScalarOp::kSin: return fn("sin");
    case ScalarOp::kCos: return fn("cos");
    case ScalarOp::kTan: return fn("tan");
    case ScalarOp::kAsin: return fn("asin");
    case ScalarOp::kAcos: return fn("acos");
    case ScalarOp::kAtan: return fn("atan");
    case ScalarOp::kSinh: return fn("sinh");
    case ScalarOp::kCosh: return fn("cosh");
    case ScalarOp::kTanh: return fn("tanh");
    case ScalarOp::kAsinh: return fn("asinh");
    case ScalarOp::kAcosh: return fn("acosh");
    case ScalarOp::kAtanh: return fn("atanh");
    case ScalarOp::kErf: return f32 ? absl::StrCat("coil_erff(", a[0], ")") : fn("erf");
    case ScalarOp::kErfc: return fn("erfc");
    case ScalarOp::kCeil: return fn("ceil");
    case ScalarOp::kFloor: return fn("floor");
    case ScalarOp::kRound: return fn("rint");  // half to even
    case ScalarOp::kTrunc: return fn("trunc");
    case ScalarOp::kAbs: return fn("fabs");
    case ScalarOp::kNeg: return absl::StrCat("(-", a[0], ")");
    case ScalarOp::kSign: return absl::StrCat("coil_sign(", a[0], ")");
    case ScalarOp::kSignbit:
      return f32 ? absl::StrCat("(__float_as_int(", a[0], ") < 0)")
                 : absl::StrCat("(__double_as_longlong(", a[0], ") < 0)");
    case ScalarOp::kAdd: return absl::StrCat("(", a[0], " + ", a[1], ")");
    case ScalarOp::kSub: return absl::StrCat("(", a[0], " - ", a[1], ")");
    case ScalarOp::kMul: return absl::StrCat("(", a[0], " * ", a[1], ")");
    case ScalarOp::kDiv: return absl::StrCat("(", a[0], " / ", a[1], ")");
    case ScalarOp::kRemainder: return absl::StrCat("coil_remainder(", a[0], ", ", a[1], ")");
    case ScalarOp::kFmod: return fn2("fmod");
    case ScalarOp::kPow: return fn2("pow");
    case ScalarOp::kMaximum: return absl::StrCat("coil_nanmax(", a[0], ", ", a[1], ")");
    case ScalarOp::kMinimum: return absl::StrCat("coil_nanmin(", a[0], ", ", a[1], ")");
    case ScalarOp::kAtan2: return fn2("atan2");
    case ScalarOp::kHypot: return fn2("hypot");
    case ScalarOp::kEq: return absl::StrCat("(", a[0], " == ", a[1], ")");
    case ScalarOp::kNe: return absl::StrCat("(", a[0], " != ", a[1], ")");
    case ScalarOp::kLt: return absl::StrCat("(", a[0], " < ", a[1], ")");
    case ScalarOp::kLe: return absl::StrCat("(", a[0], " <= ", a[1], ")");
    case ScalarOp::kGt: return absl::StrCat("(", a[0], " > ", a[1], ")");
    case ScalarOp::kGe: return absl::StrCat("(", a[0], " >= ", a[1], ")");
    case ScalarOp::kWhere: return absl::StrCat("(", a[0], " != 0 ? ", a[1], " : ", a[2], ")");
    default: return "";
  }
}

}  // namespace

const char* RegType(DType t) {
  switch (t) {
    case proto::FLOAT32: case proto::FLOAT16: case proto::BFLOAT16: return "float";
    case proto::FLOAT64: return "double";
    case proto::INT64: return "i64";
    case proto::INT32: return "int";
    case proto::INT8: return "signed char";
    case proto::UINT8: return "unsigned char";
    case proto::BOOL: return "bool";
    default: return "void";
  }
}

const char* MemType(DType t) {
  switch (t) {
    case proto::FLOAT16: case proto::BFLOAT16: return "unsigned short";
    case proto::BOOL: return "unsigned char";
    default: return RegType(t);
  }
}

int64_t TruncSatHost(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

std::string LiteralSource(DType t, double d, int64_t i) {
  switch (t) {
    case proto::FLOAT32: return FloatBits(static_cast<float>(d));
    case proto::FLOAT16: return FloatBits(HalfToFloat(FloatToHalf(static_cast<float>(d))));
    case proto::BFLOAT16:
      return FloatBits(BFloat16ToFloat(FloatToBFloat16(static_cast<float>(d))));
    case proto::FLOAT64: return DoubleBits(d);
    case proto::INT64: return absl::StrFormat("(i64)0x%016xULL", static_cast<uint64_t>(i));
    case proto::INT32: return absl::StrCat("(int)", static_cast<int32_t>(i));
    case proto::INT8: return absl::StrCat("(signed char)", static_cast<int8_t>(i));
    case proto::UINT8: return absl::StrCat("(unsigned char)", static_cast<uint8_t>(i));
    case proto::BOOL: return i != 0 ? "true" : "false";
    default: return "0";
  }
}

std::string ConvertSource(const std::string& x, DType from, DType to) {
  if (from == to) return x;
  const std::string p = absl::StrCat("(", x, ")");
  if (IsFloating(from)) {
    switch (to) {
      case proto::FLOAT32: return absl::StrCat("(float)", p);
      case proto::FLOAT64: return absl::StrCat("(double)", p);
      case proto::FLOAT16: return absl::StrCat("coil_round_f16((float)", p, ")");
      case proto::BFLOAT16: return absl::StrCat("coil_round_bf16((float)", p, ")");
      case proto::BOOL: return absl::StrCat("(", p, " != 0)");
      case proto::INT64: return absl::StrCat("coil_trunc_sat((double)", p, ")");
      default: return absl::StrCat("(", RegType(to), ")coil_trunc_sat((double)", p, ")");
    }
  }
  switch (to) {
    case proto::FLOAT32: return absl::StrCat("(float)(double)", p);
    case proto::FLOAT64: return absl::StrCat("(double)", p);
    case proto::FLOAT16: return absl::StrCat("coil_round_f16((float)(double)", p, ")");
    case proto::BFLOAT16: return absl::StrCat("coil_round_bf16((float)(double)", p, ")");
    case proto::BOOL: return absl::StrCat("(", p, " != 0)");
    default: return absl::StrCat("(", RegType(to), ")", p);
  }
}

std::string LoadElementSource(const std::string& elem, DType t) {
  switch (t) {
    case proto::FLOAT16: return absl::StrCat("coil_h2f(", elem, ")");
    case proto::BFLOAT16: return absl::StrCat("coil_bf2f(", elem, ")");
    case proto::BOOL: return absl::StrCat("(", elem, " != 0)");
    default: return elem;
  }
}

std::string StoreElementSource(const std::string& x, DType t) {
  switch (t) {
    case proto::FLOAT16: return absl::StrCat("coil_f2h(", x, ")");
    case proto::BFLOAT16: return absl::StrCat("coil_f2bf(", x, ")");
    case proto::BOOL: return absl::StrCat("(unsigned char)(", x, ")");
    default: return x;
  }
}

std::string StoreValueSource(const std::string& x, DType from, DType to) {
  if (to == proto::BFLOAT16 && from == proto::BFLOAT16) return absl::StrCat("coil_bf16_bits(", x, ")");
  if (to == proto::BFLOAT16 || to == proto::FLOAT16) {
    // ConvertSource to f32 is what ConvertSource to `to` rounds (a double is narrowed first).
    return StoreElementSource(ConvertSource(x, from, proto::FLOAT32), to);
  }
  return StoreElementSource(ConvertSource(x, from, to), to);
}

std::string ToI64Source(const std::string& x, DType t) {
  if (IsFloating(t)) return absl::StrCat("coil_trunc_sat((double)(", x, "))");
  return absl::StrCat("(i64)(", x, ")");
}

absl::StatusOr<std::string> ApplySource(ScalarOp op, const std::vector<ApplyOperand>& args,
                                        DType result, const std::string& dst, int kernel_id,
                                        int expr_id) {
  const DType in_dtype = args.back().dtype;
  const bool in_fp = IsFloating(in_dtype);
  if (in_fp ? !HasFloatPath(op) : !HasIntPath(op)) {
    return absl::InvalidArgumentError(absl::StrCat(ScalarOpName(op), " does not take ",
                                                   DTypeName(in_dtype), " operands"));
  }
  if (in_fp) {
    bool f32 = true;
    for (const ApplyOperand& a : args) f32 = f32 && IsF32Like(a.dtype);
    const char* ct = f32 ? "float" : "double";
    std::vector<std::string> a;
    for (const ApplyOperand& x : args) a.push_back(absl::StrCat("((", ct, ")", x.text, ")"));
    const DType from = ReturnsBool(op) ? proto::BOOL : (f32 ? proto::FLOAT32 : proto::FLOAT64);
    return absl::StrCat(dst, " = ", ConvertSource(FloatExpr(op, a, f32), from, result), ";");
  }
  std::vector<std::string> a;
  for (const ApplyOperand& x : args) a.push_back(absl::StrCat("((i64)", x.text, ")"));
  auto fail = [&](int kind, const std::string& value) {
    return absl::StrCat("coil_fail(coil_err, ", kind, ", ", kernel_id, ", ", expr_id, ", 0, ",
                        value, ", 0); coil_t = 0;");
  };
  std::string body;  // statements setting i64 coil_t
  switch (op) {
    case ScalarOp::kAbs: body = absl::StrCat("coil_t = ", a[0], " < 0 ? coil_wsub(0, ", a[0], ") : ", a[0], ";"); break;
    case ScalarOp::kNeg: body = absl::StrCat("coil_t = coil_wsub(0, ", a[0], ");"); break;
    case ScalarOp::kSign: body = absl::StrCat("coil_t = (0 < ", a[0], ") - (", a[0], " < 0);"); break;
    case ScalarOp::kSignbit: body = absl::StrCat("coil_t = ", a[0], " < 0;"); break;
    case ScalarOp::kBitwiseNot:
      body = IsBool(args[0].dtype) ? absl::StrCat("coil_t = ", a[0], " == 0;")
                                   : absl::StrCat("coil_t = ~", a[0], ";");
      break;
    case ScalarOp::kAdd: body = absl::StrCat("coil_t = coil_wadd(", a[0], ", ", a[1], ");"); break;
    case ScalarOp::kSub: body = absl::StrCat("coil_t = coil_wsub(", a[0], ", ", a[1], ");"); break;
    case ScalarOp::kMul: body = absl::StrCat("coil_t = coil_wmul(", a[0], ", ", a[1], ");"); break;
    case ScalarOp::kDiv:
      body = absl::StrCat("const i64 coil_a = ", a[0], ", coil_b = ", a[1],
                          "; if (coil_b == 0) { ", fail(2, "coil_a"),
                          " } else { coil_t = coil_b == -1 ? coil_wsub(0, coil_a) : coil_a / coil_b; }");
      break;
    case ScalarOp::kRemainder:
      body = absl::StrCat("const i64 coil_a = ", a[0], ", coil_b = ", a[1],
                          "; if (coil_b == 0) { ", fail(3, "coil_a"),
                          " } else { coil_t = coil_pymod(coil_a, coil_b); }");
      break;
    case ScalarOp::kFmod:
      body = absl::StrCat("const i64 coil_a = ", a[0], ", coil_b = ", a[1],
                          "; if (coil_b == 0) { ", fail(4, "coil_a"),
                          " } else { coil_t = coil_b == -1 ? 0 : coil_a % coil_b; }");
      break;
    case ScalarOp::kPow:
      body = absl::StrCat("const i64 coil_a = ", a[0], ", coil_b = ", a[1],
                          "; if (coil_b < 0) { ", fail(5, "coil_b"),
                          " } else { coil_t = coil_ipow(coil_a, coil_b); }");
      break;
    case ScalarOp::kMaximum: body = absl::StrCat("coil_t = coil_max<i64>(", a[0], ", ", a[1], ");"); break;
    case ScalarOp::kMinimum: body = absl::StrCat("coil_t = coil_min<i64>(", a[0], ", ", a[1], ");"); break;
    case ScalarOp::kBitwiseAnd: body = absl::StrCat("coil_t = ", a[0], " & ", a[1], ";"); break;
    case ScalarOp::kBitwiseOr: body = absl::StrCat("coil_t = ", a[0], " | ", a[1], ";"); break;
    case ScalarOp::kBitwiseXor: body = absl::StrCat("coil_t = ", a[0], " ^ ", a[1], ";"); break;
    case ScalarOp::kEq: body = absl::StrCat("coil_t = ", a[0], " == ", a[1], ";"); break;
    case ScalarOp::kNe: body = absl::StrCat("coil_t = ", a[0], " != ", a[1], ";"); break;
    case ScalarOp::kLt: body = absl::StrCat("coil_t = ", a[0], " < ", a[1], ";"); break;
    case ScalarOp::kLe: body = absl::StrCat("coil_t = ", a[0], " <= ", a[1], ";"); break;
    case ScalarOp::kGt: body = absl::StrCat("coil_t = ", a[0], " > ", a[1], ";"); break;
    case ScalarOp::kGe: body = absl::StrCat("coil_t = ", a[0], " >= ", a[1], ";"); break;
    case ScalarOp::kWhere:
      body = absl::StrCat("coil_t = ", a[0], " != 0 ? ", a[1], " : ", a[2], ";");
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(ScalarOpName(op), " has no integer path"));
  }
  const DType from = ReturnsBool(op) ? proto::BOOL : proto::INT64;
  return absl::StrCat("{ i64 coil_t; ", body, " ", dst, " = ",
                      ConvertSource("coil_t", from == proto::BOOL ? proto::INT64 : from, result),
                      "; }");
}

bool PackedStore(DType t) { return t == proto::BFLOAT16 || t == proto::FLOAT16; }

std::string VectorStoreCall(DType t, int items) {
  if (!PackedStore(t)) return absl::StrCat("coil_vcopy", items, "(");
  return absl::StrCat(t == proto::BFLOAT16 ? "coil_vstore_bf16<" : "coil_vstore_f16<", items,
                      ">(");
}

}  // namespace coil::codegen_cuda_internal
