// Interval bounds of SymExpr and the relations (ProveEq/Lt/Le) decided with them.
//
// Endpoints are computed in 128-bit integers with explicit infinities, then clamped soundly
// (a lower bound only ever moves down, an upper bound up), so int64 overflow can never make a
// bound wrong: it only makes it looser.
#include <algorithm>

#include "ir/sym_expr.h"
#include "ir/sym_expr_internal.h"

namespace coil {
namespace sym_internal {
namespace {

using Wide = __int128;
constexpr Wide kInf = Wide(1) << 100;  // stands for infinity; finite endpoints fit in int64

struct Interval {
  Wide lo;  // -kInf or in [INT64_MIN, INT64_MAX]
  Wide hi;  // +kInf or in [INT64_MIN, INT64_MAX]
};

const Interval kEverything = {-kInf, kInf};

Wide NormLo(Wide v) { return v < INT64_MIN ? -kInf : std::min<Wide>(v, INT64_MAX); }
Wide NormHi(Wide v) { return v > INT64_MAX ? kInf : std::max<Wide>(v, INT64_MIN); }
Interval Norm(Wide lo, Wide hi) { return {NormLo(lo), NormHi(hi)}; }

Interval FromRange(const SymRange& r) {
  return {r.min == INT64_MIN ? -kInf : Wide(r.min), r.max == INT64_MAX ? kInf : Wide(r.max)};
}

Interval AddI(const Interval& a, const Interval& b) {
  Wide lo = (a.lo == -kInf || b.lo == -kInf) ? -kInf : a.lo + b.lo;
  Wide hi = (a.hi == kInf || b.hi == kInf) ? kInf : a.hi + b.hi;
  return Norm(lo, hi);
}

Interval NegI(const Interval& a) { return Norm(-a.hi, -a.lo); }

bool IsInf(Wide v) { return v == kInf || v == -kInf; }

Wide MulEnd(Wide x, Wide y) {
  if (x == 0 || y == 0) return 0;
  if (IsInf(x) || IsInf(y)) return ((x < 0) != (y < 0)) ? -kInf : kInf;
  return x * y;  // |x|, |y| <= 2^63
}

Interval MulI(const Interval& a, const Interval& b) {
  Wide c[4] = {MulEnd(a.lo, b.lo), MulEnd(a.lo, b.hi), MulEnd(a.hi, b.lo), MulEnd(a.hi, b.hi)};
  return Norm(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
}

// v^n (n >= 1), saturating to +-kInf.
Wide PowEnd(Wide v, int64_t n) {
  bool negative = v < 0 && n % 2 == 1;
  if (v == 0 || v == 1) return v;
  if (v == -1) return negative ? -1 : 1;
  Wide r = 1;
  for (int64_t i = 0; i < n; ++i) {
    if (IsInf(v) || r > INT64_MAX || r < INT64_MIN) return negative ? -kInf : kInf;
    r *= v;
  }
  return r;
}

Interval PowI(const Interval& a, int64_t n) {
  if (n == 1) return a;
  Wide lo = PowEnd(a.lo, n), hi = PowEnd(a.hi, n);
  if (n % 2 == 1) return Norm(lo, hi);  // monotone
  if (a.lo >= 0) return Norm(lo, hi);
  if (a.hi <= 0) return Norm(hi, lo);
  return Norm(0, std::max(lo, hi));
}

Interval Union(const std::optional<Interval>& a, const Interval& b) {
  if (!a) return b;
  return {std::min(a->lo, b.lo), std::max(a->hi, b.hi)};
}

// floor(x / y) for y >= 1 (possibly +kInf); never called with two infinities.
Wide DivEnd(Wide x, Wide y) {
  if (y == kInf) return x >= 0 ? 0 : -1;
  if (IsInf(x)) return x;
  Wide q = x / y;
  if (x % y != 0 && x < 0) --q;
  return q;
}

// floordiv over a by a divisor in [d.lo, d.hi] with d.lo >= 1.
Interval FloorDivPos(const Interval& a, const Interval& d) {
  Wide lo = a.lo >= 0 ? DivEnd(a.lo, d.hi) : DivEnd(a.lo, d.lo);
  Wide hi = a.hi >= 0 ? DivEnd(a.hi, d.lo) : DivEnd(a.hi, d.hi);
  return Norm(lo, hi);
}

// mod of a by a divisor in [d.lo, d.hi] with d.lo >= 1.
Interval ModPos(const Interval& a, const Interval& d) {
  if (a.lo >= 0 && a.hi < d.lo) return a;
  Wide hi = d.hi == kInf ? kInf : d.hi - 1;
  if (a.lo >= 0) hi = std::min(hi, a.hi);
  return {0, hi};
}

// Splits a divisor interval into its positive and negative parts (zero is excluded: dividing
// by zero is undefined) and combines f over both.
template <typename F>
Interval ByDivisorSign(const Interval& a, const Interval& d, F f, bool negate_result) {
  std::optional<Interval> out;
  if (d.hi >= 1) out = Union(out, f(a, Interval{std::max<Wide>(d.lo, 1), d.hi}));
  if (d.lo <= -1) {
    // floordiv(a, d) = floordiv(-a, -d);  mod(a, d) = -mod(-a, -d).
    Interval r = f(NegI(a), NegI(Interval{d.lo, std::min<Wide>(d.hi, -1)}));
    out = Union(out, negate_result ? NegI(r) : r);
  }
  return out ? *out : kEverything;
}

Interval EvalPoly(const Poly& p, const SymRanges& ranges, const SymRange& fallback);
std::optional<Interval> DivTermsTightened(const Poly& p, const SymRanges& ranges,
                                          const SymRange& fallback);
std::optional<Interval> CommonFactorTightened(const Poly& p, const SymRanges& ranges,
                                              const SymRange& fallback);

Interval Eval(const SymExpr& e, const SymRanges& ranges, const SymRange& fallback) {
  const Node* n = e.node();
  if (n == nullptr) return {e.constant(), e.constant()};
  switch (n->kind) {
    case Kind::kSymbol: {
      auto it = ranges.find(n->name);
      return FromRange(it == ranges.end() ? fallback : it->second);
    }
    case Kind::kFloorDiv:
      return ByDivisorSign(Eval(n->args[0], ranges, fallback), Eval(n->args[1], ranges, fallback),
                           FloorDivPos, /*negate_result=*/false);
    case Kind::kMod:
      return ByDivisorSign(Eval(n->args[0], ranges, fallback), Eval(n->args[1], ranges, fallback),
                           ModPos, /*negate_result=*/true);
    case Kind::kMin:
    case Kind::kMax: {
      std::optional<Interval> out;
      for (const SymExpr& a : n->args) {
        Interval v = Eval(a, ranges, fallback);
        if (!out) {
          out = v;
        } else if (n->kind == Kind::kMin) {
          out = Interval{std::min(out->lo, v.lo), std::min(out->hi, v.hi)};
        } else {
          out = Interval{std::max(out->lo, v.lo), std::max(out->hi, v.hi)};
        }
      }
      return *out;
    }
    case Kind::kSum: {
      Interval sum = EvalPoly(n->poly, ranges, fallback);
      if (std::optional<Interval> t = DivTermsTightened(n->poly, ranges, fallback)) {
        sum = {std::max(sum.lo, t->lo), std::min(sum.hi, t->hi)};
      }
      if (std::optional<Interval> t = CommonFactorTightened(n->poly, ranges, fallback)) {
        sum = {std::max(sum.lo, t->lo), std::min(sum.hi, t->hi)};
      }
      return sum;
    }
  }
  return kEverything;
}

Interval EvalPoly(const Poly& p, const SymRanges& ranges, const SymRange& fallback) {
  Interval sum = {p.constant, p.constant};
  for (const Term& t : p.terms) {
    Interval term = {t.coeff, t.coeff};
    for (const Factor& f : t.monomial) {
      term = MulI(term, PowI(Eval(f.atom, ranges, fallback), f.exponent));
    }
    sum = AddI(sum, term);
  }
  return sum;
}

// A sum's terms k * floordiv(a, c) with constant c >= 1, rewritten by c * floordiv(a, c) =
// a - mod(a, c) so that a combines linearly with the rest of the sum: L * sum, for L the lcm of
// the divisors, is (the other terms and the numerators, times L) - sum(k * L / c * mod(a, c)),
// each mod in [0, c - 1]. Plain interval arithmetic loses the correlation between s and
// floordiv(s, 4) and cannot show s - floordiv(s, 4) >= 0; here it is (3s + mod(s, 4)) / 4.
// nullopt when there is no such term or the rewrite overflows.
std::optional<Interval> DivTermsTightened(const Poly& p, const SymRanges& ranges,
                                          const SymRange& fallback) {
  constexpr int64_t kMaxLcm = int64_t{1} << 20;
  auto divisor = [](const Term& t) -> int64_t {
    if (t.monomial.size() != 1 || t.monomial[0].exponent != 1) return 0;
    const Node* atom = t.monomial[0].atom.node();
    if (atom->kind != Kind::kFloorDiv) return 0;
    std::optional<int64_t> c = atom->args[1].AsConstant();
    return c && *c >= 1 ? *c : 0;
  };
  int64_t lcm = 1;
  for (const Term& t : p.terms) {
    const int64_t c = divisor(t);
    if (c == 0) continue;
    lcm = lcm / static_cast<int64_t>(Gcd(lcm, c)) * c;
    if (lcm > kMaxLcm) return std::nullopt;
  }
  if (lcm == 1) return std::nullopt;  // no floordiv terms (or only floordiv by 1)
  Overflow ov;
  Poly rest;
  rest.constant = MulC(p.constant, lcm, ov);
  Interval mods = {0, 0};
  for (const Term& t : p.terms) {
    const int64_t c = divisor(t);
    if (c == 0) {
      Poly one;
      one.terms.push_back(Term{t.monomial, MulC(t.coeff, lcm, ov)});
      rest = AddPoly(rest, one, ov);
      continue;
    }
    const int64_t m = MulC(t.coeff, lcm / c, ov);
    rest = AddPoly(rest, ScalePoly(ToPoly(t.monomial[0].atom.node()->args[0]), m, ov), ov);
    mods = AddI(mods, MulI(Interval{-Wide(m), -Wide(m)}, Interval{0, c - 1}));
    if (ov.hit) return std::nullopt;
  }
  if (ov.hit) return std::nullopt;
  const Interval scaled = AddI(EvalPoly(rest, ranges, fallback), mods);
  // The sum is an integer in [scaled.lo / lcm, scaled.hi / lcm].
  Wide lo = scaled.lo, hi = scaled.hi;
  if (!IsInf(lo)) lo = -DivEnd(-lo, lcm);  // ceil
  if (!IsInf(hi)) hi = DivEnd(hi, lcm);    // floor
  return Norm(lo, hi);
}

// A sum without a constant whose every term has a factor a >= 1 (an atom, e.g. a size symbol):
// a * (the sum with one power of a taken out of each term). Plain interval arithmetic loses
// the correlation between the terms and cannot show s2 * s3 - s3 >= 2 for s2, s3 >= 2; as
// s3 * (s2 - 1) it is. (Strides and element counts are such products: prims' functionalize
// decides whether a reshape of a symbolic view can view it with these.) nullopt when there is
// no such factor.
std::optional<Interval> CommonFactorTightened(const Poly& p, const SymRanges& ranges,
                                              const SymRange& fallback) {
  if (p.constant != 0 || p.terms.size() < 2) return std::nullopt;
  for (const Factor& candidate : p.terms[0].monomial) {
    const Interval a = Eval(candidate.atom, ranges, fallback);
    if (a.lo < 1) continue;
    Poly rest;
    bool common = true;
    for (const Term& t : p.terms) {
      Monomial m;
      bool found = false;
      for (const Factor& f : t.monomial) {
        if (f.atom == candidate.atom) {
          found = true;
          if (f.exponent > 1) m.push_back(Factor{f.atom, f.exponent - 1});
        } else {
          m.push_back(f);
        }
      }
      if (!found) {
        common = false;
        break;
      }
      if (m.empty()) {
        rest.constant += t.coeff;  // at most one term was `coeff * a` (monomials are distinct)
      } else {
        rest.terms.push_back(Term{std::move(m), t.coeff});
      }
    }
    if (!common) continue;
    Interval q = EvalPoly(rest, ranges, fallback);
    if (std::optional<Interval> t = CommonFactorTightened(rest, ranges, fallback)) {
      q = {std::max(q.lo, t->lo), std::min(q.hi, t->hi)};
    }
    return MulI(a, q);
  }
  return std::nullopt;
}

SymRange ToRange(const Interval& i) {
  return {i.lo == -kInf ? INT64_MIN : static_cast<int64_t>(i.lo),
          i.hi == kInf ? INT64_MAX : static_cast<int64_t>(i.hi)};
}

// Bounds of b - a, or nullopt when the difference itself overflows int64.
std::optional<Interval> DifferenceBounds(const SymExpr& a, const SymExpr& b,
                                         const SymRanges& ranges) {
  if (a.is_constant() && b.is_constant()) {
    Wide d = Wide(b.constant()) - Wide(a.constant());
    return Interval{d, d};
  }
  Overflow ov;
  SymExpr d = Sub(b, a, ov);
  if (ov.hit) return std::nullopt;
  return Eval(d, ranges, SymRange{0, INT64_MAX});
}

}  // namespace

SymRange IntervalOf(const SymExpr& e, const SymRanges& ranges, SymRange fallback) {
  return ToRange(Eval(e, ranges, fallback));
}

}  // namespace sym_internal

using sym_internal::DifferenceBounds;
using sym_internal::Interval;

Truth ProveEq(const SymExpr& a, const SymExpr& b, const SymRanges& ranges) {
  if (a == b) return Truth::kTrue;
  std::optional<Interval> d = DifferenceBounds(a, b, ranges);
  if (!d) return Truth::kUnknown;
  if (d->lo == 0 && d->hi == 0) return Truth::kTrue;
  if (d->lo > 0 || d->hi < 0) return Truth::kFalse;
  return Truth::kUnknown;
}

Truth ProveLt(const SymExpr& a, const SymExpr& b, const SymRanges& ranges) {
  std::optional<Interval> d = DifferenceBounds(a, b, ranges);
  if (!d) return Truth::kUnknown;
  if (d->lo >= 1) return Truth::kTrue;
  if (d->hi <= 0) return Truth::kFalse;
  return Truth::kUnknown;
}

Truth ProveLe(const SymExpr& a, const SymExpr& b, const SymRanges& ranges) {
  std::optional<Interval> d = DifferenceBounds(a, b, ranges);
  if (!d) return Truth::kUnknown;
  if (d->lo >= 0) return Truth::kTrue;
  if (d->hi < 0) return Truth::kFalse;
  return Truth::kUnknown;
}

SymRange Bounds(const SymExpr& e, const SymRanges& ranges) {
  return sym_internal::IntervalOf(e, ranges, SymRange{0, INT64_MAX});
}

}  // namespace coil
