// Element-wise folds of KnownValues (known_value.h): ONNX binary and unary ops, Cast, Where
// and the Sum/Prod reductions, on symbolic integers (SymExpr) and constant floats.
#include "capture/onnx/internal/known_value.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace coil::onnx_internal {
namespace {

// Wraps an int64 to the dtype's range (C++ cast semantics).
int64_t WrapInt(DType t, int64_t v) {
  switch (t) {
    case proto::INT32: return static_cast<int32_t>(v);
    case proto::INT8: return static_cast<int8_t>(v);
    case proto::UINT8: return static_cast<uint8_t>(v);
    case proto::BOOL: return v != 0;
    default: return v;
  }
}

bool Small(const SymExpr& e) {
  std::optional<int64_t> c = e.AsConstant();
  return !c || (*c > -kMaxSymConstant && *c < kMaxSymConstant);
}

bool IsComparison(BinaryFold op) {
  return op == BinaryFold::kEq || op == BinaryFold::kLt || op == BinaryFold::kGt ||
         op == BinaryFold::kLe || op == BinaryFold::kGe;
}

}  // namespace

std::optional<SymExpr> SymTruncDiv(const SymExpr& a, const SymExpr& b, const SymRanges& ranges,
                                   std::string* why) {
  const SymRange ra = Bounds(a, ranges), rb = Bounds(b, ranges);
  const bool b_pos = rb.min >= 1, b_neg = rb.max <= -1;
  if (!b_pos && !b_neg) {
    *why = absl::StrCat("the divisor ", b.ToString(), " is not known to be nonzero");
    return std::nullopt;
  }
  const SymExpr abs_b = b_pos ? b : -b;
  // trunc(a / b): floor(|a| / |b|) with the sign of a * b.
  if (ra.min >= 0) return b_pos ? SymExpr::FloorDiv(a, abs_b) : -SymExpr::FloorDiv(a, abs_b);
  if (ra.max <= 0) return b_pos ? -SymExpr::FloorDiv(-a, abs_b) : SymExpr::FloorDiv(-a, abs_b);
  *why = absl::StrCat("the dividend ", a.ToString(),
                      " may be negative or positive, and ONNX integer division truncates toward "
                      "zero where a symbolic floor division rounds down");
  return std::nullopt;
}

namespace {

// ONNX Mod of symbolic operands: fmod=0 takes the divisor's sign (SymExpr::Mod), fmod=1 the
// dividend's (C's %).
std::optional<SymExpr> SymMod(const SymExpr& a, const SymExpr& b, bool fmod,
                              const SymRanges& ranges, std::string* why) {
  const SymRange ra = Bounds(a, ranges), rb = Bounds(b, ranges);
  if (rb.min < 1 && rb.max > -1) {
    *why = absl::StrCat("the divisor ", b.ToString(), " is not known to be nonzero");
    return std::nullopt;
  }
  if (!fmod) return SymExpr::Mod(a, b);
  const SymExpr abs_b = rb.min >= 1 ? b : -b;
  if (ra.min >= 0) return SymExpr::Mod(a, abs_b);
  if (ra.max <= 0) return -SymExpr::Mod(-a, abs_b);
  *why = absl::StrCat("the dividend ", a.ToString(),
                      " may be negative or positive (fmod takes the dividend's sign)");
  return std::nullopt;
}

const char* OpName(BinaryFold op) {
  switch (op) {
    case BinaryFold::kAdd: return "Add";
    case BinaryFold::kSub: return "Sub";
    case BinaryFold::kMul: return "Mul";
    case BinaryFold::kDiv: return "Div";
    case BinaryFold::kMod: return "Mod";
    case BinaryFold::kFMod: return "Mod (fmod)";
    case BinaryFold::kMin: return "Min";
    case BinaryFold::kMax: return "Max";
    case BinaryFold::kEq: return "Equal";
    case BinaryFold::kLt: return "Less";
    case BinaryFold::kGt: return "Greater";
    case BinaryFold::kLe: return "LessOrEqual";
    case BinaryFold::kGe: return "GreaterOrEqual";
    case BinaryFold::kAnd: return "And";
    case BinaryFold::kOr: return "Or";
    case BinaryFold::kXor: return "Xor";
    case BinaryFold::kPow: return "Pow";
  }
  return "?";
}

// One integer element; nullopt when unknowable (reason in *why), error on division by zero.
absl::StatusOr<std::optional<SymExpr>> IntOp(BinaryFold op, const SymExpr& a, const SymExpr& b,
                                             const SymRanges& ranges, std::string* why) {
  std::optional<int64_t> ca = a.AsConstant(), cb = b.AsConstant();
  if (ca && cb) {
    int64_t x = *ca, y = *cb, r = 0;
    switch (op) {
      case BinaryFold::kAdd: if (__builtin_add_overflow(x, y, &r)) return std::nullopt; return SymExpr(r);
      case BinaryFold::kSub: if (__builtin_sub_overflow(x, y, &r)) return std::nullopt; return SymExpr(r);
      case BinaryFold::kMul: if (__builtin_mul_overflow(x, y, &r)) return std::nullopt; return SymExpr(r);
      case BinaryFold::kDiv:
      case BinaryFold::kMod:
      case BinaryFold::kFMod:
        if (y == 0) return absl::InvalidArgumentError("integer division by zero");
        if (x == INT64_MIN && y == -1) return std::nullopt;
        if (op == BinaryFold::kDiv) return SymExpr(x / y);
        if (op == BinaryFold::kFMod) return SymExpr(x % y);
        r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return SymExpr(r);
      case BinaryFold::kMin: return SymExpr(std::min(x, y));
      case BinaryFold::kMax: return SymExpr(std::max(x, y));
      case BinaryFold::kEq: return SymExpr(x == y);
      case BinaryFold::kLt: return SymExpr(x < y);
      case BinaryFold::kGt: return SymExpr(x > y);
      case BinaryFold::kLe: return SymExpr(x <= y);
      case BinaryFold::kGe: return SymExpr(x >= y);
      case BinaryFold::kAnd: return SymExpr((x != 0) && (y != 0));
      case BinaryFold::kOr: return SymExpr((x != 0) || (y != 0));
      case BinaryFold::kXor: return SymExpr((x != 0) != (y != 0));
      case BinaryFold::kPow: {
        if (y < 0) return std::nullopt;
        int64_t p = 1;
        for (int64_t i = 0; i < y; ++i) {
          if (__builtin_mul_overflow(p, x, &p)) return std::nullopt;
          if (p == 0 || p == 1) break;
        }
        return SymExpr(p);
      }
    }
    return std::nullopt;
  }
  if (!Small(a) || !Small(b)) {
    *why = absl::StrCat("a constant operand of ", OpName(op), " is too large for symbolic arithmetic");
    return std::nullopt;
  }
  if ((op == BinaryFold::kDiv || op == BinaryFold::kMod || op == BinaryFold::kFMod) && cb && *cb == 0) {
    return absl::InvalidArgumentError("integer division by zero");
  }
  switch (op) {
    case BinaryFold::kAdd: return a + b;
    case BinaryFold::kSub: return a - b;
    case BinaryFold::kMul: return a * b;
    case BinaryFold::kDiv: return SymTruncDiv(a, b, ranges, why);
    case BinaryFold::kMod: return SymMod(a, b, /*fmod=*/false, ranges, why);
    case BinaryFold::kFMod: return SymMod(a, b, /*fmod=*/true, ranges, why);
    case BinaryFold::kMin: return SymExpr::Min(a, b);
    case BinaryFold::kMax: return SymExpr::Max(a, b);
    default: break;
  }
  if (IsComparison(op)) {
    // A relation that does not hold for every value in the symbols' ranges stays unknown.
    Truth t = Truth::kUnknown;
    switch (op) {
      case BinaryFold::kEq: t = ProveEq(a, b, ranges); break;
      case BinaryFold::kLt: t = ProveLt(a, b, ranges); break;
      case BinaryFold::kGt: t = ProveLt(b, a, ranges); break;
      case BinaryFold::kLe: t = ProveLe(a, b, ranges); break;
      case BinaryFold::kGe: t = ProveLe(b, a, ranges); break;
      default: break;
    }
    if (t != Truth::kUnknown) return SymExpr(t == Truth::kTrue ? 1 : 0);
    // Undecided: the truth value as a 0/1 expression (exact on integers), so that exports'
    // sign fix-ups (torch's floor division: q - (q * b != a and (a < 0) != (b < 0))) fold once
    // a constant side decides them.
    switch (op) {
      case BinaryFold::kEq: return 1 - SymExpr::Min(1, SymExpr::Max(a - b, b - a));
      case BinaryFold::kLt: return SymExpr::Min(1, SymExpr::Max(0, b - a));
      case BinaryFold::kGt: return SymExpr::Min(1, SymExpr::Max(0, a - b));
      case BinaryFold::kLe: return SymExpr::Min(1, SymExpr::Max(0, b - a + 1));
      case BinaryFold::kGe: return SymExpr::Min(1, SymExpr::Max(0, a - b + 1));
      default: break;
    }
  }
  // Logical ops on 0/1 values (bool tensors hold nothing else): a constant side decides or
  // passes the other through.
  switch (op) {
    case BinaryFold::kAnd:
      if (ca || cb) return (ca ? *ca : *cb) == 0 ? SymExpr(0) : (ca ? b : a);
      return SymExpr::Min(a, b);
    case BinaryFold::kOr:
      if (ca || cb) return (ca ? *ca : *cb) != 0 ? SymExpr(1) : (ca ? b : a);
      return SymExpr::Max(a, b);
    case BinaryFold::kXor:
      if (ca || cb) return (ca ? *ca : *cb) == 0 ? (ca ? b : a) : 1 - (ca ? b : a);
      return SymExpr::Max(a - b, b - a);
    default: break;
  }
  *why = absl::StrCat(OpName(op), " of the symbolic value ", (ca ? b : a).ToString(),
                      " has no symbolic form");
  return std::nullopt;
}

std::optional<double> FloatOp(BinaryFold op, double x, double y) {
  switch (op) {
    case BinaryFold::kAdd: return x + y;
    case BinaryFold::kSub: return x - y;
    case BinaryFold::kMul: return x * y;
    case BinaryFold::kDiv: return x / y;
    case BinaryFold::kFMod: return std::fmod(x, y);
    case BinaryFold::kMod: {
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return r;
    }
    case BinaryFold::kMin: return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
    case BinaryFold::kMax: return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
    case BinaryFold::kEq: return x == y;
    case BinaryFold::kLt: return x < y;
    case BinaryFold::kGt: return x > y;
    case BinaryFold::kLe: return x <= y;
    case BinaryFold::kGe: return x >= y;
    case BinaryFold::kPow: return std::pow(x, y);
    default: return std::nullopt;
  }
}

}  // namespace

absl::StatusOr<std::optional<KnownValue>> FoldBinary(BinaryFold op, const KnownValue& a,
                                                     const KnownValue& b,
                                                     const SymRanges& ranges, std::string* why) {
  std::string ignored;
  if (why == nullptr) why = &ignored;
  if (a.dtype != b.dtype && op != BinaryFold::kPow) {
    *why = absl::StrCat("the operands of ", OpName(op), " differ in type (", DTypeName(a.dtype),
                        " and ", DTypeName(b.dtype), ")");
    return std::optional<KnownValue>();
  }
  absl::StatusOr<std::vector<int64_t>> shape = BroadcastShapes(a.shape, b.shape);
  if (!shape.ok()) return shape.status();
  if (ShapeNumel(*shape) > kMaxKnownElements) return std::optional<KnownValue>();
  std::vector<int64_t> ia = BroadcastIndex(a.shape, *shape), ib = BroadcastIndex(b.shape, *shape);
  const bool logical = op == BinaryFold::kAnd || op == BinaryFold::kOr || op == BinaryFold::kXor;
  KnownValue out;
  out.shape = *shape;
  out.dtype = IsComparison(op) || logical ? proto::BOOL : a.dtype;
  if (a.sym_float() || b.sym_float()) return SymFloatBinary(op, a, b, ranges, why);
  if (a.is_float() || b.is_float()) {
    if (!a.IsConstant() || !b.IsConstant()) {
      *why = absl::StrCat(OpName(op), " of a symbolic value in floating point");
      return std::optional<KnownValue>();
    }
    for (size_t i = 0; i < ia.size(); ++i) {
      std::optional<double> r = FloatOp(op, a.AsDouble(ia[i]), b.AsDouble(ib[i]));
      if (!r) return std::optional<KnownValue>();
      if (out.dtype == proto::BOOL) {
        out.ints.emplace_back(static_cast<int64_t>(*r));
      } else if (out.is_float()) {
        out.floats.push_back(RoundToDType(out.dtype, *r));
      } else {  // pow of an integer base by a float exponent
        if (!(std::fabs(*r) < 9e18)) return std::optional<KnownValue>();
        out.ints.emplace_back(WrapInt(out.dtype, static_cast<int64_t>(*r)));
      }
    }
    return std::optional<KnownValue>(std::move(out));
  }
  for (size_t i = 0; i < ia.size(); ++i) {
    absl::StatusOr<std::optional<SymExpr>> r = IntOp(op, a.ints[ia[i]], b.ints[ib[i]], ranges, why);
    if (!r.ok()) return r.status();
    if (!r->has_value()) return std::optional<KnownValue>();
    SymExpr e = **r;
    if (std::optional<int64_t> c = e.AsConstant()) e = SymExpr(WrapInt(out.dtype, *c));
    out.ints.push_back(std::move(e));
  }
  return std::optional<KnownValue>(std::move(out));
}

std::optional<KnownValue> FoldUnary(UnaryFold op, const KnownValue& a, const SymRanges& ranges) {
  if (a.sym_float()) return SymFloatUnary(op, a, ranges);
  KnownValue out = a;
  if (op == UnaryFold::kNot) {
    if (a.dtype != proto::BOOL) return std::nullopt;
    for (SymExpr& e : out.ints) e = 1 - e;  // 0/1 values
    return out;
  }
  if (a.is_float()) {
    for (double& v : out.floats) {
      switch (op) {
        case UnaryFold::kNeg: v = -v; break;
        case UnaryFold::kAbs: v = std::fabs(v); break;
        case UnaryFold::kFloor: v = std::floor(v); break;
        case UnaryFold::kCeil: v = std::ceil(v); break;
        case UnaryFold::kSqrt: v = std::sqrt(v); break;
        case UnaryFold::kRound: v = std::nearbyint(v); break;
        case UnaryFold::kReciprocal: v = 1.0 / v; break;
        case UnaryFold::kSign: v = v > 0 ? 1 : (v < 0 ? -1 : 0); break;
        default: return std::nullopt;
      }
      v = RoundToDType(a.dtype, v);
    }
    return out;
  }
  for (SymExpr& e : out.ints) {
    std::optional<int64_t> c = e.AsConstant();
    switch (op) {
      case UnaryFold::kNeg:
        if (c && *c == INT64_MIN) return std::nullopt;
        if (!Small(e)) return std::nullopt;
        e = -e;
        break;
      case UnaryFold::kAbs:
        if (!c) {
          const SymRange r = Bounds(e, ranges);
          if (r.max <= 0 && Small(e)) {
            e = -e;
          } else if (r.min < 0) {
            return std::nullopt;
          }
          break;
        }
        if (*c == INT64_MIN) return std::nullopt;
        e = SymExpr(*c < 0 ? -*c : *c);
        break;
      case UnaryFold::kFloor:
      case UnaryFold::kCeil:
      case UnaryFold::kRound:
        break;
      case UnaryFold::kSign: {
        const SymRange r = Bounds(e, ranges);
        if (r.min > 0) {
          e = SymExpr(1);
        } else if (r.max < 0) {
          e = SymExpr(-1);
        } else if (r.min == 0 && r.max == 0) {
          e = SymExpr(0);
        } else {
          return std::nullopt;
        }
        break;
      }
      default: return std::nullopt;
    }
    if (std::optional<int64_t> r = e.AsConstant()) e = SymExpr(WrapInt(a.dtype, *r));
  }
  return out;
}

std::optional<KnownValue> FoldCast(const KnownValue& a, DType to, const SymRanges& ranges,
                                   std::string* why) {
  std::string ignored;
  if (why == nullptr) why = &ignored;
  if (a.sym_float()) return SymFloatCast(a, to, ranges, why);
  KnownValue out;
  out.dtype = to;
  out.shape = a.shape;
  if (IsFloating(to)) {
    if (!a.IsConstant()) return SymFloatCast(a, to, ranges, why);
    for (int64_t i = 0; i < a.numel(); ++i) out.floats.push_back(RoundToDType(to, a.AsDouble(i)));
    return out;
  }
  if (a.is_float()) {
    for (double v : a.floats) {
      if (to == proto::BOOL) {
        out.ints.emplace_back(static_cast<int64_t>(v != 0));
        continue;
      }
      if (!(std::fabs(v) < 9e18)) return std::nullopt;
      out.ints.emplace_back(WrapInt(to, static_cast<int64_t>(v)));
    }
    return out;
  }
  for (const SymExpr& e : a.ints) {
    std::optional<int64_t> c = e.AsConstant();
    if (c) {
      out.ints.emplace_back(WrapInt(to, *c));
    } else if (to == proto::INT64 || to == proto::INT32) {
      out.ints.push_back(e);  // symbolic sizes fit in int32
    } else {
      return std::nullopt;
    }
  }
  return out;
}

absl::StatusOr<KnownValue> FoldWhere(const KnownValue& cond, const KnownValue& a,
                                     const KnownValue& b) {
  absl::StatusOr<std::vector<int64_t>> s1 = BroadcastShapes(cond.shape, a.shape);
  if (!s1.ok()) return s1.status();
  absl::StatusOr<std::vector<int64_t>> shape = BroadcastShapes(*s1, b.shape);
  if (!shape.ok()) return shape.status();
  std::vector<int64_t> ic = BroadcastIndex(cond.shape, *shape),
                       ia = BroadcastIndex(a.shape, *shape), ib = BroadcastIndex(b.shape, *shape);
  KnownValue out;
  out.dtype = a.dtype;
  out.den = a.den;
  out.shape = *shape;
  for (size_t i = 0; i < ic.size(); ++i) {
    if (cond.uses_ints() && !cond.ints[ic[i]].is_constant()) {
      // A symbolic 0/1 condition over integers (the caller checked): c * a + (1 - c) * b.
      const SymExpr& c = cond.ints[ic[i]];
      out.ints.push_back(c * a.ints[ia[i]] + (1 - c) * b.ints[ib[i]]);
      continue;
    }
    bool c = cond.uses_ints() ? cond.ints[ic[i]].constant() != 0 : cond.floats[ic[i]] != 0;
    if (!a.uses_ints()) {
      out.floats.push_back(c ? a.floats[ia[i]] : b.floats[ib[i]]);
    } else {
      out.ints.push_back(c ? a.ints[ia[i]] : b.ints[ib[i]]);
    }
  }
  return out;
}

std::optional<KnownValue> FoldReduce(const KnownValue& a, const std::vector<int64_t>& axes,
                                     bool keepdims, bool product) {
  std::vector<bool> reduced(a.rank(), false);
  for (int64_t d : axes) reduced[d] = true;
  std::vector<int64_t> kept_shape;
  for (int64_t d = 0; d < a.rank(); ++d) kept_shape.push_back(reduced[d] ? 1 : a.shape[d]);
  KnownValue out;
  out.dtype = a.dtype;
  const int64_t n = ShapeNumel(kept_shape);
  if (a.is_float()) {
    out.floats.assign(n, product ? 1.0 : 0.0);
  } else {
    out.ints.assign(n, SymExpr(product ? 1 : 0));
  }
  std::vector<int64_t> idx(a.rank(), 0);
  for (int64_t flat = 0; flat < a.numel(); ++flat) {
    int64_t dst = 0;
    for (int64_t d = 0; d < a.rank(); ++d) dst = dst * kept_shape[d] + (reduced[d] ? 0 : idx[d]);
    if (a.is_float()) {
      out.floats[dst] = product ? out.floats[dst] * a.floats[flat] : out.floats[dst] + a.floats[flat];
    } else {
      std::string why;
      absl::StatusOr<std::optional<SymExpr>> r =
          IntOp(product ? BinaryFold::kMul : BinaryFold::kAdd, out.ints[dst], a.ints[flat], {}, &why);
      if (!r.ok() || !r->has_value()) return std::nullopt;
      out.ints[dst] = **r;
    }
    for (int64_t d = a.rank() - 1; d >= 0; --d) {
      if (++idx[d] < a.shape[d]) break;
      idx[d] = 0;
    }
  }
  for (int64_t d = 0; d < a.rank(); ++d) {
    if (!reduced[d] || keepdims) out.shape.push_back(kept_shape[d]);
  }
  return out;
}

}  // namespace coil::onnx_internal
