// Shape assumptions recorded by meta functions (see shape_assumption.h).
#include "ir/shape_assumption.h"

#include <string>
#include <utility>

namespace coil {
namespace {

thread_local ShapeAssumptionScope* active_scope = nullptr;

}  // namespace

ShapeAssumptionScope::ShapeAssumptionScope() : previous_(active_scope) { active_scope = this; }

ShapeAssumptionScope::~ShapeAssumptionScope() { active_scope = previous_; }

ShapeAssumptionScope* ShapeAssumptionScope::Active() { return active_scope; }

bool MayEqual(const SymExpr& a, const SymExpr& b, absl::string_view what) {
  if (a == b) return true;
  switch (ProveEq(a, b)) {
    case Truth::kTrue:
      return true;
    case Truth::kFalse:
      return false;
    case Truth::kUnknown:
      break;
  }
  RecordAssumption(ShapeAssumption{proto::Guard::EQ, a, b, std::string(what)});
  return true;
}

bool MayBeLe(const SymExpr& a, const SymExpr& b, absl::string_view what) {
  if (a == b) return true;
  switch (ProveLe(a, b)) {
    case Truth::kTrue:
      return true;
    case Truth::kFalse:
      return false;
    case Truth::kUnknown:
      break;
  }
  RecordAssumption(ShapeAssumption{proto::Guard::LE, a, b, std::string(what)});
  return true;
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
