// The fused attention kernels on a GPU (tag "gpu"): aten.scaled_dot_product_attention compiled by
// the CUDA backend (kept whole: attention_plan.h) and run at several symbolic sizes, each output
// compared with the Schedule interpreter on the same Schedule and inputs (its attention extern is
// the float64 reference kernel): f32 (SIMT) and f16 / bf16 (tensor cores), head dims 64 and 128,
// causal or not, bool and additive masks broadcast over batch and heads, sequence lengths not a
// multiple of the tiles (1, 7, 129, 513), keys and queries of different lengths, more batch x
// heads than the grid's y dimension, the ONNX-style spelled-out attention (matched) in f32 and
// under --precision bf16. Each run asserts the fused kernel ran (no host round trip). Without a
// CUDA driver the tests skip, saying so.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/cuda/executable.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"
#include "tests/cuda/cuda_gpu_testing.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"

namespace coil {
namespace {

// A structured mask: the value at (flattened batch index b, query row i, key j) of the mask's
// own shape (its last two dims; 0 for a dim of 1).
using MaskFn = std::function<double(int64_t b, int64_t i, int64_t j)>;

struct Case {
  std::string name;
  std::string text;
  std::vector<std::vector<std::pair<std::string, int64_t>>> sizes;
  prims::Precision precision = prims::Precision::kF32;
  MaskFn mask;  // replaces the random mask (input 3) when set
};

// The mask input rebuilt from c.mask (tiles all attending, all masked, or mixed, which random
// masks never give: the kernels skip or simplify such tiles).
HostTensor StructuredMask(const HostTensor& random, const MaskFn& fn) {
  const std::vector<int64_t>& sh = random.shape();
  const int r = static_cast<int>(sh.size());
  const int64_t rows = r >= 2 ? sh[r - 2] : 1, cols = sh[r - 1];
  int64_t n = 1;
  for (int64_t d : sh) n *= d;
  std::vector<double> v(n);
  for (int64_t x = 0; x < n; ++x) v[x] = fn(x / (rows * cols), (x / cols) % rows, x % cols);
  return HostTensor::FromDoubles(random.dtype(), sh, v);
}

std::string Sdpa(const std::string& dtype, int e, const std::string& attrs,
                 const std::string& mask = "", const std::string& heads = "3",
                 const std::string& kv = "seq") {
  const std::string q = absl::StrCat(dtype, "[batch, ", heads, ", seq, ", e, "]");
  const std::string k = absl::StrCat(dtype, "[batch, ", heads, ", ", kv, ", ", e, "]");
  return absl::StrCat("graph @attn(%0 \"q\": ", q, ", %1 \"k\": ", k, ", %2 \"v\": ", k,
                      mask.empty() ? "" : absl::StrCat(", %3 \"m\": ", mask), ") {\n",
                      "  symbol batch min 1 max 0 hint 2\n  symbol seq min 1 max 0 hint 64\n",
                      kv != "seq" ? absl::StrCat("  symbol ", kv, " min 1 max 0 hint 64\n") : "",
                      "  %9: ", q, " = aten.scaled_dot_product_attention(%0, %1, %2",
                      mask.empty() ? "" : ", %3", ") {", attrs, "}\n  return %9\n}");
}

constexpr char kCausal[] = "dropout_p = 0.0, is_causal = true, offset = 0, scale = 0.0, seed = -1, train = true";
constexpr char kPlain[] = "dropout_p = 0.0, is_causal = false, offset = 0, scale = 0.2, seed = -1, train = true";

// GPT-2's causal attention as its ONNX export spells it (matmul, div, where, softmax, matmul).
std::string SpelledOut(int l) {
  const std::string t = absl::StrCat("f32[batch, 2, ", l, ", 64]");
  const std::string sc = absl::StrCat("f32[batch, 2, ", l, ", ", l, "]");
  std::string mask;
  for (int i = 0; i < l; ++i) {
    for (int j = 0; j < l; ++j) mask += j > i ? "01" : "00";
  }
  return absl::StrCat(
      "graph @gpt(%0 \"q\": ", t, ", %1 \"kt\": f32[batch, 2, 64, ", l, "], %2 \"v\": ", t, ") {\n",
      "  symbol batch min 1 max 0 hint 2\n",
      "  %3 \"c\": f32[] = constant dense \"00000041\"\n",
      "  %4 \"m\": bool[", l, ", ", l, "] = constant dense \"", mask, "\"\n",
      "  %5 \"ninf\": f32[] = constant dense \"000080ff\"\n",
      "  %6: ", sc, " = aten.matmul(%0, %1)\n",
      "  %7: ", sc, " = aten.div(%6, %3) {rounding_mode = \"\"}\n",
      "  %8: ", sc, " = aten.where(%4, %5, %7)\n",
      "  %9: ", sc, " = aten.softmax(%8) {dim = 3, dtype = none}\n",
      "  %10: ", t, " = aten.matmul(%9, %2)\n",
      "  return %10\n}");
}

void ExpectCase(const Case& c, int seed) {
  SCOPED_TRACE(c.name);
  absl::StatusOr<Graph> g = ParseGraph(c.text);
  ASSERT_TRUE(g.ok()) << g.status();
  Graph graph = g->Clone();
  driver::CudaBackendOptions cuda;
  cuda.runtime.sync_each_kernel = true;
  cuda.fused_attention = true;
  driver::DriverOptions options;
  options.backend = driver::CudaBackend(cuda);
  options.cache = nullptr;
  options.precision = c.precision;
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(g), options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_NE(r->executable, nullptr) << r->load_error;
  cuda::CudaExecutable* exe = driver::AsCudaExecutable(*r->executable);
  ASSERT_NE(exe, nullptr);
  for (const auto& sizes : c.sizes) {
    std::string where = c.name;
    absl::flat_hash_map<std::string, int64_t> dims;
    for (const auto& [n, v] : sizes) {
      dims[n] = v;
      absl::StrAppend(&where, " ", n, "=", v);
    }
    SCOPED_TRACE(where);
    std::vector<HostTensor> inputs = test_kit::RandomInputs(graph, dims, seed++);
    if (c.mask) inputs[3] = StructuredMask(inputs[3], c.mask);
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(*r->schedule, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    const cuda::CudaExecutable::GemmCounts before = exe->attention_counts();
    absl::StatusOr<std::vector<HostTensor>> got = r->executable->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    const cuda::CudaExecutable::GemmCounts after = exe->attention_counts();
    EXPECT_EQ(after.fused - before.fused, 1) << exe->attention_why_not();
    EXPECT_EQ(after.host, 0) << exe->attention_why_not();
    ASSERT_EQ(want->size(), got->size());
    test_kit::Tolerance tol{.abs = 2e-5, .rel = 2e-4, .equal_values_match = true};
    // --precision bf16 rounds inside the graph, whose output may be f32.
    const DType t = c.precision == prims::Precision::kBF16 ? proto::BFLOAT16 : (*want)[0].dtype();
    if (t == proto::FLOAT16) tol.abs = tol.rel = 4e-3;
    if (t == proto::BFLOAT16) tol.abs = tol.rel = 2.5e-2;
    test_kit::ExpectClose((*want)[0], (*got)[0], tol, where);
  }
}

using Sizes = std::vector<std::vector<std::pair<std::string, int64_t>>>;
const Sizes kShort = {{{"batch", 2}, {"seq", 1}}, {{"batch", 2}, {"seq", 7}},
                      {{"batch", 1}, {"seq", 129}}, {{"batch", 3}, {"seq", 64}}};
const Sizes kLong = {{{"batch", 1}, {"seq", 513}}};

TEST(CudaAttentionGpuTest, F32MatchesTheReference) {
  REQUIRE_GPU();
  Sizes with_long = kShort;
  with_long.push_back(kLong[0]);
  ExpectCase({"f32 d64 causal", Sdpa("f32", 64, kCausal), with_long}, 1);
  ExpectCase({"f32 d128", Sdpa("f32", 128, kPlain), kShort}, 20);
  ExpectCase({"f32 d64 bool mask", Sdpa("f32", 64, kPlain, "bool[batch, 1, 1, seq]"), kShort}, 40);
  ExpectCase({"f32 d128 additive mask", Sdpa("f32", 128, kPlain, "f32[seq, seq]"), kShort}, 60);
}

TEST(CudaAttentionGpuTest, HalfPrecisionMatchesTheReference) {
  REQUIRE_GPU();
  Sizes with_long = kShort;
  with_long.push_back(kLong[0]);
  for (const char* dtype : {"f16", "bf16"}) {
    ExpectCase({absl::StrCat(dtype, " d64 causal"), Sdpa(dtype, 64, kCausal), with_long}, 100);
    ExpectCase({absl::StrCat(dtype, " d128 causal"), Sdpa(dtype, 128, kCausal), with_long}, 120);
    ExpectCase({absl::StrCat(dtype, " d64"), Sdpa(dtype, 64, kPlain), kShort}, 140);
    ExpectCase({absl::StrCat(dtype, " d128 bool mask"),
                Sdpa(dtype, 128, kPlain, "bool[batch, 1, seq, seq]"), kShort}, 160);
    ExpectCase({absl::StrCat(dtype, " d64 additive mask"),
                Sdpa(dtype, 64, kPlain, absl::StrCat(dtype, "[1, 3, 1, seq]")), kShort}, 180);
  }
}

TEST(CudaAttentionGpuTest, KeysOfAnotherLengthAndManyHeads) {
  REQUIRE_GPU();
  const Sizes cross = {{{"batch", 2}, {"seq", 7}, {"kv", 130}}, {{"batch", 1}, {"seq", 129}, {"kv", 5}}};
  ExpectCase({"f32 cross", Sdpa("f32", 64, kPlain, "", "3", "kv"), cross}, 200);
  ExpectCase({"bf16 cross causal", Sdpa("bf16", 64, kCausal, "", "3", "kv"), cross}, 210);
  // batch x heads = 2 x 40000 > 65535 (the grid's y dimension): grid-strided.
  const Sizes many = {{{"batch", 2}, {"seq", 3}}};
  ExpectCase({"f32 many heads", Sdpa("f32", 64, kCausal, "", "40000"), many}, 220);
  ExpectCase({"f16 many heads", Sdpa("f16", 64, kCausal, "", "40000"), many}, 230);
}

TEST(CudaAttentionGpuTest, SpelledOutAttentionRunsFused) {
  REQUIRE_GPU();
  const Sizes b = {{{"batch", 2}}};
  ExpectCase({"gpt f32", SpelledOut(70), b}, 300);
  ExpectCase({"gpt --precision bf16", SpelledOut(70), b, prims::Precision::kBF16}, 310);
}

// Masks whose 64 x 64 tiles are all false / -inf (skipped), all true / 0 (no per-element
// mask) or mixed, at lengths that are and are not multiples of the tiles (the summary needs
// 16-byte-aligned mask rows: seq 7, 129 and 513 take the per-element path for some or all
// tiles), for every kernel: f32 (64- and 32-row blocks), f16 / bf16 with D 64 (cp.async
// pipeline) and 128 (synchronous tiles).
TEST(CudaAttentionGpuTest, StructuredMasksSkipAndSimplifyTiles) {
  REQUIRE_GPU();
  const double ninf = -std::numeric_limits<double>::infinity();
  const MaskFn tril = [](int64_t, int64_t i, int64_t j) { return j <= i ? 1.0 : 0.0; };
  const MaskFn tril_add = [ninf](int64_t, int64_t i, int64_t j) { return j <= i ? 0.0 : ninf; };
  // Every other 64-key tile masked (key 0 always attends, so no row is fully masked).
  const MaskFn stripes = [](int64_t, int64_t, int64_t j) { return (j / 64) % 2 == 0 ? 1.0 : 0.0; };
  const MaskFn stripes_add = [ninf](int64_t, int64_t, int64_t j) { return (j / 64) % 2 == 0 ? 0.0 : ninf; };
  // Rows 64..127 of batch 1 masked entirely (their outputs are NaN, as the reference's).
  const MaskFn dead_rows = [](int64_t b, int64_t i, int64_t j) {
    return b == 1 && i >= 64 && i < 128 ? 0.0 : (j <= i + 3 ? 1.0 : 0.0);
  };
  const Sizes seqs = {{{"batch", 2}, {"seq", 7}},   {{"batch", 2}, {"seq", 64}},
                      {{"batch", 1}, {"seq", 129}}, {{"batch", 2}, {"seq", 192}},
                      {{"batch", 1}, {"seq", 513}}};
  int seed = 400;
  for (const char* dtype : {"f32", "f16", "bf16"}) {
    const std::string d64 = absl::StrCat(dtype, " d64"), d128 = absl::StrCat(dtype, " d128");
    const std::string add = absl::StrCat(dtype, "[1, 1, seq, seq]");
    ExpectCase({d64 + " causal bool mask", Sdpa(dtype, 64, kPlain, "bool[seq, seq]"), seqs,
                prims::Precision::kF32, tril}, seed += 10);
    ExpectCase({d64 + " causal additive mask", Sdpa(dtype, 64, kPlain, add), seqs,
                prims::Precision::kF32, tril_add}, seed += 10);
    ExpectCase({d64 + " key stripes", Sdpa(dtype, 64, kPlain, "bool[batch, 1, 1, seq]"), seqs,
                prims::Precision::kF32, stripes}, seed += 10);
    ExpectCase({d64 + " dead rows", Sdpa(dtype, 64, kPlain, "bool[batch, 1, seq, seq]"), seqs,
                prims::Precision::kF32, dead_rows}, seed += 10);
    ExpectCase({d128 + " causal bool mask", Sdpa(dtype, 128, kPlain, "bool[seq, seq]"), seqs,
                prims::Precision::kF32, tril}, seed += 10);
    ExpectCase({d128 + " additive key stripes",
                Sdpa(dtype, 128, kPlain, absl::StrCat(dtype, "[batch, 3, 1, seq]")), seqs,
                prims::Precision::kF32, stripes_add}, seed += 10);
  }
}

}  // namespace
}  // namespace coil
