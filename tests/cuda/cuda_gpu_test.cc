// The CUDA backend on a GPU: every test graph compiled by the compile driver with the CUDA
// backend and run at two batch sizes, each output compared with the Schedule interpreter (the
// float64 oracle) on the same Schedule and inputs; GEMMs through cuBLASLt and convolutions
// through cuDNN (with the path each took); data errors (a gather index out of bounds,
// an integer division by zero) reported as Statuses naming the kernel.
//
// Tagged "gpu". Without a CUDA driver the tests check that loading fails cleanly with "no CUDA
// driver" and skip, saying so.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/cuda/executable.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"
#include "tests/cuda/cuda_gpu_testing.h"
#include "tests/cuda/cuda_test_graphs.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"

namespace coil {
namespace {

using cuda_testing::Compile;
using cuda_testing::Compiled;
using cuda_testing::ExpectClose;
using cuda_testing::InputSpec;
using cuda_testing::RandomInputs;

// Compiles each graph of `graphs` and runs it against the Schedule interpreter at each batch
// size, in order (seeded with seed + batch).
void ExpectGraphsMatch(const std::vector<cuda_testing::TestGraph>& graphs,
                       std::initializer_list<int64_t> batches, int seed) {
  for (const cuda_testing::TestGraph& t : graphs) {
    SCOPED_TRACE(t.name);
    std::unique_ptr<Compiled> c = Compile(t.text);
    ASSERT_NE(c, nullptr);
    for (int64_t batch : batches) {
      std::vector<HostTensor> inputs = RandomInputs(c->graph, batch, seed + batch, t.spec);
      absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->schedule, inputs);
      ASSERT_TRUE(want.ok()) << want.status();
      absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run(inputs);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(want->size(), got->size());
      for (size_t o = 0; o < want->size(); ++o) {
        ExpectClose((*want)[o], (*got)[o], absl::StrCat(t.name, " batch ", batch, " output ", o));
      }
    }
  }
}

TEST(CudaGpuTest, TestGraphsMatchTheScheduleInterpreter) {
  REQUIRE_GPU();
  // The last batch is smaller than the one before: the kept input/output buffers are reused.
  ExpectGraphsMatch(cuda_testing::TestGraphs(), {2, 37, 1000, 5}, 11);
}

// The memory-bound rows (scalar constants as literals, one-cvt bf16 rounding and stores, the
// division paths, persistent rows with partial last groups) at batch 1, 37 and 1000.
TEST(CudaGpuTest, MemoryBoundGraphsMatchTheScheduleInterpreter) {
  REQUIRE_GPU();
  ExpectGraphsMatch(cuda_testing::MemoryBoundGraphs(), {1, 37, 1000}, 7);
}

// The generation choices that claim bit-identical results (row divisions, packed bf16 pairs,
// the row kernels' minimum blocks per SM, their L2 prefetch of later rows) give the same bytes
// as the code without them, on the memory-bound graphs at batch 300 (softmax's x / sum, the
// layernorm + gelu tail in bf16x2), random inputs with special values in every 97th element.
TEST(CudaGpuTest, ExactGenerationChoicesGiveTheSameBits) {
  REQUIRE_GPU();
  cuda_testing::BackendChoices plain;
  plain.codegen.row_division = false;
  plain.codegen.packed_pairs = false;
  plain.codegen.row_min_blocks = 0;
  plain.codegen.row_prefetch = false;
  for (const cuda_testing::TestGraph& t : cuda_testing::MemoryBoundGraphs()) {
    SCOPED_TRACE(t.name);
    std::unique_ptr<Compiled> a = Compile(t.text);
    std::unique_ptr<Compiled> b = Compile(t.text, plain);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    std::vector<HostTensor> inputs = RandomInputs(a->graph, 300, 5, t.spec);
    // Special values in some rows of every floating input: infinities (softmax's masked -inf:
    // zero exponentials), NaN, huge and tiny magnitudes (subnormal exponentials and quotients),
    // so that the row divisions' IEEE branch and the pairs' special cases run too.
    const double specials[] = {-INFINITY, INFINITY, NAN, -1e30, 1e30, 1e-40, -0.0, 0.0, -80.0, 80.0};
    for (HostTensor& in : inputs) {
      if (in.dtype() != proto::FLOAT32 && in.dtype() != proto::BFLOAT16 &&
          in.dtype() != proto::FLOAT16) {
        continue;
      }
      const int64_t n = in.numel();
      for (int64_t i = 0; i < n; i += 97) in.StoreDouble(i, specials[(i / 97) % 10]);
    }
    absl::StatusOr<std::vector<HostTensor>> x = a->exe->Run(inputs);
    absl::StatusOr<std::vector<HostTensor>> y = b->exe->Run(inputs);
    ASSERT_TRUE(x.ok()) << x.status();
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ(x->size(), y->size());
    for (size_t o = 0; o < x->size(); ++o) {
      // Every element exactly (the sign of zero too); a NaN matches any NaN (payloads aside).
      const std::vector<double> vx = (*x)[o].ToDoubles(), vy = (*y)[o].ToDoubles();
      ASSERT_EQ(vx.size(), vy.size());
      size_t differ = 0, first = vx.size();
      for (size_t i = 0; i < vx.size(); ++i) {
        const bool same = (std::isnan(vx[i]) && std::isnan(vy[i])) ||
                          (vx[i] == vy[i] && std::signbit(vx[i]) == std::signbit(vy[i]));
        if (!same) differ += first == vx.size() ? (first = i, 1) : 1;
      }
      EXPECT_EQ(differ, 0u) << "output " << o << ": first differing element " << first << ": "
                            << (first < vx.size() ? vx[first] : 0) << " against "
                            << (first < vy.size() ? vy[first] : 0);
    }
  }
}

// GEMM outputs: the largest error relative to the largest magnitude (sums of K products cancel,
// so element-wise relative errors mean little). f32 at 1e-5 also checks that TF32 is off (TF32
// is about 1e-3).
void ExpectGemmClose(const HostTensor& want, const HostTensor& got, const std::string& what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  ASSERT_EQ(want.dtype(), got.dtype()) << what;
  std::vector<double> a = want.ToDoubles(), b = got.ToDoubles();
  double scale = 0, worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      ASSERT_EQ(std::isnan(a[i]), std::isnan(b[i])) << what << " element " << i << ": interpreter " << a[i] << ", cuda " << b[i];
      continue;
    }
    scale = std::max(scale, std::abs(a[i]));
    worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  double tol = 1e-5;
  if (want.dtype() == proto::FLOAT16) tol = 2e-3;
  if (want.dtype() == proto::BFLOAT16) tol = 1.6e-2;
  if (want.dtype() == proto::FLOAT64) tol = 1e-12;
  if (!IsFloating(want.dtype())) tol = 0;
  EXPECT_LE(worst, tol * std::max(scale, 1.0)) << what << ": max error " << worst << " at scale " << scale;
}

// Which path a graph's GEMMs must take (CudaExecutable::gemm_counts).
enum class GemmPath { kFused, kPlain, kHost, kAny };

struct GemmGraph {
  const char* name;
  const char* text;
  GemmPath path;
};

// Every GEMM path: cuBLASLt with its bias / matrix / relu epilogue, cuBLASLt then a generated
// epilogue (gelu, bmm, a pre-activation that is an output too), f16/bf16/f64, shapes whose
// f16 rows are not 16-byte aligned, and int64 (the host).
const GemmGraph kGemmGraphs[] = {
    {"linear_relu", R"(graph @g(%0 "x": f32[batch, 129], %1 "w": f32[65, 129], %2 "b": f32[65]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[batch, 65] = aten.linear(%0, %1, %2)
  %4: f32[batch, 65] = aten.relu(%3)
  return %4
})", GemmPath::kFused},
    {"linear_512x256", R"(graph @g(%0 "x": f32[batch, 512], %1 "w": f32[256, 512], %2 "b": f32[256]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[batch, 256] = aten.linear(%0, %1, %2)
  return %3
})", GemmPath::kFused},
    {"mm_residual_relu", R"(graph @g(%0 "x": f32[batch, 96], %1 "w": f32[96, 80], %2 "r": f32[batch, 80]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[batch, 80] = aten.mm(%0, %1)
  %4: f32[batch, 80] = aten.add(%3, %2) {alpha = 1}
  %5: f32[batch, 80] = aten.relu(%4)
  return %5
})", GemmPath::kFused},
    {"linear_gelu", R"(graph @g(%0 "x": f32[batch, 64], %1 "w": f32[48, 64], %2 "b": f32[48]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[batch, 48] = aten.linear(%0, %1, %2)
  %4: f32[batch, 48] = aten.gelu(%3) {approximate = "none"}
  return %4
})", GemmPath::kPlain},
    {"pre_activation_output", R"(graph @g(%0 "x": f32[batch, 40], %1 "w": f32[40, 24]) {
  symbol batch min 2 max 0 hint 4
  %2: f32[batch, 24] = aten.mm(%0, %1)
  %3: f32[batch, 24] = aten.relu(%2)
  return %2, %3
})", GemmPath::kPlain},
    {"bmm_relu", R"(graph @g(%0 "x": f32[3, batch, 40], %1 "w": f32[3, 40, 24]) {
  symbol batch min 2 max 0 hint 4
  %2: f32[3, batch, 24] = aten.bmm(%0, %1)
  %3: f32[3, batch, 24] = aten.relu(%2)
  return %3
})", GemmPath::kPlain},
    {"attention_scores", R"(graph @g(%0 "q": f32[2, 3, batch, 16], %1 "k": f32[2, 3, batch, 16]) {
  symbol batch min 2 max 0 hint 4
  %2: f32[2, 3, 16, batch] = aten.transpose(%1) {dim0 = 2, dim1 = 3}
  %3: f32[2, 3, batch, batch] = aten.matmul(%0, %2)
  %4: f32[2, 3, batch, batch] = aten.softmax(%3) {dim = 3, dtype = none}
  return %4
})", GemmPath::kPlain},
    {"f16_linear_relu", R"(graph @g(%0 "x": f16[batch, 64], %1 "w": f16[32, 64], %2 "b": f16[32]) {
  symbol batch min 2 max 0 hint 4
  %3: f16[batch, 32] = aten.linear(%0, %1, %2)
  %4: f16[batch, 32] = aten.relu(%3)
  return %4
})", GemmPath::kFused},
    {"f16_unaligned", R"(graph @g(%0 "x": f16[batch, 33], %1 "w": f16[33, 17]) {
  symbol batch min 2 max 0 hint 4
  %2: f16[batch, 17] = aten.mm(%0, %1)
  return %2
})", GemmPath::kAny},
    {"bf16_bmm", R"(graph @g(%0 "x": bf16[4, batch, 32], %1 "w": bf16[4, 32, 48]) {
  symbol batch min 2 max 0 hint 4
  %2: bf16[4, batch, 48] = aten.bmm(%0, %1)
  return %2
})", GemmPath::kPlain},
    {"f64_mm", R"(graph @g(%0 "x": f64[batch, 20], %1 "w": f64[20, 10]) {
  symbol batch min 2 max 0 hint 4
  %2: f64[batch, 10] = aten.mm(%0, %1)
  return %2
})", GemmPath::kPlain},
    {"i64_mm_on_the_host", R"(graph @g(%0 "x": i64[batch, 20], %1 "w": i64[20, 10]) {
  symbol batch min 2 max 0 hint 4
  %2: i64[batch, 10] = aten.mm(%0, %1)
  return %2
})", GemmPath::kHost},
};

TEST(CudaGpuTest, GemmsRunOnCublasLtAndMatchTheScheduleInterpreter) {
  REQUIRE_GPU();
  for (const GemmGraph& t : kGemmGraphs) {
    SCOPED_TRACE(t.name);
    std::unique_ptr<Compiled> c = Compile(t.text);
    ASSERT_NE(c, nullptr);
    cuda::CudaExecutable* exe = driver::AsCudaExecutable(*c->exe);
    ASSERT_NE(exe, nullptr);
    EXPECT_TRUE(absl::StartsWith(exe->gemm_library(), "cuBLASLt ")) << exe->gemm_library();
    const cuda::CudaExecutable::GemmCounts before = exe->gemm_counts();
    EXPECT_EQ(before.fused + before.plain + before.host, 0);
    for (int64_t batch : {2, 37, 300, 7}) {
      std::vector<HostTensor> inputs = RandomInputs(c->graph, batch, 3 + batch, {});
      absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->schedule, inputs);
      ASSERT_TRUE(want.ok()) << want.status();
      absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run(inputs);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(want->size(), got->size());
      for (size_t o = 0; o < want->size(); ++o) {
        ExpectGemmClose((*want)[o], (*got)[o], absl::StrCat(t.name, " batch ", batch, " output ", o));
      }
    }
    const cuda::CudaExecutable::GemmCounts n = exe->gemm_counts();
    SCOPED_TRACE(absl::StrCat("GEMMs fused ", n.fused, ", plain ", n.plain, ", host ", n.host));
    EXPECT_GE(n.fused + n.plain + n.host, 3) << "one GEMM per run at least";
    switch (t.path) {
      case GemmPath::kFused: EXPECT_TRUE(n.fused > 0 && n.host == 0); break;
      case GemmPath::kPlain: EXPECT_TRUE(n.plain > 0 && n.fused == 0 && n.host == 0); break;
      case GemmPath::kHost: EXPECT_TRUE(n.host > 0 && n.fused == 0 && n.plain == 0); break;
      case GemmPath::kAny: break;
    }
  }
}

// GPT-2's LM head (gemm_plan.h): x [batch, 4, 64] times a constant [64, 33] whose rows are not
// 16-byte aligned, the result a graph output: cuBLASLt writes the output itself (the reshape
// copy, or the bf16 -> f32 convert, is not launched); in f32 it reads the transposed copy of
// the constant, in bf16 with gemm_padding the copy with padded rows (gemm_runner.h).
// f32 within the GEMM tolerance; bf16 operands with the f32 output unrounded, so within bf16's
// rounding of the interpreter's bf16 result.
TEST(CudaGpuTest, LmHeadGemmWritesTheGraphOutput) {
  REQUIRE_GPU();
  for (bool bf16 : {false, true}) for (bool padding : {false, true}) {
    std::string hex;
    for (int i = 0; i < 64 * 33; ++i) {
      const float v = static_cast<float>(i * 7 % 13 - 6) / 8;
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      if (bf16) bits >>= 16;
      for (int b = 0; b < (bf16 ? 2 : 4); ++b) absl::StrAppend(&hex, absl::Hex((bits >> (8 * b)) & 0xff, absl::kZeroPad2));
    }
    const std::string t = bf16 ? "bf16" : "f32";
    std::unique_ptr<Compiled> c = Compile(absl::StrCat(R"(graph @g(%0 "x": f32[batch, 4, 64]) {
  symbol batch min 1 max 0 hint 2
  %1 "w": )", t, R"([64, 33] = constant dense ")", hex, R"("
  %2: )", t, R"([batch, 4, 64] = aten.to_dtype(%0) {dtype = )", t, R"(}
  %3: )", t, R"([batch, 4, 33] = aten.matmul(%2, %1)
  %4: f32[batch, 4, 33] = aten.to_dtype(%3) {dtype = f32}
  return %4
})"), {.gemm_padding = padding});
    ASSERT_NE(c, nullptr);
    cuda::CudaExecutable* exe = driver::AsCudaExecutable(*c->exe);
    ASSERT_NE(exe, nullptr);
    for (int64_t batch : {2, 37, 300, 7}) {
      std::vector<HostTensor> inputs = RandomInputs(c->graph, batch, 5 + batch, {});
      absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->schedule, inputs);
      ASSERT_TRUE(want.ok()) << want.status();
      absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run(inputs);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(got->size(), 1u);
      const std::string what = absl::StrCat(t, " batch ", batch, padding ? " padded" : "");
      if (!bf16) {
        ExpectGemmClose((*want)[0], (*got)[0], what);
      } else {
        test_kit::ExpectClose((*want)[0], (*got)[0], {.abs = 1e-2, .rel = 8e-3}, what);
      }
    }
    const cuda::CudaExecutable::GemmCounts n = exe->gemm_counts();
    EXPECT_EQ(n.fused, 4) << t << ": the GEMM wrote the output in every run (plain " << n.plain << ", host " << n.host << ")";
  }
}

// A bf16 GEMM of at least a GFLOP whose output rows are not 16-byte aligned (N = 1001: 2002
// bytes a row) runs into a scratch matrix with padded rows (gemm_runner.h), then one pitched
// copy into a bf16 output, or the module's widening kernel into the f32 output it is forwarded
// to; smaller ones, and f32 ones (4004 bytes a row), write their output directly. Each against
// the interpreter.
TEST(CudaGpuTest, MisalignedOutputRowsMatchTheScheduleInterpreter) {
  REQUIRE_GPU();
  for (const auto& [t, out] : {std::pair{"f32", "f32"}, std::pair{"bf16", "f32"}, std::pair{"bf16", "bf16"}}) {
    const std::string widened = absl::StrCat("f32[batch, 1001] = aten.to_dtype(%4) {dtype = f32}");
    const std::string text = absl::StrCat(R"(graph @g(%0 "x": f32[batch, 512], %1 "w": f32[512, 1001]) {
  symbol batch min 1 max 0 hint 2
  %2: )", t, R"([batch, 512] = aten.to_dtype(%0) {dtype = )", t, R"(}
  %3: )", t, R"([512, 1001] = aten.to_dtype(%1) {dtype = )", t, R"(}
  %4: )", t, R"([batch, 1001] = aten.mm(%2, %3)
  )", std::string(out) == t ? "return %4" : absl::StrCat("%5: ", widened, "\n  return %5"), R"(
})");
    // Padding is a runtime option (the same Schedule): the interpreter's results, a GFLOP each
    // (minutes of the GPU job's time in all), are computed once for both executables.
    std::unique_ptr<Compiled> padded = Compile(text, {.gemm_padding = true});
    std::unique_ptr<Compiled> unpadded = Compile(text, {.gemm_padding = false});
    ASSERT_NE(padded, nullptr);
    ASSERT_NE(unpadded, nullptr);
    // 1.13 GFLOP, 7 MFLOP, 1.33 GFLOP; 1301 x 1001 outputs leave the widening kernel's last
    // thread a partial group of 4 (element stores), 1100 x 1001 does not.
    for (int64_t batch : {1100, 7, 1301}) {
      std::vector<HostTensor> inputs = RandomInputs(padded->graph, batch, 3 + batch, {});
      absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(padded->schedule, inputs);
      ASSERT_TRUE(want.ok()) << want.status();
      for (Compiled* c : {padded.get(), unpadded.get()}) {
        absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run(inputs);
        ASSERT_TRUE(got.ok()) << got.status();
        const std::string what = absl::StrCat(t, " -> ", out, " batch ", batch, c == padded.get() ? " padded" : "");
        if (std::string(t) == "f32") {
          ExpectGemmClose((*want)[0], (*got)[0], what);
        } else {
          test_kit::ExpectClose((*want)[0], (*got)[0], {.abs = 3e-2, .rel = 8e-3}, what);
        }
      }
    }
    for (Compiled* c : {padded.get(), unpadded.get()}) {
      cuda::CudaExecutable* exe = driver::AsCudaExecutable(*c->exe);
      ASSERT_NE(exe, nullptr);
      EXPECT_EQ(exe->gemm_counts().host, 0) << t << " -> " << out << ": every GEMM ran on the GPU";
    }
  }
}

// Timing cuBLASLt's candidates (gemm_tune 8) on a GEMM of 1.07 GFLOP at batch 512 (the first
// run times them into the output, then runs the chosen one) gives the interpreter's results in
// that run and the next; at batch 4 (below kTuneMinFlops) the heuristic's first runs.
TEST(CudaGpuTest, TunedGemmsMatchTheScheduleInterpreter) {
  REQUIRE_GPU();
  std::unique_ptr<Compiled> c = Compile(R"(graph @g(%0 "x": f32[batch, 1024], %1 "w": f32[1024, 1024], %2 "b": f32[1024]) {
  symbol batch min 1 max 0 hint 4
  %3: f32[batch, 1024] = aten.linear(%0, %1, %2)
  return %3
})", {.gemm_tune = 8});
  ASSERT_NE(c, nullptr);
  for (int64_t batch : {512, 512, 4}) {
    std::vector<HostTensor> inputs = RandomInputs(c->graph, batch, 11 + batch, {});
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->schedule, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectGemmClose((*want)[0], (*got)[0], absl::StrCat("tuned linear batch ", batch));
  }
}

// A NaN in a row of x makes that row of relu(x W^T + b) NaN, as torch and the interpreter
// (prims.maximum propagates NaN) say, also when cuBLASLt applies the relu.
TEST(CudaGpuTest, FusedReluKeepsNan) {
  REQUIRE_GPU();
  std::unique_ptr<Compiled> c = Compile(kGemmGraphs[0].text);
  ASSERT_NE(c, nullptr);
  std::vector<HostTensor> inputs = RandomInputs(c->graph, 8, 1, {});
  inputs[0].StoreDouble(5, NAN);  // row 0
  absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->schedule, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(std::isnan((*want)[0].ToDoubles()[0]));
  ExpectGemmClose((*want)[0], (*got)[0], "relu with a NaN row");
}

// Every convolution path (CudaExecutable::conv_counts): cuDNN with the epilogue fused or
// followed by the generated one (kGpu: either, never the host, since which graphs cuDNN has
// engines for depends on its version), and the host for what cuDNN cannot run.
enum class ConvPath { kGpu, kHost };

struct ConvGraph {
  const char* name;
  const char* text;
  ConvPath path;
};

#define COIL_CONV_ATTRS(s, p, d, g) \
  "{stride = [" s "], padding = [" p "], dilation = [" d "], transposed = false, output_padding = [0], groups = " g "}"

const ConvGraph kConvGraphs[] = {
    {"conv_bias_relu", R"(graph @g(%0 "x": f32[batch, 3, 12, 12], %1 "w": f32[8, 3, 3, 3], %2 "b": f32[8]) {
  symbol batch min 1 max 0 hint 2
  %3: f32[batch, 8, 12, 12] = aten.convolution(%0, %1, %2) )" COIL_CONV_ATTRS("1", "1", "1", "1") R"(
  %4: f32[batch, 8, 12, 12] = aten.relu(%3)
  return %4
})", ConvPath::kGpu},
    {"strided_dilated_grouped", R"(graph @g(%0 "x": f32[batch, 6, 17, 15], %1 "w": f32[8, 3, 3, 2]) {
  symbol batch min 1 max 0 hint 2
  %2: f32[batch, 8, 8, 8] = aten.convolution(%0, %1) )" COIL_CONV_ATTRS("2, 2", "1, 2", "2, 3", "2") R"(
  return %2
})", ConvPath::kGpu},
    {"residual_bias_relu", R"(graph @g(%0 "x": f32[batch, 16, 7, 7], %1 "w": f32[16, 16, 3, 3], %2 "b": f32[16], %3 "r": f32[batch, 16, 7, 7]) {
  symbol batch min 1 max 0 hint 2
  %4: f32[batch, 16, 7, 7] = aten.convolution(%0, %1, %2) )" COIL_CONV_ATTRS("1", "1", "1", "1") R"(
  %5: f32[batch, 16, 7, 7] = aten.add(%4, %3) {alpha = 1}
  %6: f32[batch, 16, 7, 7] = aten.relu(%5)
  return %6
})", ConvPath::kGpu},
    {"depthwise_stride2_bias", R"(graph @g(%0 "x": f32[batch, 32, 14, 14], %1 "w": f32[32, 1, 3, 3], %2 "b": f32[32]) {
  symbol batch min 1 max 0 hint 2
  %3: f32[batch, 32, 7, 7] = aten.convolution(%0, %1, %2) )" COIL_CONV_ATTRS("2", "1", "1", "32") R"(
  return %3
})", ConvPath::kGpu},
    {"conv1d_bias_gelu", R"(graph @g(%0 "x": f32[batch, 4, 40], %1 "w": f32[6, 4, 5], %2 "b": f32[6]) {
  symbol batch min 1 max 0 hint 2
  %3: f32[batch, 6, 18] = aten.convolution(%0, %1, %2) )" COIL_CONV_ATTRS("2", "0", "1", "1") R"(
  %4: f32[batch, 6, 18] = aten.gelu(%3) {approximate = "none"}
  return %4
})", ConvPath::kGpu},
    {"pointwise_1x1_64ch", R"(graph @g(%0 "x": f32[batch, 64, 8, 8], %1 "w": f32[128, 64, 1, 1], %2 "b": f32[128]) {
  symbol batch min 1 max 0 hint 2
  %3: f32[batch, 128, 8, 8] = aten.convolution(%0, %1, %2) )" COIL_CONV_ATTRS("1", "0", "1", "1") R"(
  %4: f32[batch, 128, 8, 8] = aten.relu(%3)
  return %3, %4
})", ConvPath::kGpu},
    {"f16_conv_bias_relu", R"(graph @g(%0 "x": f16[batch, 16, 10, 10], %1 "w": f16[32, 16, 3, 3], %2 "b": f16[32]) {
  symbol batch min 1 max 0 hint 2
  %3: f16[batch, 32, 10, 10] = aten.convolution(%0, %1, %2) )" COIL_CONV_ATTRS("1", "1", "1", "1") R"(
  %4: f16[batch, 32, 10, 10] = aten.relu(%3)
  return %4
})", ConvPath::kGpu},
    {"i64_conv_on_the_host", R"(graph @g(%0 "x": i64[batch, 2, 5, 5], %1 "w": i64[3, 2, 3, 3]) {
  symbol batch min 1 max 0 hint 2
  %2: i64[batch, 3, 3, 3] = aten.convolution(%0, %1) )" COIL_CONV_ATTRS("1", "0", "1", "1") R"(
  return %2
})", ConvPath::kHost},
};

TEST(CudaGpuTest, ConvolutionsRunOnCudnnAndMatchTheScheduleInterpreter) {
  REQUIRE_GPU();
  for (const ConvGraph& t : kConvGraphs) {
    SCOPED_TRACE(t.name);
    std::unique_ptr<Compiled> c = Compile(t.text);
    ASSERT_NE(c, nullptr);
    cuda::CudaExecutable* exe = driver::AsCudaExecutable(*c->exe);
    ASSERT_NE(exe, nullptr);
    EXPECT_TRUE(absl::StartsWith(exe->conv_library(), "cuDNN ")) << exe->conv_library();
    for (int64_t batch : {2, 9, 3}) {
      std::vector<HostTensor> inputs = RandomInputs(c->graph, batch, 5 + batch, {});
      absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->schedule, inputs);
      ASSERT_TRUE(want.ok()) << want.status();
      absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run(inputs);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(want->size(), got->size());
      for (size_t o = 0; o < want->size(); ++o) {
        ExpectGemmClose((*want)[o], (*got)[o], absl::StrCat(t.name, " batch ", batch, " output ", o));
      }
    }
    const cuda::CudaExecutable::GemmCounts n = exe->conv_counts();
    const std::string why = exe->conv_why_not();
    std::printf("[ conv    ] %s: fused %lld, plain %lld, host %lld%s%s\n", t.name,
                static_cast<long long>(n.fused), static_cast<long long>(n.plain),
                static_cast<long long>(n.host), why.empty() ? "" : "; last fallback: ", why.c_str());
    EXPECT_EQ(n.fused + n.plain + n.host, 3) << "one convolution per run";
    if (t.path == ConvPath::kGpu) {
      EXPECT_EQ(n.host, 0) << why;
    } else {
      EXPECT_EQ(n.host, 3);
    }
  }
}

// Compiles `text` (three convolutions with a residual block; COIL_CHANNELS_LAST set to `env`
// while compiling when not null), checks that every convolution reads or writes a
// channels-last activation, and runs it against the Schedule interpreter at two batch sizes,
// all three convolutions on cuDNN.
void ExpectChannelsLastChainMatches(const std::string& text, const char* env, const char* what) {
  SCOPED_TRACE(what);
  if (env != nullptr) setenv("COIL_CHANNELS_LAST", env, 1);
  std::unique_ptr<Compiled> c = Compile(text);
  if (env != nullptr) unsetenv("COIL_CHANNELS_LAST");
  ASSERT_NE(c, nullptr);
  int nhwc = 0;
  for (const proto::Kernel& k : c->schedule.kernels()) {
    for (const proto::NamedAttribute& a : k.extern_attrs()) nhwc += a.name() == "coil.channels_last";
  }
  EXPECT_EQ(nhwc, 3) << "every convolution reads or writes a channels-last activation";
  cuda::CudaExecutable* exe = driver::AsCudaExecutable(*c->exe);
  ASSERT_NE(exe, nullptr);
  for (int64_t batch : {2, 5}) {
    std::vector<HostTensor> inputs = RandomInputs(c->graph, batch, 7 + batch, {});
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->schedule, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(want->size(), got->size());
    for (size_t o = 0; o < want->size(); ++o) {
      ExpectGemmClose((*want)[o], (*got)[o], absl::StrCat(what, " batch ", batch, " output ", o));
    }
  }
  const cuda::CudaExecutable::GemmCounts n = exe->conv_counts();
  std::printf("[ conv    ] %s: fused %lld, plain %lld, host %lld%s%s\n", what,
              static_cast<long long>(n.fused), static_cast<long long>(n.plain),
              static_cast<long long>(n.host), exe->conv_why_not().empty() ? "" : "; last fallback: ",
              exe->conv_why_not().c_str());
  EXPECT_EQ(n.fused + n.plain + n.host, 6) << "three convolutions per run";
  EXPECT_EQ(n.host, 0) << exe->conv_why_not();
}

// Channels-last f32 activations (COIL_CHANNELS_LAST=1 forces inductor's pass, which the
// backend otherwise runs for f32 only with TF32): the activations between the convolutions
// are [N, H, W, C] buffers that cuDNN reads and writes with NHWC strides (the weights, graph
// inputs here, keep KCRS strides; resnet50's constant weights are copied to KRSC, checked by
// the benchmark).
TEST(CudaGpuTest, ChannelsLastConvolutionsMatchTheScheduleInterpreter) {
  REQUIRE_GPU();
  ExpectChannelsLastChainMatches(R"(graph @g(%0 "x": f32[batch, 3, 12, 12], %1 "w1": f32[8, 3, 3, 3], %2 "b1": f32[8], %3 "w2": f32[8, 8, 3, 3], %4 "b2": f32[8], %5 "w3": f32[4, 8, 1, 1]) {
  symbol batch min 1 max 0 hint 2
  %6: f32[batch, 8, 12, 12] = aten.convolution(%0, %1, %2) )" COIL_CONV_ATTRS("1", "1", "1", "1") R"(
  %7: f32[batch, 8, 12, 12] = aten.relu(%6)
  %8: f32[batch, 8, 12, 12] = aten.convolution(%7, %3, %4) )" COIL_CONV_ATTRS("1", "1", "1", "1") R"(
  %9: f32[batch, 8, 12, 12] = aten.add(%8, %7) {alpha = 1}
  %10: f32[batch, 8, 12, 12] = aten.relu(%9)
  %11: f32[batch, 4, 6, 6] = aten.convolution(%10, %5) )" COIL_CONV_ATTRS("2", "0", "1", "1") R"(
  %12: f32[batch, 8] = aten.mean(%10) {dim = [2, 3], keepdim = false, dtype = none}
  return %11, %12
})", "1", "f32 channels-last chain");
}

// bf16 convolutions are channels-last by default (cuDNN's tensor-core kernels work in NHWC):
// the autocast shape of `--precision bf16`, an f32 input cast to bf16 by a generated kernel
// that reads NCHW and writes NHWC, bf16 weights, a residual block, a strided 1x1 and a mean
// over the NHWC activation.
TEST(CudaGpuTest, Bf16ChannelsLastConvolutionsMatchTheScheduleInterpreter) {
  REQUIRE_GPU();
  ExpectChannelsLastChainMatches(R"(graph @g(%0 "x": f32[batch, 3, 12, 12], %1 "w1": bf16[16, 3, 3, 3], %2 "b1": bf16[16], %3 "w2": bf16[16, 16, 3, 3], %4 "b2": bf16[16], %5 "w3": bf16[8, 16, 1, 1]) {
  symbol batch min 1 max 0 hint 2
  %13: bf16[batch, 3, 12, 12] = aten.to_dtype(%0) {dtype = bf16}
  %6: bf16[batch, 16, 12, 12] = aten.convolution(%13, %1, %2) )" COIL_CONV_ATTRS("1", "1", "1", "1") R"(
  %7: bf16[batch, 16, 12, 12] = aten.relu(%6)
  %8: bf16[batch, 16, 12, 12] = aten.convolution(%7, %3, %4) )" COIL_CONV_ATTRS("1", "1", "1", "1") R"(
  %9: bf16[batch, 16, 12, 12] = aten.add(%8, %7) {alpha = 1}
  %10: bf16[batch, 16, 12, 12] = aten.relu(%9)
  %11: bf16[batch, 8, 6, 6] = aten.convolution(%10, %5) )" COIL_CONV_ATTRS("2", "0", "1", "1") R"(
  %12: bf16[batch, 16] = aten.mean(%10) {dim = [2, 3], keepdim = false, dtype = none}
  return %11, %12
})", nullptr, "bf16 channels-last chain");
}

// A NaN in x makes the outputs it reaches NaN after relu(conv + bias), as the interpreter says
// (prims.maximum propagates NaN), also when cuDNN applies the relu.
TEST(CudaGpuTest, ConvReluKeepsNan) {
  REQUIRE_GPU();
  std::unique_ptr<Compiled> c = Compile(kConvGraphs[0].text);
  ASSERT_NE(c, nullptr);
  std::vector<HostTensor> inputs = RandomInputs(c->graph, 2, 1, {});
  inputs[0].StoreDouble(30, NAN);
  absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->schedule, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectGemmClose((*want)[0], (*got)[0], "relu(conv + bias) with a NaN input");
}

TEST(CudaGpuTest, LongRowsAndWholeTensorReductions) {
  REQUIRE_GPU();
  std::unique_ptr<Compiled> c = Compile(R"(
graph @r(%0 "x": f32[batch, 100003]) {
  symbol batch min 2 max 0 hint 4
  %1: f32[batch] = aten.sum(%0) {dim = [1], keepdim = false, dtype = none}
  %2: f32[] = aten.sum(%0) {dim = [0, 1], keepdim = false, dtype = none}
  %3: i64[batch] = aten.argmax(%0) {dim = [1], keepdim = false}
  %4: f32[batch, 100003] = aten.softmax(%0) {dim = 1, dtype = none}
  return %1, %2, %3, %4
}
)");
  ASSERT_NE(c, nullptr);
  std::vector<HostTensor> inputs = RandomInputs(c->graph, 3, 5, {});
  absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->schedule, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  for (size_t o = 0; o < want->size(); ++o) {
    ExpectClose((*want)[o], (*got)[o], absl::StrCat("output ", o));
  }
}

// Few long rows are split into a partial and a final kernel (inductor/passes/
// split_reductions.h): a whole-tensor mean of 4M elements, per-channel sum and max of an
// [8, 16, 64, 64] activation (one kernel, two REDUCEs), a bf16 sum; a NaN reaches one channel.
// Against the Schedule interpreter on the same (split) schedule; split_reductions_test checks
// split schedules against the graph interpreter.
TEST(CudaGpuTest, SplitReductionsMatchTheScheduleInterpreter) {
  REQUIRE_GPU();
  std::unique_ptr<Compiled> c = Compile(R"(
graph @r(%0 "x": f32[4194304], %1 "a": f32[8, 16, 64, 64], %2 "h": bf16[131072]) {
  %3: f32[] = aten.mean(%0) {dim = [0], keepdim = false, dtype = none}
  %4: f32[16] = aten.sum(%1) {dim = [0, 2, 3], keepdim = false, dtype = none}
  %5: f32[16] = aten.amax(%1) {dim = [0, 2, 3], keepdim = false}
  %6: bf16[] = aten.sum(%2) {dim = [0], keepdim = false, dtype = none}
  return %3, %4, %5, %6
}
)");
  ASSERT_NE(c, nullptr);
  int partials = 0;
  for (const proto::Kernel& k : c->schedule.kernels()) partials += absl::EndsWith(k.name(), "_partial");
  EXPECT_EQ(partials, 3) << "the mean, the per-channel pair and the bf16 sum each split";
  std::vector<HostTensor> inputs = RandomInputs(c->graph, 1, 9, {});
  inputs[1].StoreDouble(5 * 64 * 64 + 7, NAN);  // batch 0, channel 5
  absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->schedule, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(want->size(), got->size());
  for (size_t o = 0; o < want->size(); ++o) {
    ExpectGemmClose((*want)[o], (*got)[o], absl::StrCat("split reduction output ", o));
  }
  EXPECT_TRUE(std::isnan((*got)[1].ToDoubles()[5])) << "the NaN reaches channel 5's sum";
  EXPECT_TRUE(std::isnan((*got)[2].ToDoubles()[5])) << "and its max";
}

TEST(CudaGpuTest, GatherIndexOutOfBoundsIsAnError) {
  REQUIRE_GPU();
  std::unique_ptr<Compiled> c = Compile(R"(graph @g(%0 "x": f32[4, 3], %1 "idx": i64[2, 3]) {
  %2: f32[2, 3] = aten.gather(%0, %1) {dim = 0, sparse_grad = false}
  return %2
})");
  ASSERT_NE(c, nullptr);
  HostTensor x = HostTensor::Zeros(proto::FLOAT32, {4, 3});
  HostTensor idx = HostTensor::Zeros(proto::INT64, {2, 3});
  idx.StoreInt(4, 9);
  absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run({x, idx});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kOutOfRange) << got.status();
  EXPECT_TRUE(absl::StrContains(got.status().message(), "index 9 is out of bounds [0, 4)"))
      << got.status();
  EXPECT_TRUE(absl::StrContains(got.status().message(), "kernel ")) << got.status();
  // The executable runs again normally after a data error.
  idx.StoreInt(4, 3);
  absl::StatusOr<std::vector<HostTensor>> again = c->exe->Run({x, idx});
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST(CudaGpuTest, IntegerDivisionByZeroIsAnError) {
  REQUIRE_GPU();
  std::unique_ptr<Compiled> c = Compile(R"(graph @d(%0 "a": i64[5], %1 "b": i64[5]) {
  %2: i64[5] = aten.floor_divide(%0, %1)
  return %2
})");
  ASSERT_NE(c, nullptr);
  HostTensor a = HostTensor::Zeros(proto::INT64, {5});
  HostTensor b = HostTensor::Zeros(proto::INT64, {5});
  for (int i = 0; i < 5; ++i) {
    a.StoreInt(i, 10 + i);
    b.StoreInt(i, i == 3 ? 0 : 2);
  }
  absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run({a, b});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
  EXPECT_TRUE(absl::StrContains(got.status().message(), "by zero")) << got.status();
}

}  // namespace
}  // namespace coil
