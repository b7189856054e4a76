// Symbolic floating-point KnownValues: exact fractions of SymExprs (see known_value.h).
//
// Exports compute sizes in floating point as well as in integers: a scripted
// `math.ceil(h / 4)` or `(h.float() * 0.5).floor().long()` is Cast(h, float) -> Div or Mul ->
// Ceil or Floor -> Cast(int64). Such values stay exact here as ints[i] / den (den > 0, one per
// value), so that Floor, Ceil and the Cast back turn them into SymExprs again:
// floor(n / d) = floordiv(n, d), ceil(n / d) = floordiv(n + d - 1, d), and the truncating Cast is
// SymTruncDiv where the signs are proven. Constants take part when they are dyadic fractions
// (0.5, 1.25); float rounding is not modelled (the values are sizes, far below 2^24).
#include <cmath>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/known_value.h"

namespace coil::onnx_internal {
namespace {

constexpr int64_t kMaxDen = int64_t{1} << 20;

struct Frac {
  SymExpr num;
  int64_t den = 1;
};

// A constant double as num / 2^k (k <= 20), or nullopt.
std::optional<Frac> Dyadic(double v) {
  if (!std::isfinite(v)) return std::nullopt;
  for (int64_t den = 1; den <= kMaxDen; den *= 2) {
    const double n = v * static_cast<double>(den);
    if (n == std::floor(n) && std::fabs(n) < 1e12) return Frac{SymExpr(static_cast<int64_t>(n)), den};
  }
  return std::nullopt;
}

// Element i of an integer, symbolic floating-point or constant floating-point value.
std::optional<Frac> ElementOf(const KnownValue& a, int64_t i) {
  if (a.uses_ints()) return Frac{a.ints[i], a.den};
  return Dyadic(a.floats[i]);
}

// lcm(a, b), or 0 past kMaxDen.
int64_t Lcm(int64_t a, int64_t b) {
  int64_t x = a, y = b;
  while (y != 0) {
    int64_t t = x % y;
    x = y;
    y = t;
  }
  const int64_t l = a / x * b;
  return l > kMaxDen ? 0 : l;
}

// One value from fractions over a common denominator; constant floats when nothing symbolic
// is left. nullopt when the denominator grows past kMaxDen.
std::optional<KnownValue> Pack(DType dtype, std::vector<int64_t> shape, const std::vector<Frac>& elems,
                               std::string* why) {
  int64_t den = 1;
  bool symbolic = false;
  for (const Frac& f : elems) {
    den = Lcm(den, f.den);
    symbolic = symbolic || !f.num.is_constant();
    if (den == 0) {
      *why = "a floating-point size whose exact denominator grows past 2^20";
      return std::nullopt;
    }
  }
  if (!symbolic) {
    std::vector<double> v;
    for (const Frac& f : elems) {
      v.push_back(static_cast<double>(f.num.constant()) / static_cast<double>(f.den));
    }
    return FoldCast(KnownValue::Floats(proto::FLOAT64, std::move(shape), std::move(v)), dtype);
  }
  KnownValue out;
  out.dtype = dtype;
  out.shape = std::move(shape);
  out.den = den;
  for (const Frac& f : elems) out.ints.push_back(f.num * (den / f.den));
  return out;
}

const char* FoldName(BinaryFold op) {
  switch (op) {
    case BinaryFold::kPow: return "Pow";
    case BinaryFold::kMod:
    case BinaryFold::kFMod: return "Mod";
    case BinaryFold::kAnd:
    case BinaryFold::kOr:
    case BinaryFold::kXor: return "a logical op";
    default: return "this op";
  }
}

}  // namespace

absl::StatusOr<std::optional<KnownValue>> SymFloatBinary(BinaryFold op, const KnownValue& a,
                                                         const KnownValue& b,
                                                         const SymRanges& ranges, std::string* why) {
  absl::StatusOr<std::vector<int64_t>> shape = BroadcastShapes(a.shape, b.shape);
  if (!shape.ok()) return shape.status();
  int64_t n = 1;
  for (int64_t d : *shape) n *= d;
  if (n > kMaxKnownElements || a.dtype != b.dtype) {
    *why = "a symbolic floating-point value too large or of mixed types";
    return std::optional<KnownValue>();
  }
  std::vector<int64_t> ia = BroadcastIndex(a.shape, *shape), ib = BroadcastIndex(b.shape, *shape);
  std::vector<Frac> out;
  std::vector<SymExpr> truth;
  for (size_t i = 0; i < ia.size(); ++i) {
    std::optional<Frac> x = ElementOf(a, ia[i]), y = ElementOf(b, ib[i]);
    if (!x || !y) {
      *why = "a floating-point constant that is not an exact binary fraction, combined with a "
             "symbolic size";
      return std::optional<KnownValue>();
    }
    const int64_t l = Lcm(x->den, y->den);
    if (l == 0) {
      *why = "a floating-point size whose exact denominator grows past 2^20";
      return std::optional<KnownValue>();
    }
    const SymExpr xs = x->num * (l / x->den), ys = y->num * (l / y->den);
    switch (op) {
      case BinaryFold::kAdd: out.push_back({xs + ys, l}); continue;
      case BinaryFold::kSub: out.push_back({xs - ys, l}); continue;
      case BinaryFold::kMin: out.push_back({SymExpr::Min(xs, ys), l}); continue;
      case BinaryFold::kMax: out.push_back({SymExpr::Max(xs, ys), l}); continue;
      case BinaryFold::kMul: {
        const int64_t den = x->den * y->den;  // both <= 2^20
        if (den > kMaxDen) {
          *why = "a floating-point size whose exact denominator grows past 2^20";
          return std::optional<KnownValue>();
        }
        out.push_back({x->num * y->num, den});
        continue;
      }
      case BinaryFold::kDiv: {
        std::optional<int64_t> c = y->num.AsConstant();
        if (!c || *c == 0) {
          *why = c ? "a floating-point division of a symbolic size by 0"
                   : "a floating-point division by a symbolic value";
          return std::optional<KnownValue>();
        }
        // (xn / xd) / (c / yd) = (xn * yd * sign(c)) / (xd * |c|)
        if (std::llabs(*c) > kMaxDen || x->den * std::llabs(*c) > kMaxDen) {
          *why = "a floating-point size whose exact denominator grows past 2^20";
          return std::optional<KnownValue>();
        }
        out.push_back({x->num * (*c < 0 ? -y->den : y->den), x->den * std::llabs(*c)});
        continue;
      }
      case BinaryFold::kEq:
      case BinaryFold::kLt:
      case BinaryFold::kGt:
      case BinaryFold::kLe:
      case BinaryFold::kGe: {
        Truth t = Truth::kUnknown;
        if (op == BinaryFold::kEq) t = ProveEq(xs, ys, ranges);
        if (op == BinaryFold::kLt) t = ProveLt(xs, ys, ranges);
        if (op == BinaryFold::kGt) t = ProveLt(ys, xs, ranges);
        if (op == BinaryFold::kLe) t = ProveLe(xs, ys, ranges);
        if (op == BinaryFold::kGe) t = ProveLe(ys, xs, ranges);
        if (t == Truth::kUnknown) {
          *why = "a comparison of symbolic floating-point values that depends on the symbols";
          return std::optional<KnownValue>();
        }
        truth.emplace_back(t == Truth::kTrue ? 1 : 0);
        continue;
      }
      default:
        *why = absl::StrCat(FoldName(op), " of a symbolic floating-point value");
        return std::optional<KnownValue>();
    }
  }
  if (!truth.empty() || ia.empty()) {
    if (op == BinaryFold::kEq || op == BinaryFold::kLt || op == BinaryFold::kGt ||
        op == BinaryFold::kLe || op == BinaryFold::kGe) {
      return std::optional<KnownValue>(KnownValue::Ints(proto::BOOL, *shape, std::move(truth)));
    }
  }
  return Pack(a.dtype, *shape, out, why);
}

std::optional<KnownValue> SymFloatUnary(UnaryFold op, const KnownValue& a, const SymRanges& ranges) {
  std::vector<Frac> out;
  for (const SymExpr& num : a.ints) {
    switch (op) {
      case UnaryFold::kNeg: out.push_back({-num, a.den}); break;
      case UnaryFold::kFloor: out.push_back({SymExpr::FloorDiv(num, a.den), 1}); break;
      case UnaryFold::kCeil: out.push_back({SymExpr::FloorDiv(num + (a.den - 1), a.den), 1}); break;
      case UnaryFold::kAbs: {
        const SymRange r = Bounds(num, ranges);
        if (r.min >= 0) {
          out.push_back({num, a.den});
        } else if (r.max <= 0) {
          out.push_back({-num, a.den});
        } else {
          return std::nullopt;
        }
        break;
      }
      default: return std::nullopt;
    }
  }
  std::string why;
  return Pack(a.dtype, a.shape, out, &why);
}

std::optional<KnownValue> SymFloatCast(const KnownValue& a, DType to, const SymRanges& ranges,
                                       std::string* why) {
  KnownValue out;
  out.dtype = to;
  out.shape = a.shape;
  if (IsFloating(to)) {  // integers or fractions to floating point: the same exact values
    out.ints = a.ints;
    out.den = a.den;
    return out;
  }
  for (const SymExpr& num : a.ints) {
    std::optional<SymExpr> v = a.den == 1 ? std::optional<SymExpr>(num)
                                          : SymTruncDiv(num, SymExpr(a.den), ranges, why);
    if (!v) return std::nullopt;
    if (std::optional<int64_t> c = v->AsConstant()) {
      switch (to) {
        case proto::BOOL: v = SymExpr(*c != 0 ? 1 : 0); break;
        case proto::INT32: v = SymExpr(static_cast<int64_t>(static_cast<int32_t>(*c))); break;
        case proto::INT8: v = SymExpr(static_cast<int64_t>(static_cast<int8_t>(*c))); break;
        case proto::UINT8: v = SymExpr(static_cast<int64_t>(static_cast<uint8_t>(*c))); break;
        default: break;
      }
    } else if (to != proto::INT64 && to != proto::INT32) {
      *why = absl::StrCat("a cast of a symbolic size to ", DTypeName(to),
                          " (symbolic values stay integers of 32 or 64 bits)");
      return std::nullopt;
    }
    out.ints.push_back(*v);
  }
  return out;
}

}  // namespace coil::onnx_internal
