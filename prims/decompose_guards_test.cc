// The guards that decomposed prims need (a prims.slice's bounds, a prims.reshape's element
// count) name the op the user wrote, not the prim: the aten node (with its ONNX node name when
// it has one), so that "the inputs break a guard" points at the user's graph.
#include <string>

#include "absl/container/flat_hash_map.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/shape_guards.h"
#include "prims/decompose.h"

namespace coil::prims {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// aten.narrow(start 4, length 4) of f32[s0]: the aten meta function accepts it; the prims.slice
// it decomposes to needs 8 <= s0.
constexpr char kNarrow[] = R"(graph @narrow(%0 "x": f32[s0]) {
  symbol s0 min 1 max 64 hint 16
  %1: f32[4] = aten.narrow(%0) {dim = 0, start = sym(4), length = sym(4)} name "/blocks.0/Slice_3"
  return %1
})";

TEST(DecomposeGuardsTest, GuardOfADecomposedPrimNamesTheAtenOp) {
  absl::StatusOr<Graph> g = ParseGraph(kNarrow);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(Decompose(*g).ok());
  ASSERT_FALSE(g->guards().empty());
  for (const GuardInfo& guard : g->guards()) {
    EXPECT_THAT(guard.reason, HasSubstr("%1 = aten.narrow(%0) (node '/blocks.0/Slice_3'): "));
    EXPECT_THAT(guard.reason, HasSubstr("(prims.slice)"));
    EXPECT_THAT(guard.reason, Not(HasSubstr("= prims.")));
  }
  absl::Status broken = CheckGuards(*g, absl::flat_hash_map<std::string, int64_t>{{"s0", 6}});
  EXPECT_THAT(broken.message(), HasSubstr("the inputs break a guard of graph 'narrow'"));
  EXPECT_THAT(broken.message(),
              HasSubstr("(%1 = aten.narrow(%0) (node '/blocks.0/Slice_3'): a slice ends within "
                        "its input (prims.slice))"));
  EXPECT_TRUE(CheckGuards(*g, absl::flat_hash_map<std::string, int64_t>{{"s0", 8}}).ok());
}

// Provenance: every prim keeps the name of the aten node it came from, so a guard made later
// over the prims graph (a later stage running the meta functions again) still names the
// user's node.
TEST(DecomposeGuardsTest, PrimsKeepTheAtenNodeNameForLaterGuards) {
  absl::StatusOr<Graph> g = ParseGraph(kNarrow);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(Decompose(*g).ok());
  ASSERT_GT(g->num_nodes(), 0);
  for (const Node* n : g->nodes()) {
    EXPECT_THAT(n->op(), HasSubstr("prims."));
    EXPECT_EQ(n->name(), "/blocks.0/Slice_3") << n->Describe();
  }
  g->guards().clear();
  ASSERT_TRUE(AddShapeGuards(*g).ok());
  ASSERT_FALSE(g->guards().empty());
  for (const GuardInfo& guard : g->guards()) {
    EXPECT_THAT(guard.reason, HasSubstr("(node '/blocks.0/Slice_3'): "));
  }
}

// A prim the user wrote names itself.
TEST(DecomposeGuardsTest, GuardOfAUserPrimNamesThePrim) {
  absl::StatusOr<Graph> g = ParseGraph(R"(graph @slice(%0 "x": f32[s0]) {
  symbol s0 min 1 max 64 hint 16
  %1: f32[4] = prims.slice(%0) {start_indices = syms[4], limit_indices = syms[8], strides = [1]}
  return %1
})");
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(Decompose(*g).ok());
  ASSERT_FALSE(g->guards().empty());
  EXPECT_THAT(g->guards()[0].reason, HasSubstr("%1 = prims.slice(%0): a slice ends within"));
}

// A decomposition that fails leaves the caller's graph as it was: its constants keep their
// bytes (DecomposeOps moves them into the graph it builds and gives them back on an error).
// The failure: an op no decomposition knows, in a graph built without the verifier.
TEST(DecomposeGuardsTest, AFailedDecompositionKeepsTheConstants) {
  Graph g("broken");
  Value* x = g.AddInput(TensorType(proto::FLOAT32, {4}), "x");
  ConstantData w;
  w.raw = std::string("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40", 16);
  Value* c = g.AddConstant(TensorType(proto::FLOAT32, {4}), w, "w");
  Node* mul = g.AddNode("aten.mul", {x, c}, {}, {TensorType(proto::FLOAT32, {4})});
  Node* bad = g.AddNode("test.no_such_op", {mul->output(0)}, {}, {TensorType(proto::FLOAT32, {4})});
  g.SetOutputs({bad->output(0)});
  absl::StatusOr<bool> changed = DecomposeOps(g);
  ASSERT_FALSE(changed.ok());
  EXPECT_THAT(changed.status().message(), HasSubstr("test.no_such_op")) << changed.status();
  ASSERT_EQ(g.constants().size(), 1u);
  EXPECT_EQ(g.constants()[0]->constant().raw, w.raw);
  EXPECT_EQ(g.num_nodes(), 2);
}

}  // namespace
}  // namespace coil::prims
