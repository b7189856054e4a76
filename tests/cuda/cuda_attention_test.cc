// The CUDA backend's fused attention without a GPU: the kernels' source compiles through NVRTC
// (every variant; block resources within what the runtime launches), the plan's decisions
// (attention_plan.h) on the schedules the CUDA backend builds, which attention it keeps whole
// (the rest decomposes into bmm + softmax + bmm), the attention ONNX spells out matched in f32,
// f16 and under --precision bf16, and the module carrying exactly the kernels its plans name.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_cuda/internal/attention_source.h"
#include "codegen_cuda/nvrtc.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/cuda/attention_plan.h"
#include "runtime/cuda/kernel_abi.h"
#include "tests/cuda/generate_module.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"

namespace coil {
namespace {

// Compiles `text` with the CUDA backend up to the Schedule (no NVRTC).
proto::Schedule ScheduleOf(const std::string& text, std::optional<bool> fused = std::nullopt,
                           prims::Precision precision = prims::Precision::kF32) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  driver::DriverOptions options;
  driver::CudaBackendOptions cuda;
  cuda.fused_attention = fused;
  options.backend = driver::CudaBackend(cuda);
  options.stop_after = driver::Stage::kInductor;
  options.cache = nullptr;
  options.precision = precision;
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(g), options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() && r->schedule.has_value() ? *r->schedule : proto::Schedule();
}

std::vector<cuda::AttentionPlan> Plans(const proto::Schedule& s) {
  std::vector<cuda::AttentionPlan> out;
  for (const proto::Kernel& k : s.kernels()) {
    if (std::optional<cuda::AttentionPlan> p = cuda::PlanAttention(s, k)) out.push_back(*p);
  }
  return out;
}

int Bmms(const proto::Schedule& s) {
  int n = 0;
  for (const proto::Kernel& k : s.kernels()) n += k.kind() == proto::Kernel::EXTERN && k.extern_op() == "aten.bmm";
  return n;
}

std::string Sdpa(const std::string& dtype, int e, const std::string& attrs, bool mask = false,
                 const std::string& mask_type = "") {
  const std::string t = absl::StrCat(dtype, "[batch, 4, seq, ", e, "]");
  return absl::StrCat("graph @attn(%0 \"q\": ", t, ", %1 \"k\": ", t, ", %2 \"v\": ", t,
                      mask ? absl::StrCat(", %3 \"m\": ", mask_type) : "", ") {\n",
                      "  symbol batch min 1 max 0 hint 2\n  symbol seq min 1 max 0 hint 64\n",
                      "  %9: ", t, " = aten.scaled_dot_product_attention(%0, %1, %2",
                      mask ? ", %3" : "", ") {", attrs, "}\n  return %9\n}");
}

constexpr char kCausal[] = "dropout_p = 0.0, is_causal = true, offset = 0, scale = 0.0, seed = -1, train = true";
constexpr char kPlain[] = "dropout_p = 0.0, is_causal = false, offset = 0, scale = 0.5, seed = -1, train = true";
constexpr char kDropout[] = "dropout_p = 0.1, is_causal = false, offset = 0, scale = 0.0, seed = 3, train = true";

TEST(CudaAttentionTest, EveryKernelVariantCompilesThroughNvrtc) {
  if (!codegen_cuda::NvrtcVersion().ok()) GTEST_SKIP() << "no NVRTC";
  std::vector<codegen_cuda_internal::AttentionVariant> all;
  for (const char* dtype : {"bf16", "f16", "f32"}) {
    for (int d : {64, 128}) {
      for (bool masked : {true, false}) all.push_back({dtype, d, masked});
    }
  }
  absl::StatusOr<codegen_cuda::NvrtcResult> r = codegen_cuda::CompileCudaSource(
      codegen_cuda_internal::AttentionKernelsSource(all), "attention.cu", "sm_90");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->cubin.empty());
  for (const auto& [dtype, d, masked] : all) {
    const std::string sym = cuda::AttentionSymbol(dtype, d, masked);
    SCOPED_TRACE(sym);
    EXPECT_TRUE(absl::StrContains(r->ptx, absl::StrCat(".entry ", sym))) << "no entry";
    ASSERT_TRUE(r->registers.contains(sym));
    // The launch: AttentionBlockThreads threads with their registers on one SM, and static
    // shared memory within 48 KiB (no opt-in attribute is set).
    EXPECT_LE(r->registers.at(sym) * cuda::AttentionBlockThreads(dtype != "f32"), 65536);
    EXPECT_LE(r->registers.at(sym), 255);
    ASSERT_TRUE(r->shared_bytes.contains(sym));
    EXPECT_LE(r->shared_bytes.at(sym), 48 * 1024);
    EXPECT_GT(r->shared_bytes.at(sym), 0);
  }
}

TEST(CudaAttentionTest, UnsupportedSaysWhy) {
  cuda::AttentionShape s;
  s.dtype = proto::FLOAT32;
  s.rank = 4;
  s.head_dim = s.k_head_dim = s.v_head_dim = 64;
  EXPECT_EQ(cuda::AttentionUnsupported(s), "");
  s.head_dim = s.k_head_dim = s.v_head_dim = 128;
  EXPECT_EQ(cuda::AttentionUnsupported(s), "");
  cuda::AttentionShape t = s;
  t.head_dim = t.k_head_dim = t.v_head_dim = 32;
  EXPECT_TRUE(absl::StrContains(cuda::AttentionUnsupported(t), "head dim 32")) << cuda::AttentionUnsupported(t);
  t = s;
  t.v_head_dim = 64;
  EXPECT_NE(cuda::AttentionUnsupported(t), "");
  t = s;
  t.head_dim = t.k_head_dim = t.v_head_dim = -1;
  EXPECT_NE(cuda::AttentionUnsupported(t), "");
  t = s;
  t.dtype = proto::FLOAT64;
  EXPECT_TRUE(absl::StrContains(cuda::AttentionUnsupported(t), "FLOAT64"));
  t = s;
  t.dropout_p = 0.1;
  EXPECT_EQ(cuda::AttentionUnsupported(t), "dropout");
  t.train = false;
  EXPECT_EQ(cuda::AttentionUnsupported(t), "");
  t = s;
  t.mask_dtype = proto::FLOAT16;
  t.mask_rank = 2;
  EXPECT_NE(cuda::AttentionUnsupported(t), "");
  t.mask_dtype = proto::BOOL;
  EXPECT_EQ(cuda::AttentionUnsupported(t), "");
  t.mask_rank = 5;
  EXPECT_NE(cuda::AttentionUnsupported(t), "");
  t = s;
  t.same_batch_dims = false;
  EXPECT_NE(cuda::AttentionUnsupported(t), "");
  t = s;
  t.rank = 2;
  EXPECT_NE(cuda::AttentionUnsupported(t), "");
}

TEST(CudaAttentionTest, KeptWholeWhereTheKernelsRunIt) {
  for (const char* dtype : {"f32", "f16", "bf16"}) {
    for (int e : {64, 128}) {
      SCOPED_TRACE(absl::StrCat(dtype, " head dim ", e));
      const proto::Schedule s = ScheduleOf(Sdpa(dtype, e, kCausal));
      std::vector<cuda::AttentionPlan> plans = Plans(s);
      ASSERT_EQ(plans.size(), 1u);
      EXPECT_EQ(plans[0].unsupported, "");
      EXPECT_TRUE(plans[0].causal);
      EXPECT_EQ(plans[0].head_dim, e);
      EXPECT_NEAR(plans[0].scale, 1 / std::sqrt(static_cast<double>(e)), 1e-15);
      EXPECT_EQ(plans[0].mask, 0);
      EXPECT_EQ(Bmms(s), 0);
    }
  }
  // A bool mask broadcast over heads, and an additive one of the query's dtype.
  for (const auto& [dtype, mask] : std::vector<std::pair<std::string, std::string>>{
           {"f32", "bool[batch, 1, 1, seq]"}, {"bf16", "bf16[seq, seq]"}}) {
    const proto::Schedule s = ScheduleOf(Sdpa(dtype, 64, kPlain, true, mask));
    std::vector<cuda::AttentionPlan> plans = Plans(s);
    ASSERT_EQ(plans.size(), 1u) << mask;
    EXPECT_EQ(plans[0].unsupported, "") << mask;
    EXPECT_NE(plans[0].mask, 0);
    EXPECT_EQ(plans[0].scale, 0.5);
    EXPECT_FALSE(plans[0].causal);
  }
}

TEST(CudaAttentionTest, TheRestDecomposes) {
  // Head dim 32, f64, dropout, and the switch off: no attention extern, two bmm per call.
  for (const std::string& text : {Sdpa("f32", 32, kCausal), Sdpa("f64", 64, kCausal),
                                  Sdpa("f32", 64, kDropout)}) {
    const proto::Schedule s = ScheduleOf(text);
    EXPECT_TRUE(Plans(s).empty()) << text;
    EXPECT_EQ(Bmms(s), 2) << text;
  }
  const proto::Schedule off = ScheduleOf(Sdpa("f32", 64, kCausal), /*fused=*/false);
  EXPECT_TRUE(Plans(off).empty());
  EXPECT_EQ(Bmms(off), 2);
}

// Causal attention as ONNX exports spell it: matmul, div, masked_fill (where), softmax, matmul.
std::string SpelledOut(const std::string& dtype, int e) {
  const std::string t = absl::StrCat(dtype, "[2, 4, 16, ", e, "]");
  const std::string kt = absl::StrCat(dtype, "[2, 4, ", e, ", 16]");
  const std::string sc = absl::StrCat(dtype, "[2, 4, 16, 16]");
  std::string mask;  // true above the diagonal
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) mask += j > i ? "01" : "00";
  }
  // 8 and -inf, little-endian.
  const std::string eight = dtype == "f32" ? "00000041" : dtype == "f16" ? "0048" : "0041";
  const std::string ninf = dtype == "f32" ? "000080ff" : dtype == "f16" ? "00fc" : "80ff";
  return absl::StrCat(
      "graph @attn(%0 \"q\": ", t, ", %1 \"kt\": ", kt, ", %2 \"v\": ", t, ") {\n",
      "  %3 \"c\": ", dtype, "[] = constant dense \"", eight, "\"\n",
      "  %4 \"m\": bool[16, 16] = constant dense \"", mask, "\"\n",
      "  %5 \"ninf\": ", dtype, "[] = constant dense \"", ninf, "\"\n",
      "  %6: ", sc, " = aten.matmul(%0, %1)\n",
      "  %7: ", sc, " = aten.div(%6, %3) {rounding_mode = \"\"}\n",
      "  %8: ", sc, " = aten.where(%4, %5, %7)\n",
      "  %9: ", sc, " = aten.softmax(%8) {dim = 3, dtype = none}\n",
      "  %10: ", t, " = aten.matmul(%9, %2)\n",
      "  return %10\n}");
}

TEST(CudaAttentionTest, SpelledOutAttentionIsMatched) {
  for (const char* dtype : {"f32", "f16", "bf16"}) {
    SCOPED_TRACE(dtype);
    const proto::Schedule s = ScheduleOf(SpelledOut(dtype, 64));
    std::vector<cuda::AttentionPlan> plans = Plans(s);
    ASSERT_EQ(plans.size(), 1u);
    EXPECT_EQ(plans[0].unsupported, "");
    EXPECT_TRUE(plans[0].causal);
    EXPECT_DOUBLE_EQ(plans[0].scale, 0.125);
  }
  // Under --precision bf16 the f32 pattern is matched before autocast and then runs in bf16.
  const proto::Schedule bf = ScheduleOf(SpelledOut("f32", 64), std::nullopt, prims::Precision::kBF16);
  std::vector<cuda::AttentionPlan> plans = Plans(bf);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].unsupported, "");
  EXPECT_EQ(plans[0].dtype, proto::BFLOAT16);
  // A head dim the kernels lack: left spelled out (matmuls).
  EXPECT_TRUE(Plans(ScheduleOf(SpelledOut("f32", 32))).empty());
}

TEST(CudaAttentionTest, TheModuleCarriesThePlannedKernels) {
  if (!codegen_cuda::NvrtcVersion().ok()) GTEST_SKIP() << "no NVRTC";
  absl::StatusOr<proto::KernelModule> m = cuda_testing::GenerateModule(Sdpa("bf16", 128, kCausal));
  ASSERT_TRUE(m.ok()) << m.status();
  // The runtime asks the last image for the entry points (attention_plan.h's
  // AttentionEntryMasked): they must be there.
  const auto last_ptx = [](const proto::KernelModule& km) -> const std::string& {
    return km.images_size() > 0 ? km.images(km.images_size() - 1).ptx() : km.ptx();
  };
  // No mask: only the entry point built without the mask code.
  const std::string want = cuda::AttentionSymbol("bf16", 128, /*masked=*/false);
  EXPECT_TRUE(absl::StrContains(last_ptx(*m), absl::StrCat(".entry ", want)));
  EXPECT_TRUE(absl::StrContains(m->wrapper_source(), want));
  EXPECT_FALSE(absl::StrContains(m->wrapper_source(), cuda::AttentionSymbol("bf16", 128) + "("));
  EXPECT_FALSE(absl::StrContains(m->wrapper_source(), cuda::AttentionSymbol("f32", 64)));
  // With a mask: the masked one.
  absl::StatusOr<proto::KernelModule> mm =
      cuda_testing::GenerateModule(Sdpa("bf16", 64, kPlain, true, "bool[batch, 1, seq, seq]"));
  ASSERT_TRUE(mm.ok()) << mm.status();
  EXPECT_TRUE(absl::StrContains(mm->wrapper_source(), cuda::AttentionSymbol("bf16", 64) + "("));
  EXPECT_TRUE(absl::StrContains(last_ptx(*mm), absl::StrCat(".entry ", cuda::AttentionSymbol("bf16", 64))));
  EXPECT_FALSE(absl::StrContains(mm->wrapper_source(), cuda::AttentionSymbol("bf16", 64, false)));
}

}  // namespace
}  // namespace coil
