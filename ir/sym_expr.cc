// SymExpr core: nodes, ordering and hashing, polynomial arithmetic, substitution, evaluation
// and proto conversion. The rewrite rules live in sym_expr_rules.cc, text in sym_expr_text.cc,
// interval bounds in sym_expr_bounds.cc. See [Note: canonical form] in sym_expr_internal.h.
#include "ir/sym_expr.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "ir/sym_expr_internal.h"

namespace coil {
namespace sym_internal {
namespace {

size_t Mix(size_t h, uint64_t v) {
  // splitmix64 finalizer over the combination: deterministic across runs and platforms.
  uint64_t x = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<size_t>(x);
}

int Cmp3(int64_t a, int64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

int CompareArgs(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (int c = Compare(a[i], b[i]); c != 0) return c;
  }
  return Cmp3(a.size(), b.size());
}

int64_t Degree(const Monomial& m) {
  int64_t d = 0;
  for (const Factor& f : m) d += f.exponent;
  return d;
}

int ComparePoly(const Poly& a, const Poly& b) {
  for (size_t i = 0; i < a.terms.size() && i < b.terms.size(); ++i) {
    if (int c = CompareMonomial(a.terms[i].monomial, b.terms[i].monomial); c != 0) return c;
    if (int c = Cmp3(a.terms[i].coeff, b.terms[i].coeff); c != 0) return c;
  }
  if (int c = Cmp3(a.terms.size(), b.terms.size()); c != 0) return c;
  return Cmp3(a.constant, b.constant);
}

size_t HashPoly(const Poly& p) {
  size_t h = Mix(static_cast<size_t>(Kind::kSum), p.constant);
  for (const Term& t : p.terms) {
    h = Mix(h, t.coeff);
    for (const Factor& f : t.monomial) h = Mix(Mix(h, f.atom.Hash()), f.exponent);
  }
  return h;
}

SymExpr MakeSum(Poly p) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::kSum;
  n->hash = HashPoly(p);
  n->poly = std::move(p);
  return SymExpr(std::shared_ptr<const Node>(std::move(n)));
}

// The product of two monomials (exponents added).
Monomial MulMonomial(const Monomial& a, const Monomial& b, Overflow& ov) {
  Monomial out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    int c = i == a.size() ? 1 : j == b.size() ? -1 : Compare(a[i].atom, b[j].atom);
    if (c < 0) {
      out.push_back(a[i++]);
    } else if (c > 0) {
      out.push_back(b[j++]);
    } else {
      out.push_back({a[i].atom, AddC(a[i].exponent, b[j].exponent, ov)});
      ++i, ++j;
    }
  }
  return out;
}

// Sorts terms, merges equal monomials and drops zero coefficients.
void NormalizeTerms(std::vector<Term>& terms, Overflow& ov) {
  std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) {
    return CompareMonomial(a.monomial, b.monomial) < 0;
  });
  std::vector<Term> out;
  out.reserve(terms.size());
  for (Term& t : terms) {
    if (!out.empty() && CompareMonomial(out.back().monomial, t.monomial) == 0) {
      out.back().coeff = AddC(out.back().coeff, t.coeff, ov);
    } else {
      out.push_back(std::move(t));
    }
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const Term& t) { return t.coeff == 0; }),
            out.end());
  terms = std::move(out);
}

}  // namespace

int64_t AddC(int64_t a, int64_t b, Overflow& ov) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) ov.hit = true;
  return r;
}
int64_t SubC(int64_t a, int64_t b, Overflow& ov) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) ov.hit = true;
  return r;
}
int64_t MulC(int64_t a, int64_t b, Overflow& ov) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) ov.hit = true;
  return r;
}
int64_t FloorDivC(int64_t a, int64_t b, Overflow& ov) {
  COIL_CHECK(b != 0);
  if (b == -1) return SubC(0, a, ov);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t ModC(int64_t a, int64_t b) {
  COIL_CHECK(b != 0);
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
uint64_t Magnitude(int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : v; }
uint64_t Gcd(uint64_t a, uint64_t b) {
  while (b != 0) a = std::exchange(b, a % b);
  return a;
}

int Compare(const SymExpr& a, const SymExpr& b) {
  const Node* x = a.node();
  const Node* y = b.node();
  if (x == nullptr || y == nullptr) {
    if (x == nullptr && y == nullptr) return Cmp3(a.constant(), b.constant());
    return x == nullptr ? -1 : 1;  // constants first
  }
  if (x == y) return 0;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  switch (x->kind) {
    case Kind::kSymbol:
      return x->name < y->name ? -1 : (x->name > y->name ? 1 : 0);
    case Kind::kFloorDiv:
    case Kind::kMod:
    case Kind::kMin:
    case Kind::kMax:
      return CompareArgs(x->args, y->args);
    case Kind::kSum:
      return ComparePoly(x->poly, y->poly);
  }
  COIL_CHECK(false) << "bad SymExpr kind";
  return 0;
}

// Higher total degree first, then lexicographic by atom (higher exponent first).
int CompareMonomial(const Monomial& a, const Monomial& b) {
  if (int c = Cmp3(Degree(b), Degree(a)); c != 0) return c;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (int c = Compare(a[i].atom, b[i].atom); c != 0) return c;
    if (int c = Cmp3(b[i].exponent, a[i].exponent); c != 0) return c;
  }
  return Cmp3(a.size(), b.size());
}

SymExpr MakeSymbol(std::string name) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::kSymbol;
  size_t h = Mix(static_cast<size_t>(Kind::kSymbol), 0);
  for (char c : name) h = Mix(h, static_cast<unsigned char>(c));
  n->hash = h;
  n->name = std::move(name);
  return SymExpr(std::shared_ptr<const Node>(std::move(n)));
}

SymExpr MakeAtom(Kind kind, std::vector<SymExpr> args) {
  COIL_CHECK(kind != Kind::kSymbol && kind != Kind::kSum);
  auto n = std::make_shared<Node>();
  n->kind = kind;
  size_t h = Mix(static_cast<size_t>(kind), args.size());
  for (const SymExpr& a : args) h = Mix(h, a.Hash());
  n->hash = h;
  n->args = std::move(args);
  return SymExpr(std::shared_ptr<const Node>(std::move(n)));
}

Kind KindOf(const SymExpr& e) {
  COIL_CHECK(!e.is_constant());
  return e.node()->kind;
}

bool IsIdentifier(absl::string_view name) {
  if (name.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(name[0])) return false;
  for (char c : name) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

Poly ToPoly(const SymExpr& e) {
  if (e.is_constant()) return Poly{{}, e.constant()};
  if (e.node()->kind == Kind::kSum) return e.node()->poly;
  return Poly{{Term{{Factor{e, 1}}, 1}}, 0};
}

SymExpr FromPoly(Poly p, Overflow& ov) {
  p = RecombineDivMod(std::move(p), ov);
  if (p.terms.empty()) return SymExpr(p.constant);
  if (p.terms.size() == 1 && p.constant == 0 && p.terms[0].coeff == 1 &&
      p.terms[0].monomial.size() == 1 && p.terms[0].monomial[0].exponent == 1) {
    return p.terms[0].monomial[0].atom;
  }
  return MakeSum(std::move(p));
}

Poly AddPoly(const Poly& a, const Poly& b, Overflow& ov) {
  Poly out;
  out.constant = AddC(a.constant, b.constant, ov);
  out.terms.reserve(a.terms.size() + b.terms.size());
  size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    int c = i == a.terms.size()   ? 1
            : j == b.terms.size() ? -1
                                  : CompareMonomial(a.terms[i].monomial, b.terms[j].monomial);
    if (c < 0) {
      out.terms.push_back(a.terms[i++]);
    } else if (c > 0) {
      out.terms.push_back(b.terms[j++]);
    } else {
      int64_t k = AddC(a.terms[i].coeff, b.terms[j].coeff, ov);
      if (k != 0) out.terms.push_back({a.terms[i].monomial, k});
      ++i, ++j;
    }
  }
  if (out.terms.size() > kMaxTerms) {
    ov.hit = ov.too_large = true;
    return Poly{};
  }
  return out;
}

Poly ScalePoly(const Poly& a, int64_t k, Overflow& ov) {
  if (k == 0) return Poly{};
  Poly out;
  out.constant = MulC(a.constant, k, ov);
  out.terms.reserve(a.terms.size());
  for (const Term& t : a.terms) {
    int64_t c = MulC(t.coeff, k, ov);
    if (c != 0) out.terms.push_back({t.monomial, c});  // 0 only after overflow
  }
  return out;
}

Poly MulPoly(const Poly& a, const Poly& b, Overflow& ov) {
  if ((a.terms.size() + 1) * (b.terms.size() + 1) > kMaxTerms + 1) {
    ov.hit = ov.too_large = true;
    return Poly{};
  }
  Poly out;
  out.constant = MulC(a.constant, b.constant, ov);
  for (const Term& t : a.terms) {
    if (b.constant != 0) out.terms.push_back({t.monomial, MulC(t.coeff, b.constant, ov)});
    for (const Term& u : b.terms) {
      out.terms.push_back({MulMonomial(t.monomial, u.monomial, ov), MulC(t.coeff, u.coeff, ov)});
    }
  }
  if (a.constant != 0) {
    for (const Term& u : b.terms) out.terms.push_back({u.monomial, MulC(u.coeff, a.constant, ov)});
  }
  NormalizeTerms(out.terms, ov);
  return out;
}

Poly DividePoly(const Poly& a, int64_t g) {
  COIL_CHECK(g > 0);
  Poly out = a;
  COIL_CHECK(out.constant % g == 0);
  out.constant /= g;
  for (Term& t : out.terms) {
    COIL_CHECK(t.coeff % g == 0);
    t.coeff /= g;
  }
  return out;
}

uint64_t Content(const Poly& p) {
  uint64_t g = Magnitude(p.constant);
  for (const Term& t : p.terms) g = Gcd(g, Magnitude(t.coeff));
  return g;
}

bool PolyEqual(const Poly& a, const Poly& b) { return ComparePoly(a, b) == 0; }

SymExpr Add(const SymExpr& a, const SymExpr& b, Overflow& ov) {
  if (a.is_constant() && b.is_constant()) return AddC(a.constant(), b.constant(), ov);
  if (b.is_constant() && b.constant() == 0) return a;  // x + 0 -> x
  if (a.is_constant() && a.constant() == 0) return b;  // 0 + x -> x
  return FromPoly(AddPoly(ToPoly(a), ToPoly(b), ov), ov);
}

SymExpr Neg(const SymExpr& a, Overflow& ov) {
  if (a.is_constant()) return SubC(0, a.constant(), ov);
  return FromPoly(ScalePoly(ToPoly(a), -1, ov), ov);
}

SymExpr Sub(const SymExpr& a, const SymExpr& b, Overflow& ov) {
  if (a.is_constant() && b.is_constant()) return SubC(a.constant(), b.constant(), ov);
  return Add(a, Neg(b, ov), ov);
}

SymExpr Mul(const SymExpr& a, const SymExpr& b, Overflow& ov) {
  if (a.is_constant() && b.is_constant()) return MulC(a.constant(), b.constant(), ov);
  if (b.is_constant() && b.constant() == 1) return a;  // x * 1 -> x
  if (a.is_constant() && a.constant() == 1) return b;  // 1 * x -> x
  if (a.is_constant() && a.constant() == 0) return 0;  // 0 * x -> 0
  if (b.is_constant() && b.constant() == 0) return 0;  // x * 0 -> 0
  return FromPoly(MulPoly(ToPoly(a), ToPoly(b), ov), ov);
}

}  // namespace sym_internal

using sym_internal::Kind;
using sym_internal::Overflow;

SymExpr::SymExpr(int64_t value) : value_(value) {}

SymExpr::SymExpr(std::shared_ptr<const sym_internal::Node> node) : node_(std::move(node)) {
  COIL_CHECK(node_ != nullptr) << "a constant SymExpr has no node; use SymExpr(int64_t)";
}

SymExpr SymExpr::Symbol(absl::string_view name) {
  COIL_CHECK(sym_internal::IsIdentifier(name))
      << "symbol name '" << name << "' is not an identifier";
  return sym_internal::MakeSymbol(std::string(name));
}

namespace {

thread_local SymArithmeticGuard* active_guard = nullptr;

// A failed operation: recorded by the active guard (the caller then returns the constant 1),
// or a CHECK failure. `what` is called once, only on failure.
template <typename What>
bool Trapped(What what) {
  if (active_guard == nullptr) return false;
  active_guard->Record(what());
  return true;
}

std::string Args(const SymExpr& a, const SymExpr& b) {
  return absl::StrCat(a.ToString(), ", ", b.ToString());
}

}  // namespace

SymArithmeticGuard::SymArithmeticGuard() : outer_(active_guard) { active_guard = this; }

SymArithmeticGuard::~SymArithmeticGuard() { active_guard = outer_; }

absl::Status SymArithmeticGuard::status() const {
  return ok() ? absl::OkStatus() : absl::InvalidArgumentError(failure_);
}

SymArithmeticGuard* SymArithmeticGuard::Active() { return active_guard; }

void SymArithmeticGuard::Record(std::string what) {
  if (failure_.empty()) failure_ = std::move(what);
}

SymExpr SymExpr::FloorDiv(const SymExpr& a, const SymExpr& b) {
  if (b == 0 && Trapped([&] {
        return absl::StrCat("division by zero in shape arithmetic: floordiv(", Args(a, b), ")");
      })) {
    return 1;
  }
  COIL_CHECK(b != 0) << "floordiv(" << a.ToString() << ", 0)";
  Overflow ov;
  SymExpr r = sym_internal::FloorDivImpl(a, b, ov);
  if (ov.hit && Trapped([&] {
        return absl::StrCat(ov.what(), " in shape arithmetic: floordiv(", Args(a, b), ")");
      })) {
    return 1;
  }
  COIL_CHECK(!ov.hit) << ov.what() << " in floordiv(" << a.ToString() << ", " << b.ToString()
                      << ")";
  return r;
}

SymExpr SymExpr::Mod(const SymExpr& a, const SymExpr& b) {
  if (b == 0 && Trapped([&] {
        return absl::StrCat("division by zero in shape arithmetic: mod(", Args(a, b), ")");
      })) {
    return 1;
  }
  COIL_CHECK(b != 0) << "mod(" << a.ToString() << ", 0)";
  Overflow ov;
  SymExpr r = sym_internal::ModImpl(a, b, ov);
  if (ov.hit && Trapped([&] {
        return absl::StrCat(ov.what(), " in shape arithmetic: mod(", Args(a, b), ")");
      })) {
    return 1;
  }
  COIL_CHECK(!ov.hit) << ov.what() << " in mod(" << a.ToString() << ", " << b.ToString() << ")";
  return r;
}

SymExpr SymExpr::Min(const SymExpr& a, const SymExpr& b) {
  Overflow ov;
  SymExpr r = sym_internal::MinMaxImpl(Kind::kMin, {a, b}, ov);
  if (ov.hit && Trapped([&] {
        return absl::StrCat(ov.what(), " in shape arithmetic: min(", Args(a, b), ")");
      })) {
    return 1;
  }
  COIL_CHECK(!ov.hit) << ov.what() << " in min(" << a.ToString() << ", " << b.ToString() << ")";
  return r;
}

SymExpr SymExpr::Max(const SymExpr& a, const SymExpr& b) {
  Overflow ov;
  SymExpr r = sym_internal::MinMaxImpl(Kind::kMax, {a, b}, ov);
  if (ov.hit && Trapped([&] {
        return absl::StrCat(ov.what(), " in shape arithmetic: max(", Args(a, b), ")");
      })) {
    return 1;
  }
  COIL_CHECK(!ov.hit) << ov.what() << " in max(" << a.ToString() << ", " << b.ToString() << ")";
  return r;
}

namespace {

// "(a) op (b)", as the binary operators' failures print it.
std::string Binary(const SymExpr& a, absl::string_view op, const SymExpr& b) {
  return absl::StrCat("(", a.ToString(), ") ", op, " (", b.ToString(), ")");
}

}  // namespace

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  Overflow ov;
  SymExpr r = sym_internal::Add(a, b, ov);
  if (ov.hit && Trapped([&] {
        return absl::StrCat(ov.what(), " in shape arithmetic: ", Binary(a, "+", b));
      })) {
    return 1;
  }
  COIL_CHECK(!ov.hit) << ov.what() << " in " << Binary(a, "+", b);
  return r;
}

SymExpr operator-(const SymExpr& a, const SymExpr& b) {
  Overflow ov;
  SymExpr r = sym_internal::Sub(a, b, ov);
  if (ov.hit && Trapped([&] {
        return absl::StrCat(ov.what(), " in shape arithmetic: ", Binary(a, "-", b));
      })) {
    return 1;
  }
  COIL_CHECK(!ov.hit) << ov.what() << " in " << Binary(a, "-", b);
  return r;
}

SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  Overflow ov;
  SymExpr r = sym_internal::Mul(a, b, ov);
  if (ov.hit && Trapped([&] {
        return absl::StrCat(ov.what(), " in shape arithmetic: ", Binary(a, "*", b));
      })) {
    return 1;
  }
  COIL_CHECK(!ov.hit) << ov.what() << " in " << Binary(a, "*", b);
  return r;
}

SymExpr SymExpr::operator-() const {
  Overflow ov;
  SymExpr r = sym_internal::Neg(*this, ov);
  if (ov.hit && Trapped([&] {
        return absl::StrCat(ov.what(), " in shape arithmetic: -(", ToString(), ")");
      })) {
    return 1;
  }
  COIL_CHECK(!ov.hit) << ov.what() << " in -(" << ToString() << ")";
  return r;
}

int64_t SymExpr::constant() const {
  COIL_CHECK(is_constant()) << "constant() of the symbolic expression " << ToString();
  return value_;
}

bool SymExpr::is_symbol() const { return node_ != nullptr && node_->kind == Kind::kSymbol; }

namespace {

void CollectSymbols(const SymExpr& e, std::set<std::string>& out) {
  const sym_internal::Node* n = e.node();
  if (n == nullptr) return;
  if (n->kind == Kind::kSymbol) {
    out.insert(n->name);
    return;
  }
  for (const SymExpr& a : n->args) CollectSymbols(a, out);
  for (const sym_internal::Term& t : n->poly.terms) {
    for (const sym_internal::Factor& f : t.monomial) CollectSymbols(f.atom, out);
  }
}

}  // namespace

std::vector<std::string> SymExpr::Symbols() const {
  std::set<std::string> names;
  CollectSymbols(*this, names);
  return std::vector<std::string>(names.begin(), names.end());
}

bool operator==(const SymExpr& a, const SymExpr& b) {
  if (a.node_ == nullptr || b.node_ == nullptr) {
    return a.node_ == b.node_ && a.value_ == b.value_;
  }
  if (a.node_ == b.node_) return true;
  if (a.node_->hash != b.node_->hash) return false;
  return sym_internal::Compare(a, b) == 0;
}

bool operator<(const SymExpr& a, const SymExpr& b) { return sym_internal::Compare(a, b) < 0; }

size_t SymExpr::Hash() const {
  return node_ != nullptr ? node_->hash : sym_internal::Mix(0x5eed, static_cast<uint64_t>(value_));
}

namespace {

SymExpr SubstituteImpl(const SymExpr& e, const absl::flat_hash_map<std::string, SymExpr>& values,
                       Overflow& ov) {
  const sym_internal::Node* n = e.node();
  if (n == nullptr) return e;
  switch (n->kind) {
    case Kind::kSymbol: {
      auto it = values.find(n->name);
      return it == values.end() ? e : it->second;
    }
    case Kind::kFloorDiv:
    case Kind::kMod: {
      SymExpr a = SubstituteImpl(n->args[0], values, ov);
      SymExpr b = SubstituteImpl(n->args[1], values, ov);
      if (b == 0 && !ov.hit && Trapped([&] {
            return absl::StrCat("division by zero in shape arithmetic: substituting makes the "
                                "divisor of ", e.ToString(), " zero");
          })) {
        ov.hit = true;
      }
      if (b == 0 && ov.hit) return 1;  // the failure is already recorded
      COIL_CHECK(b != 0 || ov.hit) << "Substitute makes the divisor of " << e.ToString() << " zero";
      return n->kind == Kind::kFloorDiv ? sym_internal::FloorDivImpl(a, b, ov)
                                        : sym_internal::ModImpl(a, b, ov);
    }
    case Kind::kMin:
    case Kind::kMax: {
      std::vector<SymExpr> args;
      for (const SymExpr& a : n->args) args.push_back(SubstituteImpl(a, values, ov));
      return sym_internal::MinMaxImpl(n->kind, std::move(args), ov);
    }
    case Kind::kSum: {
      SymExpr sum = n->poly.constant;
      for (const sym_internal::Term& t : n->poly.terms) {
        SymExpr term = t.coeff;
        for (const sym_internal::Factor& f : t.monomial) {
          SymExpr atom = SubstituteImpl(f.atom, values, ov);
          for (int64_t i = 0; i < f.exponent; ++i) term = sym_internal::Mul(term, atom, ov);
        }
        sum = sym_internal::Add(sum, term, ov);
      }
      return sum;
    }
  }
  COIL_CHECK(false) << "bad SymExpr kind";
  return e;
}

absl::Status EvalOverflow(const SymExpr& e) {
  return absl::InvalidArgumentError(absl::StrCat("int64 overflow while evaluating ", e.ToString()));
}

absl::StatusOr<int64_t> EvaluateImpl(const SymExpr& e,
                                     const absl::flat_hash_map<std::string, int64_t>& values) {
  const sym_internal::Node* n = e.node();
  if (n == nullptr) return e.constant();
  switch (n->kind) {
    case Kind::kSymbol: {
      auto it = values.find(n->name);
      if (it == values.end()) {
        return absl::InvalidArgumentError(absl::StrCat("no value for symbol '", n->name, "'"));
      }
      return it->second;
    }
    case Kind::kFloorDiv:
    case Kind::kMod: {
      absl::StatusOr<int64_t> a = EvaluateImpl(n->args[0], values);
      if (!a.ok()) return a.status();
      absl::StatusOr<int64_t> b = EvaluateImpl(n->args[1], values);
      if (!b.ok()) return b.status();
      if (*b == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("division by zero while evaluating ", e.ToString()));
      }
      if (n->kind == Kind::kMod) return sym_internal::ModC(*a, *b);
      Overflow ov;
      int64_t q = sym_internal::FloorDivC(*a, *b, ov);
      if (ov.hit) return EvalOverflow(e);
      return q;
    }
    case Kind::kMin:
    case Kind::kMax: {
      std::optional<int64_t> best;
      for (const SymExpr& arg : n->args) {
        absl::StatusOr<int64_t> v = EvaluateImpl(arg, values);
        if (!v.ok()) return v.status();
        if (!best || (n->kind == Kind::kMin ? *v < *best : *v > *best)) best = *v;
      }
      return *best;
    }
    case Kind::kSum: {
      Overflow ov;
      int64_t sum = n->poly.constant;
      for (const sym_internal::Term& t : n->poly.terms) {
        int64_t term = t.coeff;
        for (const sym_internal::Factor& f : t.monomial) {
          absl::StatusOr<int64_t> v = EvaluateImpl(f.atom, values);
          if (!v.ok()) return v.status();
          for (int64_t i = 0; i < f.exponent; ++i) term = sym_internal::MulC(term, *v, ov);
        }
        sum = sym_internal::AddC(sum, term, ov);
      }
      if (ov.hit) return EvalOverflow(e);
      return sum;
    }
  }
  COIL_CHECK(false) << "bad SymExpr kind";
  return 0;
}

}  // namespace

SymExpr SymExpr::Substitute(const absl::flat_hash_map<std::string, SymExpr>& values) const {
  Overflow ov;
  SymExpr r = SubstituteImpl(*this, values, ov);
  if (ov.hit && Trapped([&] {
        return absl::StrCat(ov.what(), " in shape arithmetic: substituting into ", ToString());
      })) {
    return 1;
  }
  COIL_CHECK(!ov.hit) << ov.what() << " substituting into " << ToString();
  return r;
}

absl::StatusOr<int64_t> SymExpr::Evaluate(
    const absl::flat_hash_map<std::string, int64_t>& values) const {
  return EvaluateImpl(*this, values);
}

}  // namespace coil
