#include "ir/sym_expr.h"

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash_testing.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/sym_expr_testing.h"

namespace coil {
namespace {

using ::coil::sym_testing::RandomTree;
using ::testing::HasSubstr;

const SymExpr a = SymExpr::Symbol("a");
const SymExpr b = SymExpr::Symbol("b");
const SymExpr c = SymExpr::Symbol("c");
const SymExpr s0 = SymExpr::Symbol("s0");
const SymExpr s1 = SymExpr::Symbol("s1");

SymExpr P(absl::string_view text) {
  absl::StatusOr<SymExpr> e = SymExpr::Parse(text);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status();
  return e.ok() ? *e : SymExpr(-999999);
}

// ----- construction and canonical form -------------------------------------------------------

TEST(SymExprTest, ConstantsDoNotAllocate) {
  EXPECT_EQ(SymExpr().node(), nullptr);
  EXPECT_EQ(SymExpr(5).node(), nullptr);
  EXPECT_EQ((a - a).node(), nullptr);
  EXPECT_EQ((a * 0).node(), nullptr);
  EXPECT_EQ(SymExpr::FloorDiv(7, 2).node(), nullptr);
  EXPECT_EQ(*(a - a + 3).AsConstant(), 3);
  EXPECT_EQ((2 * a - a - a + 4).constant(), 4);
  EXPECT_FALSE(a.AsConstant().has_value());
}

TEST(SymExprTest, HeaderExamples) {
  EXPECT_EQ((s0 * 3 + 4 - s0).ToString(), "2*s0 + 4");
  EXPECT_EQ(SymExpr::FloorDiv(s0 * 4 + 8, 4).ToString(), "s0 + 2");
  EXPECT_EQ(SymExpr::Min(s0, 8).ToString(), "min(s0, 8)");
  EXPECT_EQ(SymExpr::FloorDiv(s0, 2).ToString(), "floordiv(s0, 2)");
}

TEST(SymExprTest, Identities) {
  EXPECT_EQ(a + 0, a);      // x + 0 -> x
  EXPECT_EQ(a * 1, a);      // x * 1 -> x
  EXPECT_EQ(a * 0, 0);      // x * 0 -> 0
  EXPECT_EQ(a + b, b + a);  // sorted terms
  EXPECT_EQ(a * b, b * a);
  EXPECT_EQ(a + a + a, 3 * a);              // like terms
  EXPECT_EQ((a + 1) * (a - 1), a * a - 1);  // expansion
  EXPECT_EQ((a + b) * (a + b), a * a + 2 * a * b + b * b);
  EXPECT_EQ(-(-a), a);
  EXPECT_TRUE(a.is_symbol());
  EXPECT_FALSE((a + 1).is_symbol());
  EXPECT_FALSE(SymExpr(1).is_symbol());
}

TEST(SymExprTest, ConstantFoldingUsesPythonSemantics) {
  EXPECT_EQ(SymExpr::FloorDiv(7, 2), 3);
  EXPECT_EQ(SymExpr::FloorDiv(-7, 2), -4);
  EXPECT_EQ(SymExpr::FloorDiv(7, -2), -4);
  EXPECT_EQ(SymExpr::FloorDiv(-7, -2), 3);
  EXPECT_EQ(SymExpr::Mod(7, 2), 1);
  EXPECT_EQ(SymExpr::Mod(-7, 2), 1);
  EXPECT_EQ(SymExpr::Mod(7, -2), -1);
  EXPECT_EQ(SymExpr::Mod(-7, -2), -1);
  EXPECT_EQ(SymExpr::Mod(INT64_MIN, -1), 0);
  EXPECT_EQ(SymExpr::Min(3, -5), -5);
  EXPECT_EQ(SymExpr::Max(3, -5), 3);
}

TEST(SymExprTest, FloorDivRules) {
  EXPECT_EQ(SymExpr::FloorDiv(a, 1), a);  // floordiv(x, 1)
  EXPECT_EQ(SymExpr::FloorDiv(a, -1), -a);
  EXPECT_EQ(SymExpr::FloorDiv(a, -2), SymExpr::FloorDiv(-a, 2));                // sign
  EXPECT_EQ(SymExpr::FloorDiv(6 * a + b, 3), 2 * a + SymExpr::FloorDiv(b, 3));  // pull terms
  EXPECT_EQ(SymExpr::FloorDiv(a + 7, 3), SymExpr::FloorDiv(a + 1, 3) + 2);      // constant
  EXPECT_EQ(SymExpr::FloorDiv(a - 1, 3), SymExpr::FloorDiv(a + 2, 3) - 1);
  EXPECT_EQ(SymExpr::FloorDiv(2 * a + 2, 4), SymExpr::FloorDiv(a + 1, 2));            // gcd
  EXPECT_EQ(SymExpr::FloorDiv(SymExpr::FloorDiv(a, 2), 3), SymExpr::FloorDiv(a, 6));  // nested
  EXPECT_EQ(SymExpr::FloorDiv(SymExpr::FloorDiv(a, 2) + 1, 3), SymExpr::FloorDiv(a + 2, 6));
  EXPECT_EQ(SymExpr::FloorDiv(1 - SymExpr::FloorDiv(a, 2), 3), SymExpr::FloorDiv(3 - a, 6));
  EXPECT_EQ(SymExpr::FloorDiv(-SymExpr::FloorDiv(-a, 2), 2), SymExpr::FloorDiv(a + 1, 4));
  EXPECT_EQ(SymExpr::FloorDiv(SymExpr::Mod(a, 4), 4), 0);  // bounds
  EXPECT_EQ(SymExpr::FloorDiv(SymExpr::Mod(a, 4) + 8, 4), 2);
  EXPECT_EQ(SymExpr::FloorDiv(a * b + b, b), a + 1);  // symbolic
  EXPECT_EQ(SymExpr::FloorDiv(a * b, -b), -a);
  EXPECT_EQ(SymExpr::FloorDiv(2 * a, 2 * b), SymExpr::FloorDiv(a, b));
  EXPECT_EQ(SymExpr::FloorDiv(3 * (a + b), a + b), 3);
  EXPECT_EQ(SymExpr::FloorDiv(0 * a, b), 0);
}

TEST(SymExprTest, ModRules) {
  EXPECT_EQ(SymExpr::Mod(a, 1), 0);  // mod(x, 1) -> 0
  EXPECT_EQ(SymExpr::Mod(a, -1), 0);
  EXPECT_EQ(SymExpr::Mod(4 * a + b, 4), SymExpr::Mod(b, 4));           // mod(c*x + y, c)
  EXPECT_EQ(SymExpr::Mod(SymExpr::Mod(a, 4), 4), SymExpr::Mod(a, 4));  // mod(mod(x, c), c)
  EXPECT_EQ(SymExpr::Mod(SymExpr::Mod(a, 8), 4), SymExpr::Mod(a, 4));
  EXPECT_EQ(SymExpr::Mod(2 * SymExpr::Mod(a, 2), 4), 2 * SymExpr::Mod(a, 2));
  EXPECT_EQ(SymExpr::Mod(-a, 4), SymExpr::Mod(3 * a, 4));  // coefficients mod c
  EXPECT_EQ(SymExpr::Mod(a + 9, 4), SymExpr::Mod(a + 1, 4));
  EXPECT_EQ(SymExpr::Mod(2 * a + 2, 4), 2 * SymExpr::Mod(a + 1, 2));           // gcd
  EXPECT_EQ(SymExpr::Mod(a, -3), -SymExpr::Mod(-a, 3));                        // sign
  EXPECT_EQ(SymExpr::Mod(SymExpr::Mod(a, 4) + 1, 8), SymExpr::Mod(a, 4) + 1);  // bounds
  EXPECT_EQ(SymExpr::Mod(a * b + 3, b), SymExpr::Mod(3, b));                   // symbolic
  EXPECT_EQ(SymExpr::Mod(2 * a * b, 2 * b), 0);
  EXPECT_EQ(SymExpr::Mod(a, -b), -SymExpr::Mod(-a, b));
}

TEST(SymExprTest, DivModRecombine) {
  EXPECT_EQ(4 * SymExpr::FloorDiv(a, 4) + SymExpr::Mod(a, 4), a);
  EXPECT_EQ(SymExpr::Mod(a, 4) + SymExpr::FloorDiv(a, 4) * 4, a);
  EXPECT_EQ(8 * SymExpr::FloorDiv(a + 1, 4) + 2 * SymExpr::Mod(a + 1, 4) + b, 2 * a + b + 2);
  EXPECT_EQ(3 * b * SymExpr::FloorDiv(a, 3) + b * SymExpr::Mod(a, 3), a * b);
  EXPECT_EQ(4 * SymExpr::FloorDiv(-a, 4) + SymExpr::Mod(-a, 4), -a);
  // Reducing coefficients mod 7 (11 -> 4, 8 -> 1) makes a pair that recombines.
  SymExpr e = SymExpr::Mod(11 * SymExpr::FloorDiv(a, 4) + 8 * SymExpr::Mod(a, 4), 7);
  EXPECT_EQ(e, SymExpr::Mod(a, 7));
  EXPECT_EQ(P(e.ToString()), e);
}

TEST(SymExprTest, MinMaxRules) {
  EXPECT_EQ(SymExpr::Min(a, a), a);  // idempotence
  EXPECT_EQ(SymExpr::Max(a, a), a);
  EXPECT_EQ(SymExpr::Min(a, a + 1), a);  // constant difference
  EXPECT_EQ(SymExpr::Max(a, a + 1), a + 1);
  EXPECT_EQ(SymExpr::Min(a, b), SymExpr::Min(b, a));  // sorted args
  EXPECT_EQ(SymExpr::Min(SymExpr::Min(a, b), c), SymExpr::Min(a, SymExpr::Min(b, c)));
  EXPECT_EQ(SymExpr::Min(SymExpr::Min(a, b), c).ToString(), "min(a, b, c)");  // flattened
  EXPECT_EQ(SymExpr::Min(SymExpr::Max(a, b), a), a);                          // absorption
  EXPECT_EQ(SymExpr::Max(SymExpr::Min(a, b), a), a);
  EXPECT_EQ(SymExpr::Min(a + 1, b + 1), SymExpr::Min(a, b) + 1);  // common constant
  EXPECT_EQ(SymExpr::Max(2 * a, 2 * b), 2 * SymExpr::Max(a, b));  // common factor
  EXPECT_EQ(SymExpr::Min(a + 1, 5).ToString(), "min(a + 1, 5)");  // kept with a constant
  EXPECT_EQ(SymExpr::Max(a - 1, 0).ToString(), "max(a - 1, 0)");
  EXPECT_EQ(SymExpr::Min(SymExpr::Mod(a, 4), 3), SymExpr::Mod(a, 4));  // bounds
  EXPECT_EQ(SymExpr::Max(SymExpr::Mod(a, 4), -1), SymExpr::Mod(a, 4));
  EXPECT_EQ(SymExpr::Min(SymExpr::Min(a, b) + 1, c), SymExpr::Min(SymExpr::Min(a + 1, c), b + 1));
}

TEST(SymExprTest, ManyMinArgs) {
  std::vector<std::string> names;
  for (int i = 0; i < 2000; ++i) names.push_back(absl::StrCat("x", i, " + ", i % 7));
  absl::StatusOr<SymExpr> e =
      SymExpr::Parse(absl::StrCat("min(", absl::StrJoin(names, ", "), ", 5, 3, x0 + 9)"));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->ToProto().args_size(), 2002);  // constants folded to one, x0 + 9 kept
  EXPECT_EQ(SymExpr::Parse(e->ToString()).value(), *e);
}

TEST(SymExprTest, EqualityHashAndOrder) {
  std::vector<SymExpr> exprs = {0,
                                1,
                                -3,
                                a,
                                b,
                                a + 1,
                                2 * a,
                                a * b,
                                a * a,
                                SymExpr::FloorDiv(a, 2),
                                SymExpr::Mod(a, 2),
                                SymExpr::Min(a, b),
                                SymExpr::Max(a, b),
                                SymExpr::Min(a, 2),
                                SymExpr::FloorDiv(a, b)};
  EXPECT_TRUE(absl::VerifyTypeImplementsAbslHashCorrectly(exprs));
  for (const SymExpr& x : exprs) {
    for (const SymExpr& y : exprs) {
      int relations = (x < y) + (y < x) + (x == y);
      EXPECT_EQ(relations, 1) << x.ToString() << " vs " << y.ToString();
    }
  }
  EXPECT_TRUE(SymExpr(-100) < a);  // constants first
  // Equal expressions built differently hash the same.
  EXPECT_EQ((a + b) * 2, 2 * b + 2 * a);
  EXPECT_EQ(((a + b) * 2).Hash(), (2 * b + 2 * a).Hash());
  absl::flat_hash_set<SymExpr> set = {a + 1, 1 + a, a * 2, a + a};
  EXPECT_EQ(set.size(), 2u);
}

TEST(SymExprTest, Symbols) {
  SymExpr e = SymExpr::FloorDiv(b * c, 3) + SymExpr::Min(a, s1) + s0;
  EXPECT_EQ(e.Symbols(), (std::vector<std::string>{"a", "b", "c", "s0", "s1"}));
  EXPECT_TRUE(SymExpr(3).Symbols().empty());
}

// ----- printing ------------------------------------------------------------------------------

TEST(SymExprTest, PrintingGoldens) {
  std::vector<std::pair<SymExpr, std::string>> goldens = {
      {0, "0"},
      {-17, "-17"},
      {a, "a"},
      {-a, "-a"},
      {a - 1, "a - 1"},
      {3 - a, "-a + 3"},
      {2 * a - 3 * b + 1, "2*a - 3*b + 1"},
      {a * a * b - a, "a*a*b - a"},
      {a * b + a + b, "a*b + a + b"},
      {-2 * a * b, "-2*a*b"},
      {SymExpr::FloorDiv(a + 1, 4), "floordiv(a + 1, 4)"},
      {SymExpr::Mod(a, 4) * 2 + 1, "2*mod(a, 4) + 1"},
      {SymExpr::Max(a, b - 2), "max(a, b - 2)"},
      {SymExpr::Max(a - 2, b - 2), "max(a, b) - 2"},
      {SymExpr::Max(a, 3), "max(a, 3)"},
      {SymExpr::Min(a, SymExpr::Max(b, c)), "min(a, max(b, c))"},
      {SymExpr::FloorDiv(a, b), "floordiv(a, b)"},
      {SymExpr::Mod(a, b + 1), "mod(a, b + 1)"},
      {SymExpr(INT64_MIN), "-9223372036854775808"},
      {a + SymExpr(INT64_MIN), "a + -9223372036854775808"},
      {SymExpr(INT64_MIN) * a, "-9223372036854775808*a"},
  };
  for (const auto& [e, text] : goldens) {
    EXPECT_EQ(e.ToString(), text);
    EXPECT_EQ(P(text), e) << text;
  }
}

// ----- parsing -------------------------------------------------------------------------------

TEST(SymExprTest, ParsePrecedenceAndSpacing) {
  EXPECT_EQ(P("1 + 2 * 3"), 7);
  EXPECT_EQ(P("(1 + 2) * 3"), 9);
  EXPECT_EQ(P("2 - 3 - 4"), -5);
  EXPECT_EQ(P("-2*a"), -2 * a);
  EXPECT_EQ(P("- - a"), a);
  EXPECT_EQ(P("-(a + 1)"), -a - 1);
  EXPECT_EQ(P("  floordiv( a*4 , 2 )  "), 2 * a);
  EXPECT_EQ(P("min(a, b, c, 3)"), SymExpr::Min(SymExpr::Min(a, b), SymExpr::Min(c, 3)));
  EXPECT_EQ(P("max(a,b)"), SymExpr::Max(a, b));
  EXPECT_EQ(P("mod(a, -3)"), SymExpr::Mod(a, -3));
  EXPECT_EQ(P("min"), SymExpr::Symbol("min"));  // a function name without '(' is a symbol
  EXPECT_EQ(P("_x1 * B"), SymExpr::Symbol("_x1") * SymExpr::Symbol("B"));
  EXPECT_EQ(P("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(P("-9223372036854775808"), INT64_MIN);
}

TEST(SymExprTest, ParseErrors) {
  struct Case {
    std::string text;
    std::string message;
  };
  std::vector<Case> cases = {
      {"",
       "at position 0: expected an integer, a symbol, a function call or '(', found the end "
       "of the input"},
      {"a +",
       "at position 3: expected an integer, a symbol, a function call or '(', found the "
       "end of the input"},
      {"2 * * a",
       "at position 4: expected an integer, a symbol, a function call or '(', found "
       "'*'"},
      {"(a + 1", "at position 6: expected ')', found the end of the input"},
      {"a b", "at position 2: expected '+', '-', '*' or the end of the input, found 'b'"},
      {"a / 2", "at position 2: expected '+', '-', '*' or the end of the input, found '/'"},
      {"floordiv(a)", "at position 0: floordiv takes 2 arguments, got 1"},
      {"mod(a, b, c)", "at position 0: mod takes 2 arguments, got 3"},
      {"min(a)", "at position 0: min takes at least 2 arguments, got 1"},
      {"pow(a, 2)", "at position 0: unknown function 'pow' (expected floordiv, mod, min or max)"},
      {"max(a, b", "at position 8: expected ',' or ')', found the end of the input"},
      {"1 + floordiv(a, 2 - 2)", "at position 4: floordiv by zero"},
      {"mod(a, 0)", "at position 0: mod by zero"},
      {"9223372036854775808", "at position 0: integer literal out of the int64 range"},
      {"a + 99999999999999999999", "at position 4: integer literal out of the int64 range"},
      {"9223372036854775807 + 1", "at position 20: int64 overflow in constant arithmetic"},
      {"a * 4611686018427387904 * 2", "at position 24: int64 overflow in constant arithmetic"},
      {"$", "at position 0: expected an integer, a symbol, a function call or '(', found '$'"},
      {std::string(300, '(') + "a" + std::string(300, ')'), "nested too deeply"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<SymExpr> e = SymExpr::Parse(c.text);
    ASSERT_FALSE(e.ok()) << c.text << " parsed as " << e->ToString();
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(e.status().message(), HasSubstr(c.message)) << c.text;
    EXPECT_THAT(e.status().message(), HasSubstr("cannot parse symbolic expression")) << c.text;
  }
}

TEST(SymExprTest, ExpansionIsBounded) {
  // 14 binomials expand to 2^14 terms, more than the 10000 allowed.
  std::string text = "(a0 + 1)";
  for (int i = 1; i < 14; ++i) absl::StrAppend(&text, " * (a", i, " + 1)");
  absl::StatusOr<SymExpr> e = SymExpr::Parse(text);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("the expanded expression has more than 10000 terms"));
  // 13 of them are fine (8192 terms).
  absl::StatusOr<SymExpr> fine = SymExpr::Parse(text.substr(0, text.rfind(" *")));
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_EQ(fine->ToProto().args_size(), 8192);
  // The same through a proto.
  proto::SymExpr mul;
  mul.set_kind(proto::SymExpr::MUL);
  for (int i = 0; i < 14; ++i)
    *mul.add_args() = (SymExpr::Symbol(absl::StrCat("a", i)) + 1).ToProto();
  EXPECT_THAT(SymExpr::FromProto(mul).status().message(), HasSubstr("more than 10000 terms"));
  // The operators CHECK-fail: a compiler bug, not a user error.
  EXPECT_DEATH(*fine * (a + b), "expansion to more than 10000 terms");
}

// ----- random trees: parse round trip, Evaluate oracle, proto round trip -----------------------

std::vector<RandomTree> RandomTrees(int count, int depth, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<RandomTree> trees;
  for (int i = 0; i < count; ++i) trees.push_back(RandomTree::Generate(rng, depth, {}));
  return trees;
}

TEST(SymExprTest, RandomParseRoundTrip) {
  for (const RandomTree& t : RandomTrees(3000, 5, 1)) {
    SymExpr e = t.Build();
    std::string text = e.ToString();
    absl::StatusOr<SymExpr> back = SymExpr::Parse(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status();
    EXPECT_EQ(*back, e) << text << " reparsed as " << back->ToString();
    EXPECT_EQ(back->ToString(), text);
    EXPECT_EQ(back->Hash(), e.Hash()) << text;
    // The unsimplified tree's own text parses to the same canonical form.
    absl::StatusOr<SymExpr> raw = SymExpr::Parse(t.Text());
    ASSERT_TRUE(raw.ok()) << t.Text() << ": " << raw.status();
    EXPECT_EQ(*raw, e) << t.Text();
  }
}

TEST(SymExprTest, RandomEvaluateMatchesTree) {
  std::mt19937_64 rng(7);
  int compared = 0;
  for (const RandomTree& t : RandomTrees(2000, 5, 2)) {
    SymExpr e = t.Build();
    for (int trial = 0; trial < 40; ++trial) {
      std::map<std::string, int64_t> values;
      absl::flat_hash_map<std::string, int64_t> flat;
      for (const char* s : {"a", "b", "c"}) {
        values[s] = static_cast<int64_t>(rng() % 25) - 12;
        flat[s] = values[s];
      }
      std::optional<int64_t> want = t.Eval(values);
      if (!want) continue;  // the tree divides by zero at this point
      absl::StatusOr<int64_t> got = e.Evaluate(flat);
      ASSERT_TRUE(got.ok()) << t.Text() << " -> " << e.ToString() << ": " << got.status();
      ASSERT_EQ(*got, *want) << t.Text() << " -> " << e.ToString() << " at a=" << values["a"]
                             << " b=" << values["b"] << " c=" << values["c"];
      ++compared;
    }
  }
  EXPECT_GT(compared, 50000);
}

TEST(SymExprTest, RandomProtoRoundTrip) {
  for (const RandomTree& t : RandomTrees(1000, 5, 3)) {
    SymExpr e = t.Build();
    absl::StatusOr<SymExpr> back = SymExpr::FromProto(e.ToProto());
    ASSERT_TRUE(back.ok()) << e.ToString() << ": " << back.status();
    EXPECT_EQ(*back, e) << e.ToString() << " came back as " << back->ToString();
  }
}

TEST(SymExprTest, RandomSubstituteMatchesEvaluate) {
  std::mt19937_64 rng(11);
  for (const RandomTree& t : RandomTrees(500, 4, 4)) {
    SymExpr e = t.Build();
    // a -> b + 1 (symbolic), c -> 7 (constant; no generated divisor c + k is then zero).
    SymExpr sub = e.Substitute({{"a", b + 1}, {"c", 7}});
    for (int trial = 0; trial < 10; ++trial) {
      int64_t bv = static_cast<int64_t>(rng() % 21) - 10;
      std::optional<int64_t> want = t.Eval({{"a", bv + 1}, {"b", bv}, {"c", 7}});
      if (!want) continue;
      absl::StatusOr<int64_t> got = sub.Evaluate({{"b", bv}});
      ASSERT_TRUE(got.ok()) << sub.ToString() << ": " << got.status();
      EXPECT_EQ(*got, *want) << t.Text() << " with a = b + 1, c = 7: " << sub.ToString();
    }
  }
}

// ----- Evaluate / Substitute -----------------------------------------------------------------

TEST(SymExprTest, Evaluate) {
  SymExpr e = SymExpr::FloorDiv(a * b - 7, 3) + SymExpr::Max(a, c);
  EXPECT_EQ(*e.Evaluate({{"a", 2}, {"b", 5}, {"c", 9}}), 1 + 9);
  EXPECT_EQ(*e.Evaluate({{"a", -2}, {"b", 5}, {"c", -9}}), -6 - 2);
}

TEST(SymExprTest, EvaluateErrors) {
  absl::StatusOr<int64_t> missing = (a + s1).Evaluate({{"a", 1}});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("no value for symbol 's1'"));
  absl::StatusOr<int64_t> div0 = SymExpr::FloorDiv(a, b).Evaluate({{"a", 1}, {"b", 0}});
  EXPECT_EQ(div0.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(div0.status().message(), HasSubstr("division by zero"));
  EXPECT_THAT(SymExpr::Mod(a, b - 1).Evaluate({{"a", 1}, {"b", 1}}).status().message(),
              HasSubstr("division by zero while evaluating mod(a, b - 1)"));
  EXPECT_THAT((a * a).Evaluate({{"a", int64_t{1} << 40}}).status().message(),
              HasSubstr("overflow"));
}

TEST(SymExprTest, Substitute) {
  SymExpr e = SymExpr::FloorDiv(a * 4 + b, 4);
  EXPECT_EQ(e.Substitute({{"b", 8}}), a + 2);
  EXPECT_EQ(e.Substitute({{"a", c}}), c + SymExpr::FloorDiv(b, 4));
  EXPECT_EQ(e.Substitute({}), e);
  EXPECT_EQ(SymExpr::Min(a, b).Substitute({{"a", b + 1}}), b);
  EXPECT_EQ((a * a).Substitute({{"a", b - 1}}), b * b - 2 * b + 1);
}

// ----- proto ---------------------------------------------------------------------------------

TEST(SymExprTest, ProtoShape) {
  proto::SymExpr p = (2 * a + 3).ToProto();
  EXPECT_EQ(p.kind(), proto::SymExpr::ADD);
  ASSERT_EQ(p.args_size(), 2);
  EXPECT_EQ(p.args(0).kind(), proto::SymExpr::MUL);
  EXPECT_EQ(p.args(1).kind(), proto::SymExpr::CONST);
  EXPECT_EQ(p.args(1).value(), 3);
  EXPECT_EQ(SymExpr(7).ToProto().value(), 7);
  EXPECT_EQ(a.ToProto().name(), "a");
}

TEST(SymExprTest, FromProtoSimplifies) {
  proto::SymExpr p;
  p.set_kind(proto::SymExpr::FLOORDIV);
  proto::SymExpr* num = p.add_args();
  num->set_kind(proto::SymExpr::ADD);
  *num->add_args() = (4 * a).ToProto();
  *num->add_args() = SymExpr(8).ToProto();
  *p.add_args() = SymExpr(4).ToProto();
  absl::StatusOr<SymExpr> e = SymExpr::FromProto(p);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(*e, a + 2);
}

TEST(SymExprTest, FromProtoErrors) {
  auto expect_error = [](const proto::SymExpr& p, absl::string_view message) {
    absl::StatusOr<SymExpr> e = SymExpr::FromProto(p);
    ASSERT_FALSE(e.ok()) << p.DebugString();
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(e.status().message(), HasSubstr(message)) << p.DebugString();
  };
  proto::SymExpr p;
  expect_error(p, "malformed SymExpr proto: unknown kind 0");
  p.set_kind(static_cast<proto::SymExpr::Kind>(42));
  expect_error(p, "unknown kind 42");
  p.set_kind(proto::SymExpr::SYMBOL);
  expect_error(p, "SYMBOL with an empty name");
  p.set_name("a b");
  expect_error(p, "SYMBOL name 'a b' is not an identifier");
  p.set_name("a");
  *p.add_args() = SymExpr(1).ToProto();
  expect_error(p, "SYMBOL takes 0 args, got 1");
  proto::SymExpr div;
  div.set_kind(proto::SymExpr::FLOORDIV);
  *div.add_args() = a.ToProto();
  expect_error(div, "FLOORDIV takes 2 args, got 1");
  *div.add_args() = (b - b).ToProto();
  expect_error(div, "FLOORDIV by zero");
  proto::SymExpr add;
  add.set_kind(proto::SymExpr::ADD);
  expect_error(add, "ADD takes at least 1 args, got 0");
  proto::SymExpr min;
  min.set_kind(proto::SymExpr::MIN);
  expect_error(min, "MIN takes at least 1 args, got 0");
  *add.add_args() = SymExpr(INT64_MAX).ToProto();
  *add.add_args() = SymExpr(1).ToProto();
  expect_error(add, "int64 overflow");
  proto::SymExpr nested;
  nested.set_kind(proto::SymExpr::MOD);
  *nested.add_args() = a.ToProto();
  *nested.add_args() = p;  // the bad SYMBOL from above
  expect_error(nested, "SYMBOL takes 0 args, got 1");
}

// ----- relations and bounds ------------------------------------------------------------------

TEST(SymExprTest, RelationsWithoutRanges) {
  // Unlisted symbols are sizes: >= 0, unbounded above.
  EXPECT_EQ(ProveEq(a + 1, 1 + a), Truth::kTrue);
  EXPECT_EQ(ProveEq(a + 1, a), Truth::kFalse);
  EXPECT_EQ(ProveEq(a, b), Truth::kUnknown);
  EXPECT_EQ(ProveLt(a, a + 1), Truth::kTrue);
  EXPECT_EQ(ProveLt(a, a), Truth::kFalse);
  EXPECT_EQ(ProveLe(a, a), Truth::kTrue);
  EXPECT_EQ(ProveLe(0, a), Truth::kTrue);
  EXPECT_EQ(ProveLt(a, 0), Truth::kFalse);
  EXPECT_EQ(ProveLe(a, a * b), Truth::kUnknown);
  EXPECT_EQ(ProveLe(SymExpr::Mod(a, 8), 7), Truth::kTrue);
  EXPECT_EQ(ProveLt(SymExpr::Mod(a, 8), 8), Truth::kTrue);
  EXPECT_EQ(ProveLe(SymExpr::FloorDiv(a, 2), -1), Truth::kFalse);
  EXPECT_EQ(ProveLe(SymExpr::Min(a, 4), 4), Truth::kTrue);
  EXPECT_EQ(ProveLe(a * a + 1, 0), Truth::kFalse);
  EXPECT_EQ(ProveLe(INT64_MIN, INT64_MAX), Truth::kTrue);
  EXPECT_EQ(ProveLt(INT64_MAX, INT64_MIN), Truth::kFalse);
}

TEST(SymExprTest, RelationsWithRanges) {
  SymRanges r = {{"s0", {2, 64}}, {"s1", {1, 4}}, {"n", {-10, -3}}};
  SymExpr n = SymExpr::Symbol("n");
  EXPECT_EQ(ProveLe(s0, 64, r), Truth::kTrue);
  EXPECT_EQ(ProveLt(s0, 64, r), Truth::kUnknown);
  EXPECT_EQ(ProveLt(s0 * s1, 257, r), Truth::kTrue);
  EXPECT_EQ(ProveLt(s0 * s1, 256, r), Truth::kUnknown);
  EXPECT_EQ(ProveEq(s0, 1, r), Truth::kFalse);
  EXPECT_EQ(ProveLt(n, 0, r), Truth::kTrue);
  EXPECT_EQ(ProveLt(n * n, 9, r), Truth::kFalse);
  EXPECT_EQ(ProveLe(SymExpr::FloorDiv(s0, s1), 64, r), Truth::kTrue);
  EXPECT_EQ(ProveLe(2, SymExpr::FloorDiv(s0 * 4, s1), r), Truth::kTrue);
  EXPECT_EQ(ProveLe(SymExpr::Mod(a, s1), 3, r), Truth::kTrue);
  EXPECT_EQ(ProveEq(SymExpr::Max(s0, 100), 100, r), Truth::kTrue);
  // Sums whose terms share a positive factor: s0 * s1 - s1 = s1 * (s0 - 1) >= 1 (interval
  // arithmetic on the terms alone gives [-2, 255]); the strides of a transposed view.
  EXPECT_EQ(ProveLt(s1, s0 * s1, r), Truth::kTrue);
  EXPECT_EQ(ProveEq(s0 * s1, s1, r), Truth::kFalse);
  EXPECT_EQ(ProveLt(s0 * s1 * s1, s0 * s0 * s1, r), Truth::kUnknown);  // s1 may exceed s0
  EXPECT_EQ(ProveLe(s1 * s1, s0 * s1 * s1, r), Truth::kTrue);
  EXPECT_EQ(ProveEq(SymExpr::Min(s0, s1), s1, r), Truth::kUnknown);
}

// Bounds and the relations against evaluation at random points inside random ranges.
TEST(SymExprTest, RandomBoundsEncloseValues) {
  std::mt19937_64 rng(9);
  int checked = 0;
  for (const RandomTree& t : RandomTrees(1500, 4, 5)) {
    SymExpr e = t.Build();
    SymRanges ranges;
    std::map<std::string, std::pair<int64_t, int64_t>> box;  // where to sample
    for (const char* s : {"a", "b", "c"}) {
      int64_t lo = static_cast<int64_t>(rng() % 21) - 10;
      int64_t hi = lo + static_cast<int64_t>(rng() % 15);
      if (rng() % 4 == 0) {
        box[s] = {0, 30};  // unlisted: >= 0
      } else {
        ranges[s] = {lo, hi};
        box[s] = {lo, hi};
      }
    }
    SymRange r = Bounds(e, ranges);
    for (int trial = 0; trial < 10; ++trial) {
      absl::flat_hash_map<std::string, int64_t> values;
      for (const auto& [s, range] : box) {
        values[s] = range.first + static_cast<int64_t>(rng() % (range.second - range.first + 1));
      }
      absl::StatusOr<int64_t> v = e.Evaluate(values);
      if (!v.ok()) continue;  // a division by zero at this point
      ++checked;
      ASSERT_TRUE(r.min <= *v && *v <= r.max)
          << e.ToString() << " = " << *v << " outside [" << r.min << ", " << r.max << "]";
      ASSERT_NE(ProveLt(e, *v, ranges), Truth::kTrue) << e.ToString() << " = " << *v;
      ASSERT_NE(ProveLe(e, *v - 1, ranges), Truth::kTrue) << e.ToString() << " = " << *v;
      ASSERT_NE(ProveEq(e, *v, ranges), Truth::kFalse) << e.ToString() << " = " << *v;
    }
  }
  EXPECT_GT(checked, 10000);
}

TEST(SymExprTest, Bounds) {
  SymRanges r = {{"s0", {2, 10}}, {"n", {-5, 3}}, {"u", {INT64_MIN, INT64_MAX}}};
  SymExpr n = SymExpr::Symbol("n"), u = SymExpr::Symbol("u");
  auto bounds = [&](const SymExpr& e) {
    SymRange b = Bounds(e, r);
    return std::make_pair(b.min, b.max);
  };
  EXPECT_EQ(bounds(3 * s0 - 1), std::make_pair(int64_t{5}, int64_t{29}));
  EXPECT_EQ(bounds(n * n), std::make_pair(int64_t{0}, int64_t{25}));
  EXPECT_EQ(bounds(n * n * n), std::make_pair(int64_t{-125}, int64_t{27}));
  EXPECT_EQ(bounds(a), std::make_pair(int64_t{0}, INT64_MAX));
  EXPECT_EQ(bounds(-a), std::make_pair(INT64_MIN, int64_t{0}));
  EXPECT_EQ(bounds(u), std::make_pair(INT64_MIN, INT64_MAX));
  EXPECT_EQ(bounds(SymExpr::Mod(u, 8)), std::make_pair(int64_t{0}, int64_t{7}));
  EXPECT_EQ(bounds(SymExpr::Mod(u, -8)), std::make_pair(int64_t{-7}, int64_t{0}));
  EXPECT_EQ(bounds(SymExpr::FloorDiv(n, 2)), std::make_pair(int64_t{-3}, int64_t{1}));
  EXPECT_EQ(bounds(SymExpr::FloorDiv(n, -2)), std::make_pair(int64_t{-2}, int64_t{2}));
  EXPECT_EQ(bounds(SymExpr::FloorDiv(a, s0)), std::make_pair(int64_t{0}, INT64_MAX));
  EXPECT_EQ(bounds(SymExpr::FloorDiv(s0, a + 1)), std::make_pair(int64_t{0}, int64_t{10}));
  EXPECT_EQ(bounds(SymExpr::Max(n, s0) - SymExpr::Min(n, 0)),
            std::make_pair(int64_t{2}, int64_t{15}));
  // Saturation instead of overflow.
  EXPECT_EQ(bounds(u * u), std::make_pair(int64_t{0}, INT64_MAX));
  SymRanges big = {{"x", {INT64_MAX / 2, INT64_MAX / 2 + 1}}};
  EXPECT_EQ(Bounds(SymExpr::Symbol("x") * 4, big).max, INT64_MAX);
  EXPECT_EQ(Bounds(SymExpr::Symbol("x") * -4, big).min, INT64_MIN);
}

// A sum's floordiv terms over constant divisors combine with their numerators: c * floordiv(a,
// c) = a - mod(a, c). Plain intervals cannot show s - floordiv(s, 4) >= 0 (a slice end computed
// as L - L // 4 by an ONNX export).
TEST(SymExprTest, BoundsOfFloorDivTermsInSums) {
  SymRanges r = {{"s", {1, INT64_MAX}}, {"n", {-5, 3}}};
  SymExpr s = SymExpr::Symbol("s"), n = SymExpr::Symbol("n");
  auto bounds = [&](const SymExpr& e) {
    SymRange b = Bounds(e, r);
    return std::make_pair(b.min, b.max);
  };
  // (3s + mod(s, 4)) / 4 with s >= 1: at least 1.
  EXPECT_EQ(bounds(s - SymExpr::FloorDiv(s, 4)), std::make_pair(int64_t{1}, INT64_MAX));
  EXPECT_EQ(ProveLe(SymExpr(0), s - SymExpr::FloorDiv(s, 4), r), Truth::kTrue);
  // s - 2 * floordiv(s, 2) = mod(s, 2), and floordiv(s, 2) - floordiv(s, 3) >= 0.
  EXPECT_EQ(bounds(s - 2 * SymExpr::FloorDiv(s + 1, 2)), std::make_pair(int64_t{-1}, int64_t{0}));
  EXPECT_EQ(bounds(SymExpr::FloorDiv(s, 2) - SymExpr::FloorDiv(s, 3)).first, 0);
  // Bounded symbols: n - floordiv(n, 2) for n in [-5, 3] is in [-2, 2].
  EXPECT_EQ(bounds(n - SymExpr::FloorDiv(n, 2)), std::make_pair(int64_t{-2}, int64_t{2}));
  // Without floordiv terms nothing changes.
  EXPECT_EQ(bounds(s - n), std::make_pair(int64_t{-2}, INT64_MAX));
}

}  // namespace
}  // namespace coil

namespace coil {
namespace {

// SymArithmeticGuard: each failure of arithmetic on user-fed numbers becomes an error; one test
// per kind of failure.
TEST(SymArithmeticGuardTest, ProductOverflow) {
  SymArithmeticGuard guard;
  SymExpr r = SymExpr(int64_t{1} << 62) * 4;
  EXPECT_EQ(r, SymExpr(1));
  EXPECT_EQ(guard.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(guard.status().message(),
            "int64 overflow in shape arithmetic: (4611686018427387904) * (4)");
}

TEST(SymArithmeticGuardTest, SumOverflowKeepsTheFirstFailure) {
  SymArithmeticGuard guard;
  SymExpr s = SymExpr::Symbol("s");
  SymExpr r = (s + INT64_MAX) + (s + INT64_MAX);
  r = SymExpr(INT64_MIN) - 1;
  EXPECT_EQ(guard.status().message(),
            "int64 overflow in shape arithmetic: (s + 9223372036854775807) + (s + "
            "9223372036854775807)");
}

TEST(SymArithmeticGuardTest, NegationOverflow) {
  SymArithmeticGuard guard;
  SymExpr r = -SymExpr(INT64_MIN);
  EXPECT_EQ(guard.status().message(),
            "int64 overflow in shape arithmetic: -(-9223372036854775808)");
}

TEST(SymArithmeticGuardTest, DivisionByZero) {
  SymArithmeticGuard guard;
  SymExpr r = SymExpr::FloorDiv(SymExpr::Symbol("s"), 0);
  EXPECT_EQ(r, SymExpr(1));
  EXPECT_EQ(guard.status().message(), "division by zero in shape arithmetic: floordiv(s, 0)");
}

TEST(SymArithmeticGuardTest, ModuloByZero) {
  SymArithmeticGuard guard;
  SymExpr::Mod(7, 0);
  EXPECT_EQ(guard.status().message(), "division by zero in shape arithmetic: mod(7, 0)");
}

TEST(SymArithmeticGuardTest, SubstitutionOverflow) {
  SymArithmeticGuard guard;
  SymExpr e = SymExpr::Symbol("a") * SymExpr::Symbol("b");
  SymExpr r = e.Substitute({{"a", SymExpr(int64_t{1} << 40)}, {"b", SymExpr(int64_t{1} << 40)}});
  EXPECT_EQ(r, SymExpr(1));
  EXPECT_THAT(std::string(guard.status().message()),
              HasSubstr("int64 overflow in shape arithmetic"));
}

TEST(SymArithmeticGuardTest, SubstitutionMakesADivisorZero) {
  SymArithmeticGuard guard;
  SymExpr e = SymExpr::FloorDiv(SymExpr::Symbol("a"), SymExpr::Symbol("b"));
  e.Substitute({{"b", SymExpr(0)}});
  EXPECT_EQ(guard.status().message(),
            "division by zero in shape arithmetic: substituting makes the divisor of "
            "floordiv(a, b) zero");
}

TEST(SymArithmeticGuardTest, TooManyTerms) {
  SymArithmeticGuard guard;
  SymExpr sum = 0;
  for (int i = 0; i < 120; ++i) sum = sum + SymExpr::Symbol(absl::StrCat("s", i));
  SymExpr r = sum * sum * sum;
  EXPECT_THAT(std::string(guard.status().message()),
              HasSubstr("expansion to more than 10000 terms in shape arithmetic"));
}

TEST(SymArithmeticGuardTest, NestedGuardsSeeTheirOwnFailures) {
  SymArithmeticGuard outer;
  {
    SymArithmeticGuard inner;
    SymExpr(INT64_MAX) + 1;
    EXPECT_FALSE(inner.ok());
    EXPECT_EQ(SymArithmeticGuard::Active(), &inner);
  }
  EXPECT_TRUE(outer.ok());
  EXPECT_EQ(SymArithmeticGuard::Active(), &outer);
  EXPECT_EQ(SymExpr(3) * 4, SymExpr(12));  // arithmetic that does not fail is unchanged
  EXPECT_TRUE(outer.ok());
}

TEST(SymArithmeticGuardTest, WithoutAGuardOverflowIsACoilBug) {
  EXPECT_EQ(SymArithmeticGuard::Active(), nullptr);
  EXPECT_DEATH(SymExpr(INT64_MAX) + 1,
               "internal error \\(coil bug\\).*int64 overflow in \\(9223372036854775807\\) \\+ \\(1\\)");
}

}  // namespace
}  // namespace coil
