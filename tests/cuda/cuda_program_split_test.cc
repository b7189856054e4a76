// codegen_cuda's kernel dedupe and NVRTC program split (codegen_cuda/internal/program_split.h),
// and through GenerateCuda: kernels that differ only in their buffers share one compiled
// function, each kernel's slot table names its own buffers, the module's programs hold every
// symbol, and the result is the same as one program's. NVRTC only (no GPU).
#include "codegen_cuda/internal/program_split.h"

#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_cuda/codegen_cuda.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "tests/cuda/generate_module.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"

namespace coil {
namespace {

using codegen_cuda_internal::DedupeKey;
using codegen_cuda_internal::RepresentativeOf;
using codegen_cuda_internal::SplitPrograms;

TEST(CudaProgramSplitTest, KeysIgnoreNamesAndCommentsButNotCode) {
  const std::string a =
      "// kernel 3 'add'\nvoid coil_k3(char* const* coil_bufs) {\n"
      "  float* b7 = (float*)coil_bufs[0];  // x\n  float* b9 = (float*)coil_bufs[1];  // y\n"
      "  b9[0] = b7[0] + 1.0f;\n}\n";
  const std::string b =
      "// kernel 8 'add'\nvoid coil_k8(char* const* coil_bufs) {\n"
      "  float* b2 = (float*)coil_bufs[0];  // u\n  float* b12 = (float*)coil_bufs[1];  // v\n"
      "  b12[0] = b2[0] + 1.0f;\n}\n";
  EXPECT_EQ(DedupeKey(a, "coil_k3"), DedupeKey(b, "coil_k8"));
  // Other code, or the buffers' roles swapped: another key.
  std::string c = b;
  c.replace(c.find("+ 1.0f"), 6, "+ 2.0f");
  EXPECT_NE(DedupeKey(a, "coil_k3"), DedupeKey(c, "coil_k8"));
  std::string swapped = b;
  swapped.replace(swapped.find("b12[0] = b2[0]"), 14, "b2[0] = b12[0]");
  EXPECT_NE(DedupeKey(a, "coil_k3"), DedupeKey(swapped, "coil_k8"));
  // The error record names the kernel: kernels that can fail keep their own code.
  EXPECT_NE(DedupeKey("coil_fail(coil_err, 1, 3, 5);", "coil_k3"),
            DedupeKey("coil_fail(coil_err, 1, 8, 5);", "coil_k8"));
  // Identifiers that only start like a buffer variable are not renamed.
  EXPECT_NE(DedupeKey("b1x + bb2", "k"), DedupeKey("b2x + bb3", "k"));
  EXPECT_EQ(RepresentativeOf({"p", "q", "p", "r", "q"}), (std::vector<int>{0, 1, 0, 3, 1}));
}

TEST(CudaProgramSplitTest, ProgramsBalanceSourceSize) {
  // Largest first into the lightest program: {9}, {7, 1}, {5, 4} for 3 programs.
  const std::vector<std::vector<int>> p = SplitPrograms({5, 9, 1, 7, 4}, 3);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0], (std::vector<int>{1}));
  EXPECT_EQ(p[1], (std::vector<int>{2, 3}));
  EXPECT_EQ(p[2], (std::vector<int>{0, 4}));
  EXPECT_EQ(SplitPrograms({3, 3}, 8).size(), 2u) << "never more programs than kernels";
  EXPECT_EQ(SplitPrograms({}, 8).size(), 1u) << "one program (the prelude) even without kernels";
}

absl::StatusOr<proto::KernelModule> Generate(const std::string& text) {
  return cuda_testing::GenerateModule(text);
}

// Three linear + gelu layers of the same shape: each gelu is its GEMM's generated epilogue
// kernel (cuBLASLt has no erf-gelu epilogue), the same code on other buffers.
TEST(CudaProgramSplitTest, RepeatedKernelsShareOneCompiledFunction) {
  absl::StatusOr<proto::KernelModule> m = Generate(R"(graph @g(%0 "x": f32[batch, 64], %1 "w1": f32[64, 64], %2 "w2": f32[64, 64], %3 "w3": f32[64, 64]) {
  symbol batch min 2 max 0 hint 4
  %4: f32[batch, 64] = aten.mm(%0, %1)
  %5: f32[batch, 64] = aten.gelu(%4) {approximate = "none"}
  %6: f32[batch, 64] = aten.mm(%5, %2)
  %7: f32[batch, 64] = aten.gelu(%6) {approximate = "none"}
  %8: f32[batch, 64] = aten.mm(%7, %3)
  %9: f32[batch, 64] = aten.gelu(%8) {approximate = "none"}
  return %9
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  std::set<std::string> symbols;
  for (const proto::CompiledKernel& k : m->kernels()) {
    symbols.insert(k.symbol());
    EXPECT_FALSE(k.buffers().empty()) << k.name();
    // Each kernel's source addresses its buffers by slot, declared in its `buffers` order.
    for (int slot = 0; slot < k.buffers_size(); ++slot) {
      EXPECT_TRUE(absl::StrContains(
          k.source(), absl::StrCat("* b", k.buffers(slot), " = (float*)coil_bufs[", slot, "]")))
          << k.source();
    }
  }
  ASSERT_EQ(m->kernels_size(), 3) << "three gelu epilogues";
  EXPECT_EQ(symbols.size(), 1u) << "kernels with the same code compile once";
  EXPECT_EQ(m->images_size(), 0) << "one distinct kernel: one program";
  // Every symbol is an entry of the image its kernels name, and the sources compile whole.
  for (const proto::CompiledKernel& k : m->kernels()) {
    ASSERT_LE(k.image(), m->images_size());
    const std::string& ptx = k.image() == 0 ? m->ptx() : m->images(k.image() - 1).ptx();
    EXPECT_TRUE(absl::StrContains(ptx, absl::StrCat(".entry ", k.symbol()))) << k.symbol();
  }
}

// Distinct kernels (a softmax's reductions, a gelu, a mul) go to several programs by default,
// and to one with max_programs = 1; every kernel's symbol is an entry of its image either way.
TEST(CudaProgramSplitTest, MaxProgramsBoundsThePrograms) {
  const std::string text = R"(graph @g(%0 "x": f32[batch, 64], %1 "y": f32[batch, 64]) {
  symbol batch min 2 max 0 hint 4
  %2: f32[batch, 64] = aten.softmax(%0) {dim = 1, dtype = none}
  %3: f32[batch, 64] = aten.gelu(%1) {approximate = "none"}
  %4: f32[batch] = aten.sum(%3) {dim = [1], keepdim = false, dtype = none}
  return %2, %4
}
)";
  absl::StatusOr<proto::KernelModule> split = Generate(text);
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_GE(split->kernels_size(), 2) << "the test needs distinct kernels";
  EXPECT_GE(split->images_size(), 1) << "distinct kernels: more than one program by default";
  driver::CudaBackendOptions one;
  one.codegen.max_programs = 1;
  absl::StatusOr<proto::KernelModule> single = cuda_testing::GenerateModule(text, one);
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_EQ(single->images_size(), 0) << "max_programs = 1: one program";
  EXPECT_EQ(single->kernels_size(), split->kernels_size());
  for (const proto::CompiledKernel& k : single->kernels()) {
    EXPECT_EQ(k.image(), 0);
    EXPECT_TRUE(absl::StrContains(single->ptx(), absl::StrCat(".entry ", k.symbol()))) << k.symbol();
  }
}

}  // namespace
}  // namespace coil
