// The CUDA backend's GEMM path without a GPU (CI): the backend declares aten.mm / aten.bmm /
// aten.convolution to inductor as externs with epilogues, and runtime/cuda's plan (gemm_plan.h)
// says, for schedules inductor builds from small graphs, which buffers cuBLASLt reads and
// writes and which epilogues it applies itself (bias, a residual matrix, relu) or leaves to the
// generated kernel (gelu, bmm, a result read twice), and which GEMMs stay on the host (int64).
// Loading cuBLASLt from a name that does not exist is the clean "no cuBLASLt" error.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/cuda/cublaslt.h"
#include "runtime/cuda/gemm_plan.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"

namespace coil {
namespace {

using cuda::GemmPlan;

proto::Schedule Schedule(const std::string& text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  driver::DriverOptions options;
  options.backend = driver::CudaBackend();
  options.stop_after = driver::Stage::kInductor;
  options.cache = nullptr;
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(g), options);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok() || !r->schedule.has_value()) return {};
  return *r->schedule;
}

// The plan of the schedule's one GEMM kernel.
GemmPlan PlanOf(const proto::Schedule& s) {
  std::vector<GemmPlan> plans;
  for (const proto::Kernel& k : s.kernels()) {
    if (std::optional<GemmPlan> p = cuda::PlanGemm(s, k); p.has_value()) plans.push_back(*p);
  }
  EXPECT_EQ(plans.size(), 1u);
  return plans.empty() ? GemmPlan{} : plans[0];
}

std::string NameOf(const proto::Schedule& s, int buffer) {
  for (const proto::Buffer& b : s.buffers()) {
    if (b.id() == buffer) return b.name();
  }
  return "(none)";
}

int OutputBuffer(const proto::Schedule& s) { return s.outputs(0); }

TEST(CudaGemmPlanTest, TheBackendDeclaresGemmAndConvolutionEpilogues) {
  driver::BackendCapabilities c = driver::CudaBackend()->capabilities();
  for (const char* op : {"aten.mm", "aten.bmm", "aten.convolution"}) {
    EXPECT_NE(std::find(c.externs.begin(), c.externs.end(), op), c.externs.end()) << op;
    EXPECT_NE(std::find(c.inductor.extern_epilogues.begin(), c.inductor.extern_epilogues.end(), op),
              c.inductor.extern_epilogues.end())
        << op;
  }
}

TEST(CudaGemmPlanTest, LinearReluFusesBiasAndRelu) {
  proto::Schedule s =
      Schedule(R"(graph @g(%0 "x": f32[batch, 6], %1 "w": f32[4, 6], %2 "b": f32[4]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[batch, 4] = aten.linear(%0, %1, %2)
  %4: f32[batch, 4] = aten.relu(%3)
  return %4
})");
  GemmPlan p = PlanOf(s);
  EXPECT_TRUE(p.unsupported.empty()) << p.unsupported;
  ASSERT_TRUE(p.fused) << p.not_fused;
  EXPECT_FALSE(p.batched);
  EXPECT_EQ(p.dtype, proto::FLOAT32);
  EXPECT_EQ(NameOf(s, p.a), "x");
  EXPECT_EQ(NameOf(s, p.bias), "b");
  EXPECT_EQ(p.c, 0);
  EXPECT_TRUE(p.relu);
  EXPECT_EQ(p.d, OutputBuffer(s)) << "the GEMM writes the graph's output directly";
}

TEST(CudaGemmPlanTest, LinearWithoutActivationFusesTheBiasOnly) {
  proto::Schedule s = Schedule(R"(graph @g(%0 "x": f32[5, 6], %1 "w": f32[4, 6], %2 "b": f32[4]) {
  %3: f32[5, 4] = aten.linear(%0, %1, %2)
  return %3
})");
  GemmPlan p = PlanOf(s);
  ASSERT_TRUE(p.fused) << p.not_fused;
  EXPECT_EQ(NameOf(s, p.bias), "b");
  EXPECT_FALSE(p.relu);
}

TEST(CudaGemmPlanTest, ResidualAddBecomesTheCMatrix) {
  proto::Schedule s =
      Schedule(R"(graph @g(%0 "x": f32[5, 6], %1 "w": f32[6, 4], %2 "r": f32[5, 4]) {
  %3: f32[5, 4] = aten.mm(%0, %1)
  %4: f32[5, 4] = aten.add(%2, %3) {alpha = 1}
  return %4
})");
  GemmPlan p = PlanOf(s);
  ASSERT_TRUE(p.fused) << p.not_fused;
  EXPECT_EQ(NameOf(s, p.c), "r");
  EXPECT_EQ(p.bias, 0);
  EXPECT_EQ(NameOf(s, p.b), "w");
}

TEST(CudaGemmPlanTest, HalfPrecisionLinearReluFusesThroughItsF32Epilogue) {
  for (const char* t : {"f16", "bf16"}) {
    SCOPED_TRACE(t);
    proto::Schedule s =
        Schedule(absl::StrReplaceAll(R"(graph @g(%0 "x": T[7, 8], %1 "w": T[16, 8], %2 "b": T[16]) {
  %3: T[7, 16] = aten.linear(%0, %1, %2)
  %4: T[7, 16] = aten.relu(%3)
  return %4
})",
                                     {{"T", t}}));
    GemmPlan p = PlanOf(s);
    ASSERT_TRUE(p.fused) << p.not_fused;
    EXPECT_EQ(p.dtype, std::string(t) == "f16" ? proto::FLOAT16 : proto::BFLOAT16);
    EXPECT_EQ(NameOf(s, p.bias), "b");
    EXPECT_TRUE(p.relu);
  }
}

TEST(CudaGemmPlanTest, EpiloguesCuBlasLtCannotApplyStayGenerated) {
  struct Case {
    const char* name;
    const char* text;
    const char* why;
  };
  const Case cases[] = {
      {"gelu (erf)", R"(graph @g(%0 "x": f32[5, 6], %1 "w": f32[4, 6], %2 "b": f32[4]) {
  %3: f32[5, 4] = aten.linear(%0, %1, %2)
  %4: f32[5, 4] = aten.gelu(%3) {approximate = "none"}
  return %4
})",
       "computes more than relu(GEMM + bias + matrix)"},
      {"maximum with 1", R"(graph @g(%0 "x": f32[5, 6], %1 "w": f32[6, 4]) {
  %2: f32[5, 4] = aten.mm(%0, %1)
  %3: f32[5, 4] = aten.clamp_min(%2) {min = 1.0}
  return %3
})",
       "not a relu"},
      {"the pre-activation is an output too", R"(graph @g(%0 "x": f32[5, 6], %1 "w": f32[6, 4]) {
  %2: f32[5, 4] = aten.mm(%0, %1)
  %3: f32[5, 4] = aten.relu(%2)
  return %2, %3
})",
       ""},
      {"bmm", R"(graph @g(%0 "x": f32[3, 5, 6], %1 "w": f32[3, 6, 4]) {
  %2: f32[3, 5, 4] = aten.bmm(%0, %1)
  %3: f32[3, 5, 4] = aten.relu(%2)
  return %3
})",
       "aten.mm only"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    GemmPlan p = PlanOf(Schedule(c.text));
    EXPECT_TRUE(p.unsupported.empty()) << p.unsupported;
    EXPECT_FALSE(p.fused);
    EXPECT_EQ(p.bias, 0);
    EXPECT_FALSE(p.relu);
    EXPECT_FALSE(p.not_fused.empty());
    EXPECT_TRUE(absl::StrContains(p.not_fused, c.why)) << p.not_fused;
  }
}

TEST(CudaGemmPlanTest, IntegerGemmsStayOnTheHost) {
  GemmPlan p = PlanOf(Schedule(R"(graph @g(%0 "x": i64[5, 6], %1 "w": i64[6, 4]) {
  %2: i64[5, 4] = aten.mm(%0, %1)
  return %2
})"));
  EXPECT_TRUE(absl::StrContains(p.unsupported, "cuBLASLt has no INT64 GEMM")) << p.unsupported;
  EXPECT_FALSE(p.fused);
}

// A dense constant's hex (ir/printer.h): rows x cols values (i * 7 % 13 - 6) / 8, f32 or bf16
// (the f32 bits' upper half: these values are exact in bf16).
std::string DenseHex(bool bf16, int rows, int cols) {
  std::string hex;
  for (int i = 0; i < rows * cols; ++i) {
    const float v = static_cast<float>(i * 7 % 13 - 6) / 8;
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    const int bytes = bf16 ? 2 : 4;
    if (bf16) bits >>= 16;
    for (int b = 0; b < bytes; ++b) absl::StrAppend(&hex, absl::Hex((bits >> (8 * b)) & 0xff, absl::kZeroPad2));
  }
  return hex;
}

// GPT-2's LM head: [batch, 4, 8] x a constant [8, 5], the logits a graph output. The mm writes
// the output itself (inductor's reshape copy is not launched), and its B, whose rows (5 f32,
// 20 bytes) are not 16-byte aligned, is kept transposed.
TEST(CudaGemmPlanTest, LmHeadWritesTheReshapedOutputWithATransposedConstant) {
  proto::Schedule s = Schedule(absl::StrCat(R"(graph @g(%0 "x": f32[batch, 4, 8]) {
  symbol batch min 1 max 0 hint 2
  %1 "w": f32[8, 5] = constant dense ")", DenseHex(false, 8, 5), R"("
  %2: f32[batch, 4, 5] = aten.matmul(%0, %1)
  return %2
})"));
  GemmPlan p = PlanOf(s);
  EXPECT_TRUE(p.unsupported.empty()) << p.unsupported;
  EXPECT_NE(p.forward_kernel, 0);
  EXPECT_EQ(p.forward_d, OutputBuffer(s));
  EXPECT_EQ(p.forward_dtype, proto::FLOAT32);
  EXPECT_TRUE(p.transpose_b);
  EXPECT_FALSE(p.pad_b);
}

// The same under autocast's shape: bf16 operands, the bf16 logits widened to an f32 output by a
// convert kernel, which the GEMM replaces by writing f32 itself; B is not transposed.
TEST(CudaGemmPlanTest, Bf16LmHeadWritesTheF32Output) {
  proto::Schedule s = Schedule(absl::StrCat(R"(graph @g(%0 "x": f32[batch, 4, 8]) {
  symbol batch min 1 max 0 hint 2
  %1 "w": bf16[8, 5] = constant dense ")", DenseHex(true, 8, 5), R"("
  %2: bf16[batch, 4, 8] = aten.to_dtype(%0) {dtype = bf16}
  %3: bf16[batch, 4, 5] = aten.matmul(%2, %1)
  %4: f32[batch, 4, 5] = aten.to_dtype(%3) {dtype = f32}
  return %4
})"));
  GemmPlan p = PlanOf(s);
  EXPECT_EQ(p.dtype, proto::BFLOAT16);
  EXPECT_NE(p.forward_kernel, 0);
  EXPECT_EQ(p.forward_d, OutputBuffer(s));
  EXPECT_EQ(p.forward_dtype, proto::FLOAT32);
  // 5 bf16 = 10 bytes a row: bf16 B is kept with padded rows (transposed it was slower on an
  // H100).
  EXPECT_FALSE(p.transpose_b);
  EXPECT_TRUE(p.pad_b);
}

// Not forwarded: the result has a second reader; an aligned constant stays as it is.
TEST(CudaGemmPlanTest, AResultReadTwiceIsNotForwarded) {
  proto::Schedule s = Schedule(absl::StrCat(R"(graph @g(%0 "x": f32[batch, 4, 8]) {
  symbol batch min 1 max 0 hint 2
  %1 "w": f32[8, 8] = constant dense ")", DenseHex(false, 8, 8), R"("
  %2: f32[batch, 4, 8] = aten.matmul(%0, %1)
  %3: f32[batch, 4, 8] = aten.relu(%2)
  return %2, %3
})"));
  GemmPlan p = PlanOf(s);
  EXPECT_EQ(p.forward_kernel, 0);
  EXPECT_FALSE(p.transpose_b);
  EXPECT_FALSE(p.pad_b);
}

TEST(CudaGemmPlanTest, TransposeMatrixSwapsRowsAndColumns) {
  // [2, 3] of 2-byte elements "a0 a1 a2 / b0 b1 b2" -> [3, 2].
  EXPECT_EQ(cuda::TransposeMatrix("a0a1a2b0b1b2", 2, 3, 2), "a0b0a1b1a2b2");
  EXPECT_EQ(cuda::TransposeMatrix("abcdef", 3, 2, 1), "acebdf");
}

TEST(CudaGemmPlanTest, NoLibraryIsACleanError) {
  absl::StatusOr<const cuda::CublasLt*> lt =
      cuda::CublasLt::Load({"libcoil_no_such_cublasLt.so.13"});
  ASSERT_FALSE(lt.ok());
  EXPECT_EQ(lt.status().code(), absl::StatusCode::kFailedPrecondition) << lt.status();
  EXPECT_TRUE(absl::StartsWith(lt.status().message(), "no cuBLASLt (")) << lt.status();
  EXPECT_TRUE(absl::StrContains(lt.status().message(), "libcoil_no_such_cublasLt.so.13"))
      << lt.status();
}

}  // namespace
}  // namespace coil
