// FoldWeightScales on vit's attention input pattern: a packed projection (x W + b) sliced into
// q, k, v, heads split by reshape + permute, q divided by a constant (torch 1.13's export) or q
// and K^T each multiplied by one (torch 2.11's); the scales go into the weights and bias, the
// graph verifies and the float64 reference interpreter gives the same values (up to the
// weights' rounding after scaling); what must not fold is left alone.
#include "prims/fold_weight_scales.h"

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
using testing::F32Constant;
using testing::RandomF32Constant;

struct Options {
  bool torch2 = false;      // q and K^T times sqrt(1 / sqrt(d)); else q / sqrt(d)
  bool bias = true;
  bool q_used_twice = false;  // the head-split q also a graph output: no fold
  bool y_used_whole = false;  // the projection's result read whole as well: no fold
};

// x [2, 5, 8] -> y [2, 5, 24] = x W (+ b); q, k, v = y[..., 0:8], [8:16], [16:24] as [2, 2, 5, 4]
// heads; out = (q' k'^T) v.
Graph Build(const Options& o) {
  Graph g("vit_attention");
  GraphBuilder b(g);
  std::mt19937 rng(5);
  Value* x = b.Input(TensorType(proto::FLOAT32, {2, 5, 8}), "x");
  Value* y = *b.Op("aten.matmul", {x, RandomF32Constant(b, {8, 24}, rng, "w")});
  if (o.bias) y = *b.Op("aten.add", {RandomF32Constant(b, {24}, rng, "b"), y});
  auto heads = [&](int64_t start, std::vector<int64_t> dims) {
    Value* s = *b.Op("aten.slice", {y}, {{"dim", int64_t{2}}, {"start", SymExpr(start)},
                                         {"end", SymExpr(start + 8)}, {"step", int64_t{1}}});
    Value* r = *b.Op("aten.reshape", {s}, {{"shape", SymList{2, 5, 2, 4}}});
    return *b.Op("aten.permute", {r}, {{"dims", dims}});
  };
  Value* q = heads(0, {0, 2, 1, 3});
  Value* kt = heads(8, {0, 2, 3, 1});
  Value* v = heads(16, {0, 2, 1, 3});
  std::vector<Value*> outputs;
  if (o.q_used_twice) outputs.push_back(q);
  if (o.y_used_whole) outputs.push_back(*b.Op("aten.neg", {y}));
  if (o.torch2) {
    const float c = std::sqrt(1.0f / std::sqrt(4.0f));
    q = *b.Op("aten.mul", {q, F32Constant(b, {}, {c}, "cq")});
    kt = *b.Op("aten.mul", {F32Constant(b, {}, {c}, "ck"), kt});
  } else {
    q = *b.Op("aten.div", {q, F32Constant(b, {}, {2.0f}, "c")}, {{"rounding_mode", std::string()}});
  }
  Value* scores = *b.Op("aten.matmul", {q, kt});
  outputs.insert(outputs.begin(), *b.Op("aten.matmul", {scores, v}));
  g.SetOutputs(outputs);
  return g;
}

void ExpectSameValues(const Graph& before, const Graph& after, double tolerance) {
  testing::ExpectSameFloat64Values(before, after, testing::RandomInputs(before, 1, 13), tolerance);
}

TEST(FoldWeightScalesTest, Torch113DivisionOfQ) {
  for (bool bias : {true, false}) {
    SCOPED_TRACE(bias);
    Options o;
    o.bias = bias;
    Graph before = Build(o), after = Build(o);
    absl::StatusOr<int> folded = FoldWeightScales(after);
    ASSERT_TRUE(folded.ok()) << folded.status();
    EXPECT_EQ(*folded, 1);
    absl::Status v = Verify(after);
    ASSERT_TRUE(v.ok()) << v;
    EXPECT_EQ(CountOps(after, "aten.div"), 0);
    // The weights (and bias) replaced by their scaled copies: as many constants as before less
    // the scale.
    EXPECT_EQ(after.constants().size(), before.constants().size() - 1);
    // Dividing by 2 is exact in f32: the same values to float64 rounding.
    ExpectSameValues(before, after, 1e-12);
  }
}

TEST(FoldWeightScalesTest, Torch211ScalesOfQAndKTransposed) {
  Options o;
  o.torch2 = true;
  Graph before = Build(o), after = Build(o);
  absl::StatusOr<int> folded = FoldWeightScales(after);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(*folded, 2);
  ASSERT_TRUE(Verify(after).ok());
  EXPECT_EQ(CountOps(after, "aten.mul"), 0);
  // Each weight rounded to f32 once after scaling: within a few f32 ulps of the product.
  ExpectSameValues(before, after, 1e-6);
}

TEST(FoldWeightScalesTest, LeavesAloneWhatItMustNotFold) {
  for (int which = 0; which < 2; ++which) {
    SCOPED_TRACE(which);
    Options o;
    o.q_used_twice = which == 0;
    o.y_used_whole = which == 1;
    Graph before = Build(o), after = Build(o);
    absl::StatusOr<int> folded = FoldWeightScales(after);
    ASSERT_TRUE(folded.ok());
    EXPECT_EQ(*folded, 0);
    EXPECT_EQ(CountOps(after, "aten.div"), 1);
    ExpectSameValues(before, after, 0);
  }
}

// Through the prims pipeline with merge_matmuls (the CPU backend's setting).
TEST(FoldWeightScalesTest, DecomposedGraphComputesTheSameValues) {
  Options o;
  o.torch2 = true;
  Graph before = Build(o), after = Build(o);
  DecomposeOptions options;
  options.merge_matmuls = true;
  options.fold_weight_scales = true;
  absl::StatusOr<bool> changed = Decompose(after, options);
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(Verify(after).ok());
  ExpectSameValues(before, after, 1e-6);
}

}  // namespace
}  // namespace coil::prims
