// GuardProgram: each guard kind hits and misses with a readable reason; relations compiled to
// postfix programs agree with SymExpr::Evaluate.
#include "capture/internal/guards.h"

#include <chrono>
#include <cstdio>

#include "capture/tensor.h"
#include "gtest/gtest.h"

namespace coil::capture_internal {
namespace {

FlatArgs Flat(const std::vector<Tensor>& ts, std::vector<double> scalars = {}) {
  FlatArgs f;
  for (size_t i = 0; i < ts.size(); ++i) {
    f.tensors.push_back(&ts[i]);
    f.tensor_origin.push_back({static_cast<int32_t>(i), -1});
  }
  for (double s : scalars) f.scalars.push_back(s);
  return f;
}

GuardProgram TwoInputs() {
  GuardProgram g;
  int s0 = g.AddSymbol("s0", 2, 0);
  g.AddTensor("x", proto::FLOAT32, Device{}, true, {{0, s0}, {8, -1}});
  g.AddTensor("y", proto::FLOAT32, Device{}, true, {{0, s0}});
  return g;
}

TEST(GuardsTest, DtypeRankSizesContiguity) {
  GuardProgram g = TwoInputs();
  std::vector<Tensor> ok = {Tensor::Zeros({5, 8}), Tensor::Zeros({5})};
  EXPECT_TRUE(g.Check(Flat(ok)));
  EXPECT_EQ(g.FirstFailure(Flat(ok)), "");

  std::vector<Tensor> dtype = {Tensor::Zeros({5, 8}, proto::FLOAT64), Tensor::Zeros({5})};
  EXPECT_EQ(g.FirstFailure(Flat(dtype)), "x: dtype f64, expected f32");
  std::vector<Tensor> rank = {Tensor::Zeros({5, 8, 1}), Tensor::Zeros({5})};
  EXPECT_EQ(g.FirstFailure(Flat(rank)), "x: rank 3, expected 2");
  std::vector<Tensor> size = {Tensor::Zeros({5, 9}), Tensor::Zeros({5})};
  EXPECT_EQ(g.FirstFailure(Flat(size)), "x dim 1: size 9, expected 8");
  std::vector<Tensor> duck = {Tensor::Zeros({5, 8}), Tensor::Zeros({6})};
  EXPECT_EQ(g.FirstFailure(Flat(duck)), "y dim 0: size 6, expected s0 = 5");
  std::vector<Tensor> range = {Tensor::Zeros({1, 8}), Tensor::Zeros({1})};
  EXPECT_EQ(g.FirstFailure(Flat(range)), "s0 = 1 is outside [2, inf]");
  std::vector<Tensor> strided = {Tensor::Zeros({8, 8}).transpose(0, 1), Tensor::Zeros({8})};
  EXPECT_EQ(g.FirstFailure(Flat(strided)), "x: not contiguous, traced contiguous");
  EXPECT_FALSE(g.Check(Flat({Tensor::Zeros({5, 8})})));  // wrong count
}

TEST(GuardsTest, ScalarsAndListLengths) {
  GuardProgram g;
  g.AddScalar("arg1", 3);
  g.SetListLengths({2});
  FlatArgs f;
  f.scalars.push_back(3);
  f.list_lengths.push_back(2);
  EXPECT_TRUE(g.Check(f));
  f.scalars[0] = 4;
  EXPECT_EQ(g.FirstFailure(f), "arg1 == 3 failed (got 4)");
  f.scalars[0] = 3;
  f.list_lengths[0] = 1;
  EXPECT_EQ(g.FirstFailure(f), "vector argument 0 has length 1, expected 2");
}

TEST(GuardsTest, RelationsMatchSymExprEvaluate) {
  GuardProgram g;
  int s0 = g.AddSymbol("s0", 2, 0);
  int s1 = g.AddSymbol("s1", 2, 0);
  g.AddTensor("x", proto::FLOAT32, Device{}, true, {{0, s0}, {0, s1}});
  SymExpr a = SymExpr::Symbol("s0"), b = SymExpr::Symbol("s1");
  SymExpr lhs = SymExpr::FloorDiv(a * 3 + 1, 2) + SymExpr::Mod(b, 3);
  SymExpr rhs = SymExpr::Max(a, b) - 1;
  g.AddRelation(proto::Guard::LE, lhs, rhs);
  g.AddRelation(proto::Guard::LE, lhs, rhs);  // deduplicated
  EXPECT_EQ(g.Describe().back(), RelationText(proto::Guard::LE, lhs, rhs));
  for (int64_t x = 2; x < 12; ++x) {
    for (int64_t y = 2; y < 12; ++y) {
      std::vector<Tensor> t = {Tensor::Zeros({x, y})};
      bool expected = *lhs.Evaluate({{"s0", x}, {"s1", y}}) <= *rhs.Evaluate({{"s0", x}, {"s1", y}});
      EXPECT_EQ(g.Check(Flat(t)), expected) << x << ", " << y;
    }
  }
}

TEST(GuardsTest, NegateRelation) {
  proto::Guard::Relation r = proto::Guard::LT;
  SymExpr a = SymExpr::Symbol("s0"), b = 4;
  NegateRelation(r, a, b);  // !(s0 < 4) is 4 <= s0
  EXPECT_EQ(RelationText(r, a, b), "4 <= s0");
}

// Not a timed test: prints the hit-path cost for 4 tensor inputs.
TEST(GuardsTest, HitPathCostForFourInputs) {
  GuardProgram g;
  int s0 = g.AddSymbol("s0", 2, 0);
  std::vector<Tensor> ts;
  for (int i = 0; i < 4; ++i) {
    g.AddTensor("x", proto::FLOAT32, Device{}, true, {{0, s0}, {64, -1}});
    ts.push_back(Tensor::Zeros({8, 64}));
  }
  g.AddRelation(proto::Guard::LT, 4, SymExpr::Symbol("s0"));
  FlatArgs f = Flat(ts);
  const int n = 200000;
  auto start = std::chrono::steady_clock::now();
  int hits = 0;
  for (int i = 0; i < n; ++i) hits += g.Check(f);
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
                  .count() / n;
  EXPECT_EQ(hits, n);
  std::printf("guard check, 4 inputs: %.1f ns per call\n", ns);
}

}  // namespace
}  // namespace coil::capture_internal
