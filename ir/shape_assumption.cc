// Shape assumptions recorded by meta functions (see shape_assumption.h).
#include "ir/shape_assumption.h"

#include <string>
#include <utility>

namespace coil {
namespace {

thread_local ShapeAssumptionScope* active_scope = nullptr;

// True when `t` proves the relation, false when it refutes it; unknown records `a`.
bool Decide(Truth t, ShapeAssumption a) {
  if (t == Truth::kUnknown) RecordAssumption(std::move(a));
  return t != Truth::kFalse;
}

}  // namespace

ShapeAssumptionScope::ShapeAssumptionScope() : previous_(active_scope) { active_scope = this; }

ShapeAssumptionScope::~ShapeAssumptionScope() { active_scope = previous_; }

ShapeAssumptionScope* ShapeAssumptionScope::Active() { return active_scope; }

bool MayEqual(const SymExpr& a, const SymExpr& b, absl::string_view what) {
  if (a == b) return true;
  return Decide(ProveEq(a, b), ShapeAssumption{proto::Guard::EQ, a, b, std::string(what)});
}

bool MayBeLe(const SymExpr& a, const SymExpr& b, absl::string_view what) {
  if (a == b) return true;
  return Decide(ProveLe(a, b), ShapeAssumption{proto::Guard::LE, a, b, std::string(what)});
}

bool MayBroadcast(const SymExpr& from, const SymExpr& to, absl::string_view what) {
  if (from == to || from == SymExpr(1)) return true;
  const Truth equal = ProveEq(from, to);
  const Truth one = ProveEq(from, 1);
  if (equal == Truth::kTrue || one == Truth::kTrue) return true;
  if (equal == Truth::kFalse && one == Truth::kFalse) return false;
  RecordAssumption(ShapeAssumption{proto::Guard::EQ, (from - SymExpr(1)) * (from - to), SymExpr(0),
                                   std::string(what)});
  return true;
}

void RecordAssumption(ShapeAssumption a) {
  if (active_scope != nullptr) active_scope->assumptions_.push_back(std::move(a));
}

}  // namespace coil
