// An aten.mm's fused epilogue run inside oneDNN's matmul (runtime/cpu/internal/extern_epilogue.h,
// dnnl_matmul.cc MmWithEpilogue): a bias as the matmul's bias argument, then GELU (erf and tanh,
// as aten.gelu decomposes and as ONNX exports spell them with scalar constants), relu and a
// residual add as post-ops. The real pipeline (parse, decompose, inductor with the CPU
// capabilities, codegen, CpuProgram) against the float64 reference interpreter on the original
// graph, on a linear layer's shapes (x [batch, 5, 24] @ w [24, 40] + b: the matmul writes the
// [batch * 5, 40] result as the epilogue's [batch, 5, 40]), two batch sizes and thread counts;
// the profile says whether the post-op path ran, and epilogues it must not take (a result also
// returned, a sigmoid, weights that are no constant) still compute the reference.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "codegen_cpu/testing/convolution_check.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

// A dense constant's text in the IR (little-endian bytes as hex, as ir/printer writes them).
std::string HexFloats(const std::vector<float>& v) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
}

// `n` values in [-1, 1) from a fixed sequence.
std::vector<float> Values(int n, unsigned seed) {
  std::vector<float> v(n);
  for (float& f : v) {
    seed = seed * 1664525u + 1013904223u;
    f = static_cast<float>(seed >> 8) / static_cast<float>(1 << 23) - 1.0f;
  }
  return v;
}

std::string Scalar(const char* id, float v) {
  return absl::StrCat("  ", id, ": f32[] = constant dense \"", HexFloats({v}), "\"\n");
}

// x [batch, 5, 24] @ w + b (`bias`; else relu(x @ w)), then `epilogue`: lines that read %4
// and define %9 (returned; none: %4 is; `also_mm` returns the product x @ w too). `w_input`:
// w is a graph input instead of a constant.
std::string LinearGraph(const std::string& epilogue, bool bias = true, bool residual = false,
                        bool also_mm = false, bool w_input = false) {
  const std::string shape = "f32[batch, 5, 40]";
  const std::string w = absl::StrCat("f32[24, 40]");
  return absl::StrCat(
      "graph @linear(%0 \"x\": f32[batch, 5, 24]", w_input ? absl::StrCat(", %1 \"w\": ", w) : "",
      residual ? absl::StrCat(", %8 \"r\": ", shape) : "",
      ") {\n  symbol batch min 1 max 0 hint 2\n",
      w_input ? "" : absl::StrCat("  %1 \"w\": ", w, " = constant dense \"",
                                  HexFloats(Values(24 * 40, 1)), "\"\n"),
      "  %2 \"b\": f32[40] = constant dense \"", HexFloats(Values(40, 2)), "\"\n",
      "  %3: ", shape, " = aten.matmul(%0, %1)\n",
      bias ? absl::StrCat("  %4: ", shape, " = aten.add(%3, %2) {alpha = 1}\n")
           : absl::StrCat("  %4: ", shape, " = aten.relu(%3)\n"),
      epilogue, "  return ", epilogue.empty() ? "%4" : "%9", also_mm ? ", %3" : "", "\n}\n");
}

const char kGeluErf[] = "  %9: f32[batch, 5, 40] = aten.gelu(%4) {approximate = \"none\"}\n";
const char kGeluTanh[] = "  %9: f32[batch, 5, 40] = aten.gelu(%4) {approximate = \"tanh\"}\n";
const char kRelu[] = "  %9: f32[batch, 5, 40] = aten.relu(%4)\n";
const char kAdd[] = "  %9: f32[batch, 5, 40] = aten.add(%8, %4) {alpha = 1}\n";
const char kSigmoid[] = "  %9: f32[batch, 5, 40] = aten.sigmoid(%4)\n";

// GELU as torch.onnx exports it for opset 17 (BERT's): ((v * (erf(v / sqrt 2) + 1)) * 0.5),
// the constants scalar initializers.
std::string OnnxGeluErf() {
  const std::string s = "f32[batch, 5, 40]";
  return absl::StrCat(Scalar("%20", static_cast<float>(std::sqrt(2.0))), "  %21: ", s,
                      " = aten.div(%4, %20) {rounding_mode = \"\"}\n  %22: ", s, " = aten.erf(%21)\n",
                      Scalar("%23", 1.0f), "  %24: ", s, " = aten.add(%22, %23) {alpha = 1}\n",
                      "  %25: ", s, " = aten.mul(%4, %24)\n", Scalar("%26", 0.5f), "  %9: ", s,
                      " = aten.mul(%25, %26)\n");
}

// GELU tanh as GPT-2's export spells it: 0.5 * (v * (1 + tanh(c * (v + 0.044715 * v * v^2)))).
std::string OnnxGeluTanh() {
  const std::string s = "f32[batch, 5, 40]";
  return absl::StrCat(
      Scalar("%20", 0.5f), Scalar("%21", 1.0f),
      Scalar("%22", static_cast<float>(std::sqrt(2 / M_PI))), Scalar("%23", 0.044715f),
      "  %24: ", s, " = aten.mul(%4, %4)\n  %25: ", s, " = aten.mul(%4, %24)\n  %26: ", s,
      " = aten.mul(%23, %25)\n  %27: ", s, " = aten.add(%4, %26) {alpha = 1}\n  %28: ", s,
      " = aten.mul(%22, %27)\n  %29: ", s, " = aten.tanh(%28)\n  %30: ", s,
      " = aten.add(%21, %29) {alpha = 1}\n  %31: ", s, " = aten.mul(%4, %30)\n  %9: ", s,
      " = aten.mul(%20, %31)\n");
}

std::string Check(const std::string& text) {
  return CheckConvolutionGraph(text, {.abs = 2e-5, .rel = 2e-5}, {1, 3, 1}, "aten.mm");
}

// oneDNN must be loadable (the setup installs Debian's libdnnl.so.2). By default the runtime
// measures the post-op path against the generated epilogue and keeps the faster;
// COIL_MM_POST_OPS=1 takes it wherever it can, so the tests that assert the path set it.
class MmPostOpsTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("COIL_MM_POST_OPS", "1", 1); }
  void TearDown() override { unsetenv("COIL_MM_POST_OPS"); }
};

constexpr char kFused[] = "extern aten.mm + post-ops";
constexpr char kUnfused[] = "extern aten.mm";

TEST_F(MmPostOpsTest, BiasAndActivations) {
  EXPECT_EQ(Check(LinearGraph("")), kFused);  // the bias alone
  EXPECT_EQ(Check(LinearGraph(kRelu)), kFused);
  EXPECT_EQ(Check(LinearGraph(kGeluErf)), kFused);
  EXPECT_EQ(Check(LinearGraph(kGeluTanh)), kFused);
  EXPECT_EQ(Check(LinearGraph(kGeluErf, /*bias=*/false)), kFused);  // relu, GELU
}

TEST_F(MmPostOpsTest, OnnxSpelledGelu) {
  EXPECT_EQ(Check(LinearGraph(OnnxGeluErf())), kFused);
  EXPECT_EQ(Check(LinearGraph(OnnxGeluTanh())), kFused);
}

TEST_F(MmPostOpsTest, ResidualAdd) {
  EXPECT_EQ(Check(LinearGraph(kAdd, true, /*residual=*/true)), kFused);
}

// Not taken: the product also returned (the epilogue is no longer the result's only reader),
// an epilogue without a post-op (sigmoid), weights computed at run time (no packed constant).
TEST_F(MmPostOpsTest, NotTaken) {
  EXPECT_EQ(Check(LinearGraph(kGeluErf, true, false, /*also_mm=*/true)), kUnfused);
  EXPECT_EQ(Check(LinearGraph(kSigmoid)), kUnfused);
  EXPECT_EQ(Check(LinearGraph(kGeluErf, true, false, false, /*w_input=*/true)), kUnfused);
}

// COIL_MM_POST_OPS=0 keeps the generated epilogue; unset, the path is measured (numerics
// only: timing decides).
TEST(MmPostOpsDefaultTest, OffAndMeasured) {
  setenv("COIL_MM_POST_OPS", "0", 1);
  EXPECT_EQ(Check(LinearGraph(OnnxGeluErf())), kUnfused);
  unsetenv("COIL_MM_POST_OPS");
  EXPECT_NE(Check(LinearGraph(OnnxGeluTanh())), "");
  EXPECT_NE(Check(LinearGraph(kAdd, true, true)), "");
}

}  // namespace
}  // namespace coil
