// ReuseLoopValues: softmax's exp is computed once per element (stored by the summing Loop,
// loaded by the normalizing one) with the graph interpreter's results; what must not be
// reused (cheap subtrees, a result read back, a store that does not name every loop variable)
// is left alone.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "inductor/passes/fusion_check.h"

namespace coil::inductor {
namespace {

using testing::Describe;
using testing::ExpectSameAsGraph;
using testing::LowerAndFuse;
using testing::ParseAndDecompose;

int CountOp(const Loop& loop, const std::string& op) {
  int n = 0;
  for (const Expr& e : loop.body) n += e.kind == proto::Expr::APPLY && e.op == op;
  return n;
}

int CountDecisions(const Program& p) {
  int n = 0;
  for (const FusionDecision& d : p.decisions) n += d.pass == "reuse_loop_values";
  return n;
}

TEST(ReuseLoopValuesTest, SoftmaxComputesExpOncePerElement) {
  absl::StatusOr<Graph> g = ParseAndDecompose(R"(
graph @softmax(%0 "x": f32[batch, 40]) {
  symbol batch min 1 max 0 hint 8
  %1: f32[batch, 40] = aten.softmax(%0) {dim = -1, dtype = none}
  return %1
}
)");
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<Program> p = LowerAndFuse(*g);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->kernels.size(), 1u) << Describe(*p);
  const Kernel& k = p->kernels[0];
  ASSERT_EQ(k.loops.size(), 3u) << Describe(*p);
  EXPECT_EQ(CountDecisions(*p), 1) << Describe(*p);
  int exps = 0;
  for (const Loop& l : k.loops) exps += CountOp(l, "prims.exp");
  EXPECT_EQ(exps, 1) << Describe(*p);
  EXPECT_EQ(CountOp(k.loops[1], "prims.exp"), 1);
  // The summing Loop stores into the output; the normalizing Loop loads it back.
  const int out = k.Writes()[0];
  bool stored_in_sum = false, loaded_in_norm = false;
  for (const Expr& e : k.loops[1].body) stored_in_sum |= e.kind == proto::Expr::STORE && e.buffer == out;
  for (const Expr& e : k.loops[2].body) loaded_in_norm |= e.kind == proto::Expr::LOAD && e.buffer == out;
  EXPECT_TRUE(stored_in_sum && loaded_in_norm) << Describe(*p);
  ExpectSameAsGraph(*g, *p, "softmax", {1, 3, 8});
}

TEST(ReuseLoopValuesTest, SoftmaxInsideABlockMatches) {
  absl::StatusOr<Graph> g = ParseAndDecompose(R"(
graph @attn(%0 "q": f32[2, 4, seq, 8], %1 "k": f32[2, 4, seq, 8], %2 "v": f32[2, 4, seq, 8]) {
  symbol seq min 2 max 0 hint 16
  %3: f32[2, 4, seq, 8] = aten.scaled_dot_product_attention(%0, %1, %2) {dropout_p = 0.0, is_causal = true, offset = 0, scale = 0.0, seed = -1, train = true}
  %4: f32[2, 4, seq, 8] = aten.tanh(%3)
  %5: f32[2, 4, seq, 8] = aten.log_softmax(%4) {dim = -1, dtype = none}
  %6: f32[2, 4, seq, 8] = aten.softmax(%4) {dim = -1, dtype = none}
  return %5, %6
}
)");
  ASSERT_TRUE(g.ok()) << g.status();
  for (bool epilogues : {false, true}) {
    absl::StatusOr<Program> p = LowerAndFuse(
        *g, epilogues ? std::vector<std::string>{"aten.bmm"} : std::vector<std::string>{});
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_GE(CountDecisions(*p), 1) << Describe(*p);
    ExpectSameAsGraph(*g, *p, "attention + softmaxes", {2, 5, 16});
  }
}

TEST(ReuseLoopValuesTest, CheapValuesAreRecomputed) {
  // layer_norm's normalizing Loop recomputes x - mean: a subtraction is cheaper than a store
  // and a load, so nothing is reused.
  absl::StatusOr<Graph> g = ParseAndDecompose(R"(
graph @ln(%0 "x": f32[batch, 32], %1 "w": f32[32], %2 "b": f32[32]) {
  symbol batch min 1 max 0 hint 4
  %3: f32[batch, 32] = aten.layer_norm(%0, %1, %2) {eps = 1e-05, normalized_shape = [32]}
  return %3
}
)");
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<Program> p = LowerAndFuse(*g);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(CountDecisions(*p), 0) << Describe(*p);
  ExpectSameAsGraph(*g, *p, "layer_norm", {1, 4});
}

// A hand-built kernel: loop 0 sums exp(x[i, r]); loop 1 stores exp(x[i, r]) / s into out at
// `store_index`, optionally reading out back in loop 1.
Program ExpKernel(std::vector<SymExpr> store_index, bool read_back) {
  Program p;
  auto add = [&](proto::Buffer::Kind kind, std::vector<SymExpr> shape) {
    Buffer b;
    b.id = static_cast<int>(p.buffers.size()) + 1;
    b.name = "buf" + std::to_string(b.id);
    b.kind = kind;
    b.shape = std::move(shape);
    p.buffers.push_back(b);
    return b.id;
  };
  const int x = add(proto::Buffer::INPUT, {SymExpr(4), SymExpr(8)});
  const int out = add(proto::Buffer::OUTPUT, {SymExpr(4), SymExpr(8)});
  Kernel k;
  k.name = "k";
  k.kind = proto::Kernel::REDUCTION;
  k.ranges = {SymExpr(4)};
  k.loops.resize(2);
  k.loops[0].ranges = {SymExpr(8)};
  k.loops[1].ranges = {SymExpr(8)};
  const std::vector<SymExpr> xi = {LoopVar(0), InnerVar(0)};
  int l0 = k.Load(0, x, proto::FLOAT32, xi);
  int e0 = k.Apply(0, "prims.exp", proto::FLOAT32, {l0});
  int s = k.Reduce(0, "sum", proto::FLOAT32, e0);
  int l1 = k.Load(1, x, proto::FLOAT32, xi);
  int e1 = k.Apply(1, "prims.exp", proto::FLOAT32, {l1});
  int q = k.Apply(1, "prims.div", proto::FLOAT32, {e1, s});
  if (read_back) {
    int o = k.Load(1, out, proto::FLOAT32, xi);
    q = k.Apply(1, "prims.add", proto::FLOAT32, {q, o});
  }
  k.Store(1, out, std::move(store_index), q);
  p.kernels.push_back(std::move(k));
  return p;
}

TEST(ReuseLoopValuesTest, ReusesOnlyWhenEveryPointOwnsItsElement) {
  {
    Program p = ExpKernel({LoopVar(0), InnerVar(0)}, /*read_back=*/false);
    absl::StatusOr<bool> changed = ReuseLoopValues(p);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_TRUE(*changed) << Describe(p);
    EXPECT_EQ(CountOp(p.kernels[0].loops[1], "prims.exp"), 0) << Describe(p);
    absl::Status verified = VerifyProgram(p);  // loop 1 reads what loop 0 stored
    EXPECT_TRUE(verified.ok()) << verified;
  }
  {
    // out[i, 0]: every r of a row writes the same element.
    Program p = ExpKernel({LoopVar(0), SymExpr(0)}, /*read_back=*/false);
    absl::StatusOr<bool> changed = ReuseLoopValues(p);
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(*changed) << Describe(p);
  }
  {
    // out[i, 7 - r]: one element per point, but not a plain variable: left alone.
    Program p = ExpKernel({LoopVar(0), SymExpr(7) - InnerVar(0)}, /*read_back=*/false);
    absl::StatusOr<bool> changed = ReuseLoopValues(p);
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(*changed) << Describe(p);
  }
  {
    // The loop reads out itself: storing into it earlier would change what it reads. (Such a
    // kernel does not verify either: it reads out before any Loop stored it.)
    Program p = ExpKernel({LoopVar(0), InnerVar(0)}, /*read_back=*/true);
    absl::StatusOr<bool> changed = ReuseLoopValues(p);
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(*changed) << Describe(p);
    EXPECT_FALSE(VerifyProgram(p).ok());
  }
}

}  // namespace
}  // namespace coil::inductor
