// Walks the op registry and puts every op in one class: has a derivative rule (autograd/rules/),
// not differentiable (with the reason), or missing. Fails when a differentiable op has no rule,
// except for the ops on kStillMissing below: an explicit list that may only shrink (now
// empty). The test also fails when an op on that list gains a rule (take it off the list) and
// when a new op appears with neither a rule nor a not-differentiable mark. Run with
// --test_output=all for the table.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "autograd/derivative_registry.h"
#include "gtest/gtest.h"
#include "ir/op_registry.h"

namespace coil {
namespace {

using autograd::DerivativeRegistry;

// Differentiable ops without a rule yet. Only shrinks; empty since every differentiable op
// got a rule (a new op needs a rule or a not-differentiable reason).
const std::set<std::string> kStillMissing = {};

TEST(DerivativeCoverage, EveryDifferentiableOpHasARuleOrIsListedMissing) {
  const DerivativeRegistry& rules = DerivativeRegistry::Global();
  std::vector<std::string> with_rule, missing, unlisted;
  std::vector<std::string> not_differentiable;
  for (const OpSchema* op : OpRegistry::Global().All()) {
    if (rules.Find(op->name) != nullptr) {
      with_rule.push_back(op->name);
      EXPECT_EQ(kStillMissing.count(op->name), 0u)
          << op->name << " has a rule now: take it off kStillMissing";
    } else if (const std::string* why = rules.NotDifferentiableReason(op->name)) {
      not_differentiable.push_back(op->name + ": " + *why);
      EXPECT_EQ(kStillMissing.count(op->name), 0u) << op->name << " is listed missing";
    } else {
      missing.push_back(op->name);
      if (kStillMissing.count(op->name) == 0) unlisted.push_back(op->name);
    }
  }
  EXPECT_TRUE(unlisted.empty()) << "differentiable ops without a derivative rule (add one in "
                                   "autograd/rules/ or mark them not differentiable with the "
                                   "reason): "
                                << absl::StrJoin(unlisted, ", ");
  for (const std::string& op : kStillMissing) {
    EXPECT_NE(OpRegistry::Global().Find(op), nullptr) << op << " on kStillMissing is no op";
  }
  std::printf("ops with a derivative rule (%zu): %s\n\n", with_rule.size(),
              absl::StrJoin(with_rule, " ").c_str());
  std::printf("not differentiable (%zu):\n  %s\n\n", not_differentiable.size(),
              absl::StrJoin(not_differentiable, "\n  ").c_str());
  std::printf("missing (%zu): %s\n", missing.size(), absl::StrJoin(missing, " ").c_str());
}

// Rules and marks name registered ops only (a typo would otherwise go unnoticed).
TEST(DerivativeCoverage, EveryRuleIsOfARegisteredAtenOp) {
  for (const std::string& op : DerivativeRegistry::Global().Ops()) {
    const OpSchema* schema = OpRegistry::Global().Find(op);
    ASSERT_NE(schema, nullptr) << "derivative rule of unknown op " << op;
    EXPECT_LT(schema->mutated_input, 0) << op << " is in-place (functionalized before autograd)";
    EXPECT_EQ(op.rfind("aten.", 0), 0u) << op << " is not an aten op";
  }
}

}  // namespace
}  // namespace coil
