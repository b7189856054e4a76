// coil::compile: guard hits do not re-run the function, each guard kind recompiles exactly
// once, the recompile limit falls back to eager, parameters and in-place ops, bad input.
// The oracle is the same function run eagerly (reference kernels).
#include "capture/compile.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <tuple>
#include <vector>

#include "capture/logging.h"
#include "capture/name_scope.h"
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

Tensor Mlp(const Tensor& x, const Tensor& w) { return relu(matmul(x, w)) * 2.0 + 1.0; }

TEST(CompileTest, FirstCallTracesLaterCallsRunTheArtifact) {
  int runs = 0;
  auto f = compile([&](const Tensor& x, const Tensor& w) {
    ++runs;
    return Mlp(x, w);
  });
  Tensor x = Tensor::Randn({4, 8}, 1), w = Tensor::Randn({8, 3}, 2);
  ExpectSame(f(x, w), Mlp(x, w));
  EXPECT_EQ(runs, 1);
  Tensor x2 = Tensor::Randn({4, 8}, 3);
  ExpectSame(f(x2, w), Mlp(x2, w));
  ExpectSame(f(x2, w), Mlp(x2, w));
  EXPECT_EQ(runs, 1);  // guards hit: the function is not run again
  EXPECT_EQ(f.stats().compiles, 1);
  EXPECT_EQ(f.stats().cache_hits, 2);
  EXPECT_EQ(f.stats().fn_calls, 1);
  EXPECT_EQ(f.stats().calls, 3);
  proto::CaptureResult r = f.capture_result();
  ASSERT_EQ(r.graphs_size(), 1);
  EXPECT_GE(r.graphs(0).nodes_size(), 3);
  EXPECT_EQ(r.breaks_size(), 0);
  EXPECT_GE(r.guards_size(), 2);
}

// Provenance: ops traced inside NameScopes are named with the module path; every op keeps its
// C++ source location.
TEST(CompileTest, NameScopesNameTheCapturedOps) {
  auto f = compile([&](const Tensor& x, const Tensor& w) {
    Tensor h;
    {
      NameScope block("blocks.0");
      NameScope fc("fc");
      h = relu(matmul(x, w));
    }
    return h * 2.0;
  });
  Tensor x = Tensor::Randn({4, 8}, 1), w = Tensor::Randn({8, 3}, 2);
  ExpectSame(f(x, w), relu(matmul(x, w)) * 2.0);
  EXPECT_EQ(NameScope::CurrentPath(), "");
  proto::CaptureResult r = f.capture_result();
  ASSERT_EQ(r.graphs_size(), 1);
  int named = 0, unnamed = 0;
  for (const proto::Node& n : r.graphs(0).nodes()) {
    EXPECT_GT(n.loc().line(), 0) << n.op();
    if (n.op() == "aten.matmul" || n.op() == "aten.relu") {
      EXPECT_EQ(n.name(), "blocks.0.fc") << n.op();
      ++named;
    } else {
      EXPECT_EQ(n.name(), "") << n.op();
      ++unnamed;
    }
  }
  EXPECT_EQ(named, 2);
  EXPECT_GE(unnamed, 1);
}

// One guard kind per case: the changed call recompiles once, and a repeat of it hits.
struct GuardCase {
  const char* name;
  std::function<Tensor()> first;
  std::function<Tensor()> changed;
};

TEST(CompileTest, EachGuardKindRecompilesExactlyOnce) {
  std::vector<GuardCase> cases = {
      {"dtype", [] { return Tensor::Rand({2, 3}, 1); },
       [] { return Tensor::Rand({2, 3}, 1, proto::FLOAT64); }},
      {"rank", [] { return Tensor::Rand({2, 3}, 1); }, [] { return Tensor::Rand({2, 3, 1}, 1); }},
      {"size", [] { return Tensor::Rand({2, 3}, 1); }, [] { return Tensor::Rand({2, 5}, 1); }},
      {"contiguity", [] { return Tensor::Rand({3, 3}, 1); },
       [] { return Tensor::Rand({3, 3}, 1).transpose(0, 1); }},
  };
  for (const GuardCase& c : cases) {
    SCOPED_TRACE(c.name);
    int runs = 0;
    CompileOptions options;
    options.dynamic = DynamicMode::kStatic;
    auto f = compile(
        [&](const Tensor& x) {
          ++runs;
          return exp(x) + x;
        },
        options);
    Tensor a = c.first(), b = c.changed();
    ExpectSame(f(a), exp(a) + a);
    ExpectSame(f(a), exp(a) + a);
    EXPECT_EQ(f.stats().compiles, 1);
    ExpectSame(f(b), exp(b) + b);
    EXPECT_EQ(f.stats().compiles, 2);
    EXPECT_EQ(f.stats().recompiles, 1);
    ExpectSame(f(b), exp(b) + b);
    ExpectSame(f(a), exp(a) + a);
    EXPECT_EQ(f.stats().compiles, 2);
    EXPECT_EQ(runs, 2);
    proto::CaptureResult r = f.capture_result();
    ASSERT_EQ(r.recompiles_size(), 1);
    EXPECT_EQ(r.recompiles(0).count(), 2);
    EXPECT_FALSE(r.recompiles(0).reason().empty());
    // Every compile is kept: the first with no recompile, the second (the latest) with the
    // guard that failed.
    std::vector<proto::CaptureResult> all = f.capture_results();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].recompiles_size(), 0);
    ASSERT_EQ(all[0].graphs_size(), 1);
    ASSERT_EQ(all[1].graphs_size(), 1);
    EXPECT_EQ(all[1].SerializeAsString(), r.SerializeAsString());
    // Each compile keeps its own guards (the changed argument's dtype, rank, size or layout).
    auto guards = [](const proto::CaptureResult& c) {
      std::string out;
      for (const proto::Guard& g : c.guards()) out += g.SerializeAsString();
      return out;
    };
    EXPECT_NE(guards(all[0]), guards(all[1]));
  }
}

TEST(CompileTest, ScalarArgumentsAreSpecializedByValue) {
  int runs = 0;
  auto f = compile([&](const Tensor& x, int64_t k, double s, bool neg) {
    ++runs;
    Tensor y = x * static_cast<double>(k) + s;
    return neg ? -y : y;
  });
  Tensor x = Tensor::Rand({3}, 4);
  ExpectSame(f(x, int64_t{2}, 0.5, false), x * 2.0 + 0.5);
  ExpectSame(f(x, int64_t{2}, 0.5, false), x * 2.0 + 0.5);
  EXPECT_EQ(f.stats().compiles, 1);
  ExpectSame(f(x, int64_t{3}, 0.5, false), x * 3.0 + 0.5);
  EXPECT_EQ(f.stats().compiles, 2);
  ExpectSame(f(x, int64_t{3}, 0.5, true), -(x * 3.0 + 0.5));
  EXPECT_EQ(f.stats().compiles, 3);
  ExpectSame(f(x, int64_t{2}, 0.5, false), x * 2.0 + 0.5);
  EXPECT_EQ(runs, 3);
}

TEST(CompileTest, VectorArgumentsGuardTheirLength) {
  auto f = compile([](const std::vector<Tensor>& xs) { return cat(xs, 0).sum(); });
  Tensor a = Tensor::Rand({2}, 1), b = Tensor::Rand({3}, 2), c = Tensor::Rand({1}, 3);
  ExpectSame(f(std::vector<Tensor>{a, b}), cat({a, b}, 0).sum());
  ExpectSame(f(std::vector<Tensor>{a, b}), cat({a, b}, 0).sum());
  EXPECT_EQ(f.stats().compiles, 1);
  ExpectSame(f(std::vector<Tensor>{a, b, c}), cat({a, b, c}, 0).sum());
  EXPECT_EQ(f.stats().compiles, 2);
}

TEST(CompileTest, TupleAndVectorResults) {
  auto f = compile([](const Tensor& x) { return std::make_tuple(x + 1.0, x * 3.0); });
  Tensor x = Tensor::Rand({2, 2}, 5);
  for (int i = 0; i < 2; ++i) {
    auto [a, b] = f(x);
    ExpectSame(a, x + 1.0);
    ExpectSame(b, x * 3.0);
  }
  auto g = compile([](const Tensor& x) { return std::vector<Tensor>{x.sin(), x.exp(), x}; });
  for (int i = 0; i < 2; ++i) {
    std::vector<Tensor> out = g(x);
    ASSERT_EQ(out.size(), 3u);
    ExpectSame(out[0], x.sin());
    ExpectSame(out[1], x.exp());
    ExpectSame(out[2], x);
  }
  EXPECT_EQ(g.stats().compiles, 1);
}

TEST(CompileTest, RecompileLimitFallsBackToEagerWithOneWarning) {
  std::string log = ::testing::TempDir() + "/recompile_limit.log";
  std::remove(log.c_str());
  ConfigureLogs("recompiles", log);
  int runs = 0;
  CompileOptions options;
  options.dynamic = DynamicMode::kStatic;
  options.recompile_limit = 2;
  options.name = "limited";
  auto f = compile(
      [&](const Tensor& x) {
        ++runs;
        return x * x;
      },
      options);
  for (int64_t n : {2, 3, 4, 5, 6}) {
    Tensor x = Tensor::Rand({n}, n);
    ExpectSame(f(x), x * x);
  }
  EXPECT_EQ(f.stats().compiles, 2);
  EXPECT_EQ(f.stats().eager_fallbacks, 3);
  EXPECT_EQ(runs, 5);
  // Sizes compiled before still hit the cache.
  Tensor x2 = Tensor::Rand({2}, 9);
  ExpectSame(f(x2), x2 * x2);
  EXPECT_EQ(f.stats().eager_fallbacks, 3);
  ConfigureLogs("");
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  size_t warnings = 0;
  for (size_t p = s.find("recompile_limit"); p != std::string::npos;
       p = s.find("recompile_limit", p + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << s;
  EXPECT_NE(s.find("[coil:recompiles] limited: recompiling (compile 2"), std::string::npos) << s;
}

TEST(CompileTest, ParametersAreReadByReference) {
  Tensor w = Tensor::Rand({3, 3}, 7);
  int runs = 0;
  auto f = compile([&](const Tensor& x) {
    ++runs;
    return matmul(x, w);
  });
  Tensor x = Tensor::Rand({2, 3}, 8);
  ExpectSame(f(x), matmul(x, w));
  w.add_(Tensor::Ones({3, 3}));  // eager update of the parameter
  ExpectSame(f(x), matmul(x, w));
  EXPECT_EQ(runs, 1);
  ASSERT_EQ(f.capture_result().graphs(0).inputs_size(), 2);  // x and the lifted w
}

TEST(CompileTest, InPlaceOpsWriteThroughToArguments) {
  auto body = [](const Tensor& x, const Tensor& y) {
    x.add_(y);
    Tensor z = x * 2.0;
    return z;
  };
  auto f = compile(body);
  for (int i = 0; i < 3; ++i) {
    Tensor x = Tensor::Rand({4}, 10 + i), y = Tensor::Rand({4}, 20 + i);
    Tensor xe = Tensor::FromValues(x.tolist(), {4});
    Tensor expected = body(xe, y);
    Tensor got = f(x, y);
    ExpectSame(got, expected);
    ExpectSame(x, xe);  // the caller's tensor was updated as in eager mode
  }
  EXPECT_EQ(f.stats().compiles, 1);
}

TEST(CompileTest, InPlaceOnAParameterIsSeenByLaterReads) {
  Tensor acc = Tensor::Zeros({2});
  auto body = [&](const Tensor& x) {
    acc.add_(x);
    return acc * 1.0;
  };
  auto f = compile(body);
  Tensor x = Tensor::FromValues({1, 2}, {2});
  ExpectSame(f(x), Tensor::FromValues({1, 2}, {2}));
  ExpectSame(f(x), Tensor::FromValues({2, 4}, {2}));
  ExpectSame(acc, Tensor::FromValues({2, 4}, {2}));
}

TEST(CompileTest, BadInputIsAClearErrorAndTheCacheStaysUsable) {
  auto f = compile([](const Tensor& x, const Tensor& y) { return matmul(x, y); });
  Tensor a = Tensor::Rand({2, 3}, 1), b = Tensor::Rand({3, 4}, 2);
  ExpectSame(f(a, b), matmul(a, b));
  absl::StatusOr<Tensor> r = f.Call(a, Tensor());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("argument arg1 is an undefined tensor"), std::string::npos)
      << r.status();
  // A shape error while tracing names the op and the location.
  Tensor bad = Tensor::Rand({5, 4}, 3);
  r = f.Call(a, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("aten.matmul"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("compile_test.cc"), std::string::npos) << r.status();
  EXPECT_THROW(f(a, bad), Error);
  // Still usable.
  ExpectSame(f(a, b), matmul(a, b));
  EXPECT_EQ(f.stats().compiles, 1);
}

TEST(CompileTest, NestedCompiledFunctionsInline) {
  auto inner = compile([](const Tensor& x) { return x.exp(); });
  auto outer = compile([&](const Tensor& x) { return inner(x) + 1.0; });
  Tensor x = Tensor::Rand({3}, 4);
  ExpectSame(outer(x), x.exp() + 1.0);
  ExpectSame(outer(x), x.exp() + 1.0);
  EXPECT_EQ(outer.stats().compiles, 1);
  EXPECT_EQ(outer.capture_result().graphs_size(), 1);
}

// A backend that counts its compiles and runs the reference interpreter.
class CountingBackend : public Backend {
 public:
  explicit CountingBackend(int* compiles) : compiles_(compiles) {}
  std::string name() const override { return "counting"; }
  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Graph& graph) override {
    ++*compiles_;
    return ReferenceBackend()->Compile(graph);
  }

 private:
  int* compiles_;
};

TEST(CompileTest, NullBackendMeansTheRegisteredDefault) {
  EXPECT_EQ(DefaultBackend()->name(), "reference");  // //capture alone registers nothing
  int compiles = 0;
  SetDefaultBackend([&] { return std::make_shared<CountingBackend>(&compiles); });
  auto f = compile([](const Tensor& x) { return x.exp() * 2.0; });
  Tensor x = Tensor::Rand({4}, 5);
  ExpectSame(f(x), x.exp() * 2.0);
  EXPECT_EQ(compiles, 1);
  // An explicit backend wins over the default.
  auto g = compile([](const Tensor& x) { return x + 1.0; }, {.backend = ReferenceBackend()});
  ExpectSame(g(x), x + 1.0);
  EXPECT_EQ(compiles, 1);
  SetDefaultBackend(&ReferenceBackend);
  EXPECT_EQ(DefaultBackend()->name(), "reference");
}

}  // namespace
}  // namespace coil
