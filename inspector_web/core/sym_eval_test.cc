// EvalSymExpr against SymExpr::Evaluate (ir/sym_expr.h) on random expressions and values,
// including negative values where floordiv and mod differ from C++'s / and %.
#include "inspector_web/core/sym_eval.h"

#include <random>

#include "gtest/gtest.h"
#include "ir/sym_expr.h"

namespace coil::inspector {
namespace {

SymExpr RandomExpr(std::mt19937& rng, int depth) {
  int pick = static_cast<int>(rng() % (depth > 3 ? 3 : 9));
  switch (pick) {
    case 0: return SymExpr(static_cast<int64_t>(rng() % 41) - 20);
    case 1: return SymExpr::Symbol("s0");
    case 2: return SymExpr::Symbol("s1");
    case 3: return RandomExpr(rng, depth + 1) + RandomExpr(rng, depth + 1);
    case 4: return RandomExpr(rng, depth + 1) - RandomExpr(rng, depth + 1);
    case 5: return RandomExpr(rng, depth + 1) * RandomExpr(rng, depth + 1);
    case 6:
      return SymExpr::FloorDiv(RandomExpr(rng, depth + 1),
                               SymExpr(static_cast<int64_t>(1 + rng() % 7)));
    case 7:
      return SymExpr::Mod(RandomExpr(rng, depth + 1), SymExpr(static_cast<int64_t>(2 + rng() % 5)));
    default:
      return rng() % 2 ? SymExpr::Max(RandomExpr(rng, depth + 1), RandomExpr(rng, depth + 1))
                       : SymExpr::Min(RandomExpr(rng, depth + 1), RandomExpr(rng, depth + 1));
  }
}

TEST(SymEvalTest, AgreesWithSymExprEvaluate) {
  std::mt19937 rng(5);
  for (int i = 0; i < 3000; ++i) {
    SymExpr e = RandomExpr(rng, 0);
    int64_t s0 = static_cast<int64_t>(rng() % 61) - 30, s1 = static_cast<int64_t>(rng() % 61) - 30;
    absl::StatusOr<int64_t> want = e.Evaluate({{"s0", s0}, {"s1", s1}});
    int64_t got = 0;
    bool ok = EvalSymExpr(e.ToProto(), {{"s0", s0}, {"s1", s1}}, &got);
    ASSERT_EQ(ok, want.ok()) << e.ToString() << " at s0=" << s0 << " s1=" << s1;
    if (ok) {
      EXPECT_EQ(got, *want) << e.ToString() << " at s0=" << s0 << " s1=" << s1;
    }
  }
}

TEST(SymEvalTest, UnknownSymbolsOverflowAndDivisionByZeroFail) {
  int64_t v;
  SymExpr big = SymExpr::Symbol("s0") * SymExpr::Symbol("s0");
  EXPECT_FALSE(EvalSymExpr(SymExpr::Symbol("s9").ToProto(), {{"s0", 1}}, &v));
  EXPECT_FALSE(EvalSymExpr(big.ToProto(), {{"s0", int64_t{1} << 40}}, &v));
  proto::SymExpr div;
  div.set_kind(proto::SymExpr::FLOORDIV);
  div.add_args()->set_kind(proto::SymExpr::CONST);
  div.add_args()->set_kind(proto::SymExpr::CONST);  // / 0
  EXPECT_FALSE(EvalSymExpr(div, {}, &v));
}

TEST(SymEvalTest, HintValuesSkipSymbolsWithoutHints) {
  proto::Graph g;
  proto::Symbol* a = g.add_symbols();
  a->set_name("s0");
  a->set_hint(8);
  g.add_symbols()->set_name("s1");
  SymbolValues env = HintValues(g);
  EXPECT_EQ(env.size(), 1u);
  EXPECT_EQ(env.at("s0"), 8);
}

}  // namespace
}  // namespace coil::inspector
