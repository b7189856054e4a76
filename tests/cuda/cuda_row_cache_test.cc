// Persistent row kernels (codegen_cuda/internal/row_cache.h), without a GPU: which row kernels
// keep their repeated loads in registers, that each input row is then loaded once in the
// generated source, and that ptxas keeps the cache in registers (no stack frame, no spills).
// The values are checked on a GPU by cuda_gpu_test (the test graphs' wide_rows and
// layer_norm_gelu_softmax against the Schedule interpreter).
#include <cstdio>
#include <string>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "codegen_cuda/codegen_cuda.h"
#include "codegen_cuda/nvrtc.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "tests/cuda/generate_module.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"

namespace coil {
namespace {

absl::StatusOr<proto::KernelModule> Generate(const std::string& text, bool persistent = true,
                                             bool values = true) {
  driver::CudaBackendOptions cuda;
  cuda.codegen.persistent_rows = persistent;
  cuda.codegen.row_values = values;
  return cuda_testing::GenerateModule(text, cuda);
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The only row kernel of `m` (a block or warp per row).
const proto::CompiledKernel* RowKernel(const proto::KernelModule& m) {
  const proto::CompiledKernel* row = nullptr;
  for (const proto::CompiledKernel& k : m.kernels()) {
    if (absl::StrContains(k.source(), " per row")) {
      if (row != nullptr) return nullptr;
      row = &k;
    }
  }
  return row;
}

// ptxas -v's line for `symbol` ("N bytes stack frame, N bytes spill stores, ...").
std::string StackLine(const std::string& log, const std::string& symbol) {
  bool in = false;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StrContains(line, "entry function '")) {
      in = absl::StrContains(line, absl::StrCat("'", symbol, "'"));
      continue;
    }
    if (in && absl::StrContains(line, "stack frame")) return std::string(line);
  }
  return "";
}

// gelu(layer_norm(x + r)) in bf16 over rows of 8192, the benchmark's row: three ranged Loops
// (mean, variance, the normalized store) that each load x and r.
constexpr char kLayerNorm[] = R"(
graph @ln(%0 "x": bf16[64, 8192], %1 "r": bf16[64, 8192], %2 "w": bf16[8192], %3 "b": bf16[8192]) {
  %4: bf16[64, 8192] = aten.add(%0, %1) {alpha = 1}
  %5: bf16[64, 8192] = aten.layer_norm(%4, %2, %3) {normalized_shape = [8192], eps = 1e-05}
  %6: bf16[64, 8192] = aten.gelu(%5) {approximate = "none"}
  return %6
}
)";

TEST(CudaRowCacheTest, LayerNormLoadsEachRowOnceAndKeepsItInRegisters) {
  // Loads alone (no computed values): the bytes of x and r stay in registers.
  absl::StatusOr<proto::KernelModule> m = Generate(kLayerNorm, true, /*values=*/false);
  ASSERT_TRUE(m.ok()) << m.status();
  const proto::CompiledKernel* k = RowKernel(*m);
  ASSERT_NE(k, nullptr) << "one row kernel";
  const std::string& src = k->source();
  EXPECT_TRUE(absl::StrContains(src, "persistent: 2 loads kept in registers")) << src;
  // 8192 / 8 bf16 per group (16 bytes) / 256 threads: 4 groups per thread, every thread busy;
  // the cache keeps the loaded bf16 bytes (4 x 8 x 2 bytes: 16 registers per input).
  EXPECT_TRUE(absl::StrContains(src, "__align__(16) unsigned short coil_c0[4][8]")) << src;
  EXPECT_TRUE(absl::StrContains(src, "coil_j < 4")) << src;
  EXPECT_FALSE(absl::StrContains(src, "break;")) << "1024 groups = 4 x 256: no guard";
  // x and r: one 16-byte load each (Loop 0), copied into the cache; Loops 1 and 2 copy them
  // back out of it.
  EXPECT_EQ(Count(src, "&b1["), 1) << src;
  EXPECT_EQ(Count(src, "&b2["), 1) << src;
  EXPECT_EQ(Count(src, "coil_vcopy8(coil_c0[coil_j], coil_v"), 1) << src;
  EXPECT_EQ(Count(src, ", coil_c0[coil_j]);"), 2) << "x read by Loops 1 and 2";
  EXPECT_EQ(Count(src, ", coil_c1[coil_j]);"), 2) << "r too";
  // The weight and bias (one row every row reads): one 16-byte load each, in Loop 2.
  EXPECT_EQ(Count(src, "coil_vcopy8(coil_v"), 8) << "2 loads, 2 fills, 4 cache reads: " << src;
  EXPECT_EQ(Count(src, "&b3["), 1) << src;
  EXPECT_EQ(Count(src, "&b4["), 1) << src;
  EXPECT_EQ(Count(src, "coil_bf2f(b3["), 0) << "no scalar weight loads: " << src;
  // Without persistence each of the three Loops loads both again.
  absl::StatusOr<proto::KernelModule> plain = Generate(kLayerNorm, /*persistent=*/false);
  ASSERT_TRUE(plain.ok()) << plain.status();
  const proto::CompiledKernel* pk = RowKernel(*plain);
  ASSERT_NE(pk, nullptr);
  EXPECT_FALSE(absl::StrContains(pk->source(), "persistent")) << pk->source();
  EXPECT_EQ(Count(pk->source(), "&b1["), 3) << pk->source();
  EXPECT_EQ(Count(pk->source(), "&b2["), 3) << pk->source();
  // ptxas keeps the cached bytes in registers: no local memory.
  absl::StatusOr<codegen_cuda::NvrtcResult> c =
      codegen_cuda::CompileCudaSource(m->wrapper_source(), "ln.cu", "sm_90");
  ASSERT_TRUE(c.ok()) << c.status();
  const std::string stack = StackLine(c->log, k->symbol());
  EXPECT_TRUE(absl::StrContains(stack, "0 bytes stack frame, 0 bytes spill stores, "
                                       "0 bytes spill loads"))
      << "'" << stack << "' in\n" << c->log;
  EXPECT_LE(k->launch().registers(), 255);
  EXPECT_GE(k->launch().registers(), 32) << "the cache alone takes 32 registers";
  std::printf("layer norm row kernel: %d registers\n", k->launch().registers());
}

// With computed values: f32(bf16(x + r)) is computed once, by the mean's Loop, and the
// variance's and the store's Loops read it from registers instead of converting and adding x
// and r again; neither loads them (no raw slots either: the value takes their 32 registers).
TEST(CudaRowCacheTest, LayerNormKeepsXPlusRAsAComputedValue) {
  absl::StatusOr<proto::KernelModule> m = Generate(kLayerNorm);
  ASSERT_TRUE(m.ok()) << m.status();
  const proto::CompiledKernel* k = RowKernel(*m);
  ASSERT_NE(k, nullptr) << "one row kernel";
  const std::string& src = k->source();
  EXPECT_TRUE(absl::StrContains(src, "persistent: 0 loads kept in registers, 1 values")) << src;
  EXPECT_TRUE(absl::StrContains(src, "float coil_c0[4][8];")) << src;
  EXPECT_FALSE(absl::StrContains(src, "unsigned short coil_c")) << "no raw slots: " << src;
  // x and r: one 16-byte load each, in Loop 0; w and b one each, in Loop 2.
  EXPECT_EQ(Count(src, "&b1["), 1) << src;
  EXPECT_EQ(Count(src, "&b2["), 1) << src;
  EXPECT_EQ(Count(src, "coil_vcopy8(coil_v"), 4) << src;
  // Filled once per item of a group (Loop 0), read once per item by Loops 1 and 2.
  EXPECT_EQ(Count(src, "coil_c0[coil_j]["), 3 * 8) << src;
  EXPECT_EQ(Count(src, "= coil_c0[coil_j]["), 2 * 8) << src;
  // The add of x and r and its bf16 rounding are emitted in Loop 0 only: 2 x 8 fewer.
  absl::StatusOr<proto::KernelModule> loads = Generate(kLayerNorm, true, /*values=*/false);
  ASSERT_TRUE(loads.ok()) << loads.status();
  const proto::CompiledKernel* lk = RowKernel(*loads);
  ASSERT_NE(lk, nullptr);
  EXPECT_EQ(Count(src, "coil_round_bf16("), Count(lk->source(), "coil_round_bf16(") - 2 * 8)
      << "x + r rounded once per position:\n" << src;
  absl::StatusOr<codegen_cuda::NvrtcResult> c =
      codegen_cuda::CompileCudaSource(m->wrapper_source(), "ln.cu", "sm_90");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(absl::StrContains(StackLine(c->log, k->symbol()),
                                "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"))
      << c->log;
  std::printf("layer norm row kernel with x + r kept: %d registers (loads only: %d)\n",
              k->launch().registers(), lk->launch().registers());
}

// A value that saves little stays a load: softmax's converted x (a load and a conversion per
// position in the exponentials' Loop) keeps x's bytes, and an f32 layer norm whose store Loop
// also reads x for a residual keeps x (its sub of the mean saves one expression).
TEST(CudaRowCacheTest, ValuesThatSaveLittleAreNotKept) {
  for (const char* text : {R"(
graph @s(%0 "x": bf16[64, 8192]) {
  %1: bf16[64, 8192] = aten.softmax(%0) {dim = 1, dtype = none}
  return %1
})",
                           R"(
graph @ln(%0 "x": f32[64, 2048], %1 "w": f32[2048], %2 "b": f32[2048]) {
  %3: f32[64, 2048] = aten.layer_norm(%0, %1, %2) {normalized_shape = [2048], eps = 1e-05}
  %4: f32[64, 2048] = aten.add(%3, %0) {alpha = 1}
  return %4
})"}) {
    absl::StatusOr<proto::KernelModule> m = Generate(text);
    ASSERT_TRUE(m.ok()) << m.status();
    const proto::CompiledKernel* k = RowKernel(*m);
    ASSERT_NE(k, nullptr);
    EXPECT_TRUE(absl::StrContains(k->source(), "loads kept in registers")) << k->source();
    EXPECT_FALSE(absl::StrContains(k->source(), " values)")) << k->source();
  }
}

// A bf16 row whose last Loop also writes f32 (times an f32 weight): every Loop keeps 4
// positions per group, so the Loops still share their groups and the row stays in registers.
TEST(CudaRowCacheTest, AnyWideAccessKeepsEveryLoopAtFourPerGroup) {
  absl::StatusOr<proto::KernelModule> m = Generate(R"(
graph @ln(%0 "x": bf16[64, 8192], %1 "w": bf16[8192], %2 "b": bf16[8192], %3 "s": f32[8192]) {
  %4: bf16[64, 8192] = aten.layer_norm(%0, %1, %2) {normalized_shape = [8192], eps = 1e-05}
  %5: f32[64, 8192] = aten.mul(%4, %3)
  return %5
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  const proto::CompiledKernel* k = RowKernel(*m);
  ASSERT_NE(k, nullptr);
  const std::string& src = k->source();
  EXPECT_TRUE(absl::StrContains(src, "persistent: 1 loads kept in registers")) << src;
  EXPECT_TRUE(absl::StrContains(src, "__align__(16) unsigned short coil_c0[8][4]")) << src;
  EXPECT_FALSE(absl::StrContains(src, "coil_vcopy8")) << src;
  EXPECT_EQ(Count(src, "&b1["), 1) << src;
}

TEST(CudaRowCacheTest, SoftmaxRowsThatDoNotFillEveryThreadAreGuarded) {
  // Rows of 2999 f32 (not a multiple of 4): one position per group, 12 groups per thread, the
  // last one partial; a warp per row at 1000 (4 per group: 8 groups of 32 lanes, partial).
  for (const auto& [n, groups, items] : {std::tuple<int, int, int>{2999, 12, 1}, {1000, 8, 4}}) {
    SCOPED_TRACE(n);
    absl::StatusOr<proto::KernelModule> m = Generate(absl::StrCat(
        "graph @s(%0 \"x\": f32[64, ", n, "]) {\n  %1: f32[64, ", n,
        "] = aten.softmax(%0) {dim = 1, dtype = none}\n  return %1\n}\n"));
    ASSERT_TRUE(m.ok()) << m.status();
    const proto::CompiledKernel* k = RowKernel(*m);
    ASSERT_NE(k, nullptr);
    const std::string& src = k->source();
    // x, and the exponentials Loop 1 stores in the output and Loop 2 normalizes (forwarded).
    EXPECT_TRUE(absl::StrContains(src, "persistent: 2 loads kept in registers")) << src;
    EXPECT_TRUE(absl::StrContains(src, absl::StrCat("coil_c0[", groups, "][", items, "]")))
        << src;
    EXPECT_EQ(Count(src, "break;"), 3) << "max, sum of exp, the store: each guards its last group";
    // x read again by the sum of exp: from a value slot (scalar), or its vector of bytes.
    EXPECT_EQ(Count(src, items == 1 ? "= coil_c0[coil_j][" : ", coil_c0[coil_j]);"), 1) << src;
    EXPECT_EQ(Count(src, "= coil_c1[coil_j]["), items) << "the exponentials read by Loop 2";
    EXPECT_EQ(Count(src, "coil_c1[coil_j]["), 3 * items) << "filled by both Loops' stores";
    // Every global load of the row kernel is in Loop 0: x once.
    EXPECT_EQ(Count(src, items == 1 ? "= b1[" : "&b1["), 1) << src;
    // No load reads the output's memory, so the exponentials' STORE only fills the slot: the
    // output is written once, by the normalizing Loop (and x read once: 2 bytes moved per
    // element and direction, not 3).
    EXPECT_EQ(Count(src, items == 1 ? "b2[" : "&b2["), 1) << src;
    absl::StatusOr<codegen_cuda::NvrtcResult> c =
        codegen_cuda::CompileCudaSource(m->wrapper_source(), "sm.cu", "sm_90");
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_TRUE(absl::StrContains(StackLine(c->log, k->symbol()), "0 bytes stack frame"))
        << c->log;
  }
}

TEST(CudaRowCacheTest, RowsThatCannotStayInRegistersLoadAgain) {
  for (const char* text : {
           // 100000 positions: 98 groups of 4 per thread, over the 64-register budget.
           R"(graph @s(%0 "x": f32[4, 100000]) {
  %1: f32[4, 100000] = aten.softmax(%0) {dim = 1, dtype = none}
  return %1
})",
           // A symbolic row length: the groups per thread are not known.
           R"(graph @s(%0 "x": f32[64, n]) {
  symbol n min 2 max 0 hint 4
  %1: f32[64, n] = aten.softmax(%0) {dim = 1, dtype = none}
  return %1
})",
           // One ranged Loop: nothing is loaded twice.
           R"(graph @s(%0 "x": f32[64, 512]) {
  %1: f32[64] = aten.sum(%0) {dim = [1], keepdim = false, dtype = none}
  return %1
})"}) {
    absl::StatusOr<proto::KernelModule> m = Generate(text);
    ASSERT_TRUE(m.ok()) << m.status();
    for (const proto::CompiledKernel& k : m->kernels()) {
      EXPECT_FALSE(absl::StrContains(k.source(), "persistent")) << k.source();
      EXPECT_FALSE(absl::StrContains(k.source(), "coil_j")) << k.source();
    }
  }
}

}  // namespace
}  // namespace coil
