// Fusion passes on hand-built Programs (the shape Lower produces); golden tests through Lower
// and the Schedule interpreter are in fusion_golden_test.cc.
#include "inductor/passes/fusion.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "inductor/loop_ir.h"
#include "inductor/passes/fusion_test_util.h"
#include "inductor/passes/fusion_util.h"

namespace coil::inductor {
namespace {

using testing::AddBuf;
using testing::CountDecisions;
using testing::Extern;
using testing::Ident;
using testing::Number;
using testing::Pw;
using testing::Red;
using testing::RunFusion;

constexpr auto kIn = proto::Buffer::INPUT;
constexpr auto kTmp = proto::Buffer::INTERMEDIATE;
constexpr auto kOut = proto::Buffer::OUTPUT;

int CountKind(const Kernel& k, proto::Expr::Kind kind) {
  int n = 0;
  for (const Loop& l : k.loops) {
    for (const Expr& e : l.body) n += e.kind == kind;
  }
  return n;
}

TEST(FusionTest, ChainOfTenPointwiseOpsIsOneKernel) {
  Program p;
  SymExpr s = SymExpr::Symbol("s0");
  int prev = AddBuf(p, kIn, {s, 16}, "x");
  for (int i = 0; i < 10; ++i) {
    int out = AddBuf(p, i == 9 ? kOut : kTmp, {s, 16});
    p.kernels.push_back(Pw(p, i % 2 ? "prims.exp" : "prims.neg", {prev}, {}, out));
    prev = out;
  }
  Number(p);
  ASSERT_TRUE(RunFusion(p).ok());
  ASSERT_EQ(p.kernels.size(), 1u);
  const Kernel& k = p.kernels[0];
  EXPECT_EQ(k.kind, proto::Kernel::POINTWISE);
  EXPECT_EQ(CountKind(k, proto::Expr::LOAD), 1);
  EXPECT_EQ(CountKind(k, proto::Expr::APPLY), 10);
  EXPECT_EQ(k.source_values.size(), 10u);
  EXPECT_EQ(p.buffers.size(), 2u);  // x and the output
  EXPECT_EQ(CountDecisions(p, "fuse_vertical", true), 9);
  EXPECT_EQ(k.Writes(), std::vector<int>{p.outputs[0]});
  for (const FusionDecision& d : p.decisions) EXPECT_GT(d.bytes_saved_hint, 0) << d.reason;
}

// softmax(x) over dim 1 as Lower produces it: amax, sub, exp, sum, div.
Program Softmax() {
  Program p;
  int x = AddBuf(p, kIn, {8, 16}, "x");
  int m = AddBuf(p, kTmp, {8}, "m");
  int s = AddBuf(p, kTmp, {8, 16}, "s");
  int e = AddBuf(p, kTmp, {8, 16}, "e");
  int z = AddBuf(p, kTmp, {8}, "z");
  int o = AddBuf(p, kOut, {8, 16}, "out");
  p.kernels.push_back(Red(p, "max", x, {16}, m));
  p.kernels.push_back(Pw(p, "prims.sub", {x, m}, {Ident(2), {LoopVar(0)}}, s));
  p.kernels.push_back(Pw(p, "prims.exp", {s}, {}, e));
  p.kernels.push_back(Red(p, "sum", e, {16}, z));
  p.kernels.push_back(Pw(p, "prims.div", {e, z}, {Ident(2), {LoopVar(0)}}, o));
  Number(p);
  return p;
}

TEST(FusionTest, SoftmaxIsOneReductionKernelWithThreeLoops) {
  Program p = Softmax();
  ASSERT_TRUE(RunFusion(p).ok());
  ASSERT_EQ(p.kernels.size(), 1u);
  const Kernel& k = p.kernels[0];
  EXPECT_EQ(k.kind, proto::Kernel::REDUCTION);
  ASSERT_EQ(k.loops.size(), 3u);
  for (const Loop& l : k.loops) EXPECT_EQ(l.ranges, std::vector<SymExpr>{16});
  EXPECT_EQ(CountKind(k, proto::Expr::REDUCE), 2);
  // The summing Loop stores exp into the output and the normalizing Loop loads it back
  // (reuse_loop_values, which production runs after the fusion passes): two STOREs.
  EXPECT_EQ(CountKind(k, proto::Expr::STORE), 2);
  EXPECT_EQ(p.buffers.size(), 2u);
  EXPECT_EQ(CountDecisions(p, "fuse_reductions", true), 2);
  EXPECT_EQ(CountDecisions(p, "reuse_loop_values", true), 1);
}

TEST(FusionTest, LayerNormResidualGeluIsOneReductionKernel) {
  Program p;
  int x = AddBuf(p, kIn, {4, 32}, "x");
  int res = AddBuf(p, kIn, {4, 32}, "res");
  int s = AddBuf(p, kTmp, {4});
  int mean = AddBuf(p, kTmp, {4});
  int d = AddBuf(p, kTmp, {4, 32});
  int sq = AddBuf(p, kTmp, {4, 32});
  int v = AddBuf(p, kTmp, {4});
  int rstd = AddBuf(p, kTmp, {4});
  int y = AddBuf(p, kTmp, {4, 32});
  int r = AddBuf(p, kTmp, {4, 32});
  int g = AddBuf(p, kOut, {4, 32});
  p.kernels.push_back(Red(p, "sum", x, {32}, s));
  p.kernels.push_back(Pw(p, "prims.neg", {s}, {}, mean));
  p.kernels.push_back(Pw(p, "prims.add", {x, mean}, {Ident(2), {LoopVar(0)}}, d));
  p.kernels.push_back(Pw(p, "prims.mul", {d, d}, {}, sq));
  p.kernels.push_back(Red(p, "sum", sq, {32}, v));
  p.kernels.push_back(Pw(p, "prims.rsqrt", {v}, {}, rstd));
  p.kernels.push_back(Pw(p, "prims.mul", {d, rstd}, {Ident(2), {LoopVar(0)}}, y));
  p.kernels.push_back(Pw(p, "prims.add", {y, res}, {}, r));
  p.kernels.push_back(Pw(p, "prims.erf", {r}, {}, g));
  Number(p);
  ASSERT_TRUE(RunFusion(p).ok());
  ASSERT_EQ(p.kernels.size(), 1u) << p.decisions.back().reason;
  const Kernel& k = p.kernels[0];
  EXPECT_EQ(k.kind, proto::Kernel::REDUCTION);
  EXPECT_EQ(k.loops.size(), 3u);
  EXPECT_EQ(k.Reads(), (std::vector<int>{x, res}));
}

TEST(FusionTest, SiblingReductionsFuseHorizontally) {
  Program p;
  int x = AddBuf(p, kIn, {8, 16}, "x");
  int a = AddBuf(p, kOut, {8});
  int b = AddBuf(p, kOut, {8});
  p.kernels.push_back(Red(p, "sum", x, {16}, a));
  p.kernels.push_back(Red(p, "max", x, {16}, b));
  Number(p);
  ASSERT_TRUE(RunFusion(p).ok());
  ASSERT_EQ(p.kernels.size(), 1u);
  const Kernel& k = p.kernels[0];
  EXPECT_EQ(k.loops.size(), 2u);
  EXPECT_EQ(CountKind(k, proto::Expr::LOAD), 1);  // x read once
  EXPECT_EQ(CountKind(k, proto::Expr::REDUCE), 2);
  ASSERT_EQ(CountDecisions(p, "fuse_horizontal", true), 1);
  EXPECT_EQ(p.decisions.back().bytes_saved_hint, 8 * 16 * 4);
}

Program MatmulBiasRelu() {
  Program p;
  int a = AddBuf(p, kIn, {8, 4}, "a");
  int w = AddBuf(p, kIn, {4, 16}, "w");
  int bias = AddBuf(p, kIn, {16}, "bias");
  int mm = AddBuf(p, kTmp, {8, 16}, "mm");
  int t = AddBuf(p, kTmp, {8, 16});
  int o = AddBuf(p, kOut, {8, 16});
  p.kernels.push_back(Extern(p, "aten.mm", {a, w}, mm));
  p.kernels.push_back(Pw(p, "prims.add", {mm, bias}, {Ident(2), {LoopVar(1)}}, t));
  p.kernels.push_back(Pw(p, "prims.relu", {t}, {}, o));
  Number(p);
  return p;
}

TEST(FusionTest, NoFusionAcrossMatmulByDefault) {
  Program p = MatmulBiasRelu();
  ASSERT_TRUE(RunFusion(p).ok());
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].kind, proto::Kernel::EXTERN);
  EXPECT_TRUE(p.kernels[0].loops.empty());
  EXPECT_EQ(p.kernels[1].kind, proto::Kernel::POINTWISE);
  ASSERT_EQ(CountDecisions(p, "fuse_extern_epilogues", false), 1);
  EXPECT_TRUE(absl::StrContains(p.decisions.back().reason, "no declared epilogue"));
}

TEST(FusionTest, MatmulEpilogueWhenDeclared) {
  Program p = MatmulBiasRelu();
  ASSERT_TRUE(RunFusion(p, {"aten.mm"}).ok());
  ASSERT_EQ(p.kernels.size(), 1u);
  const Kernel& k = p.kernels[0];
  EXPECT_EQ(k.kind, proto::Kernel::EXTERN);
  ASSERT_EQ(k.loops.size(), 1u);
  EXPECT_TRUE(k.loops[0].ranges.empty());
  EXPECT_EQ(k.ranges, (std::vector<SymExpr>{8, 16}));
  EXPECT_EQ(CountKind(k, proto::Expr::STORE), 1);
  EXPECT_EQ(k.source_ops.size(), 3u);
  EXPECT_EQ(CountDecisions(p, "fuse_extern_epilogues", true), 1);
}

TEST(FusionTest, CostlyRecomputeIsRejected) {
  Program p;
  std::vector<int> ins;
  for (int i = 0; i < 6; ++i) ins.push_back(AddBuf(p, kIn, {64}));
  int t = AddBuf(p, kTmp, {64}, "t");
  Kernel k = Kernel::Pointwise("big", {64});
  int acc = k.Load(0, ins[0], proto::FLOAT32, Ident(1));
  for (int i = 1; i < 6; ++i) {
    int l = k.Load(0, ins[i], proto::FLOAT32, Ident(1));
    acc = k.Apply(0, "prims.add", proto::FLOAT32, {acc, l});
  }
  k.Store(0, t, Ident(1), acc);
  p.kernels.push_back(k);
  for (int c = 0; c < 3; ++c) {
    int o = AddBuf(p, kOut, {64});
    p.kernels.push_back(Pw(p, c == 0 ? "prims.exp" : c == 1 ? "prims.neg" : "prims.sin", {t},
                           {}, o));
  }
  Number(p);
  ASSERT_TRUE(FuseVertical(p).ok());
  EXPECT_EQ(p.kernels.size(), 4u);
  ASSERT_FALSE(p.decisions.empty());
  EXPECT_FALSE(p.decisions[0].accepted);
  EXPECT_EQ(p.decisions[0].reason, "producer has 3 consumers and 18 loads (recompute too costly)");
}

TEST(FusionTest, CheapRecomputeIsAccepted) {
  Program p;
  int x = AddBuf(p, kIn, {64}, "x");
  int t = AddBuf(p, kTmp, {64}, "t");
  int o1 = AddBuf(p, kOut, {64});
  int o2 = AddBuf(p, kOut, {64});
  p.kernels.push_back(Pw(p, "prims.exp", {x}, {}, t));
  p.kernels.push_back(Pw(p, "prims.neg", {t}, {}, o1));
  p.kernels.push_back(Pw(p, "prims.sin", {t}, {}, o2));
  Number(p);
  ASSERT_TRUE(FuseVertical(p).ok());
  EXPECT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(CountDecisions(p, "fuse_vertical", true), 2);
  // The two consumers then share x and merge horizontally.
  ASSERT_TRUE(FuseHorizontal(p).ok());
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(CountKind(p.kernels[0], proto::Expr::APPLY), 3);  // exp computed once (CSE)
}

TEST(FusionTest, GraphOutputProducerIsNotRecomputed) {
  Program p;
  int x = AddBuf(p, kIn, {64}, "x");
  int t = AddBuf(p, kOut, {64}, "t");
  int o = AddBuf(p, kOut, {64});
  p.kernels.push_back(Pw(p, "prims.exp", {x}, {}, t));
  p.kernels.push_back(Pw(p, "prims.neg", {t}, {}, o));
  Number(p);
  ASSERT_TRUE(FuseVertical(p).ok());
  EXPECT_EQ(p.kernels.size(), 2u);
  ASSERT_EQ(p.decisions.size(), 1u);
  EXPECT_TRUE(absl::StrContains(p.decisions[0].reason, "graph output"));
}

TEST(FusionTest, NoInliningAcrossAnOverwriteOfTheProducersInput) {
  Program p;
  int x = AddBuf(p, kIn, {64}, "x");
  int t = AddBuf(p, kTmp, {64}, "t");
  int o = AddBuf(p, kOut, {64});
  p.kernels.push_back(Pw(p, "prims.exp", {x}, {}, t));
  p.kernels.push_back(Pw(p, "prims.neg", {x}, {}, x));  // copy_to(x, -x)
  p.kernels.push_back(Pw(p, "prims.sin", {t}, {}, o));
  Number(p);
  ASSERT_TRUE(RunFusion(p).ok());
  bool found = false;
  for (const FusionDecision& d : p.decisions) {
    found = found || (!d.accepted && absl::StrContains(d.reason, "overwrites x"));
  }
  EXPECT_TRUE(found);
  // exp(x) and the overwrite of x merge horizontally ([Note: horizontal write-after-read]):
  // each element of x is read (exp) before it is overwritten; sin(t) stays after them.
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[1].name, "sin_3");
  int load_x = -1, store_x = -1;
  const std::vector<Expr>& body = p.kernels[0].loops[0].body;
  for (int i = 0; i < static_cast<int>(body.size()); ++i) {
    if (body[i].buffer != x) continue;
    if (body[i].kind == proto::Expr::LOAD && load_x < 0) load_x = i;
    if (body[i].kind == proto::Expr::STORE) store_x = i;
  }
  ASSERT_GE(load_x, 0);
  EXPECT_GT(store_x, load_x) << "x is overwritten before exp reads it";
  for (int i = store_x + 1; i < static_cast<int>(body.size()); ++i) {
    EXPECT_FALSE(body[i].kind == proto::Expr::LOAD && body[i].buffer == x) << "read after the store";
  }
}

TEST(FusionTest, InliningAtAMaskedLoadMasksTheProducer) {
  Program p;
  int x = AddBuf(p, kIn, {8}, "x");
  int t = AddBuf(p, kTmp, {8}, "t");
  int o = AddBuf(p, kOut, {10});
  p.kernels.push_back(Pw(p, "prims.exp", {x}, {}, t));
  Kernel pad = Kernel::Pointwise("pad", {10});
  int i = pad.Index(0, proto::INT64, LoopVar(0));
  int lo = pad.Literal(0, proto::INT64, 1);
  int m = pad.Apply(0, "prims.ge", proto::BOOL, {i, lo});
  int l = pad.Load(0, t, proto::FLOAT32, {LoopVar(0) - 1}, m, 0.5);
  pad.Store(0, o, Ident(1), l);
  p.kernels.push_back(pad);
  Number(p);
  ASSERT_TRUE(FuseVertical(p).ok());
  ASSERT_EQ(p.kernels.size(), 1u);
  const Kernel& k = p.kernels[0];
  int where = 0;
  for (const Expr& e : k.loops[0].body) {
    if (e.kind == proto::Expr::LOAD) {
      EXPECT_EQ(e.buffer, x);
      EXPECT_EQ(e.mask, m);
      EXPECT_EQ(e.index, std::vector<SymExpr>{LoopVar(0) - 1});
    }
    if (e.op == "prims.where") where = e.id;
  }
  ASSERT_NE(where, 0);
  EXPECT_EQ(k.loops[0].body.back().args[0], where);
}

TEST(FusionTest, TransposedLoadSubstitutesTheIndex) {
  Program p;
  int x = AddBuf(p, kIn, {4, 8}, "x");
  int t = AddBuf(p, kTmp, {4, 8}, "t");
  int o = AddBuf(p, kOut, {8, 4});
  p.kernels.push_back(Pw(p, "prims.exp", {x}, {}, t));
  p.kernels.push_back(Pw(p, "prims.neg", {t}, {{LoopVar(1), LoopVar(0)}}, o));
  Number(p);
  ASSERT_TRUE(RunFusion(p).ok());
  ASSERT_EQ(p.kernels.size(), 1u);
  const Expr& load = p.kernels[0].loops[0].body[0];
  EXPECT_EQ(load.kind, proto::Expr::LOAD);
  EXPECT_EQ(load.index, (std::vector<SymExpr>{LoopVar(1), LoopVar(0)}));
}

TEST(FusionTest, ReductionOverALeadingDimKeepsItsConsumerSeparate) {
  Program p;
  int x = AddBuf(p, kIn, {8, 16}, "x");
  int s = AddBuf(p, kTmp, {16}, "s");
  int o = AddBuf(p, kOut, {8, 16});
  Kernel r;
  r.name = "sum_cols";
  r.kind = proto::Kernel::REDUCTION;
  r.ranges = {16};
  r.loops.resize(2);
  r.loops[0].ranges = {8};
  int l = r.Load(0, x, proto::FLOAT32, {InnerVar(0), LoopVar(0)});
  int red = r.Reduce(0, "sum", proto::FLOAT32, l);
  r.Store(1, s, Ident(1), red);
  p.kernels.push_back(r);
  p.kernels.push_back(Pw(p, "prims.div", {x, s}, {Ident(2), {LoopVar(1)}}, o));
  Number(p);
  ASSERT_TRUE(RunFusion(p).ok());
  EXPECT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(CountDecisions(p, "fuse_reductions", false), 1);
}

TEST(FusionTest, MergedOrderMovesIndependentKernels) {
  // k0 writes a; k1 reads a -> b; k2 reads x -> c; k3 reads a, c.
  Program p;
  int x = AddBuf(p, kIn, {4});
  int a = AddBuf(p, kTmp, {4});
  int b = AddBuf(p, kOut, {4});
  int c = AddBuf(p, kTmp, {4});
  int d = AddBuf(p, kOut, {4});
  p.kernels.push_back(Pw(p, "prims.exp", {x}, {}, a));
  p.kernels.push_back(Pw(p, "prims.neg", {a}, {}, b));
  p.kernels.push_back(Pw(p, "prims.sin", {x}, {}, c));
  p.kernels.push_back(Pw(p, "prims.add", {a, c}, {}, d));
  KernelDeps deps = KernelDeps::Compute(p);
  EXPECT_TRUE(deps.DependsOn(1, 0));
  EXPECT_FALSE(deps.DependsOn(2, 0));
  EXPECT_TRUE(deps.DependsOn(3, 2));
  EXPECT_TRUE(deps.CanMerge(0, 3));
  EXPECT_EQ(deps.MergedOrder(0, 3), (std::vector<int>{2, 0, 1}));
  EXPECT_FALSE(deps.CanMerge(0, 2) && deps.DependsOn(2, 0));
}

TEST(FusionTest, RemoveDeadBuffersRenumbers) {
  Program p;
  int x = AddBuf(p, kIn, {4});
  int dead = AddBuf(p, kTmp, {4});
  int o = AddBuf(p, kOut, {4});
  p.kernels.push_back(Pw(p, "prims.exp", {x}, {}, dead));
  p.kernels.push_back(Pw(p, "prims.neg", {x}, {}, o));
  ASSERT_TRUE(*RemoveDeadBuffers(p));
  ASSERT_EQ(p.kernels.size(), 1u);
  ASSERT_EQ(p.buffers.size(), 2u);
  EXPECT_EQ(p.outputs, std::vector<int>{2});
  EXPECT_EQ(p.kernels[0].Writes(), std::vector<int>{2});
  EXPECT_FALSE(*RemoveDeadBuffers(p));
}

}  // namespace
}  // namespace coil::inductor
