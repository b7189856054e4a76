// bf16 convolutions' fused epilogues (--precision bf16's activations) as oneDNN post-ops
// (runtime/cpu/internal/extern_epilogue.h reads bf16 epilogues, and the f32 compute between
// converts of a residual add): the real pipeline (parse, decompose, inductor with the CPU
// capabilities, codegen, CpuProgram) against the float64 reference interpreter on the same
// bf16 values, within one bf16 rounding of the output (oneDNN rounds once where the generated
// epilogue rounds the convolution's result first). COIL_CONV_POST_OPS=all asks for the post-op
// path wherever the epilogue matches; it runs exactly when oneDNN takes a bf16 convolution on
// this CPU (AVX-512; asked of the registered implementation directly), otherwise the
// generated epilogue runs: the test asserts that equivalence, so it holds on any CPU.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_cpu/testing/convolution_check.h"
#include "gtest/gtest.h"
#include "runtime/cpu/externs.h"

namespace coil {
namespace {

constexpr char kShape[] = "bf16[batch, 8, 9, 9]";

std::string ConvGraph(int groups, const std::string& epilogue, bool residual) {
  return absl::StrCat(
      "graph @conv(%0 \"x\": ", kShape, ", %1 \"w\": bf16[8, ", 8 / groups,
      ", 3, 3], %2 \"b\": bf16[8]", residual ? absl::StrCat(", %8 \"r\": ", kShape) : "",
      ") {\n  symbol batch min 1 max 0 hint 2\n  %3: ", kShape,
      " = aten.convolution(%0, %1, %2) {dilation = [1], groups = ", groups,
      ", output_padding = [0], padding = [1], stride = [1], transposed = false}\n", epilogue,
      "  return %9\n}\n");
}

const std::string kRelu = absl::StrCat("  %9: ", kShape, " = aten.relu(%3)\n");
const std::string kRelu6 = absl::StrCat(
    "  %9: ", kShape,
    " = aten.clamp(%3) {min = 0.0, max = 6.0, has_min = true, has_max = true}\n");
const std::string kAddRelu = absl::StrCat("  %4: ", kShape, " = aten.add(%8, %3) {alpha = 1}\n",
                                          "  %9: ", kShape, " = aten.relu(%4)\n");

// Whether the registered aten.convolution takes a bf16 call with these groups on this machine
// (oneDNN with a bf16 implementation other than its reference one; oneDNN's choice differs by
// CPU and by convolution kind, so the probe is the test's own shape).
bool OneDnnTakesBf16Convolutions(int groups) {
  const cpu::ExternImpl* impl = cpu::ExternRegistry::Default().Find("aten.convolution");
  if (impl == nullptr) return false;
  std::vector<char> x(2 * 8 * 9 * 9 * 2), w(8 * (8 / groups) * 3 * 3 * 2), o(2 * 8 * 9 * 9 * 2);
  std::vector<cpu::ExternTensor> in = {{proto::BFLOAT16, {2, 8, 9, 9}, x.data()},
                                       {proto::BFLOAT16, {8, 8 / groups, 3, 3}, w.data()}};
  cpu::ExternTensor out{proto::BFLOAT16, {2, 8, 9, 9}, o.data()};
  const AttrMap attrs = {{"stride", IntList{1}},   {"padding", IntList{1}},
                         {"dilation", IntList{1}}, {"transposed", false},
                         {"groups", int64_t{groups}}, {"output_padding", IntList{0}}};
  absl::StatusOr<bool> ran = (*impl)(cpu::ExternArgs{in, out, attrs, 1});
  return ran.ok() && *ran;
}

// The pipeline against the float64 interpreter at batch sizes 1, 3; the convolution's kind.
// bf16 keeps 8 significant bits: two roundings of the output apart at most.
std::string CheckAgainstInterpreter(const std::string& text) {
  return CheckConvolutionGraph(text, {.abs = 2e-2, .rel = 1.6e-2}, {1, 3});
}

class ConvPostOpsBf16Test : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { setenv("COIL_CONV_POST_OPS", "all", 1); }
  void TearDown() override { unsetenv("COIL_CONV_POST_OPS"); }
};

TEST_P(ConvPostOpsBf16Test, FusedWhereOneDnnTakesBf16) {
  const int groups = GetParam();
  const bool fusable = OneDnnTakesBf16Convolutions(groups);
  const std::string plain = "extern aten.convolution";
  const std::string fused = "extern aten.convolution + post-ops";
  std::printf("oneDNN takes bf16 convolutions with %d groups here: %s\n", groups,
              fusable ? "yes" : "no");
  // Element-wise post-ops ride on the convolution oneDNN takes; the residual add is a binary
  // post-op, which an implementation may still decline: either kind then, numbers checked.
  EXPECT_EQ(CheckAgainstInterpreter(ConvGraph(groups, kRelu, false)), fusable ? fused : plain)
      << "relu";
  EXPECT_EQ(CheckAgainstInterpreter(ConvGraph(groups, kRelu6, false)), fusable ? fused : plain)
      << "relu6";
  const std::string add = CheckAgainstInterpreter(ConvGraph(groups, kAddRelu, true));
  if (fusable) {
    EXPECT_TRUE(add == fused || add == plain) << "add + relu: " << add;
  } else {
    EXPECT_EQ(add, plain) << "add + relu";
  }
}

// The measured default (post-ops against the generated epilogue per site): numerics only.
TEST_P(ConvPostOpsBf16Test, MeasuredChoice) {
  unsetenv("COIL_CONV_POST_OPS");
  const int groups = GetParam();
  for (const std::string& epilogue : {kRelu, kRelu6}) {
    const std::string kind = CheckAgainstInterpreter(ConvGraph(groups, epilogue, false));
    EXPECT_TRUE(absl::StartsWith(kind, "extern aten.convolution")) << kind;
  }
}

INSTANTIATE_TEST_SUITE_P(Groups, ConvPostOpsBf16Test, ::testing::Values(1, 8),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return i.param == 1 ? std::string("Dense") : std::string("Depthwise");
                         });

}  // namespace
}  // namespace coil
