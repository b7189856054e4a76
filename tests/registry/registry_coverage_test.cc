// Walks the op registry and fails when an op lacks a concern it needs:
//  - every op has a reference kernel, and every reference kernel belongs to a registered op;
//  - every op is exercised by at least one torch oracle case (so its meta function and
//    kernel were checked against PyTorch 1.13);
//  - every schema is well formed (a doc line, optional inputs last, at most one variadic).
// Later stages add their concerns here (decompositions, derivatives, lowerings).
#include <set>
#include <string>

#include "absl/algorithm/container.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/op_registry.h"
#include "runtime/reference/kernel_registry.h"
#include "tests/torch_oracle/oracle_runner.h"

namespace coil {
namespace {

constexpr const char* kSuites[] = {
    "tests/torch_oracle/elementwise_cases.pb", "tests/torch_oracle/reduction_cases.pb",
    "tests/torch_oracle/shape_cases.pb",       "tests/torch_oracle/indexing_cases.pb",
    "tests/torch_oracle/nn_cases.pb",          "tests/torch_oracle/view_scatter_cases.pb",
    "tests/torch_oracle/prims_cases.pb",
};

// Ops torch cannot check: covered by runtime/reference/prims_kernels_test instead
// (philox_uniform against Random123's known-answer vectors, copy_to's write into dst).
constexpr const char* kNoTorchCase[] = {"prims.philox_uniform", "prims.copy_to"};

TEST(RegistryCoverage, EveryOpHasAReferenceKernel) {
  std::vector<std::string> missing;
  for (const OpSchema* op : OpRegistry::Global().All()) {
    if (ReferenceKernels::Global().Find(op->name) == nullptr) missing.push_back(op->name);
  }
  EXPECT_TRUE(missing.empty()) << "ops without a reference kernel: " << absl::StrJoin(missing, ", ");
}

TEST(RegistryCoverage, EveryReferenceKernelHasASchema) {
  std::vector<std::string> orphans;
  for (const std::string& name : ReferenceKernels::Global().Ops()) {
    if (OpRegistry::Global().Find(name) == nullptr) orphans.push_back(name);
  }
  EXPECT_TRUE(orphans.empty()) << "kernels without a schema: " << absl::StrJoin(orphans, ", ");
}

TEST(RegistryCoverage, EveryOpIsCheckedAgainstTorch) {
  std::set<std::string> tested;
  for (const char* path : kSuites) {
    absl::StatusOr<oracle::Suite> suite = oracle::LoadSuite(path);
    ASSERT_TRUE(suite.ok()) << suite.status();
    for (const oracle::Case& c : suite->cases()) tested.insert(c.op());
  }
  std::vector<std::string> untested;
  for (const OpSchema* op : OpRegistry::Global().All()) {
    // In-place variants reuse their base op's meta and kernel (both checked here through the
    // base); their write-through semantics are tested in runtime/reference/inplace_kernels_test
    // and prims/functionalize_test against torch.
    if (op->mutated_input >= 0) continue;
    if (absl::c_linear_search(kNoTorchCase, op->name)) continue;
    if (!tested.count(op->name)) untested.push_back(op->name);
  }
  EXPECT_TRUE(untested.empty()) << "ops with no torch oracle case: " << absl::StrJoin(untested, ", ");
}

TEST(RegistryCoverage, SchemasAreWellFormed) {
  for (const OpSchema* op : OpRegistry::Global().All()) {
    EXPECT_FALSE(op->doc.empty()) << op->name << " has no doc line";
    EXPECT_TRUE(op->name.rfind("aten.", 0) == 0 || op->name.rfind("prims.", 0) == 0)
        << op->name << " is not in the aten or prims namespace";
    bool seen_optional = false;
    int variadic = 0;
    for (const OpInput& in : op->inputs) {
      if (in.variadic) ++variadic;
      if (in.optional) seen_optional = true;
      else if (!in.variadic) EXPECT_FALSE(seen_optional) << op->name << ": required input after optional";
    }
    EXPECT_LE(variadic, 1) << op->name;
    std::set<std::string> names;
    for (const AttrSpec& a : op->attrs) {
      EXPECT_TRUE(names.insert(a.name).second) << op->name << " repeats attribute " << a.name;
      if (a.default_value) {
        EXPECT_TRUE(AttrKindAccepts(a.kind, KindOf(*a.default_value)))
            << op->name << " attribute " << a.name << " default has the wrong kind";
      }
    }
  }
}

TEST(RegistryCoverage, RegistryIsLargeEnoughForRealModels) {
  // The foundation promises at least 80 aten ops (CNNs and transformers).
  EXPECT_GE(OpRegistry::Global().All().size(), 80u);
}

}  // namespace
}  // namespace coil
