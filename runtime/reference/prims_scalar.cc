// Scalar semantics of the elementwise prims: one switch per path, the table of names and
// arities.
#include "runtime/reference/prims_scalar.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace coil {
namespace {

struct OpInfo {
  ScalarOp op;
  const char* name;
  int arity;
  bool float_path;
  bool int_path;
};

constexpr OpInfo kOps[] = {
    {ScalarOp::kExp, "prims.exp", 1, true, false},
    {ScalarOp::kExp2, "prims.exp2", 1, true, false},
    {ScalarOp::kExpm1, "prims.expm1", 1, true, false},
    {ScalarOp::kLog, "prims.log", 1, true, false},
    {ScalarOp::kLog2, "prims.log2", 1, true, false},
    {ScalarOp::kLog1p, "prims.log1p", 1, true, false},
    {ScalarOp::kSqrt, "prims.sqrt", 1, true, false},
    {ScalarOp::kRsqrt, "prims.rsqrt", 1, true, false},
    {ScalarOp::kSin, "prims.sin", 1, true, false},
    {ScalarOp::kCos, "prims.cos", 1, true, false},
    {ScalarOp::kTan, "prims.tan", 1, true, false},
    {ScalarOp::kAsin, "prims.asin", 1, true, false},
    {ScalarOp::kAcos, "prims.acos", 1, true, false},
    {ScalarOp::kAtan, "prims.atan", 1, true, false},
    {ScalarOp::kSinh, "prims.sinh", 1, true, false},
    {ScalarOp::kCosh, "prims.cosh", 1, true, false},
    {ScalarOp::kTanh, "prims.tanh", 1, true, false},
    {ScalarOp::kAsinh, "prims.asinh", 1, true, false},
    {ScalarOp::kAcosh, "prims.acosh", 1, true, false},
    {ScalarOp::kAtanh, "prims.atanh", 1, true, false},
    {ScalarOp::kErf, "prims.erf", 1, true, false},
    {ScalarOp::kErfc, "prims.erfc", 1, true, false},
    {ScalarOp::kCeil, "prims.ceil", 1, true, false},
    {ScalarOp::kFloor, "prims.floor", 1, true, false},
    {ScalarOp::kRound, "prims.round", 1, true, false},
    {ScalarOp::kTrunc, "prims.trunc", 1, true, false},
    {ScalarOp::kAbs, "prims.abs", 1, true, true},
    {ScalarOp::kNeg, "prims.neg", 1, true, true},
    {ScalarOp::kSign, "prims.sign", 1, true, true},
    {ScalarOp::kSignbit, "prims.signbit", 1, true, true},
    {ScalarOp::kBitwiseNot, "prims.bitwise_not", 1, false, true},
    {ScalarOp::kAdd, "prims.add", 2, true, true},
    {ScalarOp::kSub, "prims.sub", 2, true, true},
    {ScalarOp::kMul, "prims.mul", 2, true, true},
    {ScalarOp::kDiv, "prims.div", 2, true, true},
    {ScalarOp::kRemainder, "prims.remainder", 2, true, true},
    {ScalarOp::kFmod, "prims.fmod", 2, true, true},
    {ScalarOp::kPow, "prims.pow", 2, true, true},
    {ScalarOp::kMaximum, "prims.maximum", 2, true, true},
    {ScalarOp::kMinimum, "prims.minimum", 2, true, true},
    {ScalarOp::kAtan2, "prims.atan2", 2, true, false},
    {ScalarOp::kHypot, "prims.hypot", 2, true, false},
    {ScalarOp::kBitwiseAnd, "prims.bitwise_and", 2, false, true},
    {ScalarOp::kBitwiseOr, "prims.bitwise_or", 2, false, true},
    {ScalarOp::kBitwiseXor, "prims.bitwise_xor", 2, false, true},
    {ScalarOp::kEq, "prims.eq", 2, true, true},
    {ScalarOp::kNe, "prims.ne", 2, true, true},
    {ScalarOp::kLt, "prims.lt", 2, true, true},
    {ScalarOp::kLe, "prims.le", 2, true, true},
    {ScalarOp::kGt, "prims.gt", 2, true, true},
    {ScalarOp::kGe, "prims.ge", 2, true, true},
    {ScalarOp::kWhere, "prims.where", 3, true, true},
};

const OpInfo& Info(ScalarOp op) { return kOps[static_cast<int>(op)]; }

// Wrapping int64 arithmetic (two's complement, no undefined behaviour on overflow).
int64_t WAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t WSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t WMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

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
    if (e & 1) r = WMul(r, base);
    base = WMul(base, base);
    e >>= 1;
  }
  return r;
}

double Sign(double x) { return (0 < x) - (x < 0); }  // NaN gives 0, as torch.sign

}  // namespace

std::optional<ScalarOp> ScalarOpFromName(absl::string_view prim) {
  static const auto* by_name = [] {
    auto* m = new absl::flat_hash_map<std::string, ScalarOp>();
    for (const OpInfo& i : kOps) m->emplace(i.name, i.op);
    return m;
  }();
  auto it = by_name->find(prim);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

const char* ScalarOpName(ScalarOp op) { return Info(op).name; }
int ScalarOpArity(ScalarOp op) { return Info(op).arity; }
bool HasFloatPath(ScalarOp op) { return Info(op).float_path; }
bool HasIntPath(ScalarOp op) { return Info(op).int_path; }

bool ReturnsBool(ScalarOp op) {
  switch (op) {
    case ScalarOp::kSignbit:
    case ScalarOp::kEq:
    case ScalarOp::kNe:
    case ScalarOp::kLt:
    case ScalarOp::kLe:
    case ScalarOp::kGt:
    case ScalarOp::kGe:
      return true;
    default:
      return false;
  }
}

double EvalFloat(ScalarOp op, const double* v) {
  switch (op) {
    case ScalarOp::kExp: return std::exp(v[0]);
    case ScalarOp::kExp2: return std::exp2(v[0]);
    case ScalarOp::kExpm1: return std::expm1(v[0]);
    case ScalarOp::kLog: return std::log(v[0]);
    case ScalarOp::kLog2: return std::log2(v[0]);
    case ScalarOp::kLog1p: return std::log1p(v[0]);
    case ScalarOp::kSqrt: return std::sqrt(v[0]);
    case ScalarOp::kRsqrt: return 1.0 / std::sqrt(v[0]);
    case ScalarOp::kSin: return std::sin(v[0]);
    case ScalarOp::kCos: return std::cos(v[0]);
    case ScalarOp::kTan: return std::tan(v[0]);
    case ScalarOp::kAsin: return std::asin(v[0]);
    case ScalarOp::kAcos: return std::acos(v[0]);
    case ScalarOp::kAtan: return std::atan(v[0]);
    case ScalarOp::kSinh: return std::sinh(v[0]);
    case ScalarOp::kCosh: return std::cosh(v[0]);
    case ScalarOp::kTanh: return std::tanh(v[0]);
    case ScalarOp::kAsinh: return std::asinh(v[0]);
    case ScalarOp::kAcosh: return std::acosh(v[0]);
    case ScalarOp::kAtanh: return std::atanh(v[0]);
    case ScalarOp::kErf: return std::erf(v[0]);
    case ScalarOp::kErfc: return std::erfc(v[0]);
    case ScalarOp::kCeil: return std::ceil(v[0]);
    case ScalarOp::kFloor: return std::floor(v[0]);
    case ScalarOp::kRound: return std::nearbyint(v[0]);  // default mode: half to even
    case ScalarOp::kTrunc: return std::trunc(v[0]);
    case ScalarOp::kAbs: return std::fabs(v[0]);
    case ScalarOp::kNeg: return -v[0];
    case ScalarOp::kSign: return Sign(v[0]);
    case ScalarOp::kSignbit: return std::signbit(v[0]) ? 1.0 : 0.0;
    case ScalarOp::kAdd: return v[0] + v[1];
    case ScalarOp::kSub: return v[0] - v[1];
    case ScalarOp::kMul: return v[0] * v[1];
    case ScalarOp::kDiv: return v[0] / v[1];
    case ScalarOp::kRemainder: {
      double m = std::fmod(v[0], v[1]);
      if (m != 0 && ((v[1] < 0) != (m < 0))) m += v[1];
      return m;
    }
    case ScalarOp::kFmod: return std::fmod(v[0], v[1]);
    case ScalarOp::kPow: return std::pow(v[0], v[1]);
    case ScalarOp::kMaximum: return NanMax(v[0], v[1]);
    case ScalarOp::kMinimum: return NanMin(v[0], v[1]);
    case ScalarOp::kAtan2: return std::atan2(v[0], v[1]);
    case ScalarOp::kHypot: return std::hypot(v[0], v[1]);
    // Comparisons: NaN compares unequal to everything (C++ semantics, as torch).
    case ScalarOp::kEq: return v[0] == v[1] ? 1.0 : 0.0;
    case ScalarOp::kNe: return v[0] != v[1] ? 1.0 : 0.0;
    case ScalarOp::kLt: return v[0] < v[1] ? 1.0 : 0.0;
    case ScalarOp::kLe: return v[0] <= v[1] ? 1.0 : 0.0;
    case ScalarOp::kGt: return v[0] > v[1] ? 1.0 : 0.0;
    case ScalarOp::kGe: return v[0] >= v[1] ? 1.0 : 0.0;
    // where(cond, a, b): cond arrives as 0/1.
    case ScalarOp::kWhere: return v[0] != 0 ? v[1] : v[2];
    default: return NAN;  // no floating path (bitwise ops)
  }
}

bool EvalInt(ScalarOp op, const int64_t* v, bool operand_is_bool, int64_t* out) {
  switch (op) {
    case ScalarOp::kAbs: *out = v[0] < 0 ? WSub(0, v[0]) : v[0]; return true;
    case ScalarOp::kNeg: *out = WSub(0, v[0]); return true;
    case ScalarOp::kSign: *out = (0 < v[0]) - (v[0] < 0); return true;
    case ScalarOp::kSignbit: *out = v[0] < 0; return true;
    case ScalarOp::kBitwiseNot: *out = operand_is_bool ? int64_t{v[0] == 0} : ~v[0]; return true;
    // Bool operands arrive as 0/1 and a bool result stores v != 0, so bool add and mul are
    // logical or and and.
    case ScalarOp::kAdd: *out = WAdd(v[0], v[1]); return true;
    case ScalarOp::kSub: *out = WSub(v[0], v[1]); return true;
    case ScalarOp::kMul: *out = WMul(v[0], v[1]); return true;
    case ScalarOp::kDiv:
      if (v[1] == 0) return false;
      *out = v[1] == -1 ? WSub(0, v[0]) : v[0] / v[1];  // INT64_MIN / -1 wraps
      return true;
    case ScalarOp::kRemainder:
      if (v[1] == 0) return false;
      *out = PyMod(v[0], v[1]);
      return true;
    case ScalarOp::kFmod:
      if (v[1] == 0) return false;
      *out = v[1] == -1 ? 0 : v[0] % v[1];
      return true;
    case ScalarOp::kPow:
      if (v[1] < 0) return false;
      *out = IPow(v[0], v[1]);
      return true;
    case ScalarOp::kMaximum: *out = std::max(v[0], v[1]); return true;
    case ScalarOp::kMinimum: *out = std::min(v[0], v[1]); return true;
    case ScalarOp::kBitwiseAnd: *out = v[0] & v[1]; return true;
    case ScalarOp::kBitwiseOr: *out = v[0] | v[1]; return true;
    case ScalarOp::kBitwiseXor: *out = v[0] ^ v[1]; return true;
    case ScalarOp::kEq: *out = v[0] == v[1]; return true;
    case ScalarOp::kNe: *out = v[0] != v[1]; return true;
    case ScalarOp::kLt: *out = v[0] < v[1]; return true;
    case ScalarOp::kLe: *out = v[0] <= v[1]; return true;
    case ScalarOp::kGt: *out = v[0] > v[1]; return true;
    case ScalarOp::kGe: *out = v[0] >= v[1]; return true;
    case ScalarOp::kWhere: *out = v[0] != 0 ? v[1] : v[2]; return true;
    default: *out = 0; return true;  // no integral path (floating-only ops)
  }
}

std::string IntErrorMessage(ScalarOp op, const int64_t* v) {
  switch (op) {
    case ScalarOp::kDiv: return "integer division by zero";
    case ScalarOp::kRemainder: return "integer remainder by zero";
    case ScalarOp::kFmod: return "integer fmod by zero";
    case ScalarOp::kPow:
      return absl::StrCat("integer ", v[0], " to the negative power ", v[1], " is not allowed");
    default: return "integer error";
  }
}

}  // namespace coil
