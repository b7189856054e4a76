// The CUDA code generator without a GPU (CI): every test graph goes through the compile driver
// (prims, inductor, codegen_cuda) and NVRTC, which must compile every kernel to an sm_90 CUBIN
// and PTX; each kernel's launch configuration must be launchable (a 256-thread block within
// the SM's registers and shared memory, the block size the source declares with
// __launch_bounds__), and the source must say what the generator promises: 32-bit index math
// for small static shapes, 64-bit with symbols, bounds checks only for indices from data.
#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_cuda/codegen_cuda.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "tests/cuda/generate_module.h"
#include "runtime/cuda/kernel_abi.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"
#include "tests/cuda/cuda_test_graphs.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"

namespace coil {
namespace {

absl::StatusOr<proto::KernelModule> Generate(const std::string& text) {
  return cuda_testing::GenerateModule(text);
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

void ExpectLaunchable(const proto::KernelModule& m) {
  EXPECT_EQ(m.backend(), "cuda");
  EXPECT_EQ(m.cpu(), "sm_90");
  EXPECT_FALSE(m.object_code().empty());
  EXPECT_TRUE(absl::StartsWith(m.object_code(), "\x7f" "ELF")) << "the CUBIN is an ELF file";
  EXPECT_TRUE(absl::StrContains(m.ptx(), ".target sm_90"));
  EXPECT_GT(m.kernels_size(), 0);
  for (const proto::CompiledKernel& k : m.kernels()) {
    SCOPED_TRACE(k.name());
    // 256 threads: {256}, or {32 lanes, 8 rows} for a warp per row.
    if (absl::StrContains(k.source(), "a warp per row")) {
      ASSERT_EQ(k.launch().block_size(), 2);
      EXPECT_EQ(k.launch().block(0), 32);
      EXPECT_EQ(k.launch().block(1), 8);
      EXPECT_FALSE(absl::StrContains(k.source(), "__syncthreads")) << "warps need no barrier";
    } else {
      ASSERT_EQ(k.launch().block_size(), 1);
      EXPECT_EQ(k.launch().block(0), 256);
    }
    // 4 blocks per SM: a persistent row kernel ptxas gave 65-80 registers, compiled again; so no
    // persistent block-per-row kernel is left between 65 and 80 registers.
    const bool four = absl::StrContains(k.source(), "__launch_bounds__(256, 4)");
    EXPECT_TRUE(four || absl::StrContains(k.source(), "__launch_bounds__(256)"));
    if (four) EXPECT_LE(k.launch().registers(), 64);
    if (absl::StrContains(k.source(), "a block per row, persistent")) {
      EXPECT_TRUE(k.launch().registers() <= 64 || k.launch().registers() > 80)
          << k.launch().registers() << " registers";
    }
    ASSERT_LE(k.image(), m.images_size());
    const std::string& ptx = k.image() == 0 ? m.ptx() : m.images(k.image() - 1).ptx();
    EXPECT_TRUE(absl::StrContains(ptx, absl::StrCat(".entry ", k.symbol())));
    EXPECT_GT(k.launch().registers(), 0) << "ptxas -v reports every kernel";
    EXPECT_LE(k.launch().registers() * 256, 65536);
    EXPECT_LE(k.launch().shared_bytes(), 48 * 1024);
    if (k.launch().grid_size() == 1) {
      EXPECT_GE(k.launch().grid(0), 0) << "0: an empty tensor, nothing to launch";
      EXPECT_LE(k.launch().grid(0), int64_t{1} << 20);
    }
  }
}

TEST(CudaCodegenTest, EveryTestGraphCompilesWithNvrtc) {
  std::vector<cuda_testing::TestGraph> graphs = cuda_testing::TestGraphs();
  for (const cuda_testing::TestGraph& t : cuda_testing::MemoryBoundGraphs()) graphs.push_back(t);
  for (const cuda_testing::TestGraph& t : graphs) {
    SCOPED_TRACE(t.name);
    absl::StatusOr<proto::KernelModule> m = Generate(t.text);
    ASSERT_TRUE(m.ok()) << m.status();
    ExpectLaunchable(*m);
    // Every graph has the symbolic batch: kernels whose sizes use it have 64-bit index math and
    // leave the grid to the launch.
    int symbolic = 0;
    for (const proto::CompiledKernel& k : m->kernels()) {
      if (!absl::StrContains(k.source(), "coil_syms[")) continue;
      ++symbolic;
      EXPECT_TRUE(absl::StrContains(k.source(), "64-bit index")) << k.source();
    }
    EXPECT_GT(symbolic, 0);
  }
}

// A module with an f16 / bf16 aten.mm carries the row widening kernels the GEMM runner uses
// after writing a result with padded rows (kernel_abi.h's GemmWidenRowsSymbol), compiled by
// NVRTC into image 0; an f32 mm's module does not.
TEST(CudaCodegenTest, HalfPrecisionMmModulesCarryTheRowWideningKernels) {
  for (const char* t : {"bf16", "f32"}) {
    absl::StatusOr<proto::KernelModule> m = Generate(absl::StrCat(R"(graph @g(%0 "x": f32[batch, 64], %1 "w": f32[64, 33]) {
  symbol batch min 1 max 0 hint 2
  %2: )", t, R"([batch, 64] = aten.to_dtype(%0) {dtype = )", t, R"(}
  %3: )", t, R"([64, 33] = aten.to_dtype(%1) {dtype = )", t, R"(}
  %4: )", t, R"([batch, 33] = aten.mm(%2, %3)
  %5: f32[batch, 33] = aten.to_dtype(%4) {dtype = f32}
  return %5
})"));
    ASSERT_TRUE(m.ok()) << m.status();
    const bool half = std::string(t) == "bf16";
    for (const char* d : {"f16", "bf16"}) {
      EXPECT_EQ(absl::StrContains(m->ptx(), absl::StrCat(".entry ", cuda::GemmWidenRowsSymbol(d))), half)
          << t << " mm, " << d << " kernel";
    }
  }
}

// The ONNX exporter's scalar constants (one-element constants: 1.25, 0.5, sqrt(2), ...) are
// literals in the kernels, not loads of one-element buffers; bf16 vectors are converted from
// their 32-bit words and stored in pairs rounded by one cvt, a scalar bf16 store of a bf16 value
// is the high half of its f32 bits (it is rounded already), rounding to bf16 is one cvt, and
// erf is the select-free coil_erff.
TEST(CudaCodegenTest, ScalarConstantsAreLiteralsAndBf16StoresConvertOnce) {
  for (const cuda_testing::TestGraph& t : cuda_testing::MemoryBoundGraphs()) {
    const std::string name = t.name;
    if (name == "softmax_2999") {  // rows of one position per group: scalar stores
      absl::StatusOr<proto::KernelModule> m = Generate(t.text);
      ASSERT_TRUE(m.ok()) << m.status();
      bool bits = false;
      for (const proto::CompiledKernel& k : m->kernels()) {
        bits = bits || absl::StrContains(k.source(), "= coil_bf16_bits(e");
        EXPECT_FALSE(absl::StrContains(k.source(), "coil_f2bf(coil_round_bf16")) << k.source();
      }
      EXPECT_TRUE(bits);
      continue;
    }
    if (name != "gelu_chain_256" && name != "layernorm_gelu_8192") continue;
    SCOPED_TRACE(name);
    absl::StatusOr<proto::KernelModule> m = Generate(t.text);
    ASSERT_TRUE(m.ok()) << m.status();
    std::string src;  // the kernel that computes erf
    for (const proto::CompiledKernel& k : m->kernels()) {
      if (absl::StrContains(k.source(), "erff(")) src = k.source();
    }
    ASSERT_FALSE(src.empty());
    if (name == "gelu_chain_256") {
      // x and the output: the six constants are literals.
      EXPECT_EQ(Count(src, "coil_bufs["), 2) << src;
      EXPECT_TRUE(absl::StrContains(src, "__int_as_float(0x3fa00000)")) << src;  // 1.25
      EXPECT_TRUE(absl::StrContains(src, "__int_as_float(0x3fb504f3)")) << src;  // sqrt(2)
      EXPECT_TRUE(absl::StrContains(src, "__int_as_float(0x3e000000)")) << src;  // 0.125
    } else {
      EXPECT_EQ(Count(src, "coil_bufs["), 5) << src;  // x, r, w, b, the output
      EXPECT_TRUE(absl::StrContains(src, "__int_as_float(0x3fb50000)")) << src;  // bf16 sqrt(2)
      EXPECT_TRUE(absl::StrContains(src, "coil_vstore_words<8>(&b")) << src;  // packed pairs
      EXPECT_TRUE(absl::StrContains(src, "coil_bf2f_at(coil_v")) << src;
      EXPECT_FALSE(absl::StrContains(src, "coil_f2bf(")) << src;
    }
    EXPECT_TRUE(absl::StrContains(src, "coil_erff(")) << src;
  }
  // The prelude's bf16 rounding is one cvt of a bf16 pair.
  absl::StatusOr<proto::KernelModule> m = Generate(cuda_testing::MemoryBoundGraphs().back().text);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(absl::StrContains(m->wrapper_source(), "cvt.rn.bf16x2.f32 %0, %1, %2;"));
}

// A bf16 division by a constant, rounded to bf16 at once, is a multiplication by the
// reciprocal when that rounds the same for all 2^16 dividends (checked at generation); an f16
// division by f32 sqrt(2) does not (some f16 quotient lands on the other side of a rounding
// boundary) and stays a division, as every division does with the option off. The block
// reductions' fold over the 8 warps' slots is unrolled.
TEST(CudaCodegenTest, NarrowDivisionsByConstantsMultiplyWhenExact) {
  const std::string text = R"(
graph @d(%0 "x": bf16[4, 64], %3 "h": f16[4, 64]) {
  %1 "c": bf16[] = constant dense "b53f"
  %2: bf16[4, 64] = aten.div(%0, %1) {rounding_mode = ""}
  %4 "s": f32[] = constant dense "f304b53f"
  %5: f16[4, 64] = aten.div(%3, %4) {rounding_mode = ""}
  return %2, %5
}
)";
  for (bool on : {true, false}) {
    SCOPED_TRACE(on ? "narrow_div_reciprocal on" : "off");
    driver::CudaBackendOptions options;
    options.codegen.narrow_div_reciprocal = on;
    absl::StatusOr<proto::KernelModule> m = cuda_testing::GenerateModule(text, options);
    ASSERT_TRUE(m.ok()) << m.status();
    ExpectLaunchable(*m);
    std::string src;
    for (const proto::CompiledKernel& k : m->kernels()) src += k.source();
    // bf16(sqrt(2)) = 1.4140625: 1 / it in f32 is 0x3f3509e7; f16 keeps its division by sqrt(2).
    EXPECT_EQ(absl::StrContains(src, "* __int_as_float(0x3f3509e7);"), on) << src;
    EXPECT_EQ(Count(src, "ExactNarrowReciprocal"), on ? 4 : 0) << src;  // 4 items per thread
    EXPECT_TRUE(absl::StrContains(src, ") / ((float)")) << src;
  }
  absl::StatusOr<proto::KernelModule> m = Generate(cuda_testing::MemoryBoundGraphs().back().text);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(absl::StrContains(m->wrapper_source(), "for (int w = 1; w < COIL_BLOCK_WARPS; ++w)"));
  for (const proto::CompiledKernel& k : m->kernels()) {  // layernorm + gelu: x / bf16(sqrt(2))
    if (absl::StrContains(k.source(), "coil_erff(")) {
      EXPECT_TRUE(absl::StrContains(k.source(), "ExactNarrowReciprocal")) << k.source();
    }
  }
}

// The memory-bound test graph `name` (cuda_test_graphs.h), or nullptr.
const cuda_testing::TestGraph* MemoryBoundGraph(const std::string& name) {
  for (const cuda_testing::TestGraph& g : cuda_testing::MemoryBoundGraphs()) {
    if (name == g.name) return &g;
  }
  return nullptr;
}

// A row Loop's f32 division by an earlier Loop's reduction (softmax's exponentials over their
// sum) is coil_div_row per position when the group's dividends, registers before its items,
// are in range (else the items with IEEE divisions); the layer norm's mean (a row invariant
// divided by a literal) and the option off keep the division.
TEST(CudaCodegenTest, DivisionsByARowsSumUseOneReciprocalPerRow) {
  const cuda_testing::TestGraph* softmax = MemoryBoundGraph("softmax_8192");
  const cuda_testing::TestGraph* layernorm = MemoryBoundGraph("layernorm_gelu_8192");
  ASSERT_NE(softmax, nullptr);
  ASSERT_NE(layernorm, nullptr);
  for (bool on : {true, false}) {
    SCOPED_TRACE(on ? "row_division on" : "off");
    driver::CudaBackendOptions options;
    options.codegen.row_division = on;
    absl::StatusOr<proto::KernelModule> m = cuda_testing::GenerateModule(softmax->text, options);
    ASSERT_TRUE(m.ok()) << m.status();
    ExpectLaunchable(*m);
    int row_divisions = 0, fallbacks = 0;
    for (const proto::CompiledKernel& k : m->kernels()) {
      row_divisions += Count(k.source(), "coil_div_row(e");
      fallbacks += Count(k.source(), "if (coil_div_row_ok(");
    }
    // bf16 softmax: 8 items per group; f32 softmax: 4 (the amax kernel divides nothing).
    EXPECT_EQ(row_divisions, on ? 12 : 0);
    EXPECT_EQ(fallbacks, on ? 2 : 0);
  }
  absl::StatusOr<proto::KernelModule> m = Generate(layernorm->text);
  ASSERT_TRUE(m.ok()) << m.status();
  for (const proto::CompiledKernel& k : m->kernels()) {
    EXPECT_FALSE(absl::StrContains(k.source(), "coil_div_row(e")) << k.source();
  }
}

// The layernorm + gelu row's bf16 tail ((erf + 1) * x * 0.5, each rounded, then stored) runs as
// bf16x2 instructions on pairs of positions and stores packed words; ptxas gives its kernel 80
// registers, so it is compiled again asking for 4 blocks per SM (with the L2 prefetch of later
// rows off; with it ptxas gives 64 at once); softmax's (64) is not. Off, or for sm_80, the tail
// stays f32 per position.
TEST(CudaCodegenTest, BfloatTailsRunOnPackedPairs) {
  const cuda_testing::TestGraph* layernorm = MemoryBoundGraph("layernorm_gelu_8192");
  ASSERT_NE(layernorm, nullptr);
  for (const char* arch : {"sm_90", "sm_80"}) {
    for (bool on : {true, false}) {
      SCOPED_TRACE(absl::StrCat(arch, on ? " packed_pairs on" : " off"));
      driver::CudaBackendOptions options;
      options.codegen.arch = arch;
      options.codegen.packed_pairs = on;
      // With the L2 prefetch of later rows ptxas gives the kernel 64 registers at once.
      options.codegen.row_prefetch = false;
      absl::StatusOr<proto::KernelModule> m = cuda_testing::GenerateModule(layernorm->text, options);
      ASSERT_TRUE(m.ok()) << m.status();
      if (std::string(arch) == "sm_90") ExpectLaunchable(*m);
      std::string src;
      for (const proto::CompiledKernel& k : m->kernels()) src += k.source();
      const bool packed = on && std::string(arch) == "sm_90";
      // 4 pairs per group: (erf + 1), times x, times 0.5.
      EXPECT_EQ(Count(src, "add.rn.bf16x2"), packed ? 4 : 0) << src;
      EXPECT_EQ(Count(src, "mul.rn.bf16x2"), packed ? 8 : 0) << src;
      EXPECT_EQ(Count(src, "coil_vstore_words<8>("), packed ? 1 : 0) << src;
      if (std::string(arch) == "sm_90") {  // ptxas: 80 registers, compiled again for 4 blocks
        EXPECT_TRUE(absl::StrContains(src, "__launch_bounds__(256, 4)")) << src;
        EXPECT_LE(m->kernels(0).launch().registers(), 64);
      }
    }
  }
  for (const cuda_testing::TestGraph& g : cuda_testing::MemoryBoundGraphs()) {
    if (std::string(g.name) == "f16_tail_2048") {  // (y + 1) * x * 0.5 - r in f16x2
      absl::StatusOr<proto::KernelModule> m = Generate(g.text);
      ASSERT_TRUE(m.ok()) << m.status();
      std::string src;
      for (const proto::CompiledKernel& k : m->kernels()) src += k.source();
      EXPECT_EQ(Count(src, "add.rn.f16x2"), 4) << src;  // 1 group of 8 per thread: 4 pairs
      EXPECT_EQ(Count(src, "mul.rn.f16x2"), 8) << src;
      EXPECT_EQ(Count(src, "sub.rn.f16x2"), 4) << src;
      EXPECT_TRUE(absl::StrContains(src, "coil_pack_f16x2(coil_pk")) << src;
    }
    if (std::string(g.name) == "mixed_rounding_2048") {  // the add reads the unrounded product
      absl::StatusOr<proto::KernelModule> m = Generate(g.text);
      ASSERT_TRUE(m.ok()) << m.status();
      for (const proto::CompiledKernel& k : m->kernels()) {
        EXPECT_FALSE(absl::StrContains(k.source(), "bf16x2 %0")) << k.source();
      }
    }
    if (std::string(g.name) != "softmax_8192") continue;
    absl::StatusOr<proto::KernelModule> m = Generate(g.text);
    ASSERT_TRUE(m.ok()) << m.status();
    for (const proto::CompiledKernel& k : m->kernels()) {
      EXPECT_FALSE(absl::StrContains(k.source(), "__launch_bounds__(256, 4)")) << k.source();
    }
  }
}

// A packed tail stops where a value is also read by something it cannot pack: here (y + 1) is
// also erf's operand, so it stays per position and only `* x` runs on pairs (its operand the
// rounded y + 1, paired from the positions' values).
TEST(CudaCodegenTest, PackedPairsStopAtValuesReadOutsideThePlan) {
  absl::StatusOr<proto::KernelModule> m = Generate(R"(
graph @t(%0 "x": bf16[batch, 2048], %1 "w": bf16[2048], %2 "b": bf16[2048]) {
  symbol batch min 1 max 0 hint 4
  %3 "one": bf16[] = constant dense "803f"
  %4: bf16[batch, 2048] = aten.layer_norm(%0, %1, %2) {eps = 1e-05, normalized_shape = [2048]}
  %5: bf16[batch, 2048] = aten.add(%4, %3) {alpha = 1}
  %6: bf16[batch, 2048] = aten.mul(%5, %0)
  %7: bf16[batch, 2048] = aten.erf(%5)
  return %6, %7
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  ExpectLaunchable(*m);
  std::string src;
  for (const proto::CompiledKernel& k : m->kernels()) src += k.source();
  EXPECT_EQ(Count(src, "add.rn.bf16x2"), 0) << src;
  EXPECT_EQ(Count(src, "mul.rn.bf16x2"), 4) << src;
  EXPECT_EQ(Count(src, "coil_vstore_words<8>("), 1) << "the product's store" << src;
  EXPECT_EQ(Count(src, "coil_vstore_bf16<8>("), 1) << "erf's store" << src;
}

TEST(CudaCodegenTest, StaticShapesUse32BitIndexMathAndStaticGrids) {
  absl::StatusOr<proto::KernelModule> m = Generate(R"(
graph @s(%0 "x": f32[64, 1000], %1 "b": f32[1000]) {
  %2: f32[64, 1000] = aten.add(%0, %1) {alpha = 1}
  %3: f32[64, 1000] = aten.softmax(%2) {dim = 1, dtype = none}
  return %3
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  ExpectLaunchable(*m);
  bool rows = false;
  for (const proto::CompiledKernel& k : m->kernels()) {
    EXPECT_TRUE(absl::StrContains(k.source(), "32-bit index")) << k.source();
    ASSERT_EQ(k.launch().grid_size(), 1) << "static shapes: the grid is known";
    if (absl::StrContains(k.source(), "a warp per row")) {
      rows = true;
      EXPECT_EQ(k.launch().grid(0), 8) << "softmax rows of 1000: a warp each, 8 per block";
      EXPECT_TRUE(absl::StrContains(k.source(), "coil_warp_reduce"));
      // 1000 positions per row, a multiple of 4: x and the output are read / written 4 at once.
      EXPECT_TRUE(absl::StrContains(k.source(), "coil_vcopy4(coil_v")) << k.source();
      EXPECT_TRUE(absl::StrContains(k.source(), "coil_p0 + 3")) << k.source();
      EXPECT_FALSE(absl::StrContains(k.source(), "coil_block_reduce"));
    }
  }
  EXPECT_TRUE(rows) << "softmax is a row kernel";
}

TEST(CudaCodegenTest, ContiguousPointwiseKernelsRunVectorGroupsPerThread) {
  // x + b over [64, 1000] with vector_groups = 4: x and the output are flat accesses, 4 groups
  // of 4 per thread (one 16-byte access per group, blockDim.x vectors apart), b[i1] stays a
  // scalar load.
  driver::CudaBackendOptions four;
  four.codegen.vector_groups = 4;
  absl::StatusOr<proto::KernelModule> m = cuda_testing::GenerateModule(R"(
graph @s(%0 "x": f32[64, 1000], %1 "b": f32[1000]) {
  %2: f32[64, 1000] = aten.add(%0, %1) {alpha = 1}
  return %2
}
)", four);
  ASSERT_TRUE(m.ok()) << m.status();
  ExpectLaunchable(*m);
  ASSERT_EQ(m->kernels_size(), 1);
  const proto::CompiledKernel& k = m->kernels(0);
  EXPECT_TRUE(absl::EndsWith(k.symbol(), "_v16")) << k.symbol();
  EXPECT_EQ(cuda::CudaItemsPerThread(k.symbol()), 16);
  const std::string& src = k.source();
  EXPECT_TRUE(absl::StrContains(src, "16 per thread, 2 vector accesses")) << src;
  EXPECT_TRUE(absl::StrContains(src, "float coil_v1[4][4];")) << "x: every group's vector" << src;
  // Every group's load is issued before the first group's body reads it.
  const size_t load = src.find("coil_vcopy4(coil_v1[coil_g], &b1[");
  const size_t first_use = src.find("coil_v1[coil_g][0]");
  const size_t body = src.find("if (coil_q >= coil_nv) break;");
  ASSERT_NE(load, std::string::npos) << src;
  ASSERT_NE(first_use, std::string::npos) << src;
  EXPECT_LT(load, body) << src;
  EXPECT_LT(body, first_use) << src;
  EXPECT_EQ(Count(src, "&b1["), 1) << "x is loaded in one place" << src;
  EXPECT_TRUE(absl::StrContains(src, "coil_vcopy4(&b3[coil_lin], coil_v")) << src;
  ASSERT_EQ(k.launch().grid_size(), 1);
  EXPECT_EQ(k.launch().grid(0), (64 * 1000 + 4095) / 4096) << "16 indices per thread";
  // One group per thread (CudaCodegenOptions::vector_groups = 1): _v4, a grid 4 times larger.
  driver::CudaBackendOptions one;
  one.codegen.vector_groups = 1;
  absl::StatusOr<proto::KernelModule> m1 = cuda_testing::GenerateModule(R"(
graph @s(%0 "x": f32[64, 1000], %1 "b": f32[1000]) {
  %2: f32[64, 1000] = aten.add(%0, %1) {alpha = 1}
  return %2
}
)", one);
  ASSERT_TRUE(m1.ok()) << m1.status();
  ExpectLaunchable(*m1);
  EXPECT_EQ(cuda::CudaItemsPerThread(m1->kernels(0).symbol()), 4) << m1->kernels(0).symbol();
  EXPECT_EQ(m1->kernels(0).launch().grid(0), (64 * 1000 + 1023) / 1024);
  // The default: 2 groups (_v8).
  absl::StatusOr<proto::KernelModule> m8 = Generate(R"(
graph @s(%0 "x": f32[64, 1000], %1 "b": f32[1000]) {
  %2: f32[64, 1000] = aten.add(%0, %1) {alpha = 1}
  return %2
}
)");
  ASSERT_TRUE(m8.ok()) << m8.status();
  EXPECT_EQ(cuda::CudaItemsPerThread(m8->kernels(0).symbol()), 8) << m8->kernels(0).symbol();
  // The symbol's suffix is the whole ABI: other names run one index per thread.
  EXPECT_EQ(cuda::CudaItemsPerThread("coil_k12_v8"), 8);
  EXPECT_EQ(cuda::CudaItemsPerThread("coil_k12"), 1);
  EXPECT_EQ(cuda::CudaItemsPerThread("coil_conv_bias_f32"), 1);
  EXPECT_EQ(cuda::CudaItemsPerThread("coil_k3_vx"), 1);
  // An innermost range that is not a multiple of 4: one index per thread.
  for (const char* text : {R"(
graph @s(%0 "x": f32[64, 999]) {
  %1: f32[64, 999] = aten.relu(%0)
  return %1
}
)"}) {
    absl::StatusOr<proto::KernelModule> m2 = Generate(text);
    ASSERT_TRUE(m2.ok()) << m2.status();
    ExpectLaunchable(*m2);
    for (const proto::CompiledKernel& k2 : m2->kernels()) {
      EXPECT_EQ(cuda::CudaItemsPerThread(k2.symbol()), 1) << k2.source();
    }
  }
}

TEST(CudaCodegenTest, LongRowsRunABlockPerRow) {
  // Rows of 5000 (> warp_row_max, 1024): a block per row; a symbolic row length too.
  for (const char* text : {R"(
graph @s(%0 "x": f32[64, 5000]) {
  %1: f32[64, 5000] = aten.softmax(%0) {dim = 1, dtype = none}
  %2: i64[64] = aten.argmax(%0) {dim = [1], keepdim = false}
  return %1, %2
}
)",
                           R"(
graph @s(%0 "x": f32[64, n]) {
  symbol n min 2 max 0 hint 4
  %1: f32[64, n] = aten.softmax(%0) {dim = 1, dtype = none}
  return %1
}
)"}) {
    absl::StatusOr<proto::KernelModule> m = Generate(text);
    ASSERT_TRUE(m.ok()) << m.status();
    ExpectLaunchable(*m);
    bool rows = false;
    for (const proto::CompiledKernel& k : m->kernels()) {
      EXPECT_FALSE(absl::StrContains(k.source(), "a warp per row")) << k.source();
      if (!absl::StrContains(k.source(), "a block per row")) continue;
      rows = true;
      EXPECT_TRUE(absl::StrContains(k.source(), "coil_block_reduce") ||
                  absl::StrContains(k.source(), "coil_block_arg"));
      if (k.launch().grid_size() == 1) {
        EXPECT_EQ(k.launch().grid(0), 64);
      }
    }
    EXPECT_TRUE(rows);
  }
}

// Block-per-row kernels prefetch into L2 the rows of the buffers they read whole, a fixed number
// of bytes ahead (codegen_cuda/internal/row_prefetch.h): the layernorm row's x and r (16 KB
// rows, 256 rows ahead), each softmax's input, a symbolic row length; not the weight and bias
// (one row for all), not with the option off or for sm_80, not in a warp-per-row kernel.
TEST(CudaCodegenTest, BlockRowKernelsPrefetchLaterRows) {
  const cuda_testing::TestGraph* softmax = MemoryBoundGraph("softmax_8192");
  const cuda_testing::TestGraph* layernorm = MemoryBoundGraph("layernorm_gelu_8192");
  ASSERT_NE(softmax, nullptr);
  ASSERT_NE(layernorm, nullptr);
  for (const char* arch : {"sm_90", "sm_80"}) {
    for (bool on : {true, false}) {
      SCOPED_TRACE(absl::StrCat(arch, on ? " row_prefetch on" : " off"));
      driver::CudaBackendOptions options;
      options.codegen.arch = arch;
      options.codegen.row_prefetch = on;
      const bool expected = on && std::string(arch) == "sm_90";
      absl::StatusOr<proto::KernelModule> m =
          cuda_testing::GenerateModule(layernorm->text, options);
      ASSERT_TRUE(m.ok()) << m.status();
      if (std::string(arch) == "sm_90") ExpectLaunchable(*m);
      std::string rows;  // the block-per-row kernel
      for (const proto::CompiledKernel& k : m->kernels()) {
        if (absl::StrContains(k.source(), "a block per row")) rows = k.source();
      }
      ASSERT_FALSE(rows.empty());
      EXPECT_EQ(Count(rows, "coil_prefetch_row(b"), expected ? 2 : 0) << rows;
      if (!expected) continue;
      EXPECT_TRUE(absl::StrContains(rows, "(i64)(8192) * (i64)sizeof(unsigned short)") ||
                  absl::StrContains(rows, "(i64)(8192LL) * (i64)sizeof(unsigned short)"))
          << rows;
      EXPECT_TRUE(absl::StrContains(rows, "coil_pf_ahead = coil_pf_sum >= 8388608LL")) << rows;
      EXPECT_LE(m->kernels(0).launch().registers(), 64);  // 4 blocks per SM, no second compile
      m = cuda_testing::GenerateModule(softmax->text, options);
      ASSERT_TRUE(m.ok()) << m.status();
      int prefetches = 0;
      for (const proto::CompiledKernel& k : m->kernels()) {
        prefetches += Count(k.source(), "coil_prefetch_row(b");
      }
      // The bf16 softmax's x; the f32 softmax's z in its amax kernel and in the one after it.
      EXPECT_EQ(prefetches, 3);
    }
  }
  absl::StatusOr<proto::KernelModule> m = Generate(R"(
graph @s(%0 "x": f32[64, n], %1 "y": f32[64, 40]) {
  symbol n min 2 max 0 hint 4
  %2: f32[64, n] = aten.softmax(%0) {dim = 1, dtype = none}
  %3: f32[64, 40] = aten.softmax(%1) {dim = 1, dtype = none}
  return %2, %3
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  ExpectLaunchable(*m);
  int block_rows = 0, warp_rows = 0;
  for (const proto::CompiledKernel& k : m->kernels()) {
    if (absl::StrContains(k.source(), "a warp per row")) {
      ++warp_rows;
      EXPECT_EQ(Count(k.source(), "coil_prefetch_row("), 0) << k.source();
    } else if (absl::StrContains(k.source(), "a block per row")) {
      ++block_rows;
      EXPECT_EQ(Count(k.source(), "coil_prefetch_row(b"), 1) << k.source();
    }
  }
  EXPECT_EQ(block_rows, 1);
  EXPECT_EQ(warp_rows, 1);
}

TEST(CudaCodegenTest, LargeStaticShapesUse64BitIndexMath) {
  // 2^32 + 2^20 elements: offsets do not fit in int32 (nothing is allocated to generate), and
  // at 16 per thread more than 2^20 blocks of 256.
  absl::StatusOr<proto::KernelModule> m = Generate(R"(
graph @big(%0 "x": f16[4097, 1048576]) {
  %1: f16[4097, 1048576] = aten.exp(%0)
  return %1
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  ExpectLaunchable(*m);
  for (const proto::CompiledKernel& k : m->kernels()) {
    EXPECT_TRUE(absl::StrContains(k.source(), "64-bit index")) << k.source();
    EXPECT_EQ(k.launch().grid(0), int64_t{1} << 20) << "the grid is capped; threads stride";
  }
}

TEST(CudaCodegenTest, OnlyIndicesFromDataAreChecked) {
  absl::StatusOr<proto::KernelModule> m = Generate(R"(graph @g(%0 "x": f32[4, 3], %1 "idx": i64[2, 3]) {
  %2: f32[2, 3] = aten.gather(%0, %1) {dim = 0, sparse_grad = false}
  %3: f32[2, 3] = aten.exp(%2)
  return %3
})");
  ASSERT_TRUE(m.ok()) << m.status();
  ExpectLaunchable(*m);
  int checks = 0;
  for (const proto::CompiledKernel& k : m->kernels()) {
    for (size_t p = k.source().find("coil_fail(coil_err, 1,"); p != std::string::npos;
         p = k.source().find("coil_fail(coil_err, 1,", p + 1)) {
      ++checks;
    }
  }
  EXPECT_EQ(checks, 1) << "one data-dependent dimension (dim 0 of the gather's input)";
}

// Integer prims that fail on data report through the error flag, each with its kind: the
// divisor checked against 0, pow's exponent against negative values (torch: "Integers to
// negative integer powers are not allowed"; the reference interpreter refuses it too).
TEST(CudaCodegenTest, IntegerDataErrorsSetTheErrorFlag) {
  struct Case {
    const char* prim;
    int kind;
  };
  for (const Case& c : {Case{"prims.div", cuda::kCudaIntDivByZero},
                        Case{"prims.remainder", cuda::kCudaIntRemByZero},
                        Case{"prims.fmod", cuda::kCudaIntFmodByZero},
                        Case{"prims.pow", cuda::kCudaNegativeIntPow}}) {
    SCOPED_TRACE(c.prim);
    absl::StatusOr<proto::KernelModule> m = Generate(absl::StrCat(
        R"(graph @g(%0 "a": i64[8], %1 "b": i64[8]) {
  %2: i64[8] = )", c.prim, R"((%0, %1)
  return %2
})"));
    ASSERT_TRUE(m.ok()) << m.status();
    ExpectLaunchable(*m);
    ASSERT_EQ(m->kernels_size(), 1);
    const std::string fail = absl::StrCat("coil_fail(coil_err, ", c.kind, ",");
    EXPECT_TRUE(absl::StrContains(m->kernels(0).source(), fail)) << m->kernels(0).source();
  }
  // Floats have no such error.
  absl::StatusOr<proto::KernelModule> f = Generate(R"(graph @g(%0 "a": f32[8], %1 "b": f32[8]) {
  %2: f32[8] = prims.pow(%0, %1)
  return %2
})");
  ASSERT_TRUE(f.ok()) << f.status();
  for (const proto::CompiledKernel& k : f->kernels()) {
    EXPECT_FALSE(absl::StrContains(k.source(), "coil_fail(coil_err, ")) << k.source();
  }
}

// max / min / argmax over a symbolic dim: compiled kernels would return the identity for a dim
// that is 0 at run time, so the module's graph carries a guard (1 <= n) that the executable's
// BindSymbols checks on the host before any launch, as the reference interpreter refuses.
TEST(CudaCodegenTest, EmptyMaxReductionIsRefusedBeforeLaunch) {
  const char* text = R"(graph @g(%0 "x": f32[4, n]) {
  symbol n min 0 max 0 hint 8
  %1: f32[4] = aten.amax(%0) {dim = [1], keepdim = false}
  %2: i64[4] = aten.argmin(%0) {dim = [1], keepdim = false}
  return %1, %2
})";
  absl::StatusOr<proto::KernelModule> m = Generate(text);
  ASSERT_TRUE(m.ok()) << m.status();
  ExpectLaunchable(*m);
  absl::StatusOr<Graph> g = Graph::FromProto(m->schedule().graph());
  ASSERT_TRUE(g.ok()) << g.status();
  auto input = [](int64_t n) {
    return std::vector<HostTensor>{HostTensor::Zeros(proto::FLOAT32, {4, n})};
  };
  auto bad = BindSymbols(*g, input(0));
  ASSERT_FALSE(bad.ok()) << "an empty max reduction would launch";
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "1 <= n is 1 <= 0")) << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "dim is not empty")) << bad.status();
  absl::StatusOr<Graph> source = ParseGraph(text);
  ASSERT_TRUE(source.ok());
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(*source, input(0));
  ASSERT_FALSE(want.ok()) << "the reference refuses it too";
  EXPECT_EQ(bad.status().code(), want.status().code());
  EXPECT_TRUE(BindSymbols(*g, input(3)).ok());
}

TEST(CudaCodegenTest, GenerationTimesItsPartsWithinTheCall) {
  // The schedule of the first test graph (the driver stops after inductor), then GenerateCuda
  // timed from outside: its parts come in order and fit in the call's wall time.
  absl::StatusOr<Graph> g = ParseGraph(cuda_testing::TestGraphs().front().text);
  ASSERT_TRUE(g.ok()) << g.status();
  driver::DriverOptions options;
  options.backend = driver::CudaBackend();
  options.stop_after = driver::Stage::kInductor;
  options.cache = nullptr;
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(g), options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->schedule.has_value());
  std::vector<CodegenPart> parts;
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<proto::KernelModule> m = codegen_cuda::GenerateCuda(*r->schedule, {}, &parts);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name, "cuda_source");
  EXPECT_EQ(parts[1].name, "nvrtc");
  EXPECT_GE(parts[0].seconds, 0);
  EXPECT_GT(parts[1].seconds, 0);  // NVRTC compiles for real
  EXPECT_LE(parts[0].seconds + parts[1].seconds, wall);
  // Through the driver, the same parts are the codegen_cuda stage's pass records.
  absl::StatusOr<Graph> again = ParseGraph(cuda_testing::TestGraphs().front().text);
  ASSERT_TRUE(again.ok());
  options.stop_after = driver::Stage::kCodegen;
  r = driver::CompileGraph(*std::move(again), options);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::string> recorded;
  for (const proto::PassRun& p : r->report.passes()) {
    if (p.pipeline() == "codegen_cuda") recorded.push_back(p.pass());
  }
  EXPECT_EQ(recorded, std::vector<std::string>({"cuda_source", "nvrtc"}));
}

TEST(CudaCodegenTest, MalformedScheduleIsAnErrorNamingTheKernel) {
  proto::Schedule s;
  proto::Kernel* k = s.add_kernels();
  k->set_id(7);
  k->set_name("broken");
  k->set_kind(proto::Kernel::POINTWISE);
  proto::Expr* e = k->add_loops()->add_body();
  e->set_id(1);
  e->set_kind(proto::Expr::LOAD);
  e->set_dtype(proto::FLOAT32);
  e->set_buffer(3);
  absl::StatusOr<std::string> src = codegen_cuda::GenerateCudaSource(s);
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(src.status().message(), "kernel 7 'broken'"));
  EXPECT_TRUE(absl::StrContains(src.status().message(), "unknown buffer 3"));
}

// A Schedule whose extern reads an operand view (made for the CPU backend, which asks inductor
// for them) is refused by name: the CUDA externs read whole buffers.
TEST(CudaCodegenTest, ExternOperandViewsAreRefused) {
  for (int which = 0; which < 3; ++which) {
    SCOPED_TRACE(which);
    proto::Schedule s;
    proto::Kernel* k = s.add_kernels();
    k->set_id(4);
    k->set_name("mm");
    k->set_kind(proto::Kernel::EXTERN);
    k->set_extern_op("aten.mm");
    k->add_extern_inputs(1);
    k->add_extern_inputs(2);
    k->set_extern_output(3);
    proto::SymExpr six;
    six.set_kind(proto::SymExpr::CONST);
    six.set_value(6);
    if (which == 0) *k->add_extern_input_views()->add_dims()->add_sizes() = six;
    if (which == 1) *k->add_extern_output_shape() = six;
    if (which == 2) *k->mutable_extern_output_view()->add_dims()->add_sizes() = six;
    absl::StatusOr<std::string> src = codegen_cuda::GenerateCudaSource(s);
    ASSERT_FALSE(src.ok());
    EXPECT_EQ(src.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(src.status().message(), "kernel 4 'mm' (extern aten.mm): operand views"))
        << src.status();
  }
}

}  // namespace
}  // namespace coil
