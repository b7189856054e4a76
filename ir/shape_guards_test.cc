// Tests of shape guards: what meta functions cannot prove about symbolic sizes becomes graph
// guards (AddShapeGuards), and CheckGuards refuses bindings that break one, naming the node.
#include "ir/shape_guards.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/shape_assumption.h"

namespace coil {
namespace {

using ::testing::HasSubstr;

using Bindings = absl::flat_hash_map<std::string, int64_t>;

SymExpr S(const char* name) { return SymExpr::Symbol(name); }

TEST(ShapeAssumptionTest, MayEqualRecordsOnlyWhatItCannotProve) {
  ShapeAssumptionScope scope;
  EXPECT_TRUE(MayEqual(S("a") * 4, S("a") * 4, "same"));
  EXPECT_TRUE(MayEqual(S("a") * 2 + S("a") * 2, S("a") * 4, "provable"));
  EXPECT_FALSE(MayEqual(SymExpr(3), SymExpr(4), "constants"));
  EXPECT_TRUE(scope.assumptions().empty());
  EXPECT_TRUE(MayEqual(S("a"), SymExpr(12), "unknown"));
  ASSERT_EQ(scope.assumptions().size(), 1u);
  EXPECT_EQ(scope.assumptions()[0].what, "unknown");
}

TEST(ShapeAssumptionTest, InnermostScopeOnly) {
  ShapeAssumptionScope outer;
  {
    ShapeAssumptionScope inner;
    MayEqual(S("a"), S("b"), "x");
    EXPECT_EQ(inner.assumptions().size(), 1u);
  }
  EXPECT_TRUE(outer.assumptions().empty());
  MayEqual(S("a"), S("b"), "y");
  EXPECT_EQ(outer.assumptions().size(), 1u);
}

TEST(ShapeAssumptionTest, NoScopeRecordsNothing) {
  EXPECT_EQ(ShapeAssumptionScope::Active(), nullptr);
  EXPECT_TRUE(MayEqual(S("a"), S("b"), "x"));
}

// f32[s0] viewed as [3, 4]: accepted (s0 may be 12), guarded.
Graph ViewGraph() {
  Graph g("view");
  g.symbols().push_back(SymbolInfo{"s0", 1, 64, 12});
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {S("s0")}), "x");
  Value* y = *b.Op("aten.view", {x}, {{"shape", Attribute(SymList{3, 4})}});
  g.SetOutputs({y});
  return g;
}

TEST(ShapeGuardsTest, ViewOfSymbolicSizeIsGuarded) {
  Graph g = ViewGraph();
  ASSERT_TRUE(g.guards().empty());
  absl::StatusOr<bool> added = AddShapeGuards(g);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_TRUE(*added);
  ASSERT_EQ(g.guards().size(), 1u);
  EXPECT_EQ(g.guards()[0].relation, proto::Guard::EQ);
  EXPECT_THAT(g.guards()[0].reason, HasSubstr("aten.view"));
  EXPECT_TRUE(CheckGuards(g, Bindings{{"s0", 12}}).ok());
  absl::Status broken = CheckGuards(g, Bindings{{"s0", 5}});
  EXPECT_EQ(broken.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(broken.message(), HasSubstr("the inputs break a guard of graph 'view'"));
  EXPECT_THAT(broken.message(), HasSubstr("is 5 == 12"));
  EXPECT_THAT(broken.message(), HasSubstr("the input has as many elements as the shape"));
}

TEST(ShapeGuardsTest, AddingTwiceAddsNothing) {
  Graph g = ViewGraph();
  ASSERT_TRUE(*AddShapeGuards(g));
  absl::StatusOr<bool> again = AddShapeGuards(g);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(g.guards().size(), 1u);
}

TEST(ShapeGuardsTest, ProvableShapesNeedNoGuard) {
  Graph g("flatten");
  g.symbols().push_back(SymbolInfo{"s0", 1, 64, 2});
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {S("s0"), 4}), "x");
  Value* y = *b.Op("aten.view", {x}, {{"shape", Attribute(SymList{S("s0") * 4})}});
  Value* w = b.Input(TensorType(proto::FLOAT32, {4, 3}), "w");
  Value* z = *b.Op("aten.mm", {x, w});
  g.SetOutputs({y, z});
  absl::StatusOr<bool> added = AddShapeGuards(g);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_FALSE(*added);
}

TEST(ShapeGuardsTest, MatmulInnerSizesAreGuarded) {
  Graph g("mm");
  g.symbols().push_back(SymbolInfo{"a", 1, 64, 4});
  g.symbols().push_back(SymbolInfo{"b", 1, 64, 4});
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {2, S("a")}), "x");
  Value* w = b.Input(TensorType(proto::FLOAT32, {S("b"), 3}), "w");
  g.SetOutputs({*b.Op("aten.mm", {x, w})});
  ASSERT_TRUE(*AddShapeGuards(g));
  EXPECT_TRUE(CheckGuards(g, Bindings{{"a", 4}, {"b", 4}}).ok());
  absl::Status broken = CheckGuards(g, Bindings{{"a", 4}, {"b", 5}});
  EXPECT_THAT(broken.message(), HasSubstr("aten.mm"));
  EXPECT_THAT(broken.message(), HasSubstr("the inner sizes of the product are equal"));
}

TEST(ShapeGuardsTest, UnboundSymbolIsAnError) {
  Graph g("norm");
  g.symbols().push_back(SymbolInfo{"s0", 1, 64, 3});
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {4}), "x");
  Value* y = *b.Op("aten.rms_norm", {x}, {{"normalized_shape", Attribute(SymList{S("s0") + 1})}});
  g.SetOutputs({y});
  ASSERT_TRUE(*AddShapeGuards(g));
  absl::Status s = CheckGuards(g, Bindings{});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("cannot be checked"));
  EXPECT_THAT(s.message(), HasSubstr("s0"));
}

TEST(ShapeGuardsTest, SplitSizesAreGuarded) {
  Graph g("split");
  g.symbols().push_back(SymbolInfo{"s0", 1, 64, 5});
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {S("s0")}), "x");
  absl::StatusOr<std::vector<Value*>> parts =
      b.OpMulti("aten.split", {x}, {{"sizes", Attribute(SymList{2, 3})}});
  ASSERT_TRUE(parts.ok()) << parts.status();
  g.SetOutputs(*parts);
  ASSERT_TRUE(*AddShapeGuards(g));
  EXPECT_TRUE(CheckGuards(g, Bindings{{"s0", 5}}).ok());
  EXPECT_THAT(CheckGuards(g, Bindings{{"s0", 3}}).message(),
              HasSubstr("split sizes sum to the split dimension"));
}

// expand of a symbolic dim: it must be 1 or the target, one guard (s0 - 1) * (s0 - 4) == 0.
TEST(ShapeGuardsTest, ExpandOfSymbolicDimIsGuarded) {
  Graph g("expand");
  g.symbols().push_back(SymbolInfo{"s0", 1, 64, 4});
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {S("s0"), 3}), "x");
  Value* y = *b.Op("aten.expand", {x}, {{"size", Attribute(SymList{4, 3})}});
  g.SetOutputs({y});
  ASSERT_TRUE(*AddShapeGuards(g));
  EXPECT_TRUE(CheckGuards(g, Bindings{{"s0", 1}}).ok());
  EXPECT_TRUE(CheckGuards(g, Bindings{{"s0", 4}}).ok());
  absl::Status broken = CheckGuards(g, Bindings{{"s0", 6}});
  EXPECT_EQ(broken.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(broken.message(), HasSubstr("an expanded dim is 1 or the target size"));
}

}  // namespace
}  // namespace coil
