// SymInt (capture/sym_int.h): plain integers in eager mode; symbolic expressions with a
// concrete hint while tracing, where comparisons and guard_int() record guards on the active
// trace.
#include "capture/sym_int.h"

#include "capture/internal/trace.h"

namespace coil {
namespace {

using capture_internal::ActiveTrace;

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t ModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

// Records `lhs <relation> rhs` (with its value at the hints) when either side is symbolic.
void Guard(proto::Guard::Relation relation, const SymInt& a, const SymInt& b, bool holds) {
  if (!a.is_symbolic() && !b.is_symbolic()) return;
  if (capture_internal::Trace* trace = ActiveTrace()) {
    trace->RecordGuard(relation, a.expr(), b.expr(), holds, std::source_location::current());
  }
}

}  // namespace

int64_t SymInt::guard_int(std::source_location loc) const {
  if (is_symbolic()) {
    if (capture_internal::Trace* trace = ActiveTrace()) {
      trace->RecordGuard(proto::Guard::EQ, expr_, SymExpr(hint_), true, loc);
    }
  }
  return hint_;
}

SymInt operator+(const SymInt& a, const SymInt& b) {
  return SymInt(a.expr_ + b.expr_, a.hint_ + b.hint_);
}
SymInt operator-(const SymInt& a, const SymInt& b) {
  return SymInt(a.expr_ - b.expr_, a.hint_ - b.hint_);
}
SymInt operator*(const SymInt& a, const SymInt& b) {
  return SymInt(a.expr_ * b.expr_, a.hint_ * b.hint_);
}
SymInt operator/(const SymInt& a, const SymInt& b) {
  if (b.hint_ == 0) return SymInt(a.expr_, 0);  // caller's bug; avoid UB, the meta reports it
  if (!a.is_symbolic() && !b.is_symbolic()) return SymInt(FloorDivInt(a.hint_, b.hint_));
  return SymInt(SymExpr::FloorDiv(a.expr_, b.expr_), FloorDivInt(a.hint_, b.hint_));
}
SymInt operator%(const SymInt& a, const SymInt& b) {
  if (b.hint_ == 0) return SymInt(a.expr_, 0);
  if (!a.is_symbolic() && !b.is_symbolic()) return SymInt(ModInt(a.hint_, b.hint_));
  return SymInt(SymExpr::Mod(a.expr_, b.expr_), ModInt(a.hint_, b.hint_));
}

bool operator==(const SymInt& a, const SymInt& b) {
  bool holds = a.hint_ == b.hint_;
  Guard(holds ? proto::Guard::EQ : proto::Guard::NE, a, b, true);
  return holds;
}
bool operator!=(const SymInt& a, const SymInt& b) { return !(a == b); }
bool operator<(const SymInt& a, const SymInt& b) {
  bool holds = a.hint_ < b.hint_;
  // a < b, or its negation b <= a.
  if (holds) {
    Guard(proto::Guard::LT, a, b, true);
  } else {
    Guard(proto::Guard::LE, b, a, true);
  }
  return holds;
}
bool operator<=(const SymInt& a, const SymInt& b) { return !(b < a); }
bool operator>(const SymInt& a, const SymInt& b) { return b < a; }
bool operator>=(const SymInt& a, const SymInt& b) { return !(a < b); }

std::ostream& operator<<(std::ostream& os, const SymInt& s) {
  if (s.is_symbolic()) return os << s.expr_.ToString();
  return os << s.hint_;
}

}  // namespace coil
