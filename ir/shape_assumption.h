// Shape assumptions: relations between symbolic sizes that an op's meta function needs but
// cannot prove (see ir/shape_guards.h for how they become guards every runner checks).
//
// A meta function accepts `aten.view(x: f32[s0]) {shape = [3, 4]}` because s0 == 12 may hold;
// the reference kernels check concrete sizes as they run, but compiled code trusts the shapes
// it was generated for. So a meta function states such a condition with MayEqual or MayBeLe:
// false only when it provably fails; when it is unknown, the assumption is recorded in the
// active scope.
//
//   if (!MayEqual(numel_in, numel_out, "element counts of input and shape")) return Error(...);
#ifndef COIL_IR_SHAPE_ASSUMPTION_H_
#define COIL_IR_SHAPE_ASSUMPTION_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/proto/graph.pb.h"
#include "ir/sym_expr.h"

namespace coil {

struct ShapeAssumption {
  proto::Guard::Relation relation = proto::Guard::EQ;  // EQ or LE
  SymExpr lhs;
  SymExpr rhs;
  std::string what;
};

// While one is alive on this thread, MayEqual records the assumptions it makes there (the
// innermost scope only). Without one, MayEqual records nothing.
class ShapeAssumptionScope {
 public:
  ShapeAssumptionScope();
  ~ShapeAssumptionScope();
  ShapeAssumptionScope(const ShapeAssumptionScope&) = delete;
  ShapeAssumptionScope& operator=(const ShapeAssumptionScope&) = delete;

  const std::vector<ShapeAssumption>& assumptions() const { return assumptions_; }
  void Clear() { assumptions_.clear(); }
  static ShapeAssumptionScope* Active();

 private:
  friend void RecordAssumption(ShapeAssumption a);
  std::vector<ShapeAssumption> assumptions_;
  ShapeAssumptionScope* previous_;
};

// False when a == b provably fails; true when it provably holds; otherwise records the
// assumption (with `what`, e.g. "element counts of input and shape") and returns true.
bool MayEqual(const SymExpr& a, const SymExpr& b, absl::string_view what);
// The same for a <= b (bounds: 0 <= start <= limit <= size).
bool MayBeLe(const SymExpr& a, const SymExpr& b, absl::string_view what);

// For broadcasting a size `from` to `to` (expand, broadcast_in_dim): `from` must be 1 or
// `to`. False when both provably fail; otherwise records (from - 1) * (from - to) == 0 unless
// one provably holds.
bool MayBroadcast(const SymExpr& from, const SymExpr& to, absl::string_view what);

// Adds `a` to the active scope (nothing without one).
void RecordAssumption(ShapeAssumption a);

}  // namespace coil

#endif  // COIL_IR_SHAPE_ASSUMPTION_H_
