// Numerical sweep: graphs with views, masks (pad, concat), gathers, scans, externs, in-place
// updates and multi-output reductions, lowered and fused (with and without extern epilogues),
// must compute what the graph interpreter computes.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "inductor/passes/fusion_check.h"

namespace coil::inductor {
namespace {

using testing::ExpectSameAsGraph;
using testing::LowerAndFuse;
using testing::ParseAndDecompose;

const std::vector<std::string> kAllEpilogues = {"aten.mm", "aten.bmm", "aten.convolution",
                                                "prims.cumsum", "prims.cumprod"};

void Check(const std::string& text, int max_kernels) {
  absl::StatusOr<Graph> g = ParseAndDecompose(text);
  ASSERT_TRUE(g.ok()) << g.status();
  for (bool epilogues : {false, true}) {
    absl::StatusOr<Program> p =
        LowerAndFuse(*g, epilogues ? kAllEpilogues : std::vector<std::string>{});
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_LE(static_cast<int>(p->kernels.size()), max_kernels)
        << g->name() << "\n" << testing::Describe(*p);
    EXPECT_LT(p->kernels.size(), p->kernels_unfused) << g->name();
    ExpectSameAsGraph(*g, *p, g->name() + (epilogues ? " (epilogues)" : ""));
  }
}

TEST(FusionNumericTest, Misc) {
  Check(R"(
graph @misc(%0 "x": f32[batch, 5], %1 "y": f32[batch, 3], %2 "idx": i64[batch, 4], %3 "table": f32[10, 5]) {
  symbol batch min 2 max 0 hint 8
  %4: f32[batch, 5] = aten.exp(%0)
  %5: f32[batch, 6] = aten.pad(%4) {mode = "constant", pad = [2, -1], value = 3.5}
  %6: f32[batch, 3] = aten.sin(%1)
  %7: f32[batch, 9] = aten.cat(%5, %6) {dim = 1}
  %8: f32[batch, 9] = aten.mul(%7, %7)
  %9: f32[batch, 4] = aten.gather(%8, %2) {dim = 1, sparse_grad = false}
  %10: f32[batch, 4, 5] = aten.embedding(%3, %2) {padding_idx = -1, scale_grad_by_freq = false, sparse = false}
  %11: f32[batch, 4, 5] = aten.tanh(%10)
  %12: i64[batch] = aten.argmax(%8) {dim = [1], keepdim = false}
  %13: f32[batch, 9] = aten.cumsum(%8) {dim = 1, dtype = none}
  %14: f32[batch, 9] = aten.neg(%13)
  %15: f32[5, batch] = aten.transpose(%4) {dim0 = 0, dim1 = 1}
  %16: f32[5, batch] = aten.relu(%15)
  return %9, %11, %12, %14, %16
}
)", 8);
}

// A masked load of bools inlined with its producer: the masked-off value 1e-05 is true (found
// by the CPU differential fuzzer, which saw false).
TEST(FusionNumericTest, PadOfBoolsWithASmallValue) {
  Check(R"(
graph @bool_pad(%0 "x": i64[4, 5]) {
  %1: bool[4, 5] = aten.ge(%0, %0)
  %2: bool[4, 5] = aten.pad(%1) {mode = "constant", pad = [1, -1], value = 1e-05}
  return %2
}
)", 1);
}

TEST(FusionNumericTest, Inplace) {
  Check(R"(
graph @inplace(%0 "x": f32[batch, 5], %1 "y": f32[batch, 5]) {
  symbol batch min 2 max 0 hint 8
  %2: f32[batch, 5] = aten.exp(%0)
  %3: f32[batch, 5] = aten.add_(%0, %1) {alpha = 1}
  %4: f32[batch, 5] = aten.mul(%2, %0)
  %5: f32[batch] = aten.sum(%0) {dim = [1], keepdim = false, dtype = none}
  return %4, %5
}
)", 4);
}

TEST(FusionNumericTest, Conv) {
  Check(R"(
graph @conv(%0 "x": f32[batch, 3, 6, 6], %1 "w": f32[4, 3, 3, 3], %2 "b": f32[4], %3 "lw": f32[16, 4], %4 "lb": f32[16]) {
  symbol batch min 2 max 0 hint 8
  %5: f32[batch, 4, 6, 6] = aten.convolution(%0, %1, %2) {dilation = [1], groups = 1, output_padding = [0], padding = [1], stride = [1], transposed = false}
  %6: f32[batch, 4, 6, 6] = aten.relu(%5)
  %7: f32[batch, 4] = aten.mean(%6) {dim = [2, 3], keepdim = false, dtype = none}
  %8: f32[batch, 16] = aten.linear(%7, %3, %4)
  %9: f32[batch, 16] = aten.gelu(%8) {approximate = "tanh"}
  %10: f32[batch, 16] = aten.log_softmax(%9) {dim = 1, dtype = none}
  return %10
}
)", 6);
}

TEST(FusionNumericTest, Attention) {
  Check(R"(
// Causal scaled dot-product attention, [batch, heads, seq, head_dim].
graph @attention(%0 "q": f32[batch, 4, seq, 16], %1 "k": f32[batch, 4, seq, 16], %2 "v": f32[batch, 4, seq, 16]) {
  symbol batch min 2 max 0 hint 8
  symbol seq min 2 max 0 hint 32
  %3: f32[batch, 4, seq, 16] = aten.scaled_dot_product_attention(%0, %1, %2) {dropout_p = 0.0, is_causal = true, offset = 0, scale = 0.0, seed = -1, train = true}
  return %3
}
)", 8);
}

TEST(FusionNumericTest, LayerNormBf16) {
  Check(R"(
// aten.layer_norm over the last dim with weight and bias, in bf16 (statistics in f32).
graph @layer_norm(%0 "x": bf16[batch, 16, 64], %1 "w": bf16[64], %2 "b": bf16[64]) {
  symbol batch min 2 max 0 hint 8
  %3: bf16[batch, 16, 64] = aten.layer_norm(%0, %1, %2) {eps = 1e-05, normalized_shape = syms[64]}
  return %3
}
)", 2);
}

TEST(FusionNumericTest, Block) {
  Check(R"(
graph @block(%0 "x": f32[batch, 6, 16], %1 "wq": f32[16, 16], %2 "wk": f32[16, 16], %3 "wv": f32[16, 16], %4 "w1": f32[32, 16], %5 "b1": f32[32], %6 "lnw": f32[16], %7 "lnb": f32[16]) {
  symbol batch min 2 max 0 hint 8
  %8: f32[batch, 6, 16] = aten.layer_norm(%0, %6, %7) {eps = 1e-05, normalized_shape = [16]}
  %9: f32[batch, 6, 16] = aten.linear(%8, %1)
  %10: f32[batch, 6, 16] = aten.linear(%8, %2)
  %11: f32[batch, 6, 16] = aten.linear(%8, %3)
  %12: f32[batch, 6, 16] = aten.scaled_dot_product_attention(%9, %10, %11) {dropout_p = 0.0, is_causal = true, offset = 0, scale = 0.0, seed = -1, train = true}
  %13: f32[batch, 6, 16] = aten.add(%0, %12) {alpha = 1}
  %14: f32[batch, 6, 32] = aten.linear(%13, %4, %5)
  %15: f32[batch, 6, 32] = aten.gelu(%14) {approximate = "none"}
  %16: f32[batch, 6, 32] = aten.softmax(%15) {dim = -1, dtype = none}
  return %16, %13
}
)", 20);
}

}  // namespace
}  // namespace coil::inductor
