// Golden tests of fusion decisions: aten graphs in text IR, decomposed, lowered and fused;
// each also computes the same as the graph interpreter (Schedule interpreter on the result).
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "inductor/passes/fusion_check.h"

namespace coil::inductor {
namespace {

using testing::Describe;
using testing::ExpectSameAsGraph;
using testing::LowerAndFuse;
using testing::ParseAndDecompose;

bool HasDecision(const Program& p, const std::string& pass, bool accepted,
                 const std::string& reason_part) {
  for (const FusionDecision& d : p.decisions) {
    if (d.pass == pass && d.accepted == accepted && absl::StrContains(d.reason, reason_part)) {
      return true;
    }
  }
  return false;
}

// Parses, decomposes, lowers, fuses and checks numerics; returns the fused program.
Program Fuse(const std::string& text, const std::vector<std::string>& epilogues = {}) {
  absl::StatusOr<Graph> g = ParseAndDecompose(text);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return {};
  absl::StatusOr<Program> p = LowerAndFuse(*g, epilogues);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  ExpectSameAsGraph(*g, *p, g->name());
  return *std::move(p);
}

TEST(FusionGoldenTest, ChainOfTenPointwiseOpsIsOneKernel) {
  Program p = Fuse(R"(
graph @chain(%0 "x": f32[batch, 16]) {
  symbol batch min 2 max 0 hint 8
  %1: f32[batch, 16] = aten.neg(%0)
  %2: f32[batch, 16] = aten.exp(%1)
  %3: f32[batch, 16] = aten.sin(%2)
  %4: f32[batch, 16] = aten.cos(%3)
  %5: f32[batch, 16] = aten.tanh(%4)
  %6: f32[batch, 16] = aten.abs(%5)
  %7: f32[batch, 16] = aten.relu(%6)
  %8: f32[batch, 16] = aten.sqrt(%7)
  %9: f32[batch, 16] = aten.exp(%8)
  %10: f32[batch, 16] = aten.neg(%9)
  return %10
})");
  ASSERT_EQ(p.kernels.size(), 1u) << Describe(p);
  EXPECT_EQ(p.kernels[0].kind, proto::Kernel::POINTWISE);
  EXPECT_GE(p.kernels_unfused, 10);
}

TEST(FusionGoldenTest, SoftmaxIsOneReductionKernel) {
  Program p = Fuse(R"(
graph @softmax(%0 "x": f32[batch, 10]) {
  symbol batch min 2 max 0 hint 8
  %1: f32[batch, 10] = aten.softmax(%0) {dim = -1, dtype = none}
  return %1
})");
  ASSERT_EQ(p.kernels.size(), 1u) << Describe(p);
  EXPECT_EQ(p.kernels[0].kind, proto::Kernel::REDUCTION);
  EXPECT_EQ(p.kernels[0].loops.size(), 3u) << Describe(p);
  EXPECT_TRUE(HasDecision(p, "fuse_reductions", true, "further reducing Loop")) << Describe(p);
}

TEST(FusionGoldenTest, LayerNormResidualGeluIsOneReductionKernel) {
  Program p = Fuse(R"(
graph @ln(%0 "x": f32[batch, 32], %1 "w": f32[32], %2 "b": f32[32], %3 "res": f32[batch, 32]) {
  symbol batch min 2 max 0 hint 8
  %4: f32[batch, 32] = aten.layer_norm(%0, %1, %2) {eps = 1e-05, normalized_shape = syms[32]}
  %5: f32[batch, 32] = aten.add(%4, %3) {alpha = 1.0}
  %6: f32[batch, 32] = aten.gelu(%5) {approximate = "none"}
  return %6
})");
  ASSERT_EQ(p.kernels.size(), 1u) << Describe(p);
  EXPECT_EQ(p.kernels[0].kind, proto::Kernel::REDUCTION);
  EXPECT_EQ(p.kernels[0].loops.size(), 3u) << Describe(p);
  EXPECT_TRUE(HasDecision(p, "fuse_reductions", true, "further Loop")) << Describe(p);
}

TEST(FusionGoldenTest, SiblingReductionsFuseHorizontally) {
  Program p = Fuse(R"(
graph @sib(%0 "x": f32[batch, 16]) {
  symbol batch min 2 max 0 hint 8
  %1: f32[batch] = aten.sum(%0) {dim = [1], keepdim = false, dtype = none}
  %2: f32[batch] = aten.amax(%0) {dim = [1], keepdim = false}
  return %1, %2
})");
  ASSERT_EQ(p.kernels.size(), 1u) << Describe(p);
  EXPECT_EQ(p.kernels[0].kind, proto::Kernel::REDUCTION);
  EXPECT_TRUE(HasDecision(p, "fuse_horizontal", true, "sharing x")) << Describe(p);
}

constexpr char kMatmulBiasRelu[] = R"(
graph @mm(%0 "x": f32[batch, 8], %1 "w": f32[8, 16], %2 "bias": f32[16]) {
  symbol batch min 2 max 0 hint 8
  %3: f32[batch, 16] = aten.mm(%0, %1)
  %4: f32[batch, 16] = aten.add(%3, %2) {alpha = 1.0}
  %5: f32[batch, 16] = aten.relu(%4)
  return %5
})";

TEST(FusionGoldenTest, NoFusionAcrossMatmulByDefault) {
  Program p = Fuse(kMatmulBiasRelu);
  ASSERT_EQ(p.kernels.size(), 2u) << Describe(p);
  EXPECT_EQ(p.kernels[0].kind, proto::Kernel::EXTERN);
  EXPECT_TRUE(p.kernels[0].loops.empty());
  EXPECT_EQ(p.kernels[1].kind, proto::Kernel::POINTWISE);
  EXPECT_TRUE(HasDecision(p, "fuse_extern_epilogues", false, "no declared epilogue"))
      << Describe(p);
}

TEST(FusionGoldenTest, MatmulEpilogueWhenDeclared) {
  Program p = Fuse(kMatmulBiasRelu, {"aten.mm"});
  ASSERT_EQ(p.kernels.size(), 1u) << Describe(p);
  EXPECT_EQ(p.kernels[0].kind, proto::Kernel::EXTERN);
  EXPECT_EQ(p.kernels[0].loops.size(), 1u);
  EXPECT_TRUE(HasDecision(p, "fuse_extern_epilogues", true, "epilogue of aten.mm"))
      << Describe(p);
}

}  // namespace
}  // namespace coil::inductor
