// A convolution's residual add written in place over the residual (inductor's
// extern_epilogue_in_place for the CPU) and run as oneDNN's `sum` post-op
// (runtime/cpu/internal/dnnl_conv.cc): the Schedule puts the epilogue's result on the residual's
// bytes, and the compiled block computes the float64 reference with the post-op path forced,
// measured (every trial of the measured choices starts from the saved residual) and with the
// in-place plan off (COIL_CONV_SUM=0).
#include <optional>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "codegen_cpu/cpu_program.h"
#include "codegen_cpu/testing/convolution_check.h"
#include "codegen_cpu/testing/cpu_schedule.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"

namespace coil {
namespace {

// Two bottleneck-like blocks on x [batch, 8, 9, 9]: a = relu(conv(x)), 1x1; each block e' =
// relu(conv3(relu(conv2(relu(conv1(e))))) + e), conv1 and conv2 1x1, conv3 `kernel3` square;
// then a last 1x1 convolution, so the blocks' results stay intermediates. The first block's
// residual is a relu that inductor recomputes in conv3's epilogue (no post-ops there); the
// second block's is the first block's stored result, read by its conv1 and by its conv3's
// epilogue, where it dies: that epilogue is written in place over it (convolution 6 of 8).
std::string BlockGraph(int kernel3) {
  const std::string act = "f32[batch, 8, 9, 9]";
  std::string params = absl::StrCat("%0 \"x\": ", act), body;
  int next = 1;
  auto conv = [&](int in, int k) {
    const int w = next++, b = next++, out = next++;
    absl::StrAppend(&params, ", %", w, " \"w", w, "\": f32[8, 8, ", k, ", ", k, "], %", b,
                    " \"b", b, "\": f32[8]");
    absl::StrAppend(&body, "  %", out, ": ", act, " = aten.convolution(%", in, ", %", w, ", %", b,
                    ") {dilation = [1], groups = 1, output_padding = [0], padding = [", k / 2,
                    "], stride = [1], transposed = false}\n");
    return out;
  };
  auto op = [&](const std::string& name, const std::string& args, const std::string& attrs) {
    const int out = next++;
    absl::StrAppend(&body, "  %", out, ": ", act, " = ", name, "(", args, ")", attrs, "\n");
    return out;
  };
  auto relu = [&](int in) { return op("aten.relu", absl::StrCat("%", in), ""); };
  int e = relu(conv(0, 1));
  for (int block = 0; block < 2; ++block) {
    const int c = conv(relu(conv(relu(conv(e, 1)), 1)), kernel3);
    e = relu(op("aten.add", absl::StrCat("%", c, ", %", e), " {alpha = 1}"));
  }
  const int y = conv(e, 1);
  return absl::StrCat("graph @blocks(", params, ") {\n  symbol batch min 1 max 0 hint 2\n", body,
                      "  return %", y, "\n}\n");
}

// Whether the Schedule writes an extern convolution's epilogue in place over a buffer it reads.
bool EpilogueInPlace(const std::string& text) {
  std::optional<proto::Schedule> s = CpuScheduleOf(text);
  if (!s.has_value()) return false;
  for (const proto::Kernel& k : s->kernels()) {
    if (k.kind() != proto::Kernel::EXTERN || k.extern_op() != "aten.convolution") continue;
    for (const proto::Loop& l : k.loops()) {
      for (const proto::Expr& e : l.body()) {
        if (e.kind() != proto::Expr::STORE) continue;
        for (const proto::Buffer& b : s->buffers()) {
          if (b.id() == e.buffer() && b.in_place()) return true;
        }
      }
    }
  }
  return false;
}

constexpr char kFused[] = "extern aten.convolution + post-ops";
constexpr char kUnfused[] = "extern aten.convolution";

// Random weights in [-1, 1] make the activations grow to tens through the residual sums, so
// f32 sums in another order (oneDNN's algorithms per thread count) differ from the float64
// reference by up to about 1e-3 of them; a residual added once too often or not at all is off by
// the residual itself.
std::string CheckBlock(int kernel3) {
  return CheckConvolutionGraph(BlockGraph(kernel3), {.abs = 1e-3, .rel = 1e-3}, {1, 3, 1},
                               "aten.convolution", /*nth=*/6);
}

class ConvSumTest : public ::testing::TestWithParam<int> {
 protected:
  void TearDown() override {
    unsetenv("COIL_CONV_POST_OPS");
    unsetenv("COIL_CONV_SUM");
  }
};

// oneDNN (Debian's libdnnl.so.2) must be loadable, as for conv_post_ops_test.
TEST_P(ConvSumTest, ResidualAccumulatedInPlace) {
  EXPECT_TRUE(EpilogueInPlace(BlockGraph(GetParam())));
  setenv("COIL_CONV_POST_OPS", "1", 1);
  EXPECT_EQ(CheckBlock(GetParam()), kFused);
}

TEST_P(ConvSumTest, MeasuredChoicesStartFromTheResidual) {
  const std::string kind = CheckBlock(GetParam());
  EXPECT_TRUE(kind == kFused || kind == kUnfused) << kind;
  // The generated epilogue, in place, as the other path.
  setenv("COIL_CONV_POST_OPS", "0", 1);
  EXPECT_EQ(CheckBlock(GetParam()), kUnfused);
}

TEST_P(ConvSumTest, WithoutTheInPlacePlan) {
  setenv("COIL_CONV_SUM", "0", 1);
  EXPECT_FALSE(EpilogueInPlace(BlockGraph(GetParam())));
  setenv("COIL_CONV_POST_OPS", "1", 1);
  EXPECT_EQ(CheckBlock(GetParam()), kFused);  // a binary post-op into the channels-last result
}

INSTANTIATE_TEST_SUITE_P(Kernel3, ConvSumTest, ::testing::Values(1, 3),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return absl::StrCat("Conv", i.param, "x", i.param);
                         });

}  // namespace
}  // namespace coil
