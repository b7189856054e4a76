// SymInt: a tensor size that may be symbolic while a function is being compiled.
//
// In eager mode every SymInt is a plain integer. While coil::compile traces a function with
// dynamic shapes, sizes are symbols (s0, s1, ...) that carry the concrete value seen (the
// hint). Arithmetic stays symbolic; a comparison returns its value at the hints and records a
// guard (`s0 > 2`), so the compiled artifact is reused only while the branch would go the same
// way; reading the integer (`guard_int()`) specializes the size with an equality guard.
//
//   if (x.size(0) > 2) { ... }                  // guard: s0 > 2 (or s0 <= 2)
//   Tensor y = x.reshape({x.size(0) * 4, -1});  // stays symbolic
#ifndef COIL_CAPTURE_SYM_INT_H_
#define COIL_CAPTURE_SYM_INT_H_

#include <cstdint>
#include <ostream>
#include <source_location>

#include "ir/sym_expr.h"

namespace coil {

class SymInt {
 public:
  SymInt(int64_t v) : expr_(v), hint_(v) {}  // NOLINT: implicit, sizes mix with ints
  SymInt(int v) : SymInt(static_cast<int64_t>(v)) {}  // NOLINT
  SymInt(SymExpr expr, int64_t hint) : expr_(std::move(expr)), hint_(hint) {}

  bool is_symbolic() const { return !expr_.is_constant(); }
  const SymExpr& expr() const { return expr_; }
  // The concrete value (seen while tracing).
  int64_t hint() const { return hint_; }
  // The integer; a symbolic size is specialized (guard: expr == hint).
  int64_t guard_int(std::source_location loc = std::source_location::current()) const;

  friend SymInt operator+(const SymInt& a, const SymInt& b);
  friend SymInt operator-(const SymInt& a, const SymInt& b);
  friend SymInt operator*(const SymInt& a, const SymInt& b);
  // Floor division and modulo (Python semantics, as SymExpr).
  friend SymInt operator/(const SymInt& a, const SymInt& b);
  friend SymInt operator%(const SymInt& a, const SymInt& b);

  // Comparisons evaluate at the hints and record a guard when either side is symbolic.
  friend bool operator==(const SymInt& a, const SymInt& b);
  friend bool operator!=(const SymInt& a, const SymInt& b);
  friend bool operator<(const SymInt& a, const SymInt& b);
  friend bool operator<=(const SymInt& a, const SymInt& b);
  friend bool operator>(const SymInt& a, const SymInt& b);
  friend bool operator>=(const SymInt& a, const SymInt& b);

  friend std::ostream& operator<<(std::ostream& os, const SymInt& s);

 private:
  SymExpr expr_;
  int64_t hint_;
};

}  // namespace coil

#endif  // COIL_CAPTURE_SYM_INT_H_
