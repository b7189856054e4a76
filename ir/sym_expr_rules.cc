// The SymExpr rewrite rules: floordiv, mod, min/max and the sum-level recombination.
//
// Every rule holds for ALL integer values of the symbols (wherever both sides are defined, i.e.
// divisors are nonzero); ir/sym_expr_z3_test.cc proves each one. `c`, `b`, `g`, `k`, `n` are
// integer constants, `x`, `y`, `d`, `m` expressions. Rules marked [bounds] use interval
// bounds computed with every symbol unbounded (sym_internal::kAllIntegers), so they too hold
// for all integers.
//
// floordiv (FloorDivImpl):
//   floordiv(c1, c2)                 -> Python floor division                  (fold)
//   floordiv(x, 1)                   -> x
//   floordiv(x, -c)                  -> floordiv(-x, c)                         (c > 0)
//   floordiv(c*x + y, c)             -> x + floordiv(y, c)       (every term whose coeff c divides)
//   floordiv(y + k, c)               -> floordiv(y + mod(k, c), c) + floordiv(k, c)
//   floordiv(g*x, g*c)               -> floordiv(x, c)                          (g > 0)
//   floordiv(y, c)                   -> n        when n*c <= y < (n+1)*c        [bounds]
//   floordiv(floordiv(x, b) + k, c)  -> floordiv(x + k*b, b*c)                  (b, c > 0)
//   floordiv(k - floordiv(x, b), c)  -> floordiv(k*b + b - 1 - x, b*c)          (b, c > 0)
//   floordiv(x, -d)                  -> floordiv(-x, d)      (d's leading coefficient < 0)
//   floordiv(k*m*x + y, k*m)         -> x + floordiv(y, k*m) (symbolic single-term divisor)
//   floordiv(g*x, g*d)               -> floordiv(x, d)                          (g > 0)
//   floordiv(n*d, d)                 -> n
// mod (ModImpl):
//   mod(c1, c2)                      -> Python modulo                            (fold)
//   mod(x, 1)                        -> 0,   mod(x, -1) -> 0
//   mod(x, -c)                       -> -mod(-x, c)                             (c > 0)
//   mod(k*mod(x, b)*m + y, c)        -> mod(k*x*m + y, c)        (b > 0, c divides k*b)
//   mod(k*x + y, c)                  -> mod(mod(k, c)*x + y, c)  (drops terms with c | k)
//   mod(y + k, c)                    -> mod(y + mod(k, c), c)
//   mod(g*x, g*c)                    -> g*mod(x, c)                              (g > 0)
//   mod(y, c)                        -> y - n*c  when n*c <= y < (n+1)*c         [bounds]
//   mod(x, -d)                       -> -mod(-x, d)          (d's leading coefficient < 0)
//   mod(k*m*x + y, k*m)              -> mod(y, k*m)          (symbolic single-term divisor)
//   mod(g*x, g*d)                    -> g*mod(x, d)                              (g > 0)
//   mod(n*d, d)                      -> 0
// min / max (MinMaxImpl; max mirrors min):
//   min(min(x, y), z)                -> min(x, y, z)      (also g*min(x, y) + k, g > 0)
//   min(c1, c2)                      -> the smaller constant                     (fold)
//   min(x, x)                        -> x
//   min(x, y)                        -> x        when x <= y: y - x >= 0 [bounds], or
//                                                y = max(.., z, ..) with x <= z, or x = min(..)
//   min(x)                           -> x
//   min(x + k, y + k)                -> min(x, y) + k     (no arg constant)
//   min(g*x, g*y)                    -> g*min(x, y)       (no arg constant; g > 0)
//   min(y, x)                        -> min(x, y)         (args sorted, a constant last)
// sums (RecombineDivMod):
//   k*c*floordiv(x, c)*m + k*mod(x, c)*m -> k*x*m                                (c > 0)
#include <algorithm>
#include <optional>
#include <utility>

#include "ir/check.h"
#include "ir/sym_expr_internal.h"

namespace coil::sym_internal {
namespace {

int64_t LeadingCoeff(const Poly& p) { return p.terms.empty() ? p.constant : p.terms[0].coeff; }

bool IsFinite(const SymRange& r) { return r.min != INT64_MIN && r.max != INT64_MAX; }

// If p == g*atom + k for an atom of `kind` and g > 0, returns the atom.
const Node* ScaledAtom(const Poly& p, Kind kind, int64_t* g, int64_t* k) {
  if (p.terms.size() != 1 || p.terms[0].coeff <= 0) return nullptr;
  const Monomial& m = p.terms[0].monomial;
  if (m.size() != 1 || m[0].exponent != 1 || m[0].atom.node()->kind != kind) return nullptr;
  *g = p.terms[0].coeff;
  *k = p.constant;
  return m[0].atom.node();
}

// The quotient monomial a / b when b divides a.
std::optional<Monomial> DivideMonomial(const Monomial& a, const Monomial& b) {
  Monomial out;
  size_t j = 0;
  for (const Factor& f : a) {
    if (j < b.size() && Compare(f.atom, b[j].atom) == 0) {
      if (f.exponent < b[j].exponent) return std::nullopt;
      if (f.exponent > b[j].exponent) out.push_back({f.atom, f.exponent - b[j].exponent});
      ++j;
    } else {
      out.push_back(f);
    }
  }
  if (j != b.size()) return std::nullopt;
  return out;
}

// Splits a = d*q + r where q collects every term of a that the single term d = k*m divides
// (coefficient divisible by k, monomial divisible by m). An empty m divides only by k, and
// then the constant is split as k*floordiv(constant, k) + mod(constant, k) too.
void SplitByTerm(const Poly& a, int64_t k, const Monomial& m, Poly* q, Poly* r, Overflow& ov) {
  for (const Term& t : a.terms) {
    std::optional<Monomial> quotient;
    if (t.coeff % k == 0) quotient = m.empty() ? t.monomial : DivideMonomial(t.monomial, m);
    if (!quotient) {
      r->terms.push_back(t);
    } else if (quotient->empty()) {
      q->constant = AddC(q->constant, t.coeff / k, ov);
    } else {
      q->terms.push_back({std::move(*quotient), t.coeff / k});
    }
  }
  if (m.empty()) {
    q->constant = AddC(q->constant, FloorDivC(a.constant, k, ov), ov);
    r->constant = ModC(a.constant, k);
  } else {
    r->constant = a.constant;
  }
  // Quotients of distinct monomials by one monomial are distinct but may need re-sorting.
  std::sort(q->terms.begin(), q->terms.end(), [](const Term& x, const Term& y) {
    return CompareMonomial(x.monomial, y.monomial) < 0;
  });
}

// If r == n*d for an integer n, returns n (d non-constant).
std::optional<int64_t> MultipleOf(const Poly& r, const Poly& d) {
  if (r.terms.empty() || d.terms[0].coeff == -1) return std::nullopt;  // -1: only after overflow
  if (r.terms[0].coeff % d.terms[0].coeff != 0) return std::nullopt;
  int64_t n = r.terms[0].coeff / d.terms[0].coeff;
  Overflow local;
  Poly nd = ScalePoly(d, n, local);
  if (local.hit || !PolyEqual(nd, r)) return std::nullopt;
  return n;
}

// Divides r and c by gcd(content(r), c); returns the gcd.
int64_t ReduceByGcd(Poly& r, int64_t& c) {
  uint64_t g = Gcd(Content(r), Magnitude(c));
  if (g <= 1 || g > static_cast<uint64_t>(INT64_MAX)) return 1;
  r = DividePoly(r, static_cast<int64_t>(g));
  c /= static_cast<int64_t>(g);
  return static_cast<int64_t>(g);
}

// ----- floordiv -------------------------------------------------------------------------

// floordiv(r, c) for c > 0, r with no term that c divides and constant in [0, c).
SymExpr FloorDivRest(Poly r, int64_t c, Overflow& ov) {
  if (r.terms.empty()) return 0;  // 0 <= r.constant < c
  ReduceByGcd(r, c);              // floordiv(g*x, g*c) -> floordiv(x, c)
  SymExpr num = FromPoly(r, ov);
  if (c == 1) return num;
  // floordiv(y, c) -> n when n*c <= y < (n+1)*c  [bounds]
  SymRange range = IntervalOf(num, {}, kAllIntegers);
  if (IsFinite(range)) {
    int64_t lo = FloorDivC(range.min, c, ov), hi = FloorDivC(range.max, c, ov);
    if (lo == hi) return lo;
  }
  // floordiv(floordiv(x, b) + k, c) -> floordiv(x + k*b, b*c)          (b, c > 0)
  // floordiv(k - floordiv(x, b), c) -> floordiv(k*b + b - 1 - x, b*c)  (b, c > 0)
  if (r.terms.size() == 1 && (r.terms[0].coeff == 1 || r.terms[0].coeff == -1) &&
      r.terms[0].monomial.size() == 1 && r.terms[0].monomial[0].exponent == 1) {
    const Node* inner = r.terms[0].monomial[0].atom.node();
    if (inner->kind == Kind::kFloorDiv && inner->args[1].is_constant() &&
        inner->args[1].constant() > 0) {
      const SymExpr& x = inner->args[0];
      int64_t b = inner->args[1].constant(), k = r.constant;
      Overflow local;
      SymExpr num2 = r.terms[0].coeff == 1 ? Add(x, MulC(k, b, local), local)
                                           : Sub(AddC(MulC(k, b, local), b - 1, local), x, local);
      int64_t bc = MulC(b, c, local);
      if (!local.hit) {
        SymExpr out = FloorDivImpl(num2, bc, local);
        if (!local.hit) return out;
      }
    }
  }
  return MakeAtom(Kind::kFloorDiv, {std::move(num), c});
}

SymExpr FloorDivByConst(const Poly& a, int64_t c, Overflow& ov) {
  if (c == 1) return FromPoly(a, ov);  // floordiv(x, 1) -> x
  // floordiv(c*x + y, c) -> x + floordiv(y, c)
  // floordiv(y + k, c) -> floordiv(y + mod(k, c), c) + floordiv(k, c)
  Poly q, r;
  SplitByTerm(a, c, {}, &q, &r, ov);
  return Add(FromPoly(std::move(q), ov), FloorDivRest(std::move(r), c, ov), ov);
}

SymExpr FloorDivBySym(Poly a, Poly d, Overflow& ov) {
  if (LeadingCoeff(d) < 0) {  // floordiv(x, -d) -> floordiv(-x, d)
    a = ScalePoly(a, -1, ov);
    d = ScalePoly(d, -1, ov);
  }
  Poly q, r = a;
  if (d.terms.size() == 1 && d.constant == 0) {  // floordiv(k*m*x + y, k*m) -> x + floordiv(y, k*m)
    r = Poly{};
    SplitByTerm(a, d.terms[0].coeff, d.terms[0].monomial, &q, &r, ov);
  }
  uint64_t g = Gcd(Content(r), Content(d));  // floordiv(g*x, g*d) -> floordiv(x, d)
  if (g > 1 && g <= static_cast<uint64_t>(INT64_MAX)) {
    r = DividePoly(r, static_cast<int64_t>(g));
    d = DividePoly(d, static_cast<int64_t>(g));
  }
  SymExpr rest;
  if (r.terms.empty() && r.constant == 0) {
    rest = 0;  // floordiv(0, d) -> 0
  } else if (std::optional<int64_t> n = MultipleOf(r, d)) {
    rest = *n;  // floordiv(n*d, d) -> n
  } else {
    rest = MakeAtom(Kind::kFloorDiv, {FromPoly(std::move(r), ov), FromPoly(std::move(d), ov)});
  }
  return Add(FromPoly(std::move(q), ov), rest, ov);
}

// ----- mod ------------------------------------------------------------------------------

// mod(k*mod(x, b)*m + y, c) -> mod(k*x*m + y, c) when c divides k*b (b > 0), repeatedly.
Poly StripInnerMods(Poly a, int64_t c, Overflow& ov) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < a.terms.size() && !changed; ++i) {
      const Term& t = a.terms[i];
      for (size_t j = 0; !changed && j < t.monomial.size(); ++j) {  // t dangles once changed
        const Factor& f = t.monomial[j];
        if (f.exponent != 1 || f.atom.node()->kind != Kind::kMod) continue;
        const SymExpr& b = f.atom.node()->args[1];
        if (!b.is_constant() || b.constant() <= 0) continue;
        // c | k*b  <=>  (c / gcd(c, k)) | b
        uint64_t step =
            static_cast<uint64_t>(c) / Gcd(static_cast<uint64_t>(c), Magnitude(t.coeff));
        if (static_cast<uint64_t>(b.constant()) % step != 0) continue;
        Monomial rest = t.monomial;
        rest.erase(rest.begin() + j);
        Poly rest_poly = rest.empty() ? Poly{{}, t.coeff} : Poly{{Term{rest, t.coeff}}, 0};
        Overflow local;
        Poly replaced = MulPoly(rest_poly, ToPoly(f.atom.node()->args[0]), local);
        Poly without = AddPoly(a, Poly{{Term{t.monomial, -t.coeff}}, 0}, local);
        Poly next = AddPoly(without, replaced, local);
        if (local.hit) continue;
        a = std::move(next);
        changed = true;
      }
    }
  }
  return a;
}

SymExpr ModByConst(Poly a, int64_t c, Overflow& ov) {
  if (c == 1) return 0;  // mod(x, 1) -> 0
  a = StripInnerMods(std::move(a), c, ov);
  // mod(k*x + y, c) -> mod(mod(k, c)*x + y, c);  mod(y + k, c) -> mod(y + mod(k, c), c)
  Poly r;
  r.constant = ModC(a.constant, c);
  for (Term& t : a.terms) {
    int64_t k = ModC(t.coeff, c);
    if (k != 0) r.terms.push_back({std::move(t.monomial), k});
  }
  if (r.terms.empty()) return r.constant;
  // New coefficients can let the sum-level rules fire (RecombineDivMod); then start over on
  // the rewritten sum. This terminates: each such rewrite removes a floordiv atom.
  if (SymExpr reduced = FromPoly(r, ov); !ov.hit && !PolyEqual(ToPoly(reduced), r)) {
    return ModImpl(reduced, c, ov);
  }
  // mod(g*x, g*c) -> g*mod(x, c)
  if (int64_t g = ReduceByGcd(r, c); g > 1) return Mul(g, ModByConst(std::move(r), c, ov), ov);
  SymExpr num = FromPoly(r, ov);
  // mod(y, c) -> y - n*c when n*c <= y < (n+1)*c  [bounds]
  SymRange range = IntervalOf(num, {}, kAllIntegers);
  if (IsFinite(range)) {
    int64_t lo = FloorDivC(range.min, c, ov), hi = FloorDivC(range.max, c, ov);
    if (lo == hi) return Sub(num, MulC(lo, c, ov), ov);
  }
  return MakeAtom(Kind::kMod, {std::move(num), c});
}

SymExpr ModBySym(Poly a, Poly d, Overflow& ov) {
  if (LeadingCoeff(d) < 0) {  // mod(x, -d) -> -mod(-x, d)
    return Neg(ModBySym(ScalePoly(a, -1, ov), ScalePoly(d, -1, ov), ov), ov);
  }
  Poly r = a;
  if (d.terms.size() == 1 && d.constant == 0) {  // mod(k*m*x + y, k*m) -> mod(y, k*m)
    Poly q;
    r = Poly{};
    SplitByTerm(a, d.terms[0].coeff, d.terms[0].monomial, &q, &r, ov);
  }
  uint64_t g = Gcd(Content(r), Content(d));  // mod(g*x, g*d) -> g*mod(x, d)
  if (g > 1 && g <= static_cast<uint64_t>(INT64_MAX)) {
    int64_t gi = static_cast<int64_t>(g);
    return Mul(gi, ModBySym(DividePoly(r, gi), DividePoly(d, gi), ov), ov);
  }
  if (r.terms.empty() && r.constant == 0) return 0;  // mod(0, d) -> 0
  if (MultipleOf(r, d)) return 0;                    // mod(n*d, d) -> 0
  return MakeAtom(Kind::kMod, {FromPoly(std::move(r), ov), FromPoly(std::move(d), ov)});
}

// ----- min / max ------------------------------------------------------------------------

// The order of min/max args: as operator<, but a constant last ("min(s0, 8)").
bool MinMaxArgLess(const SymExpr& x, const SymExpr& y) {
  if (x.is_constant() != y.is_constant()) return y.is_constant();
  return x < y;
}

// Whether x <= y for all integers, shown syntactically (see the rule table).
bool SyntacticLe(const SymExpr& x, const SymExpr& y) {
  Overflow local;
  SymExpr diff = Sub(y, x, local);
  if (!local.hit && IntervalOf(diff, {}, kAllIntegers).min >= 0) return true;
  int64_t g, k;
  if (y.node() != nullptr) {
    if (const Node* m = ScaledAtom(ToPoly(y), Kind::kMax, &g, &k)) {  // x <= g*max(.., z, ..) + k
      for (const SymExpr& z : m->args) {
        SymExpr zz = Add(Mul(g, z, local), k, local);
        if (!local.hit && SyntacticLe(x, zz)) return true;
      }
    }
  }
  if (x.node() != nullptr) {
    if (const Node* m = ScaledAtom(ToPoly(x), Kind::kMin, &g, &k)) {  // g*min(.., z, ..) + k <= y
      for (const SymExpr& z : m->args) {
        SymExpr zz = Add(Mul(g, z, local), k, local);
        if (!local.hit && SyntacticLe(zz, y)) return true;
      }
    }
  }
  return false;
}

}  // namespace

SymExpr FloorDivImpl(const SymExpr& a, const SymExpr& b, Overflow& ov) {
  if (b.is_constant()) {
    int64_t c = b.constant();
    if (c == 0) {
      COIL_CHECK(ov.hit) << "floordiv by the constant 0";
      return 0;
    }
    if (a.is_constant()) return FloorDivC(a.constant(), c, ov);            // fold
    if (c < 0 && c != INT64_MIN) return FloorDivImpl(Neg(a, ov), -c, ov);  // floordiv(x, -c)
    if (c < 0) return MakeAtom(Kind::kFloorDiv, {a, b});
    return FloorDivByConst(ToPoly(a), c, ov);
  }
  return FloorDivBySym(ToPoly(a), ToPoly(b), ov);
}

SymExpr ModImpl(const SymExpr& a, const SymExpr& b, Overflow& ov) {
  if (b.is_constant()) {
    int64_t c = b.constant();
    if (c == 0) {
      COIL_CHECK(ov.hit) << "mod by the constant 0";
      return 0;
    }
    if (a.is_constant()) return ModC(a.constant(), c);                         // fold
    if (c == -1) return 0;                                                     // mod(x, -1) -> 0
    if (c < 0 && c != INT64_MIN) return Neg(ModImpl(Neg(a, ov), -c, ov), ov);  // mod(x, -c)
    if (c < 0) return MakeAtom(Kind::kMod, {a, b});
    return ModByConst(ToPoly(a), c, ov);
  }
  return ModBySym(ToPoly(a), ToPoly(b), ov);
}

SymExpr MinMaxImpl(Kind kind, std::vector<SymExpr> args, Overflow& ov) {
  COIL_CHECK((kind == Kind::kMin || kind == Kind::kMax) && !args.empty());
  const bool is_min = kind == Kind::kMin;
  // min(min(x, y), z) -> min(x, y, z), also through g*min(x, y) + k with g > 0.
  std::vector<SymExpr> flat;
  for (const SymExpr& a : args) {
    int64_t g, k;
    const Node* inner = a.is_constant() ? nullptr : ScaledAtom(ToPoly(a), kind, &g, &k);
    if (inner == nullptr) {
      flat.push_back(a);
      continue;
    }
    for (const SymExpr& z : inner->args) flat.push_back(Add(Mul(g, z, ov), k, ov));
  }
  // min(x, x) -> x; args sorted (constants first).
  std::sort(flat.begin(), flat.end());
  flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
  // min(c1, c2) -> the smaller constant (for max: the larger).
  size_t constants = 0;
  while (constants < flat.size() && flat[constants].is_constant()) ++constants;
  if (constants > 1) {
    flat.erase(is_min ? flat.begin() + 1 : flat.begin(),
               flat.begin() + constants - (is_min ? 0 : 1));
  }
  // min(x, y) -> x when x <= y (for max: when y <= x). Pairwise, so only for a bounded number
  // of args (kMaxDominanceArgs) to keep hostile input from taking quadratic time.
  constexpr size_t kMaxDominanceArgs = 64;
  std::vector<SymExpr> kept;
  for (size_t i = 0; i < flat.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < flat.size() && !dominated && flat.size() <= kMaxDominanceArgs; ++j) {
      if (i == j) continue;
      bool j_better = is_min ? SyntacticLe(flat[j], flat[i]) : SyntacticLe(flat[i], flat[j]);
      // Ties (both directions) keep the lower index only.
      bool i_better = is_min ? SyntacticLe(flat[i], flat[j]) : SyntacticLe(flat[j], flat[i]);
      dominated = j_better && (!i_better || j < i);
    }
    if (!dominated) kept.push_back(flat[i]);
  }
  if (kept.size() == 1) return kept[0];  // min(x) -> x
  // min(x + k, y + k) -> min(x, y) + k  (no arg constant)
  // min(g*x, g*y) -> g*min(x, y)        (no arg constant; g > 0)
  // With a constant arg the args stay as they are, so that min(s0 + 1, 8) reads as written.
  if (std::any_of(kept.begin(), kept.end(), [](const SymExpr& e) { return e.is_constant(); })) {
    std::sort(kept.begin(), kept.end(), MinMaxArgLess);
    return MakeAtom(kind, std::move(kept));
  }
  std::vector<Poly> polys;
  for (const SymExpr& a : kept) polys.push_back(ToPoly(a));
  const int64_t k = polys[0].constant;
  bool common =
      std::all_of(polys.begin(), polys.end(), [&](const Poly& p) { return p.constant == k; });
  uint64_t g = 0;
  for (Poly& p : polys) {
    if (common) p.constant = 0;
    g = Gcd(g, Content(p));
  }
  if (g > static_cast<uint64_t>(INT64_MAX)) g = 1;
  std::vector<SymExpr> normalized;
  for (Poly& p : polys) {
    normalized.push_back(FromPoly(g > 1 ? DividePoly(p, static_cast<int64_t>(g)) : p, ov));
  }
  std::sort(normalized.begin(), normalized.end(), MinMaxArgLess);
  SymExpr atom = MakeAtom(kind, std::move(normalized));
  return Add(Mul(static_cast<int64_t>(std::max<uint64_t>(g, 1)), atom, ov), common ? k : 0, ov);
}

Poly RecombineDivMod(Poly p, Overflow& ov) {
  // Cheap filter: needs a floordiv atom and a mod atom somewhere at the top level.
  bool has_div = false, has_mod = false;
  for (const Term& t : p.terms) {
    for (const Factor& f : t.monomial) {
      has_div |= f.atom.node()->kind == Kind::kFloorDiv;
      has_mod |= f.atom.node()->kind == Kind::kMod;
    }
  }
  if (!has_div || !has_mod) return p;
  // k*c*floordiv(x, c)*m + k*mod(x, c)*m -> k*x*m  (c > 0)
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < p.terms.size() && !changed; ++i) {
      const Term& t = p.terms[i];
      for (size_t j = 0; !changed && j < t.monomial.size(); ++j) {  // t dangles once changed
        const Factor& f = t.monomial[j];
        if (f.exponent != 1 || f.atom.node()->kind != Kind::kFloorDiv) continue;
        const SymExpr& x = f.atom.node()->args[0];
        const SymExpr& c = f.atom.node()->args[1];
        if (!c.is_constant() || c.constant() <= 0 || t.coeff % c.constant() != 0) continue;
        int64_t k = t.coeff / c.constant();
        Monomial m = t.monomial;
        m.erase(m.begin() + j);
        Poly km = m.empty() ? Poly{{}, k} : Poly{{Term{m, k}}, 0};
        Overflow local;
        Poly kmod = MulPoly(km, ToPoly(ModImpl(x, c, local)), local);
        // Every term of k*mod(x, c)*m must appear in p with exactly its coefficient.
        bool all_present = kmod.constant == 0 && !local.hit;
        for (const Term& u : kmod.terms) {
          auto it = std::find_if(p.terms.begin(), p.terms.end(), [&](const Term& v) {
            return CompareMonomial(v.monomial, u.monomial) == 0;
          });
          if (it == p.terms.end() || it->coeff != u.coeff) all_present = false;
        }
        if (!all_present) continue;
        Poly next = AddPoly(p, Poly{{Term{t.monomial, -t.coeff}}, 0}, local);
        next = AddPoly(next, ScalePoly(kmod, -1, local), local);
        next = AddPoly(next, MulPoly(km, ToPoly(x), local), local);
        if (local.hit) continue;
        p = std::move(next);
        changed = true;
      }
    }
  }
  return p;
}

}  // namespace coil::sym_internal
