// Graph breaks: segmented mode gives exactly the eager results, segments are cached across
// calls, data-dependent ops break, fullgraph turns a break into an error naming op and line.
#include <sstream>
#include <vector>

#include "capture/compile.h"
#include "capture/data_dependent_ops.h"
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

// Two breaks (two item() calls): three segments.
Tensor TwoBreaks(const Tensor& x, const Tensor& w) {
  Tensor y = matmul(x, w).relu();
  double a = y.sum().item();
  Tensor z = y * a + x.sum();
  double b = z.amax().item();
  return (z / b).exp();
}

TEST(GraphBreakTest, TwoBreaksGiveThreeSegmentsAndTheEagerNumbers) {
  int runs = 0;
  auto f = compile([&](const Tensor& x, const Tensor& w) {
    ++runs;
    return TwoBreaks(x, w);
  });
  Tensor x = Tensor::Randn({3, 4}, 1), w = Tensor::Randn({4, 5}, 2);
  ExpectSame(f(x, w), TwoBreaks(x, w));
  proto::CaptureResult r = f.capture_result();
  EXPECT_EQ(r.graphs_size(), 3);
  ASSERT_EQ(r.breaks_size(), 2);
  EXPECT_EQ(r.breaks(0).reason(), "item() reads a tensor's value");
  EXPECT_EQ(r.breaks(0).op(), "aten.sum");
  EXPECT_EQ(r.breaks(1).op(), "aten.amax");
  EXPECT_NE(r.breaks(0).loc().file().find("graph_break_test.cc"), std::string::npos);
  int compiled = f.stats().graphs_compiled;
  EXPECT_EQ(compiled, 3);
  // The second call runs the function again (segmented mode) but compiles nothing.
  ExpectSame(f(x, w), TwoBreaks(x, w));
  EXPECT_EQ(f.stats().graphs_compiled, compiled);
  EXPECT_EQ(f.stats().compiles, 1);
  EXPECT_EQ(f.stats().cache_hits, 1);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(f.stats().graph_breaks, 4);
}

TEST(GraphBreakTest, DataDependentControlFlowFollowsTheData) {
  auto body = [](const Tensor& x) {
    Tensor s = x.sum();
    if (s.item() > 0) return x * 2.0;
    return x - 1.0;
  };
  auto f = compile(body);
  Tensor pos = Tensor::FromValues({1, 2, 3}, {3}), neg = Tensor::FromValues({-1, -2, 0}, {3});
  for (int i = 0; i < 2; ++i) {
    ExpectSame(f(pos), body(pos));
    ExpectSame(f(neg), body(neg));
  }
  EXPECT_EQ(f.stats().compiles, 1);  // same guards; each call replays the segments
}

TEST(GraphBreakTest, FullgraphMakesABreakAnErrorNamingTheOpAndLine) {
  CompileOptions options;
  options.fullgraph = true;
  options.name = "model";
  int line = 0;
  auto f = compile(
      [&](const Tensor& x) {
        Tensor y = x.exp();
        line = __LINE__ + 1;
        double v = y.sum().item();
        return y * v;
      },
      options);
  Tensor x = Tensor::Rand({3}, 1);
  absl::StatusOr<Tensor> r = f.Call(x);
  ASSERT_FALSE(r.ok());
  std::string expected = "graph break in model at ";
  EXPECT_NE(r.status().message().find(expected), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find(absl::StrCat("graph_break_test.cc:", line,
                                                   ": item() reads a tensor's value (op aten.sum)")),
            std::string::npos)
      << r.status();
  // No break: fullgraph compiles.
  auto g = compile([](const Tensor& x) { return x.exp(); }, options);
  ExpectSame(g(x), x.exp());
}

TEST(GraphBreakTest, NonzeroAndMaskedSelectBreakAndMatchEager) {
  // Oracle values follow torch.nonzero / torch.masked_select.
  Tensor x = Tensor::FromValues({0.5, -1, 2, 0, -3, 4}, {2, 3});
  Tensor idx = nonzero(x > 0.0);
  ExpectSame(idx, Tensor::FromValues({0, 0, 0, 2, 1, 2}, {3, 2}, proto::INT64));
  Tensor sel = masked_select(x, x > 0.0);
  ExpectSame(sel, Tensor::FromValues({0.5, 2, 4}, {3}));

  auto body = [](const Tensor& x) {
    Tensor y = x * 2.0;
    Tensor kept = masked_select(y, y > 0.0);  // break: data-dependent size
    return kept.sum() + kept.size(0).hint();
  };
  auto f = compile(body);
  ExpectSame(f(x), body(x));
  ExpectSame(f(x), body(x));
  EXPECT_EQ(f.capture_result().breaks_size(), 1);
  EXPECT_EQ(f.capture_result().breaks(0).op(), "coil.masked_select");
  EXPECT_EQ(f.capture_result().graphs_size(), 2);

  CompileOptions options;
  options.fullgraph = true;
  auto g = compile([](const Tensor& x) { return nonzero(x); }, options);
  absl::StatusOr<Tensor> r = g.Call(x);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("coil.nonzero has a data-dependent output shape"),
            std::string::npos)
      << r.status();
}

TEST(GraphBreakTest, PrintingIsABreak) {
  std::ostringstream os;
  auto body = [&](const Tensor& x) {
    Tensor y = x + 1.0;
    os << y;
    return y * 3.0;
  };
  auto f = compile(body);
  Tensor x = Tensor::FromValues({1, 2}, {2});
  ExpectSame(f(x), Tensor::FromValues({6, 9}, {2}));
  EXPECT_EQ(f.capture_result().breaks_size(), 1);
  EXPECT_EQ(f.capture_result().breaks(0).reason(), "printing reads a tensor's value");
  EXPECT_FALSE(os.str().empty());
}

TEST(GraphBreakTest, InPlaceAcrossSegmentsMatchesEager) {
  auto body = [](const Tensor& x) {
    Tensor y = x * 1.0;
    y.add_(Tensor::Ones({4}));
    double m = y.amax().item();
    y.mul_(Tensor::Scalar(m));
    x.add_(y);
    return y;
  };
  auto f = compile(body);
  for (int i = 0; i < 2; ++i) {
    Tensor x = Tensor::Rand({4}, 5 + i);
    Tensor xe = Tensor::FromValues(x.tolist(), {4});
    Tensor expected = body(xe);
    ExpectSame(f(x), expected);
    ExpectSame(x, xe);
  }
}

}  // namespace
}  // namespace coil
