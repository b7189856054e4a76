// MergeSharedInputMatmuls: BERT's Q/K/V pattern (three matmuls of one input with constant
// weights, each with its bias add, either operand order) becomes one matmul, one add and three
// slices; with a member lacking its bias add only the matmuls merge; the float64 reference
// interpreter gives the same values before and after (the aten graph and the decomposed prims
// graph; a symbolic batch at two sizes); what must not merge is left alone.
#include "prims/merge_matmuls.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/verifier.h"
#include "prims/decompose.h"
#include "prims/rewrite_testing.h"

namespace coil::prims {
namespace {

using testing::CountOps;
using testing::RandomF32Constant;

struct Options {
  std::string op = "aten.matmul";
  bool bias[3] = {true, true, true};
  bool bias_first[3] = {true, false, false};  // add(b, y): how the ONNX exporter writes it
  bool weight_input = false;                  // the second weight a graph input: no merge
  bool output_direct = false;                 // the first result a graph output: no merge
  bool symbolic_batch = false;                // x [batch, 5, 8] (as the exports' batch axis)
};

// x [2, 5, 8] (or [10, 8] for aten.mm); three projections of widths 8, 8 and 4, each
// followed by a use (neg) so their results are not graph outputs.
Graph Build(const Options& o) {
  Graph g("qkv");
  GraphBuilder b(g);
  std::mt19937 rng(3);
  const bool mm = o.op == "aten.mm";
  if (o.symbolic_batch) g.symbols().push_back({.name = "batch", .min = 1, .max = 0, .hint = 2});
  const SymExpr batch = o.symbolic_batch ? SymExpr::Symbol("batch") : SymExpr(2);
  Value* x = b.Input(mm ? TensorType(proto::FLOAT32, {10, 8})
                        : TensorType(proto::FLOAT32, {batch, 5, 8}),
                     "x");
  Value* w_in = nullptr;
  if (o.weight_input) w_in = b.Input(TensorType(proto::FLOAT32, {8, 8}), "w1");
  const int64_t widths[3] = {8, 8, 4};
  std::vector<Value*> outs;
  for (int i = 0; i < 3; ++i) {
    Value* w = i == 1 && w_in != nullptr
                   ? w_in
                   : RandomF32Constant(b, {8, widths[i]}, rng, "w" + std::to_string(i));
    Value* y = *b.Op(o.op, {x, w});
    if (o.bias[i]) {
      Value* c = RandomF32Constant(b, {widths[i]}, rng, "b" + std::to_string(i));
      y = o.bias_first[i] ? *b.Op("aten.add", {c, y}) : *b.Op("aten.add", {y, c});
    }
    outs.push_back(i == 0 && o.output_direct ? y : *b.Op("aten.neg", {y}));
  }
  g.SetOutputs(outs);
  return g;
}

// The same products summed over the same K in float64: equal up to the summation order.
void ExpectSameValues(const Graph& before, const Graph& after, int64_t batch = 2) {
  testing::ExpectSameFloat64Values(before, after, testing::RandomInputs(before, batch, 11), 1e-12);
}

TEST(MergeMatmulsTest, QkvWithBiasesBecomesOneMatmulOneAddThreeSlices) {
  for (const char* op : {"aten.matmul", "aten.mm"}) {
    SCOPED_TRACE(op);
    Options o;
    o.op = op;
    Graph before = Build(o), after = Build(o);
    const int constants_before = static_cast<int>(after.constants().size());
    absl::StatusOr<int> merged = MergeSharedInputMatmuls(after);
    ASSERT_TRUE(merged.ok()) << merged.status();
    EXPECT_EQ(*merged, 2);
    absl::Status v = Verify(after);
    ASSERT_TRUE(v.ok()) << v;
    EXPECT_EQ(CountOps(after, op), 1);
    EXPECT_EQ(CountOps(after, "aten.add"), 1);
    EXPECT_EQ(CountOps(after, "aten.slice"), 3);
    // Six constants (three weights, three biases) became two.
    EXPECT_EQ(static_cast<int>(after.constants().size()), constants_before - 4);
    for (const Node* n : after.nodes()) {
      if (n->op() == op) {
        EXPECT_EQ(n->output(0)->type().shape.back(), SymExpr(20));
      }
    }
    ExpectSameValues(before, after);
  }
}

TEST(MergeMatmulsTest, AMemberWithoutItsBiasAddMergesTheMatmulsOnly) {
  Options o;
  o.bias[2] = false;
  Graph before = Build(o), after = Build(o);
  absl::StatusOr<int> merged = MergeSharedInputMatmuls(after);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(*merged, 2);
  ASSERT_TRUE(Verify(after).ok());
  EXPECT_EQ(CountOps(after, "aten.matmul"), 1);
  EXPECT_EQ(CountOps(after, "aten.add"), 2);  // the two bias adds, now on slices
  EXPECT_EQ(CountOps(after, "aten.slice"), 3);
  ExpectSameValues(before, after);
}

TEST(MergeMatmulsTest, LeavesAloneWhatItMustNotMerge) {
  {
    SCOPED_TRACE("a weight that is a graph input");
    Options o;
    o.weight_input = true;
    Graph g = Build(o);
    absl::StatusOr<int> merged = MergeSharedInputMatmuls(g);
    ASSERT_TRUE(merged.ok());
    EXPECT_EQ(*merged, 1);  // the other two still merge
    EXPECT_EQ(CountOps(g, "aten.matmul"), 2);
    ASSERT_TRUE(Verify(g).ok());
  }
  {
    SCOPED_TRACE("a result that is a graph output");
    Options o;
    o.bias[0] = false;
    o.output_direct = true;
    Graph before = Build(o), g = Build(o);
    absl::StatusOr<int> merged = MergeSharedInputMatmuls(g);
    ASSERT_TRUE(merged.ok());
    EXPECT_EQ(*merged, 1);
    EXPECT_EQ(CountOps(g, "aten.matmul"), 2);
    ASSERT_TRUE(Verify(g).ok());
    ExpectSameValues(before, g);
  }
}

TEST(MergeMatmulsTest, SymbolicBatch) {
  Options o;
  o.symbolic_batch = true;
  Graph before = Build(o), after = Build(o);
  absl::StatusOr<int> merged = MergeSharedInputMatmuls(after);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(*merged, 2);
  absl::Status v = Verify(after);
  ASSERT_TRUE(v.ok()) << v;
  for (int64_t batch : {1, 3}) {
    SCOPED_TRACE(batch);
    ExpectSameValues(before, after, batch);
  }
}

// Through the prims pipeline (the CPU backend's setting): the decomposed graph computes the
// same values, with one aten.mm where there were three.
TEST(MergeMatmulsTest, DecomposedGraphComputesTheSameValues) {
  Options o;
  Graph before = Build(o), merged = Build(o), plain = Build(o);
  DecomposeOptions options;
  options.merge_matmuls = true;
  absl::StatusOr<bool> changed = Decompose(merged, options);
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(Decompose(plain).ok());
  EXPECT_EQ(CountOps(merged, "aten.mm"), 1);
  EXPECT_EQ(CountOps(plain, "aten.mm"), 3);
  ExpectSameValues(before, merged);
}

}  // namespace
}  // namespace coil::prims
