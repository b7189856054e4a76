// A squeeze-excitation block's multiply read by the 1x1 convolution after it as a scaled input
// (runtime/cpu/internal/extern_epilogue.h MatchScaledInput, externs.h ExternScaledInput): the
// real pipeline (parse, decompose, inductor with the CPU capabilities, codegen, CpuProgram)
// against the float64 reference interpreter on the original graph at batch sizes 1, 3, 1 and
// 1 and 3 threads, for each activation and hardsigmoid spelling the runtime recognizes; the
// profile says whether the projection read the scaled input, and the blocks it must not take
// (a sigmoid gate, the product also returned, COIL_CONV_SCALED_INPUT=0) still compute the
// reference. The BUILD rule sets COIL_CONV_DIRECT=1: the pointwise kernel takes every call.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/match.h"
#include "codegen_cpu/testing/convolution_check.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

constexpr int64_t kC = 24, kSqueeze = 6, kOut = 24;

// `n` floats in [-0.5, 0.5) as a dense constant's hex bytes.
std::string Dense(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::string hex;
  for (int64_t i = 0; i < n; ++i) {
    const float f = u(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    for (int b = 0; b < 4; ++b) absl::StrAppendFormat(&hex, "%02x", (bits >> (8 * b)) & 0xff);
  }
  return hex;
}

std::string Conv(int id, int in, const std::string& out_shape, int w, int b, int groups,
                 int pad) {
  return absl::StrCat("  %", id, ": ", out_shape, " = aten.convolution(%", in, ", %", w, ", %", b,
                      ") {dilation = [1], groups = ", groups,
                      ", output_padding = [0], padding = [", pad,
                      "], stride = [1], transposed = false}\n");
}

// x [batch, 24, 7, 5] -> 3x3 depthwise convolution -> `activation` (%4 from %3) -> mean over
// the image -> 1x1 24 -> 6, relu -> 1x1 6 -> 24 -> `gate` (%9 from %8) -> %4 * %9 -> 1x1
// 24 -> 24 (%15), plus x when `residual`, else averaged over the image (the projection's
// result stays a channels-last intermediate: a returned result is written NCHW, which the
// pointwise kernel does not); `also_product` returns the product too.
std::string SeBlock(const std::string& activation, const std::string& gate, bool residual,
                    bool also_product = false) {
  const std::string act = absl::StrCat("f32[batch, ", kC, ", 7, 5]");
  const std::string pooled = absl::StrCat("f32[batch, ", kC, ", 1, 1]");
  std::string text = absl::StrCat(
      "graph @se(%0 \"x\": ", act, ") {\n  symbol batch min 1 max 0 hint 2\n",
      "  %1 \"wd\": f32[", kC, ", 1, 3, 3] = constant dense \"", Dense(kC * 9, 1), "\"\n",
      "  %2 \"bd\": f32[", kC, "] = constant dense \"", Dense(kC, 2), "\"\n",
      "  %10 \"w1\": f32[", kSqueeze, ", ", kC, ", 1, 1] = constant dense \"",
      Dense(kSqueeze * kC, 3), "\"\n", "  %11 \"b1\": f32[", kSqueeze, "] = constant dense \"",
      Dense(kSqueeze, 4), "\"\n", "  %12 \"w2\": f32[", kC, ", ", kSqueeze,
      ", 1, 1] = constant dense \"", Dense(kC * kSqueeze, 5), "\"\n", "  %13 \"b2\": f32[", kC,
      "] = constant dense \"", Dense(kC, 6), "\"\n", "  %20 \"wp\": f32[", kOut, ", ", kC,
      ", 1, 1] = constant dense \"", Dense(kOut * kC, 7), "\"\n", "  %21 \"bp\": f32[", kOut,
      "] = constant dense \"", Dense(kOut, 8), "\"\n");
  text += Conv(3, 0, act, 1, 2, kC, 1);
  text += absl::StrCat("  %4: ", act, " = ", activation, "(%3)\n");
  text += absl::StrCat("  %5: ", pooled,
                       " = aten.mean(%4) {dim = [2, 3], keepdim = true, dtype = none}\n");
  text += Conv(6, 5, absl::StrCat("f32[batch, ", kSqueeze, ", 1, 1]"), 10, 11, 1, 0);
  text += absl::StrCat("  %7: f32[batch, ", kSqueeze, ", 1, 1] = aten.relu(%6)\n");
  text += Conv(8, 7, pooled, 12, 13, 1, 0);
  text += gate;
  text += absl::StrCat("  %14: ", act, " = aten.mul(%4, %9)\n");
  text += Conv(15, 14, act, 20, 21, 1, 0);
  if (residual) {
    text += absl::StrCat("  %16: ", act, " = aten.add(%15, %0) {alpha = 1}\n");
  } else {
    text += absl::StrCat("  %16: f32[batch, ", kOut, ", 1, 1] = aten.mean(%15) {dim = [2, 3], ",
                         "keepdim = true, dtype = none}\n");
  }
  return absl::StrCat(text, "  return %16", also_product ? ", %14" : "", "\n}\n");
}

const std::string kPooled = absl::StrCat("f32[batch, ", kC, ", 1, 1]");
const std::string kHardsigmoid = absl::StrCat("  %9: ", kPooled, " = aten.hardsigmoid(%8)\n");
// ONNX HardSigmoid(alpha 1/6, beta 1/2), as the importer spells opset 13's export.
const std::string kOnnxHardsigmoid = absl::StrCat(
    "  %17: ", kPooled, " = aten.mul_scalar(%8) {other = 0.16666666666666666}\n", "  %18: ",
    kPooled, " = aten.add_scalar(%17) {other = 0.5, alpha = 1}\n", "  %9: ", kPooled,
    " = aten.clamp(%18) {min = 0.0, max = 1.0, has_min = true, has_max = true}\n");
const std::string kIdentityGate = absl::StrCat("  %9: ", kPooled, " = aten.relu(%8)\n");
const std::string kSigmoid = absl::StrCat("  %9: ", kPooled, " = aten.sigmoid(%8)\n");

// The projection's (the fourth convolution's) profile kind; the block against the interpreter.
std::string Projection(const std::string& text) {
  return CheckConvolutionGraph(text, {.abs = 2e-5, .rel = 2e-5}, {1, 3, 1}, "aten.convolution",
                               /*nth=*/3);
}

bool Scaled(const std::string& kind) { return absl::StrContains(kind, "+ scaled input"); }

TEST(ConvScaledInputTest, SqueezeExcitationMultiplyIsTheProjectionsScaledInput) {
  EXPECT_TRUE(Scaled(Projection(SeBlock("aten.relu", kHardsigmoid, true))));
  EXPECT_TRUE(Scaled(Projection(SeBlock("aten.hardswish", kOnnxHardsigmoid, true))));
  EXPECT_TRUE(Scaled(Projection(SeBlock("aten.hardswish", kHardsigmoid, false))));
}

TEST(ConvScaledInputTest, OtherMultipliesRunAsGeneratedCode) {
  // A relu gate: the numerics whichever way it runs (its relu is computed in the multiply).
  EXPECT_NE(Projection(SeBlock("aten.relu", kIdentityGate, true)), "");
  // A sigmoid gate is not a recognized form: computed by the multiply.
  EXPECT_FALSE(Scaled(Projection(SeBlock("aten.relu", kSigmoid, true))));
  // The product is returned too: it must be written.
  EXPECT_FALSE(Scaled(Projection(SeBlock("aten.relu", kHardsigmoid, true, true))));
  setenv("COIL_CONV_SCALED_INPUT", "0", 1);
  EXPECT_FALSE(Scaled(Projection(SeBlock("aten.relu", kHardsigmoid, true))));
  unsetenv("COIL_CONV_SCALED_INPUT");
}

}  // namespace
}  // namespace coil
