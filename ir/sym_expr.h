// SymExpr: integer expressions over shape symbols, always held in a canonical form.
//
// Shapes in coil are vectors of SymExpr. Most are plain constants (no allocation); dynamic
// dimensions are expressions over named symbols ("s0", "batch"). Every constructor and
// operator returns a canonical expression, so two expressions that the simplifier can show
// equal compare equal with ==, hash equal, and print identically:
//
//   SymExpr s = SymExpr::Symbol("s0");
//   SymExpr n = s * 3 + 4 - s;             // prints "2*s0 + 4"
//   SymExpr d = SymExpr::FloorDiv(s * 4 + 8, 4);   // prints "s0 + 2"
//
// Semantics are those of Python integers: FloorDiv rounds toward negative infinity and Mod
// takes the sign of the divisor. Division by a value that can be zero is the caller's problem:
// FloorDiv/Mod by the constant 0 CHECK-fail (a compiler bug, not a user error), and so do int64
// overflow of a constant and an expansion to more than 10000 terms; Parse and FromProto report
// those as errors instead, and so does arithmetic under a SymArithmeticGuard (code computing
// shapes from user input: meta functions, importers). The rewrite rules are listed in
// ir/sym_expr_rules.cc.
//
// Relations (==, <, <=) are decided with the symbols' known ranges and answer kTrue, kFalse
// or kUnknown; guards are built from the unknown ones.
#ifndef COIL_IR_SYM_EXPR_H_
#define COIL_IR_SYM_EXPR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/proto/graph.pb.h"

namespace coil {

namespace sym_internal {
struct Node;  // defined in sym_expr.cc
}  // namespace sym_internal

class SymExpr {
 public:
  // The constant 0.
  SymExpr() = default;
  // A constant (implicit so that `x * 2` and shapes like {2, 3} read naturally).
  SymExpr(int64_t value);  // NOLINT(google-explicit-constructor)
  SymExpr(int value) : SymExpr(static_cast<int64_t>(value)) {}  // NOLINT

  // `name` must be an identifier, [A-Za-z_][A-Za-z0-9_]* (CHECK-fails otherwise).
  static SymExpr Symbol(absl::string_view name);
  static SymExpr FloorDiv(const SymExpr& a, const SymExpr& b);
  static SymExpr Mod(const SymExpr& a, const SymExpr& b);
  static SymExpr Min(const SymExpr& a, const SymExpr& b);
  static SymExpr Max(const SymExpr& a, const SymExpr& b);

  friend SymExpr operator+(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator*(const SymExpr& a, const SymExpr& b);
  SymExpr operator-() const;
  SymExpr& operator+=(const SymExpr& b) { return *this = *this + b; }
  SymExpr& operator*=(const SymExpr& b) { return *this = *this * b; }

  bool is_constant() const { return node_ == nullptr; }
  // The value of a constant expression; CHECK-fails on a symbolic one.
  int64_t constant() const;
  std::optional<int64_t> AsConstant() const {
    return is_constant() ? std::optional<int64_t>(value_) : std::nullopt;
  }
  bool is_symbol() const;  // a lone symbol
  // Names of all symbols that occur, sorted.
  std::vector<std::string> Symbols() const;

  // Structural equality of canonical forms.
  friend bool operator==(const SymExpr& a, const SymExpr& b);
  friend bool operator!=(const SymExpr& a, const SymExpr& b) { return !(a == b); }
  // A strict total order on canonical forms (constants first), for sorting and maps.
  friend bool operator<(const SymExpr& a, const SymExpr& b);
  size_t Hash() const;
  template <typename H>
  friend H AbslHashValue(H h, const SymExpr& e) {
    return H::combine(std::move(h), e.Hash());
  }

  // Text form, readable and accepted by Parse: "2*s0 + 4", "floordiv(s0, 2)", "min(s0, 8)".
  std::string ToString() const;
  static absl::StatusOr<SymExpr> Parse(absl::string_view text);

  // Replaces symbols by expressions (symbols not in the map stay) and re-simplifies.
  SymExpr Substitute(const absl::flat_hash_map<std::string, SymExpr>& values) const;
  // The integer value with every symbol bound; an error names a missing symbol or a division
  // by zero.
  absl::StatusOr<int64_t> Evaluate(
      const absl::flat_hash_map<std::string, int64_t>& values) const;

  proto::SymExpr ToProto() const;
  // Accepts any well-formed tree and simplifies it; an error says what is malformed.
  static absl::StatusOr<SymExpr> FromProto(const proto::SymExpr& proto);

  // For the implementation and tests only.
  const sym_internal::Node* node() const { return node_.get(); }
  explicit SymExpr(std::shared_ptr<const sym_internal::Node> node);

 private:
  int64_t value_ = 0;                              // when node_ is null
  std::shared_ptr<const sym_internal::Node> node_;  // null for constants
};

// Makes failures of SymExpr arithmetic on this thread an error instead of a CHECK failure, for
// code whose shape arithmetic runs on numbers from user input (InferOutputTypes around every
// meta function, the ONNX importer around every node). While a guard is alive, an int64
// overflow, an expansion past 10000 terms or a division by the constant 0 in an operator,
// FloorDiv, Mod, Min, Max or Substitute returns the constant 1 (so the caller runs to its end
// harmlessly) and the guard keeps the first failure. Guards nest; each sees the failures of its
// own extent.
//
//   SymArithmeticGuard guard;
//   SymExpr numel = a * b;                     // may overflow
//   if (!guard.ok()) return guard.status();    // "int64 overflow in shape arithmetic: ..."
class SymArithmeticGuard {
 public:
  SymArithmeticGuard();
  ~SymArithmeticGuard();
  SymArithmeticGuard(const SymArithmeticGuard&) = delete;
  SymArithmeticGuard& operator=(const SymArithmeticGuard&) = delete;

  bool ok() const { return failure_.empty(); }
  // OK, or InvalidArgument with the first failure, e.g. "int64 overflow in shape arithmetic:
  // (9223372036854775807) * (2)".
  absl::Status status() const;

  // The innermost guard alive on this thread, or null (for sym_expr.cc).
  static SymArithmeticGuard* Active();
  // Keeps `what` unless a failure is already kept (for sym_expr.cc).
  void Record(std::string what);

 private:
  SymArithmeticGuard* outer_;
  std::string failure_;
};

// Inclusive range of a symbol's values; max == INT64_MAX means unbounded.
struct SymRange {
  int64_t min = 0;
  int64_t max = INT64_MAX;
};
using SymRanges = absl::flat_hash_map<std::string, SymRange>;

enum class Truth { kFalse, kTrue, kUnknown };

// Decide a relation for all symbol values in `ranges` (symbols not listed are >= 0).
Truth ProveEq(const SymExpr& a, const SymExpr& b, const SymRanges& ranges = {});
Truth ProveLt(const SymExpr& a, const SymExpr& b, const SymRanges& ranges = {});
Truth ProveLe(const SymExpr& a, const SymExpr& b, const SymRanges& ranges = {});
// Interval bounds of an expression under `ranges` (INT64_MIN/INT64_MAX when unbounded).
SymRange Bounds(const SymExpr& e, const SymRanges& ranges = {});

}  // namespace coil

#endif  // COIL_IR_SYM_EXPR_H_
