// Walks the op registry and fails when an aten op has no place in the prims stage: every aten
// op must have a decomposition (prims/decompositions/) or be an extern kept whole; in-place
// variants are handled by functionalization instead. Decompositions of unknown ops or of prims
// are errors too (a typo in a table entry would otherwise go unnoticed).
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/op_registry.h"
#include "prims/decomposition_registry.h"

namespace coil {
namespace {

using prims::DecompositionRegistry;

TEST(DecompositionCoverage, EveryAtenOpDecomposesOrIsExtern) {
  std::vector<std::string> missing;
  int decomposed = 0, externs = 0, inplace = 0;
  for (const OpSchema* op : OpRegistry::Global().All()) {
    if (prims::IsPrim(op->name)) continue;
    if (op->mutated_input >= 0) {
      ++inplace;  // prims::Functionalize rewrites these to their out-of-place form
      continue;
    }
    if (prims::IsExtern(op->name)) {
      ++externs;
      EXPECT_EQ(DecompositionRegistry::Global().Find(op->name), nullptr)
          << op->name << " is an extern but also has a decomposition";
      continue;
    }
    if (DecompositionRegistry::Global().Find(op->name) == nullptr) {
      missing.push_back(op->name);
    } else {
      ++decomposed;
    }
  }
  EXPECT_TRUE(missing.empty()) << "aten ops with no decomposition: " << absl::StrJoin(missing, ", ");
  std::printf("aten ops: %d decomposed, %d externs, %d in-place (functionalized)\n", decomposed,
              externs, inplace);
}

TEST(DecompositionCoverage, EveryDecompositionIsOfARegisteredAtenOp) {
  for (const std::string& op : DecompositionRegistry::Global().Ops()) {
    const OpSchema* schema = OpRegistry::Global().Find(op);
    EXPECT_NE(schema, nullptr) << "decomposition of unknown op " << op;
    EXPECT_FALSE(prims::IsPrim(op)) << op << " is a prim and must not be decomposed";
    if (schema != nullptr) EXPECT_LT(schema->mutated_input, 0) << op << " is in-place";
  }
}

TEST(DecompositionCoverage, EveryExternIsARegisteredOp) {
  for (const std::string& op : prims::ExternOps()) {
    EXPECT_NE(OpRegistry::Global().Find(op), nullptr) << "extern " << op << " is not registered";
  }
}

TEST(DecompositionCoverage, PrimsOpsetIsSmall) {
  // The prims opset is the contract every backend implements (docs/prims.md); growing it is
  // a design decision, so this pins its size.
  int prims = 0;
  for (const OpSchema* op : OpRegistry::Global().All()) prims += prims::IsPrim(op->name);
  EXPECT_GE(prims, 70);
  EXPECT_LE(prims, 80);
}

}  // namespace
}  // namespace coil
