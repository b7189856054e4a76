// Proves the SymExpr simplifier correct with the z3 SMT solver:
//   (a) every rule of the table in ir/sym_expr_rules.cc, universally quantified over integers
//       (symbols and the rule's constants alike), under the rule's side conditions;
//   (b) for hundreds of random expression trees, that the canonical form equals the original
//       tree for ALL integer symbol values (wherever the tree's divisors are nonzero); when z3
//       cannot decide that in one query, by induction over the tree, one simplification per
//       query (ProveStepwise);
//   (c) that Bounds() encloses every value an expression takes within the symbol ranges.
// Each query is `premises && !claim`; `unsat` is a proof. Running out of the resource limit or
// `unknown` from every solver setup fails the test, as does a counterexample.
//
// floordiv/mod have Python semantics (z3's div/mod are Euclidean); see Z3::DivMod.
#include <z3++.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/proto/graph.pb.h"
#include "ir/sym_expr.h"
#include "ir/sym_expr_testing.h"

namespace coil {
namespace {

using ::coil::sym_testing::RandomTree;

// z3 4.8.12's wall-clock "timeout" can deadlock in its timer thread, so each query runs under
// a deterministic resource limit instead (rlimit; about a second or two of work each).
constexpr unsigned kResourceLimit = 3000000;

class Z3 {
 public:
  // `nonlinear_first`: most queries have symbolic divisors or products of symbols.
  explicit Z3(bool nonlinear_first = false) : nonlinear_first_(nonlinear_first) {}

  z3::expr Var(const std::string& name) { return ctx_.int_const(name.c_str()); }
  z3::expr Val(int64_t v) { return ctx_.int_val(v); }

  // Python floordiv and mod of a by d (d != 0). F and R are uninterpreted functions (so equal
  // arguments give equal results by congruence) pinned down for positive divisors only:
  //   p > 0  =>  n == p*F(n, p) + R(n, p)  &&  0 <= R(n, p) < p.
  // A negative divisor goes through floordiv(a, d) == floordiv(-a, -d) and
  // mod(a, d) == -mod(-a, -d) (Python semantics; EncodingIsPythonDivision checks this against
  // the direct definition), which makes sign normalizations easy for z3.
  struct DivModPair {
    z3::expr q, r;
  };
  DivModPair DivMod(const z3::expr& a, const z3::expr& d) {
    Define(a, d);
    Define(-a, -d);
    return {z3::ite(d > 0, f_(a, d), f_(-a, -d)), z3::ite(d > 0, r_(a, d), -r_(-a, -d))};
  }
  z3::expr FloorDiv(const z3::expr& a, const z3::expr& d) { return DivMod(a, d).q; }
  z3::expr Mod(const z3::expr& a, const z3::expr& d) { return DivMod(a, d).r; }

  // Proves each of `steps` in turn under `premises` and the steps before it, for all integers;
  // the last step is the claim, earlier ones are lemmas that guide the nonlinear reasoning.
  // Consumes the pending floordiv/mod definitions.
  ::testing::AssertionResult Prove(absl::string_view what, const std::vector<z3::expr>& premises,
                                   const std::vector<z3::expr>& steps) {
    std::vector<z3::expr> known = defs_;
    defs_.clear();
    known.insert(known.end(), premises.begin(), premises.end());
    for (size_t i = 0; i < steps.size(); ++i) {
      std::string failure = Check(known, steps[i]);
      if (!failure.empty()) {
        return ::testing::AssertionFailure()
               << what << (i + 1 < steps.size() ? absl::StrCat(" (lemma ", i + 1, ")") : "") << ": "
               << failure << "\n  claim: " << steps[i].to_string();
      }
      known.push_back(steps[i]);
    }
    return ::testing::AssertionSuccess();
  }
  ::testing::AssertionResult ProveEqual(absl::string_view what, const z3::expr& lhs,
                                        const z3::expr& rhs,
                                        const std::vector<z3::expr>& premises = {}) {
    return Prove(what, premises, {lhs == rhs});
  }
  // Whether the last failed proof found a counterexample (rather than giving up).
  bool last_was_counterexample() const { return counterexample_; }

 private:
  // "" when `claim` follows from `known`; otherwise why not. Tries three solver setups in turn:
  // z3's older arithmetic solver (fast on linear problems with many floordiv/mod), the default
  // one (better at nonlinear ones), and the default after rewriting polynomials into sums of
  // monomials; with `nonlinear_first_`, the default one comes first.
  std::string Check(const std::vector<z3::expr>& known, const z3::expr& claim) {
    counterexample_ = false;
    std::string reasons;
    for (int setup : nonlinear_first_ ? std::vector<int>{1, 2, 0} : std::vector<int>{0, 1, 2}) {
      z3::solver solver = MakeSolver(setup);
      z3::params params(ctx_);
      params.set("rlimit", kResourceLimit);
      solver.set(params);
      for (const z3::expr& e : known) solver.add(e);
      solver.add(!claim);
      switch (solver.check()) {
        case z3::unsat:
          return "";
        case z3::sat:
          counterexample_ = true;
          return absl::StrCat("counterexample ", solver.get_model().to_string());
        case z3::unknown:
          absl::StrAppend(&reasons, reasons.empty() ? "" : "; ", solver.reason_unknown());
          break;
      }
    }
    return absl::StrCat("z3 gave no answer (", reasons, ")");
  }

  z3::solver MakeSolver(int setup) {
    z3::params p(ctx_);
    switch (setup) {
      case 0:
        p.set("arith.solver", 2u);
        return z3::with(z3::tactic(ctx_, "smt"), p).mk_solver();
      case 1:
        return z3::solver(ctx_);
      default:
        p.set("som", true);
        return (z3::with(z3::tactic(ctx_, "simplify"), p) & z3::tactic(ctx_, "smt")).mk_solver();
    }
  }

  void Define(const z3::expr& n, const z3::expr& p) {
    z3::expr q = f_(n, p), r = r_(n, p);
    defs_.push_back(z3::implies(p > 0, n == p * q + r && 0 <= r && r < p));
  }

  const bool nonlinear_first_;
  bool counterexample_ = false;
  z3::context ctx_;
  z3::func_decl f_ = z3::function("F", ctx_.int_sort(), ctx_.int_sort(), ctx_.int_sort());
  z3::func_decl r_ = z3::function("R", ctx_.int_sort(), ctx_.int_sort(), ctx_.int_sort());
  std::vector<z3::expr> defs_;
};

// ----- (a) the rule table --------------------------------------------------------------------

class RuleTest : public ::testing::Test {
 protected:
  Z3 z{/*nonlinear_first=*/true};
  z3::expr x = z.Var("x"), y = z.Var("y"), w = z.Var("w"), m = z.Var("m");
  z3::expr b = z.Var("b"), c = z.Var("c"), d = z.Var("d"), g = z.Var("g");
  z3::expr k = z.Var("k"), n = z.Var("n"), t = z.Var("t");
  z3::expr min3(const z3::expr& p, const z3::expr& q, const z3::expr& r) {
    return z3::min(p, z3::min(q, r));
  }
};

// The encoding is Python's floordiv/mod: a == d*q + r with r between 0 and d (d excluded).
TEST_F(RuleTest, EncodingIsPythonDivision) {
  auto qr = z.DivMod(x, d);
  EXPECT_TRUE(z.Prove("encoding", {d != 0},
                      {x == d * qr.q + qr.r, z3::implies(d > 0, 0 <= qr.r && qr.r < d),
                       z3::implies(d < 0, d < qr.r && qr.r <= 0)}));
}

TEST_F(RuleTest, FloorDiv) {
  EXPECT_TRUE(z.ProveEqual("floordiv(c1, c2) folds",  // spot checks of the encoding
                           z.FloorDiv(z.Val(-7), z.Val(2)), z.Val(-4)));
  EXPECT_TRUE(z.ProveEqual("floordiv(c1, c2) folds", z.FloorDiv(z.Val(7), z.Val(-2)), z.Val(-4)));
  EXPECT_TRUE(z.ProveEqual("floordiv(x, 1) -> x", z.FloorDiv(x, z.Val(1)), x));
  EXPECT_TRUE(z.ProveEqual("floordiv(x, -c) -> floordiv(-x, c)", z.FloorDiv(x, -c),
                           z.FloorDiv(-x, c), {c > 0}));
  EXPECT_TRUE(z.ProveEqual("floordiv(c*x + y, c) -> x + floordiv(y, c)", z.FloorDiv(c * x + y, c),
                           x + z.FloorDiv(y, c), {c > 0}));
  EXPECT_TRUE(z.ProveEqual("floordiv(y + k, c) -> floordiv(y + mod(k, c), c) + floordiv(k, c)",
                           z.FloorDiv(y + k, c), z.FloorDiv(y + z.Mod(k, c), c) + z.FloorDiv(k, c),
                           {c > 0}));
  EXPECT_TRUE(z.ProveEqual("floordiv(g*x, g*c) -> floordiv(x, c)", z.FloorDiv(g * x, g * c),
                           z.FloorDiv(x, c), {g > 0, c > 0}));
  EXPECT_TRUE(z.ProveEqual("floordiv(y, c) -> n when n*c <= y < (n+1)*c", z.FloorDiv(y, c), n,
                           {c > 0, n * c <= y, y < (n + 1) * c}));
  EXPECT_TRUE(z.ProveEqual("floordiv(floordiv(x, b) + k, c) -> floordiv(x + k*b, b*c)",
                           z.FloorDiv(z.FloorDiv(x, b) + k, c), z.FloorDiv(x + k * b, b * c),
                           {b > 0, c > 0}));
  {
    z3::expr inner = z.FloorDiv(x, b);
    z3::expr flipped = z.FloorDiv(k * b + b - 1 - x, b);
    z3::expr lhs = z.FloorDiv(k - inner, c), rhs = z.FloorDiv(k * b + b - 1 - x, b * c);
    EXPECT_TRUE(z.Prove("floordiv(k - floordiv(x, b), c) -> floordiv(k*b + b - 1 - x, b*c)",
                        {b > 0, c > 0}, {k - inner == flipped, lhs == rhs}));
  }
  EXPECT_TRUE(z.ProveEqual("floordiv(x, -d) -> floordiv(-x, d)", z.FloorDiv(x, -d),
                           z.FloorDiv(-x, d), {d != 0}));
  EXPECT_TRUE(z.ProveEqual("floordiv(k*m*x + y, k*m) -> x + floordiv(y, k*m)",
                           z.FloorDiv(k * m * x + y, k * m), x + z.FloorDiv(y, k * m),
                           {k * m != 0}));
  EXPECT_TRUE(z.ProveEqual("floordiv(g*x, g*d) -> floordiv(x, d)", z.FloorDiv(g * x, g * d),
                           z.FloorDiv(x, d), {g > 0, d != 0}));
  EXPECT_TRUE(z.ProveEqual("floordiv(n*d, d) -> n", z.FloorDiv(n * d, d), n, {d != 0}));
}

// Each mod rule is proved in two steps: first the matching identity of the quotients (which z3
// finds on its own), then the remainders (which follow from it linearly).
TEST_F(RuleTest, Mod) {
  EXPECT_TRUE(z.ProveEqual("mod(c1, c2) folds", z.Mod(z.Val(-7), z.Val(2)), z.Val(1)));
  EXPECT_TRUE(z.ProveEqual("mod(c1, c2) folds", z.Mod(z.Val(7), z.Val(-2)), z.Val(-1)));
  EXPECT_TRUE(z.ProveEqual("mod(x, 1) -> 0", z.Mod(x, z.Val(1)), z.Val(0)));
  EXPECT_TRUE(z.ProveEqual("mod(x, -1) -> 0", z.Mod(x, z.Val(-1)), z.Val(0)));
  {
    auto l = z.DivMod(x, -c), r = z.DivMod(-x, c);
    EXPECT_TRUE(z.Prove("mod(x, -c) -> -mod(-x, c)", {c > 0},
                        {l.q == r.q, c * l.q == c * r.q, l.r == -r.r}));
  }
  {
    // c | k*b is written k*b == c*t.
    auto inner = z.DivMod(x, b);
    auto l = z.DivMod(k * inner.r * m + y, c), r = z.DivMod(k * x * m + y, c);
    EXPECT_TRUE(z.Prove("mod(k*mod(x, b)*m + y, c) -> mod(k*x*m + y, c)",
                        {b > 0, c > 0, k * b == c * t},
                        {l.q == r.q - t * inner.q * m, l.r == r.r}));
  }
  {
    auto kc = z.DivMod(k, c);
    auto l = z.DivMod(k * x + y, c), r = z.DivMod(kc.r * x + y, c);
    EXPECT_TRUE(z.Prove("mod(k*x + y, c) -> mod(mod(k, c)*x + y, c)", {c > 0},
                        {l.q == r.q + kc.q * x, l.r == r.r}));
  }
  {
    auto kc = z.DivMod(k, c);
    auto l = z.DivMod(y + k, c), r = z.DivMod(y + kc.r, c);
    EXPECT_TRUE(z.Prove("mod(y + k, c) -> mod(y + mod(k, c), c)", {c > 0},
                        {l.q == r.q + kc.q, l.r == r.r}));
  }
  {
    auto l = z.DivMod(g * x, g * c), r = z.DivMod(x, c);
    EXPECT_TRUE(
        z.Prove("mod(g*x, g*c) -> g*mod(x, c)", {g > 0, c > 0}, {l.q == r.q, l.r == g * r.r}));
  }
  {
    auto l = z.DivMod(y, c);
    EXPECT_TRUE(z.Prove("mod(y, c) -> y - n*c when n*c <= y < (n+1)*c",
                        {c > 0, n * c <= y, y < (n + 1) * c}, {l.q == n, l.r == y - n * c}));
  }
  {
    auto l = z.DivMod(x, -d), r = z.DivMod(-x, d);
    EXPECT_TRUE(z.Prove("mod(x, -d) -> -mod(-x, d)", {d != 0},
                        {l.q == r.q, d * l.q == d * r.q, l.r == -r.r}));
  }
  {
    auto l = z.DivMod(k * m * x + y, k * m), r = z.DivMod(y, k * m);
    EXPECT_TRUE(
        z.Prove("mod(k*m*x + y, k*m) -> mod(y, k*m)", {k * m != 0}, {l.q == x + r.q, l.r == r.r}));
  }
  {
    auto l = z.DivMod(g * x, g * d), r = z.DivMod(x, d);
    EXPECT_TRUE(
        z.Prove("mod(g*x, g*d) -> g*mod(x, d)", {g > 0, d != 0}, {l.q == r.q, l.r == g * r.r}));
  }
  {
    auto l = z.DivMod(n * d, d);
    EXPECT_TRUE(z.Prove("mod(n*d, d) -> 0", {d != 0}, {l.q == n, l.r == 0}));
  }
}

TEST_F(RuleTest, MinMax) {
  using z3::max;
  using z3::min;
  EXPECT_TRUE(z.ProveEqual("min(min(x, y), w) -> min(x, y, w)", min(min(x, y), w), min3(x, y, w)));
  EXPECT_TRUE(z.ProveEqual("min(g*min(x, y) + k, w) -> min(g*x + k, g*y + k, w)",
                           min(g * min(x, y) + k, w), min3(g * x + k, g * y + k, w), {g > 0}));
  EXPECT_TRUE(z.ProveEqual("max(g*max(x, y) + k, w) -> max(g*x + k, g*y + k, w)",
                           max(g * max(x, y) + k, w), max(g * x + k, max(g * y + k, w)), {g > 0}));
  EXPECT_TRUE(z.ProveEqual("min(x, x) -> x", min(x, x), x));
  EXPECT_TRUE(z.ProveEqual("max(x, x) -> x", max(x, x), x));
  EXPECT_TRUE(z.ProveEqual("min(x, y) -> x when x <= y", min(x, y), x, {x <= y}));
  EXPECT_TRUE(z.ProveEqual("max(x, y) -> y when x <= y", max(x, y), y, {x <= y}));
  EXPECT_TRUE(z.ProveEqual("min(x, g*max(w, y) + k) -> x when x <= g*w + k",
                           min(x, g * max(w, y) + k), x, {g > 0, x <= g * w + k}));
  EXPECT_TRUE(z.ProveEqual("min(g*min(w, y) + k, x) -> g*min(w, y) + k when g*w + k <= x",
                           min(g * min(w, y) + k, x), g * min(w, y) + k, {g > 0, g * w + k <= x}));
  EXPECT_TRUE(z.ProveEqual("max(x, g*min(w, y) + k) -> x when g*w + k <= x",
                           max(x, g * min(w, y) + k), x, {g > 0, g * w + k <= x}));
  EXPECT_TRUE(z.ProveEqual("max(g*max(w, y) + k, x) -> g*max(w, y) + k when x <= g*w + k",
                           max(g * max(w, y) + k, x), g * max(w, y) + k, {g > 0, x <= g * w + k}));
  EXPECT_TRUE(z.ProveEqual("min(x + k, y + k) -> min(x, y) + k", min(x + k, y + k), min(x, y) + k));
  EXPECT_TRUE(z.ProveEqual("max(x + k, y + k) -> max(x, y) + k", max(x + k, y + k), max(x, y) + k));
  EXPECT_TRUE(
      z.ProveEqual("min(g*x, g*y) -> g*min(x, y)", min(g * x, g * y), g * min(x, y), {g > 0}));
  EXPECT_TRUE(
      z.ProveEqual("max(g*x, g*y) -> g*max(x, y)", max(g * x, g * y), g * max(x, y), {g > 0}));
  EXPECT_TRUE(z.ProveEqual("min(y, x) -> min(x, y)", min(y, x), min(x, y)));
  EXPECT_TRUE(z.ProveEqual("max(y, x) -> max(x, y)", max(y, x), max(x, y)));
}

TEST_F(RuleTest, Sums) {
  EXPECT_TRUE(z.ProveEqual("x + 0 -> x", x + 0, x));
  EXPECT_TRUE(z.ProveEqual("x * 1 -> x", x * 1, x));
  EXPECT_TRUE(z.ProveEqual("x * 0 -> 0", x * 0, z.Val(0)));
  EXPECT_TRUE(z.ProveEqual("k*m + n*m -> (k + n)*m", k * m + n * m, (k + n) * m));
  EXPECT_TRUE(z.ProveEqual("k*c*floordiv(x, c)*m + k*mod(x, c)*m -> k*x*m",
                           k * c * z.FloorDiv(x, c) * m + k * z.Mod(x, c) * m, k * x * m, {c > 0}));
}

// ----- (b) random trees ----------------------------------------------------------------------

// This node's operation in z3, applied to `k` standing for its kids; a divisor's `!= 0` goes to
// `nonzero`.
z3::expr ApplyZ3(Z3& z, const RandomTree& t, const std::vector<z3::expr>& k,
                 std::vector<z3::expr>& nonzero) {
  switch (t.op) {
    case RandomTree::kConst:
      return z.Val(t.value);
    case RandomTree::kSym:
      return z.Var(t.name);
    case RandomTree::kAdd:
      return k[0] + k[1];
    case RandomTree::kSub:
      return k[0] - k[1];
    case RandomTree::kMul:
      return k[0] * k[1];
    case RandomTree::kNeg:
      return -k[0];
    case RandomTree::kFloorDiv:
    case RandomTree::kMod: {
      nonzero.push_back(k[1] != 0);
      Z3::DivModPair qr = z.DivMod(k[0], k[1]);
      return t.op == RandomTree::kFloorDiv ? qr.q : qr.r;
    }
    case RandomTree::kMin:
    case RandomTree::kMax: {
      z3::expr e = k[0];
      for (size_t i = 1; i < k.size(); ++i) {
        e = t.op == RandomTree::kMin ? z3::min(e, k[i]) : z3::max(e, k[i]);
      }
      return e;
    }
  }
  return z.Val(0);
}

z3::expr TreeToZ3(Z3& z, const RandomTree& t, std::vector<z3::expr>& nonzero) {
  std::vector<z3::expr> k;
  for (const RandomTree& kid : t.kids) k.push_back(TreeToZ3(z, kid, nonzero));
  return ApplyZ3(z, t, k, nonzero);
}

// Encodes a canonical SymExpr through its proto form.
z3::expr ProtoToZ3(Z3& z, const proto::SymExpr& p) {
  std::vector<z3::expr> k;
  for (const proto::SymExpr& a : p.args()) k.push_back(ProtoToZ3(z, a));
  switch (p.kind()) {
    case proto::SymExpr::CONST:
      return z.Val(p.value());
    case proto::SymExpr::SYMBOL:
      return z.Var(p.name());
    case proto::SymExpr::FLOORDIV:
      return z.FloorDiv(k[0], k[1]);
    case proto::SymExpr::MOD:
      return z.Mod(k[0], k[1]);
    default:
      break;
  }
  z3::expr e = k.at(0);
  for (size_t i = 1; i < k.size(); ++i) {
    switch (p.kind()) {
      case proto::SymExpr::ADD:
        e = e + k[i];
        break;
      case proto::SymExpr::MUL:
        e = e * k[i];
        break;
      case proto::SymExpr::MIN:
        e = z3::min(e, k[i]);
        break;
      case proto::SymExpr::MAX:
        e = z3::max(e, k[i]);
        break;
      default:
        ADD_FAILURE() << "unexpected kind " << p.kind();
        break;
    }
  }
  return e;
}

// Proves canonical(t) == t by induction over the tree: at every node, that the canonical form
// equals the node's operation applied to its kids' canonical forms (encoded from their protos),
// assuming the canonical forms of all divisors below are nonzero. Sets `*canonical`.
::testing::AssertionResult ProveStepwise(Z3& z, const RandomTree& t, SymExpr* canonical,
                                         std::vector<z3::expr>& nonzero) {
  std::vector<SymExpr> kids;
  for (const RandomTree& kid : t.kids) {
    SymExpr c;
    if (auto r = ProveStepwise(z, kid, &c, nonzero); !r) return r;
    kids.push_back(c);
  }
  // Encoded after the kids' proofs, which consume the pending definitions.
  std::vector<z3::expr> encoded;
  for (const SymExpr& c : kids) encoded.push_back(ProtoToZ3(z, c.ToProto()));
  *canonical = t.Apply(kids);
  z3::expr step = ApplyZ3(z, t, encoded, nonzero);
  return z.ProveEqual(absl::StrCat("step ", t.Text(), " -> ", canonical->ToString()), step,
                      ProtoToZ3(z, canonical->ToProto()), nonzero);
}

void ProveRandomTrees(uint64_t seed, int count, int depth, const RandomTree::Options& options) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    Z3 z;  // a fresh context per tree keeps each proof independent of the others
    RandomTree tree = RandomTree::Generate(rng, depth, options);
    SymExpr canonical = tree.Build();
    std::vector<z3::expr> nonzero;
    z3::expr original = TreeToZ3(z, tree, nonzero);
    z3::expr simplified = ProtoToZ3(z, canonical.ToProto());
    std::string what = absl::StrCat(tree.Text(), " -> ", canonical.ToString());
    ::testing::AssertionResult whole = z.ProveEqual(what, original, simplified, nonzero);
    if (whole || z.last_was_counterexample()) {
      ASSERT_TRUE(whole);
      continue;
    }
    // z3 gave no answer on the whole tree: prove it one simplification at a time.
    std::vector<z3::expr> stepwise_nonzero;
    SymExpr stepwise;
    ASSERT_TRUE(ProveStepwise(z, tree, &stepwise, stepwise_nonzero)) << what;
    ASSERT_EQ(stepwise, canonical);
  }
}

TEST(RandomTreeTest, LinearWithConstantDivisors) {
  RandomTree::Options options;
  options.nonlinear = false;
  options.symbolic_divisors = false;
  ProveRandomTrees(/*seed=*/100, /*count=*/300, /*depth=*/5, options);
}

TEST(RandomTreeTest, NonlinearWithSymbolicDivisors) {
  RandomTree::Options options;
  options.symbols = {"a", "b"};
  ProveRandomTrees(/*seed=*/200, /*count=*/150, /*depth=*/3, options);
}

// ----- (c) Bounds ----------------------------------------------------------------------------

TEST(BoundsTest, EnclosesEveryValue) {
  RandomTree::Options options;
  options.nonlinear = false;
  options.symbolic_divisors = false;
  SymRanges ranges = {{"a", {-5, 7}}, {"b", {2, 40}}};  // c: unlisted, so >= 0
  std::mt19937_64 rng(300);
  Z3 z;
  int finite = 0;
  for (int i = 0; i < 200; ++i) {
    SymExpr e = RandomTree::Generate(rng, 4, options).Build();
    SymRange r = Bounds(e, ranges);
    z3::expr v = ProtoToZ3(z, e.ToProto());
    z3::expr claim = z.Val(0) == 0;
    if (r.min != INT64_MIN) claim = claim && z.Val(r.min) <= v;
    if (r.max != INT64_MAX) claim = claim && v <= z.Val(r.max);
    finite += r.min != INT64_MIN && r.max != INT64_MAX;
    z3::expr a = z.Var("a"), b = z.Var("b"), c = z.Var("c");
    ASSERT_TRUE(z.Prove(absl::StrCat(e.ToString(), " in [", r.min, ", ", r.max, "]"),
                        {-5 <= a, a <= 7, 2 <= b, b <= 40, 0 <= c}, {claim}));
  }
  EXPECT_GT(finite, 20);
}

// Sums of a numerator and floordiv terms over it (s - s // 4, the shapes ONNX exports compute):
// the tightened bounds of sums with floordiv terms (sym_expr_bounds.cc) hold for every value.
TEST(BoundsTest, FloorDivTermsInSumsEncloseEveryValue) {
  SymRanges ranges = {{"a", {-5, 7}}, {"b", {1, INT64_MAX}}};
  std::mt19937_64 rng(301);
  Z3 z;
  for (int i = 0; i < 200; ++i) {
    auto pick = [&rng](int64_t lo, int64_t hi) {
      return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
    };
    SymExpr x = SymExpr::Symbol(pick(0, 1) == 0 ? "a" : "b");
    SymExpr e = pick(-3, 3) * x + pick(-4, 4);
    for (int t = pick(1, 3); t > 0; --t) {
      e = e + pick(-5, 5) * SymExpr::FloorDiv(x * pick(1, 3) + pick(-3, 3), pick(1, 9));
    }
    SymRange r = Bounds(e, ranges);
    z3::expr v = ProtoToZ3(z, e.ToProto());
    z3::expr claim = z.Val(0) == 0;
    if (r.min != INT64_MIN) claim = claim && z.Val(r.min) <= v;
    if (r.max != INT64_MAX) claim = claim && v <= z.Val(r.max);
    z3::expr a = z.Var("a"), b = z.Var("b");
    ASSERT_TRUE(z.Prove(absl::StrCat(e.ToString(), " in [", r.min, ", ", r.max, "]"),
                        {-5 <= a, a <= 7, 1 <= b}, {claim}));
  }
}

}  // namespace
}  // namespace coil
