// Dynamic shapes: automatic dynamic stops recompiling across batch sizes, kDynamic, 0/1
// specialization, duck sizing, mark_dynamic ranges, relation guards from size branches.
#include <vector>

#include "capture/compile.h"
#include "capture/tensor.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

void ExpectSame(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.TypeString(), b.TypeString());
  std::vector<double> x = a.tolist(), y = b.tolist();
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_DOUBLE_EQ(x[i], y[i]) << "element " << i;
}

Tensor Body(const Tensor& x, const Tensor& w) { return (matmul(x, w) + 1.0).relu().sum({1}); }

TEST(DynamicTest, AutomaticDynamicStopsRecompilingAcrossBatchSizes) {
  auto f = compile(Body);  // kAuto
  Tensor w = Tensor::Randn({8, 4}, 1);
  std::vector<int64_t> batches = {2, 3, 5, 7, 16};
  for (int64_t b : batches) {
    Tensor x = Tensor::Randn({b, 8}, b);
    ExpectSame(f(x, w), Body(x, w));
  }
  // Static first, then one recompile with a symbolic batch; the rest hit.
  EXPECT_EQ(f.stats().compiles, 2);
  EXPECT_EQ(f.stats().cache_hits, 3);
  proto::CaptureResult r = f.capture_result();
  ASSERT_EQ(r.graphs_size(), 1);
  ASSERT_EQ(r.graphs(0).symbols_size(), 1);
  EXPECT_EQ(r.graphs(0).symbols(0).min(), 2);
  EXPECT_EQ(r.graphs(0).symbols(0).hint(), 3);
  EXPECT_EQ(r.graphs(0).inputs(0).type().shape(0).kind(), proto::SymExpr::SYMBOL);
  EXPECT_EQ(r.graphs(0).inputs(0).type().shape(1).kind(), proto::SymExpr::CONST);
}

TEST(DynamicTest, StaticRecompilesForEverySize) {
  CompileOptions options;
  options.dynamic = DynamicMode::kStatic;
  auto f = compile(Body, options);
  Tensor w = Tensor::Randn({8, 4}, 1);
  for (int64_t b : {2, 3, 5}) {
    Tensor x = Tensor::Randn({b, 8}, b);
    ExpectSame(f(x, w), Body(x, w));
  }
  EXPECT_EQ(f.stats().compiles, 3);
}

TEST(DynamicTest, SizesZeroAndOneAreSpecialized) {
  CompileOptions options;
  options.dynamic = DynamicMode::kDynamic;
  auto f = compile([](const Tensor& x) { return x.exp().sum({0}); }, options);
  Tensor one = Tensor::Rand({1, 3}, 1);
  ExpectSame(f(one), one.exp().sum({0}));
  Tensor four = Tensor::Rand({4, 3}, 2);
  ExpectSame(f(four), four.exp().sum({0}));  // 1 was specialized: recompile
  EXPECT_EQ(f.stats().compiles, 2);
  Tensor five = Tensor::Rand({5, 3}, 3);
  ExpectSame(f(five), five.exp().sum({0}));
  Tensor zero = Tensor::Rand({0, 3}, 3);
  ExpectSame(f(zero), zero.exp().sum({0}));  // 0 is outside s0 >= 2: recompile
  EXPECT_EQ(f.stats().compiles, 3);
  // Both dims are symbolic (3 is dynamic too), and a new width hits.
  Tensor wide = Tensor::Rand({6, 7}, 4);
  ExpectSame(f(wide), wide.exp().sum({0}));
  EXPECT_EQ(f.stats().compiles, 3);
}

TEST(DynamicTest, DuckSizingSharesASymbolAndGuardsTheEquality) {
  CompileOptions options;
  options.dynamic = DynamicMode::kDynamic;
  auto f = compile([](const Tensor& a, const Tensor& b) { return a + b; }, options);
  Tensor a = Tensor::Rand({4}, 1), b = Tensor::Rand({4}, 2);
  ExpectSame(f(a, b), a + b);
  Tensor c = Tensor::Rand({6}, 3), d = Tensor::Rand({6}, 4);
  ExpectSame(f(c, d), c + d);
  EXPECT_EQ(f.stats().compiles, 1);
  ASSERT_EQ(f.capture_result().graphs(0).symbols_size(), 1);
  // Unequal sizes break the duck-sizing equality: recompile (broadcasting 1 is specialized).
  Tensor e = Tensor::Rand({1}, 5);
  ExpectSame(f(c, e), c + e);
  EXPECT_EQ(f.stats().compiles, 2);
}

TEST(DynamicTest, BranchOnASizeBecomesARelationGuard) {
  CompileOptions options;
  options.dynamic = DynamicMode::kDynamic;
  int runs = 0;
  auto body = [&](const Tensor& x) {
    ++runs;
    if (x.size(0) > 4) return x * 2.0;
    return x * 3.0;
  };
  auto f = compile(body, options);
  Tensor small = Tensor::Rand({3}, 1), small2 = Tensor::Rand({4}, 2);
  Tensor big = Tensor::Rand({8}, 3), big2 = Tensor::Rand({9}, 4);
  ExpectSame(f(small), small * 3.0);
  ExpectSame(f(small2), small2 * 3.0);  // s0 <= 4 holds: hit
  EXPECT_EQ(f.stats().compiles, 1);
  ExpectSame(f(big), big * 2.0);  // the relation guard fails: recompile
  ExpectSame(f(big2), big2 * 2.0);
  EXPECT_EQ(f.stats().compiles, 2);
  EXPECT_EQ(runs, 2);
  EXPECT_NE(f.capture_result().recompiles(0).reason().find("s0 <= 4"), std::string::npos)
      << f.capture_result().recompiles(0).reason();
  bool found = false;
  proto::CaptureResult r = f.capture_result();
  for (const proto::Guard& g : r.graphs(0).guards()) {
    found |= g.relation() == proto::Guard::LT && g.lhs().value() == 4;
  }
  EXPECT_TRUE(found) << "the graph carries the relation guard 4 < s0";
}

TEST(DynamicTest, SymbolicSizesFlowIntoReshape) {
  CompileOptions options;
  options.dynamic = DynamicMode::kDynamic;
  auto body = [](const Tensor& x) { return x.reshape({x.size(0) * 2, -1}).sum({1}); };
  auto f = compile(body, options);
  for (int64_t n : {2, 3, 5}) {
    Tensor x = Tensor::Rand({n, 4}, n);
    ExpectSame(f(x), body(x));
  }
  EXPECT_EQ(f.stats().compiles, 1);
}

TEST(DynamicTest, MarkDynamicRange) {
  CompileOptions options;
  options.dynamic = DynamicMode::kStatic;
  auto f = compile([](const Tensor& x) { return x.sin(); }, options);
  Tensor x = Tensor::Rand({4, 3}, 1);
  mark_dynamic(x, 0, 2, 16);
  ExpectSame(f(x), x.sin());
  Tensor y = Tensor::Rand({16, 3}, 2);
  ExpectSame(f(y), y.sin());  // within [2, 16]: hit
  EXPECT_EQ(f.stats().compiles, 1);
  Tensor z = Tensor::Rand({17, 3}, 3);
  ExpectSame(f(z), z.sin());  // outside the range: recompile
  EXPECT_EQ(f.stats().compiles, 2);
  EXPECT_NE(f.capture_result().recompiles(0).reason().find("outside [2, 16]"), std::string::npos)
      << f.capture_result().recompiles(0).reason();
  // A marked size outside its own range is an error.
  Tensor bad = Tensor::Rand({20, 3}, 4);
  mark_dynamic(bad, 0, 2, 8);
  absl::StatusOr<Tensor> r = f.Call(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("outside its mark_dynamic range [2, 8]"), std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace coil
