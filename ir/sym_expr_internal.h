// Internals shared by the SymExpr implementation files (sym_expr*.cc). Not an API: include
// ir/sym_expr.h instead.
//
// [Note: canonical form]
// Every SymExpr is exactly one of
//   - a constant: no node (SymExpr::node() is null);
//   - an atom: a node of kind kSymbol, kFloorDiv{num, den}, kMod{num, den}, kMin{args},
//     kMax{args}, whose arguments are themselves canonical;
//   - a sum: a node of kind kSum holding a Poly, `constant + sum(coeff * monomial)`, where a
//     monomial is a product of atoms raised to exponents >= 1.
// A kSum node never stands for a lone constant or a lone atom (coefficient 1, exponent 1,
// constant 0): FromPoly() turns those into the constant or the atom itself. Terms are fully
// expanded and sorted by CompareMonomial, atoms inside a monomial by Compare, min/max args by
// Compare with a constant last. Together with the rules in sym_expr_rules.cc this makes ==
// a structural comparison.
//
// [Note: overflow]
// Constant arithmetic is checked, and expansion is capped at kMaxTerms terms (products of sums
// grow exponentially). Internal functions take an `Overflow&` and set `hit` instead of
// aborting, so that Parse/FromProto can turn either into a user error while the public
// operators CHECK-fail. Once `hit` is set, results are meaningless but still well-formed (no
// aborts, no loops); the caller discards them.
#ifndef COIL_IR_SYM_EXPR_INTERNAL_H_
#define COIL_IR_SYM_EXPR_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/sym_expr.h"

namespace coil::sym_internal {

// Atom kinds first (in the order atoms sort), then sums.
enum class Kind : uint8_t { kSymbol, kFloorDiv, kMod, kMin, kMax, kSum };

// An atom raised to a power inside a monomial.
struct Factor {
  SymExpr atom;      // never a constant or a sum
  int64_t exponent;  // >= 1
};
// A product of distinct atoms, sorted by Compare of the atoms; never empty.
using Monomial = std::vector<Factor>;

struct Term {
  Monomial monomial;
  int64_t coeff;  // never 0
};

// constant + sum(coeff * monomial): the working form of all arithmetic.
struct Poly {
  std::vector<Term> terms;  // sorted by CompareMonomial, monomials distinct
  int64_t constant = 0;
};

struct Node {
  Kind kind;
  std::string name;  // kSymbol
  // kFloorDiv/kMod: {num, den}; kMin/kMax: >= 2, distinct, sorted with a constant last.
  std::vector<SymExpr> args;
  Poly poly;  // kSum
  size_t hash = 0;
};

inline constexpr size_t kMaxTerms = 10000;

struct Overflow {
  bool hit = false;        // an int64 overflow or too_large
  bool too_large = false;  // a sum would have more than kMaxTerms terms
  // What went wrong, for messages.
  const char* what() const {
    return too_large ? "expansion to more than 10000 terms" : "int64 overflow";
  }
};

// Checked int64 arithmetic with Python semantics for FloorDivC/ModC (b != 0).
int64_t AddC(int64_t a, int64_t b, Overflow& ov);
int64_t SubC(int64_t a, int64_t b, Overflow& ov);
int64_t MulC(int64_t a, int64_t b, Overflow& ov);
int64_t FloorDivC(int64_t a, int64_t b, Overflow& ov);
int64_t ModC(int64_t a, int64_t b);
// Greatest common divisor of magnitudes (gcd(0, x) = |x|).
uint64_t Gcd(uint64_t a, uint64_t b);
uint64_t Magnitude(int64_t v);

// Three-way comparisons (<0, 0, >0) behind operator< and ==.
int Compare(const SymExpr& a, const SymExpr& b);
int CompareMonomial(const Monomial& a, const Monomial& b);

// Node construction; arguments must already be canonical.
SymExpr MakeSymbol(std::string name);
SymExpr MakeAtom(Kind kind, std::vector<SymExpr> args);

Kind KindOf(const SymExpr& e);  // CHECK-fails on a constant
bool IsIdentifier(absl::string_view name);

// Poly <-> SymExpr. FromPoly applies the sum-level rules (RecombineDivMod) and picks the
// constant / atom / kSum representation.
Poly ToPoly(const SymExpr& e);
SymExpr FromPoly(Poly p, Overflow& ov);
Poly AddPoly(const Poly& a, const Poly& b, Overflow& ov);
Poly ScalePoly(const Poly& a, int64_t k, Overflow& ov);
Poly MulPoly(const Poly& a, const Poly& b, Overflow& ov);
// Exact division of every coefficient and the constant by g > 0.
Poly DividePoly(const Poly& a, int64_t g);
// gcd of all coefficients and the constant (0 for the zero polynomial).
uint64_t Content(const Poly& p);
bool PolyEqual(const Poly& a, const Poly& b);

// The arithmetic behind the public operators, with overflow reported in `ov`.
SymExpr Add(const SymExpr& a, const SymExpr& b, Overflow& ov);
SymExpr Sub(const SymExpr& a, const SymExpr& b, Overflow& ov);
SymExpr Mul(const SymExpr& a, const SymExpr& b, Overflow& ov);
SymExpr Neg(const SymExpr& a, Overflow& ov);

// The simplification rules (sym_expr_rules.cc). `b` must not be the constant 0 unless ov.hit.
SymExpr FloorDivImpl(const SymExpr& a, const SymExpr& b, Overflow& ov);
SymExpr ModImpl(const SymExpr& a, const SymExpr& b, Overflow& ov);
SymExpr MinMaxImpl(Kind kind, std::vector<SymExpr> args, Overflow& ov);
Poly RecombineDivMod(Poly p, Overflow& ov);

// Interval arithmetic (sym_expr_bounds.cc). Symbols absent from `ranges` get `fallback`.
// Endpoints are INT64_MIN / INT64_MAX when unbounded.
SymRange IntervalOf(const SymExpr& e, const SymRanges& ranges, SymRange fallback);
inline constexpr SymRange kAllIntegers = {INT64_MIN, INT64_MAX};

}  // namespace coil::sym_internal

#endif  // COIL_IR_SYM_EXPR_INTERNAL_H_
