// End to end: aten graphs (text IR) -> prims::Decompose -> inductor::BuildSchedule ->
// GenerateCpu -> CpuJitModule -> every kernel run in order by the test driver, compared with the
// Schedule interpreter on the same inputs (f32 within 1e-5 relative, f16/bf16 within one ulp of
// their dtype, integers and bools exact), at two values of the symbolic batch.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/jit.h"
#include "codegen_cpu/testing/jit_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"

namespace coil {
namespace {

using InputSpec = test_kit::RandomInputSpec;

// The JIT against the Schedule interpreter: NaN where both have NaN; f16/bf16 values are
// rounded after every expression (math_emitter.h), so their tolerance is the dtype's.
test_kit::Tolerance JitTolerance(DType t) {
  if (t == proto::FLOAT16) return {.abs = 1e-3, .rel = 1e-3};
  if (t == proto::BFLOAT16) return {.abs = 8e-3, .rel = 8e-3};
  if (!IsFloating(t)) return {};
  return {.abs = 1e-6, .rel = 1e-5};
}

struct Compiled {
  Graph graph;
  proto::KernelModule module;
  std::unique_ptr<CpuJitModule> jit;
};

std::unique_ptr<Compiled> Compile(const std::string& text, bool epilogues = true) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return nullptr;
  absl::StatusOr<bool> d = prims::Decompose(*g);
  EXPECT_TRUE(d.ok()) << d.status();
  inductor::ScheduleOptions options;
  if (epilogues) {
    options.capabilities.extern_epilogues = {"aten.mm", "aten.addmm", "aten.bmm",
                                             "aten.convolution", "prims.cumsum"};
  }
  absl::StatusOr<proto::Schedule> s = inductor::BuildSchedule(g->ToProto(), options);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return nullptr;
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(*s);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<CpuJitModule>> jit = CpuJitModule::Load(*m);
  EXPECT_TRUE(jit.ok()) << jit.status();
  if (!jit.ok()) return nullptr;
  auto c = std::make_unique<Compiled>();
  c->graph = *std::move(g);
  c->module = *std::move(m);
  c->jit = *std::move(jit);
  // Which kernels the loop vectorizer (or SLP) turned into vector code, for the report.
  for (const proto::CompiledKernel& k : c->module.kernels()) {
    const bool vec = absl::StrContains(k.source(), " x float>") ||
                     absl::StrContains(k.source(), " x double>") ||
                     absl::StrContains(k.source(), " x i64>") ||
                     absl::StrContains(k.source(), " x i32>") ||
                     absl::StrContains(k.source(), " x i16>") ||
                     absl::StrContains(k.source(), " x i8>");
    std::printf("[%s] %s: %s\n", c->graph.name().c_str(), k.name().c_str(),
                vec ? "vectorized" : "scalar");
  }
  return c;
}

void Check(const std::string& text, const InputSpec& spec = {}, bool epilogues = true) {
  std::unique_ptr<Compiled> c = Compile(text, epilogues);
  ASSERT_NE(c, nullptr);
  for (int64_t batch : {2, 37}) {
    std::vector<HostTensor> inputs =
        test_kit::RandomInputs(c->graph, {{"batch", batch}}, 11 + batch, spec);
    absl::StatusOr<std::vector<HostTensor>> want =
        InterpretSchedule(c->module.schedule(), inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<std::vector<HostTensor>> got =
        testing::RunWithJit(c->module, *c->jit, inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(want->size(), got->size());
    for (size_t o = 0; o < want->size(); ++o) {
      test_kit::ExpectClose((*want)[o], (*got)[o], JitTolerance((*want)[o].dtype()),
                            absl::StrCat(c->graph.name(), " batch ", batch, " output ", o));
    }
  }
}

TEST(CodegenCpuTest, LayerNormGeluSoftmax) {
  Check(R"(
graph @block(%0 "x": f32[batch, 40], %1 "w": f32[40], %2 "b": f32[40], %3 "r": f32[batch, 40]) {
  symbol batch min 2 max 0 hint 4
  %4: f32[batch, 40] = aten.add(%0, %3) {alpha = 1}
  %5: f32[batch, 40] = aten.layer_norm(%4, %1, %2) {normalized_shape = [40], eps = 1e-05}
  %6: f32[batch, 40] = aten.gelu(%5) {approximate = "none"}
  %7: f32[batch, 40] = aten.softmax(%6) {dim = 1, dtype = none}
  %8: f32[batch, 40] = aten.log_softmax(%4) {dim = 1, dtype = none}
  return %7, %4, %8
}
)");
}

TEST(CodegenCpuTest, LinearEpilogueReductions) {
  Check(R"(
graph @mlp(%0 "x": f32[batch, 6], %1 "w": f32[4, 6], %2 "b": f32[4]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[batch, 4] = aten.linear(%0, %1, %2)
  %4: f32[batch, 4] = aten.relu(%3)
  %5: i64[batch] = aten.argmax(%4) {dim = [1], keepdim = false}
  %6: f32[4] = aten.mean(%4) {dim = [0], keepdim = false, dtype = none}
  %7: f32[batch, 4] = aten.cumsum(%3) {dim = 1, dtype = none}
  %8: i64[4] = aten.argmin(%3) {dim = [0], keepdim = false}
  %9: f32[batch] = aten.amin(%3) {dim = [1], keepdim = false}
  %10: f32[4] = aten.prod(%3) {dim = [0], keepdim = false, dtype = none}
  return %5, %6, %7, %8, %9, %10
}
)");
}

TEST(CodegenCpuTest, ReductionsWithNaN) {
  InputSpec spec;
  spec.nan_rate = 0.05;
  Check(R"(
graph @nan(%0 "x": f32[batch, 33]) {
  symbol batch min 2 max 0 hint 4
  %1: f32[batch] = aten.amax(%0) {dim = [1], keepdim = false}
  %2: i64[batch] = aten.argmax(%0) {dim = [1], keepdim = false}
  %3: i64[batch] = aten.argmin(%0) {dim = [1], keepdim = false}
  %4: f32[33] = aten.sum(%0) {dim = [0], keepdim = false, dtype = none}
  %5: f32[batch, 33] = aten.maximum(%0, %0)
  return %1, %2, %3, %4, %5
}
)", spec);
}

// Reductions over the rows of a row-major tensor into its columns (kernel_emitter.cc, [Note:
// column reductions]): the average pool of an NHWC activation ([batch, H, W, C] -> [batch, C]),
// odd channel counts, more channels than one tile (256: 300 and 600 make a partial second and
// third tile), 1x2 and 1x1 rows, every REDUCE op the path takes, a reduction over the batch too
// (a rank-1 kernel: the parallel range is the columns), with and without NaN inputs.
TEST(CodegenCpuTest, ColumnReductions) {
  const std::string text = R"(
graph @pool(%0 "x": f32[batch, 5, 7, 37], %1 "y": f32[batch, 1, 2, 300], %2 "z": f32[batch, 2, 3, 19], %3 "w": f32[batch, 3, 1, 600]) {
  symbol batch min 2 max 0 hint 4
  %4: f32[batch, 37] = aten.mean(%0) {dim = [1, 2], keepdim = false, dtype = none}
  %5: f32[batch, 300] = aten.sum(%1) {dim = [1, 2], keepdim = false, dtype = none}
  %6: f32[batch, 19] = aten.amax(%2) {dim = [1, 2], keepdim = false}
  %7: f32[batch, 19] = aten.amin(%2) {dim = [1, 2], keepdim = false}
  %8: f32[batch, 3, 19] = aten.prod(%2) {dim = [1], keepdim = false, dtype = none}
  %9: f32[37] = aten.sum(%0) {dim = [0, 1, 2], keepdim = false, dtype = none}
  %10: f32[batch, 1, 1, 600] = aten.mean(%3) {dim = [1, 2], keepdim = true, dtype = none}
  %11: f32[batch, 1, 1, 600] = aten.relu(%10)
  %12: f32[batch, 37] = aten.sigmoid(%4)
  return %12, %5, %6, %7, %8, %9, %11
}
)";
  Check(text);
  InputSpec spec;
  spec.nan_rate = 0.02;
  Check(text, spec);
}

// A column reduction of rank >= 2 takes the runtime's range over its rows and columns together
// (Kernel.parallel_dims = rank, loop_shapes.h's ParallelDims), so that one image's pool divides
// between threads: ranges that start and end inside a row, one position per call, a whole batch
// in one call; one and three images; rows over two dims ([batch, 4] rows of 37 columns).
TEST(CodegenCpuTest, ColumnReductionsSplitInsideRows) {
  const std::string text = R"(
graph @pool(%0 "x": f32[batch, 3, 5, 300], %1 "y": f32[batch, 4, 3, 5, 37]) {
  symbol batch min 1 max 0 hint 4
  %2: f32[batch, 300] = aten.mean(%0) {dim = [1, 2], keepdim = false, dtype = none}
  %3: f32[batch, 300] = aten.amax(%0) {dim = [1, 2], keepdim = false}
  %4: f32[batch, 4, 37] = aten.sum(%1) {dim = [2, 3], keepdim = false, dtype = none}
  return %2, %3, %4
}
)";
  std::unique_ptr<Compiled> c = Compile(text);
  ASSERT_NE(c, nullptr);
  int spanning = 0;
  for (const proto::Kernel& k : c->module.schedule().kernels()) {
    if (k.parallel_dims() == 0) continue;
    EXPECT_EQ(k.parallel_dims(), k.ranges_size()) << k.name();
    EXPECT_GE(k.ranges_size(), 2) << k.name();
    ++spanning;
  }
  // The [batch, 300] pool (mean and amax in one kernel) and the [batch, 4, 37] sum.
  EXPECT_EQ(spanning, 2);
  for (int64_t batch : {1, 3}) {
    std::vector<HostTensor> inputs =
        test_kit::RandomInputs(c->graph, {{"batch", batch}}, 5 + batch);
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->module.schedule(), inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    for (int chunks : {1, 2, 7, 100000}) {
      absl::StatusOr<std::vector<HostTensor>> got =
          testing::RunWithJit(c->module, *c->jit, inputs, chunks);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(want->size(), got->size());
      for (size_t o = 0; o < want->size(); ++o) {
        test_kit::ExpectClose((*want)[o], (*got)[o], JitTolerance((*want)[o].dtype()),
                              absl::StrCat("batch ", batch, " chunks ", chunks, " output ", o));
      }
    }
  }
}

TEST(CodegenCpuTest, BroadcastTransposeChain) {
  Check(R"(
graph @chain(%0 "x": f32[batch, 4, 6], %1 "y": f32[6], %2 "z": f32[6, 4]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[4, 6] = aten.transpose(%2) {dim0 = 0, dim1 = 1}
  %4: f32[batch, 4, 6] = aten.add(%0, %3) {alpha = 1}
  %5: f32[batch, 4, 6] = aten.mul(%4, %1)
  %6: f32[batch, 4, 6] = aten.sigmoid(%5)
  %7: f32[batch, 4, 6] = aten.tanh(%4)
  %8: f32[batch, 6, 4] = aten.permute(%7) {dims = [0, 2, 1]}
  %9: f32[batch, 4, 6] = aten.clamp(%5) {min = -0.5, max = 0.75, has_min = true, has_max = true}
  %10: f32[batch, 4, 6] = aten.div(%9, %6) {rounding_mode = ""}
  %11: f32[batch, 4, 6] = aten.remainder(%5, %1)
  %12: f32[batch, 4, 6] = aten.floor(%10)
  %13: f32[batch, 4, 6] = aten.round(%5)
  %14: f32[batch, 4, 6] = aten.exp(%7)
  %15: f32[batch, 4, 6] = aten.sqrt(%14)
  %16: f32[batch, 4, 6] = aten.erf(%4)
  return %8, %10, %11, %12, %13, %15, %16
}
)");
}

TEST(CodegenCpuTest, PadCatGatherEmbedding) {
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
)");
}

TEST(CodegenCpuTest, IotaAndPhilox) {
  Check(R"(
graph @rng(%0 "x": f32[batch, 7]) {
  symbol batch min 2 max 0 hint 4
  %1: f32[batch, 7] = prims.philox_uniform() {dtype = f32, offset = 5, seed = 123456789012, shape = syms[batch, 7]}
  %2: f32[batch, 7] = aten.add(%0, %1) {alpha = 1}
  %3: i64[7] = aten.arange() {start = 0, end = sym(7), step = 1, dtype = i64, has_dtype = true}
  %4: f32[batch, 7] = aten.mul(%2, %3)
  %5: f64[batch, 7] = prims.philox_uniform() {dtype = f64, offset = 0, seed = 3, shape = syms[batch, 7]}
  %6: f16[batch, 7] = prims.philox_uniform() {dtype = f16, offset = 9, seed = 3, shape = syms[batch, 7]}
  return %1, %4, %5, %6
}
)");
}

TEST(CodegenCpuTest, HalfAndBFloat16) {
  Check(R"(
graph @half(%0 "a": f16[batch, 24], %1 "b": bf16[batch, 24], %2 "c": f32[batch, 24]) {
  symbol batch min 2 max 0 hint 4
  %3: f16[batch, 24] = aten.mul(%0, %0)
  %4: f16[batch, 24] = aten.add(%3, %0) {alpha = 1}
  %5: bf16[batch, 24] = aten.mul(%1, %1)
  %6: bf16[batch, 24] = aten.sub(%5, %1) {alpha = 1}
  %7: f32[batch, 24] = aten.add(%2, %0) {alpha = 1}
  %8: f32[batch, 24] = aten.add(%7, %1) {alpha = 1}
  %9: f16[batch] = aten.sum(%4) {dim = [1], keepdim = false, dtype = none}
  %10: bf16[batch, 24] = aten.softmax(%6) {dim = 1, dtype = none}
  %11: f16[batch, 24] = aten.exp(%0)
  %12: bf16[batch, 24] = aten.div(%6, %1) {rounding_mode = ""}
  return %4, %6, %8, %9, %10, %11, %12
}
)");
}

TEST(CodegenCpuTest, IntegersAndBools) {
  InputSpec spec;
  spec.int_range = 100;
  spec.signed_nonzero = true;
  Check(R"(
graph @ints(%0 "a": i64[batch, 10], %1 "b": i32[batch, 10], %2 "m": bool[batch, 10], %3 "u": u8[batch, 10], %4 "s": i8[10]) {
  symbol batch min 2 max 0 hint 4
  %5: i64[batch, 10] = aten.sub(%0, %1) {alpha = 3}
  %6: i64[batch, 10] = aten.remainder(%5, %1)
  %7: i64[batch, 10] = aten.floor_divide(%5, %0)
  %8: bool[batch, 10] = aten.ne(%5, %0)
  %9: bool[batch, 10] = aten.logical_and(%8, %2)
  %10: i64[batch, 10] = aten.where(%9, %5, %0)
  %11: i32[batch, 10] = aten.bitwise_and(%1, %1)
  %12: i64[batch] = aten.sum(%10) {dim = [1], keepdim = false, dtype = none}
  %13: f32[batch, 10] = aten.div(%5, %1) {rounding_mode = ""}
  %14: u8[batch, 10] = aten.mul(%3, %3)
  %15: i8[10] = aten.mul(%4, %4)
  %18: i32[batch, 10] = aten.add(%1, %4) {alpha = 1}
  %16: i64[batch] = aten.sum(%2) {dim = [1], keepdim = false, dtype = none}
  %17: i64[batch] = aten.argmax(%1) {dim = [1], keepdim = false}
  return %6, %7, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18
}
)", spec);
}

TEST(CodegenCpuTest, ModuleFields) {
  std::unique_ptr<Compiled> c = Compile(R"(
graph @f(%0 "x": f32[batch, 64]) {
  symbol batch min 2 max 0 hint 4
  %1: f32[batch, 64] = aten.exp(%0)
  %2: f32[batch] = aten.sum(%0) {dim = [1], keepdim = false, dtype = none}
  return %1, %2
}
)");
  ASSERT_NE(c, nullptr);
  const proto::KernelModule& m = c->module;
  EXPECT_EQ(m.backend(), "cpu");
  EXPECT_THAT(m.compiler_version(), ::testing::StartsWith("LLVM 16."));
  EXPECT_THAT(m.target_triple(), ::testing::StartsWith("x86_64"));
  EXPECT_FALSE(m.cpu().empty());
  EXPECT_THAT(m.cpu_features(), ::testing::HasSubstr("+sse2"));
  EXPECT_EQ(m.object_code().substr(0, 4), "\x7f" "ELF");
  ASSERT_GE(m.kernels_size(), 1);
  for (const proto::CompiledKernel& k : m.kernels()) {
    EXPECT_THAT(k.source(), ::testing::HasSubstr("define void @" + k.symbol()));
    EXPECT_NE(c->jit->Find(k.kernel_id()), nullptr);
  }
  // The sum over a contiguous row of f32 accumulates in f64 and vectorizes (reassoc).
  bool vector_sum = false;
  for (const proto::CompiledKernel& k : m.kernels()) {
    if (absl::StrContains(k.source(), "x double>")) vector_sum = true;
  }
  EXPECT_TRUE(vector_sum);
}

}  // namespace
}  // namespace coil
