// What the generated code looks like after O3, read from the LLVM IR text of each kernel (the
// KernelModule's `source`), for CpuCodegenOptions.cpu = "x86-64-v3" (AVX2 + FMA: 8 f32 lanes),
// so the checks do not depend on the machine running them:
//   - pointwise kernels over several buffers vectorize without run-time overlap checks (the
//     buffers' alias scopes, codegen_cpu/internal/alias_scopes.h), short rows of 40 included,
//     and so do kernels writing in place over their input (one base pointer for both);
//     same-shaped ones run as one flat loop (no division per row of a [64, 64, 3, 3] weight),
//     also with f64 math on a 0-d input (AdamW's bias correction: computed before the loop);
//   - tanh / erf / exp chains become inline vector code (no libm or libmvec calls);
//   - softmax's max reduction vectorizes (integer order keys), and so do its exp-sum (f64 lanes)
//     and normalization loops (a multiply by the row's reciprocal);
//   - reductions over rows into columns (an NHWC average pool) load whole vectors of columns.
// Numerics are checked elsewhere (codegen_cpu_test, vector_math_test); this is about the shape
// of the code.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_cpu/codegen_cpu.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"

namespace coil {
namespace {

// The kernels of `text` (aten ops, through decomposition and inductor) compiled for `cpu`.
std::vector<proto::CompiledKernel> Kernels(const std::string& text,
                                           const std::string& cpu = "x86-64-v3") {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return {};
  absl::StatusOr<bool> d = prims::Decompose(*g);
  EXPECT_TRUE(d.ok()) << d.status();
  absl::StatusOr<proto::Schedule> s = inductor::BuildSchedule(g->ToProto());
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return {};
  CpuCodegenOptions o;
  o.cpu = cpu;
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(*s, o);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return {};
  return {m->kernels().begin(), m->kernels().end()};
}

// The single kernel of `text`.
proto::CompiledKernel OnlyKernel(const std::string& text, const std::string& cpu = "x86-64-v3") {
  std::vector<proto::CompiledKernel> k = Kernels(text, cpu);
  EXPECT_EQ(k.size(), 1u);
  return k.empty() ? proto::CompiledKernel() : k[0];
}

// LLVM's names for the blocks and values of run-time pointer overlap checks.
bool HasOverlapChecks(const std::string& ir) {
  return absl::StrContains(ir, "memcheck") || absl::StrContains(ir, "diff.check") ||
         absl::StrContains(ir, "found.conflict") || absl::StrContains(ir, "conflict.rdx");
}

bool CallsMathLibrary(const std::string& ir) {
  for (const char* fn : {"@tanhf", "@erff", "@expf", "@llvm.exp.", "@_ZGV"}) {
    if (absl::StrContains(ir, fn)) return true;
  }
  return false;
}

TEST(VectorizationTest, TwoInputPointwiseVectorizesWithoutOverlapChecks) {
  for (int cols : {40, 1024}) {
    const std::string t = absl::StrCat("f32[batch, ", cols, "]");
    proto::CompiledKernel k = OnlyKernel(absl::StrCat(
        "graph @add(%0 \"x\": ", t, ", %1 \"y\": ", t, ") {\n  symbol batch min 1 max 0 hint 8\n",
        "  %2: ", t, " = aten.add(%0, %1) {alpha = 1}\n  %3: ", t,
        " = aten.mul(%2, %0)\n  return %3\n}\n"));
    EXPECT_TRUE(absl::StrContains(k.source(), "fadd <8 x float>")) << cols << "\n" << k.source();
    EXPECT_TRUE(absl::StrContains(k.source(), "store <8 x float>")) << cols << "\n" << k.source();
    EXPECT_FALSE(HasOverlapChecks(k.source())) << cols << "\n" << k.source();
    EXPECT_TRUE(absl::StrContains(k.source(), "!alias.scope")) << k.source();
    EXPECT_TRUE(absl::StrContains(k.source(), "!noalias")) << k.source();
  }
}

// A pointwise kernel over a [64, 64, 3, 3] convolution weight (AdamW's moment update) runs as
// one flat loop (kernel_emitter.cc, [Note: flat pointwise kernels]): vector loads and stores,
// no division or remainder per row of 3; a broadcast operand keeps the nest.
// Causal attention's softmax normalization overwrites the scores in place (the memory plan's
// Buffer.in_place); the kernel emitter gives the output and the input it overwrites one base
// pointer (kernel_emitter.cc, [Note: in-place bases]). With two, LLVM guarded the vector loop
// by a run-time overlap check that fails for in-place buffers (distance 0), so the kernel ran
// its scalar loop. Every kernel here vectorizes without overlap checks, and one of them writes
// in place.
TEST(VectorizationTest, InPlaceKernelsVectorizeWithoutOverlapChecks) {
  absl::StatusOr<Graph> g = ParseGraph(R"(graph @att(%0 "q": f32[8, 4, 64, 32], %1 "k": f32[8, 4, 64, 32], %2 "v": f32[8, 4, 64, 32]) {
  %3: f32[8, 4, 64, 32] = aten.scaled_dot_product_attention(%0, %1, %2) {dropout_p = 0.0, is_causal = true, offset = 0, scale = 0.0, seed = -1, train = true}
  return %3
})");
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(prims::Decompose(*g).ok());
  absl::StatusOr<proto::Schedule> s = inductor::BuildSchedule(g->ToProto());
  ASSERT_TRUE(s.ok()) << s.status();
  int in_place = 0;
  for (const proto::Buffer& b : s->buffers()) in_place += b.in_place();
  EXPECT_GE(in_place, 1) << "the normalization no longer runs in place: the test checks nothing";
  CpuCodegenOptions o;
  o.cpu = "x86-64-v3";
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(*s, o);
  ASSERT_TRUE(m.ok()) << m.status();
  int vector_stores = 0;
  for (const proto::CompiledKernel& k : m->kernels()) {
    EXPECT_FALSE(HasOverlapChecks(k.source())) << k.name() << "\n" << k.source();
    vector_stores += absl::StrContains(k.source(), "store <8 x float>");
  }
  EXPECT_GE(vector_stores, 2) << "the exp and normalization kernels store vectors";
}

TEST(VectorizationTest, SameShapedPointwiseRunsFlat) {
  const std::string t = "f32[64, 64, 3, 3]";
  proto::CompiledKernel k = OnlyKernel(absl::StrCat(
      "graph @m(%0 \"m\": ", t, ", %1 \"g\": ", t, ") {\n  %2: ", t,
      " = aten.mul_scalar(%0) {other = 0.9}\n  %3: ", t,
      " = aten.add(%2, %1) {alpha = 0.1}\n  return %3\n}\n"));
  const std::string& ir = k.source();
  EXPECT_TRUE(absl::StrContains(ir, "load <8 x float>")) << ir;
  EXPECT_TRUE(absl::StrContains(ir, "store <8 x float>")) << ir;
  EXPECT_FALSE(absl::StrContains(ir, "udiv")) << ir;
  EXPECT_FALSE(absl::StrContains(ir, "urem")) << ir;
  EXPECT_FALSE(HasOverlapChecks(ir)) << ir;
  proto::CompiledKernel b = OnlyKernel(
      "graph @b(%0 \"x\": f32[64, 64, 3, 3], %1 \"s\": f32[64, 1, 1, 1]) {\n"
      "  %2: f32[64, 64, 3, 3] = aten.mul(%0, %1)\n  return %2\n}\n");
  EXPECT_TRUE(absl::StrContains(b.source(), "urem")) << b.source();
}

// AdamW's parameter update with its bias correction computed from the 0-d step count in f64
// (one parameter: the correction is inlined into the update kernel). Every buffer is a
// caller input, one alias class, so the step's load could not leave the loop and the f64
// math kept the loop at 4 f32 lanes (f64 sets the vectorization factor) with a vector exp
// call per 4 elements; read once before the loop (kernel_emitter.cc, [Note: scalar loads
// before the loop]), the loop runs at 8 lanes and the exp runs once per call.
TEST(VectorizationTest, ScalarInputMathLeavesTheLoop) {
  const std::string t = "f32[64, 64, 3, 3]";
  proto::CompiledKernel k = OnlyKernel(absl::StrCat(
      "graph @p(%0 \"p\": ", t, ", %1 \"m\": ", t, ", %2 \"step\": f32[]) {\n",
      "  %3: f64[] = aten.to_dtype(%2) {dtype = f64}\n",
      "  %4: f64[] = aten.mul_scalar(%3) {other = -0.1}\n",
      "  %5: f64[] = aten.exp(%4)\n",
      "  %6: f64[] = aten.rsub_scalar(%5) {alpha = 1, other = 1.0}\n",
      "  %7: f32[] = aten.to_dtype(%6) {dtype = f32}\n",
      "  %8: ", t, " = aten.div(%1, %7) {rounding_mode = \"\"}\n",
      "  %9: ", t, " = aten.add_(%0, %8) {alpha = -0.001}\n  return\n}\n"));
  const std::string& ir = k.source();
  EXPECT_TRUE(absl::StrContains(ir, "load <8 x float>")) << ir;
  EXPECT_TRUE(absl::StrContains(ir, "store <8 x float>")) << ir;
  EXPECT_FALSE(absl::StrContains(ir, "x double>")) << ir;
  EXPECT_FALSE(absl::StrContains(ir, "@_ZGV")) << ir;
  EXPECT_FALSE(absl::StrContains(ir, "udiv")) << ir;
}

TEST(VectorizationTest, GeluChainsAreInlineVectorCode) {
  for (const char* approximate : {"tanh", "none"}) {
    proto::CompiledKernel k = OnlyKernel(absl::StrCat(R"(
graph @gelu(%0 "x": f32[batch, 1024], %1 "w": f32[1024], %2 "b": f32[1024]) {
  symbol batch min 1 max 0 hint 8
  %3: f32[batch, 1024] = aten.mul(%0, %1)
  %4: f32[batch, 1024] = aten.add(%3, %2) {alpha = 1}
  %5: f32[batch, 1024] = aten.gelu(%4) {approximate = ")", approximate, R"("}
  return %5
}
)"));
    EXPECT_TRUE(absl::StrContains(k.source(), "<8 x float>")) << approximate << "\n" << k.source();
    // Multiply-adds stay llvm.fmuladd in the IR; the backend fuses them for FMA targets.
    EXPECT_TRUE(absl::StrContains(k.source(), "@llvm.fmuladd.v8f32")) << k.source();
    EXPECT_FALSE(CallsMathLibrary(k.source())) << approximate << "\n" << k.source();
    EXPECT_FALSE(HasOverlapChecks(k.source())) << approximate << "\n" << k.source();
  }
}

TEST(VectorizationTest, SoftmaxReductionsAndExpVectorize) {
  for (int cols : {40, 1024}) {
    const std::string t = absl::StrCat("f32[batch, ", cols, "]");
    proto::CompiledKernel k = OnlyKernel(absl::StrCat(
        "graph @softmax(%0 \"x\": ", t, ") {\n  symbol batch min 1 max 0 hint 8\n  %1: ", t,
        " = aten.softmax(%0) {dim = 1, dtype = none}\n  return %1\n}\n"));
    const std::string& ir = k.source();
    // The max: an integer max over order keys, 8 lanes.
    EXPECT_TRUE(absl::StrContains(ir, "@llvm.smax.v8i32")) << cols << "\n" << ir;
    EXPECT_TRUE(absl::StrContains(ir, "@llvm.vector.reduce.smax.v8i32")) << cols << "\n" << ir;
    // The sum of exps: f64 partial sums in vector lanes.
    EXPECT_TRUE(absl::StrContains(ir, "fadd reassoc <4 x double>") ||
                absl::StrContains(ir, "fadd reassoc <8 x double>"))
        << cols << "\n" << ir;
    // The normalization: vector stores, a multiply by the row's reciprocal (computed once per
    // row: arcp and LICM), no vector division.
    EXPECT_TRUE(absl::StrContains(ir, "store <8 x float>")) << cols << "\n" << ir;
    EXPECT_TRUE(absl::StrContains(ir, "fdiv arcp float 1.0")) << cols << "\n" << ir;
    EXPECT_FALSE(absl::StrContains(ir, "fdiv arcp <")) << cols << "\n" << ir;
    EXPECT_FALSE(CallsMathLibrary(ir)) << cols << "\n" << ir;
    EXPECT_FALSE(HasOverlapChecks(ir)) << cols << "\n" << ir;
  }
}

// A reduction over rows into columns (the average pool of an NHWC activation) runs its columns
// as the innermost loop (kernel_emitter.cc, [Note: column reductions]): contiguous vector loads
// and f64 vector adds, not one strided element per row.
TEST(VectorizationTest, ColumnReductionsLoadWholeVectors) {
  for (const char* op : {"aten.mean(%0) {dim = [1, 2], keepdim = false, dtype = none}",
                         "aten.amax(%0) {dim = [1, 2], keepdim = false}"}) {
    proto::CompiledKernel k = OnlyKernel(absl::StrCat(
        "graph @pool(%0 \"x\": f32[batch, 7, 7, 40]) {\n  symbol batch min 1 max 0 hint 8\n",
        "  %1: f32[batch, 40] = ", op, "\n  return %1\n}\n"));
    const std::string& ir = k.source();
    EXPECT_TRUE(absl::StrContains(ir, "load <8 x float>")) << op << "\n" << ir;
    if (absl::StrContains(op, "mean")) {
      EXPECT_TRUE(absl::StrContains(ir, "fadd reassoc <8 x double>")) << op << "\n" << ir;
    } else {
      EXPECT_TRUE(absl::StrContains(ir, "<8 x i32>")) << op << "\n" << ir;
    }
    EXPECT_FALSE(HasOverlapChecks(ir)) << op << "\n" << ir;
  }
}

// AVX-512: short rows that are not whole vectors (40 floats at 16 lanes) run their tail in the
// vector loop under a mask (kernel_emitter.cc, [Note: masked tails]); whole-vector rows do not
// need it.
TEST(VectorizationTest, ShortRowsFoldTheirTailUnderAMaskOnAvx512) {
  for (int cols : {40, 1024}) {
    const std::string t = absl::StrCat("f32[batch, ", cols, "]");
    for (const char* op : {"aten.softmax(%0) {dim = 1, dtype = none}", "aten.exp(%0)"}) {
      proto::CompiledKernel k = OnlyKernel(
          absl::StrCat("graph @g(%0 \"x\": ", t, ") {\n  symbol batch min 1 max 0 hint 8\n  %1: ",
                       t, " = ", op, "\n  return %1\n}\n"),
          "znver4");
      const std::string& ir = k.source();
      // exp is a flat pointwise kernel (one loop over batch * cols positions: no short rows).
      const bool rows = absl::StrContains(op, "softmax");
      EXPECT_EQ(absl::StrContains(ir, "@llvm.masked.store.v16f32"), rows && cols == 40)
          << op << " " << cols << "\n" << ir;
      EXPECT_TRUE(absl::StrContains(ir, "<16 x float>")) << op << " " << cols;
    }
  }
}

}  // namespace
}  // namespace coil
