// A convolution's fused epilogue run as oneDNN post-ops (runtime/cpu/internal/extern_epilogue.h,
// dnnl_conv.cc): the real pipeline (parse, decompose, inductor with the CPU capabilities,
// codegen, CpuProgram) against the float64 reference interpreter on the original graph, for
// each epilogue the runtime recognizes (relu, relu6 / clamp, hardswish in both spellings, a
// residual add, add + relu), plain and depthwise convolutions, two batch sizes and thread
// counts; the profile says whether the post-op path ran, and epilogues it must not take
// (a result also returned, tanh) still compute the reference.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_cpu/testing/convolution_check.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

// A graph of x [batch, 8, 9, 9] (plus a residual r of the convolution's shape when `residual`)
// through a 3x3 convolution with bias (groups: 1 or 8, depthwise) and `epilogue`, lines that
// read %3 (the convolution) and define %9 (returned; `also_conv` returns %3 too).
std::string ConvGraph(int groups, const std::string& epilogue, bool residual,
                      bool also_conv = false) {
  const std::string shape = "f32[batch, 8, 9, 9]";
  return absl::StrCat(
      "graph @conv(%0 \"x\": ", shape, ", %1 \"w\": f32[8, ", 8 / groups,
      ", 3, 3], %2 \"b\": f32[8]", residual ? absl::StrCat(", %8 \"r\": ", shape) : "",
      ") {\n  symbol batch min 1 max 0 hint 2\n  %3: ", shape,
      " = aten.convolution(%0, %1, %2) {dilation = [1], groups = ", groups,
      ", output_padding = [0], padding = [1], stride = [1], transposed = false}\n", epilogue,
      "  return %9", also_conv ? ", %3" : "", "\n}\n");
}

const char kRelu[] = "  %9: f32[batch, 8, 9, 9] = aten.relu(%3)\n";
const char kRelu6[] =
    "  %9: f32[batch, 8, 9, 9] = aten.clamp(%3) {min = 0.0, max = 6.0, has_min = true, "
    "has_max = true}\n";
const char kHardswish[] = "  %9: f32[batch, 8, 9, 9] = aten.hardswish(%3)\n";
// ONNX HardSigmoid(alpha 1/6, beta 1/2) then Mul, as the importer spells opset 13's export.
const char kOnnxHardswish[] =
    "  %4: f32[batch, 8, 9, 9] = aten.mul_scalar(%3) {other = 0.16666666666666666}\n"
    "  %5: f32[batch, 8, 9, 9] = aten.add_scalar(%4) {other = 0.5, alpha = 1}\n"
    "  %6: f32[batch, 8, 9, 9] = aten.clamp(%5) {min = 0.0, max = 1.0, has_min = true, "
    "has_max = true}\n"
    "  %9: f32[batch, 8, 9, 9] = aten.mul(%3, %6)\n";
const char kAdd[] = "  %9: f32[batch, 8, 9, 9] = aten.add(%3, %8) {alpha = 1}\n";
const char kAddRelu[] =
    "  %4: f32[batch, 8, 9, 9] = aten.add(%8, %3) {alpha = 1}\n"
    "  %9: f32[batch, 8, 9, 9] = aten.relu(%4)\n";
const char kTanh[] = "  %9: f32[batch, 8, 9, 9] = aten.tanh(%3)\n";

// The pipeline against the float64 interpreter at batch sizes 1, 3, 1; the convolution's kind.
std::string CheckAgainstInterpreter(const std::string& text) {
  return CheckConvolutionGraph(text, {.abs = 2e-5, .rel = 2e-5}, {1, 3, 1});
}

// oneDNN (Debian's libdnnl.so.2, which the setup installs) must be loadable: without it the
// convolutions run the reference kernel and every fused expectation fails. By default the
// runtime measures the post-op path against the generated epilogue and keeps the faster, which
// timing decides; COIL_CONV_POST_OPS=1 takes the post-op path wherever it can, so the tests that
// assert which path ran set it (and the default is checked for numerics only).
class ConvPostOpsTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { setenv("COIL_CONV_POST_OPS", "1", 1); }
  void TearDown() override { unsetenv("COIL_CONV_POST_OPS"); }
};

constexpr char kFused[] = "extern aten.convolution + post-ops";
constexpr char kUnfused[] = "extern aten.convolution";

TEST_P(ConvPostOpsTest, Activations) {
  const int groups = GetParam();
  EXPECT_EQ(CheckAgainstInterpreter(ConvGraph(groups, kRelu, false)), kFused);
  EXPECT_EQ(CheckAgainstInterpreter(ConvGraph(groups, kRelu6, false)), kFused);
  EXPECT_EQ(CheckAgainstInterpreter(ConvGraph(groups, kHardswish, false)), kFused);
  EXPECT_EQ(CheckAgainstInterpreter(ConvGraph(groups, kOnnxHardswish, false)), kFused);
}

// Residual adds stay generated code by default (oneDNN 2.6's binary post-op is slow in its
// GEMM-based convolution); COIL_CONV_POST_OPS=all fuses them.
TEST_P(ConvPostOpsTest, Residuals) {
  const int groups = GetParam();
  EXPECT_EQ(CheckAgainstInterpreter(ConvGraph(groups, kAdd, true)), kUnfused);
  EXPECT_EQ(CheckAgainstInterpreter(ConvGraph(groups, kAddRelu, true)), kUnfused);
  setenv("COIL_CONV_POST_OPS", "all", 1);
  EXPECT_EQ(CheckAgainstInterpreter(ConvGraph(groups, kAdd, true)), kFused);
  EXPECT_EQ(CheckAgainstInterpreter(ConvGraph(groups, kAddRelu, true)), kFused);
}

// The default: each site measured on its first run per batch size; either path computes the
// reference, and the choice holds across later runs (three batch changes per program).
TEST_P(ConvPostOpsTest, MeasuredChoice) {
  unsetenv("COIL_CONV_POST_OPS");
  const int groups = GetParam();
  for (const char* epilogue : {kRelu, kHardswish, kOnnxHardswish}) {
    const std::string kind = CheckAgainstInterpreter(ConvGraph(groups, epilogue, false));
    EXPECT_TRUE(kind == kFused || kind == kUnfused) << kind;
  }
}

TEST_P(ConvPostOpsTest, EpiloguesLeftToGeneratedCode) {
  const int groups = GetParam();
  // The convolution's own result is returned too: it must be written, so no post-ops.
  EXPECT_EQ(CheckAgainstInterpreter(ConvGraph(groups, kRelu, false, /*also_conv=*/true)), kUnfused);
  // tanh is not one of the recognized steps.
  EXPECT_EQ(CheckAgainstInterpreter(ConvGraph(groups, kTanh, false)), kUnfused);
}

INSTANTIATE_TEST_SUITE_P(Groups, ConvPostOpsTest, ::testing::Values(1, 8),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return i.param == 1 ? std::string("Dense") : std::string("Depthwise");
                         });

}  // namespace
}  // namespace coil
