// The CPU backend keeps aten.scaled_dot_product_attention whole (CpuBackendOptions::
// fused_attention) and runs it as the runtime's fused attention extern: the schedule has one
// EXTERN kernel for it, and the compiled graph matches the float64 interpreter at several
// values of a symbolic sequence length (1, odd, more than one query block and key tile), causal
// and with an additive mask that has fully masked (-inf) rows; with the option off the op is
// decomposed (no such extern) and gives the same values. Left unset, the option keeps only the
// calls the fused kernel runs faster (f32, no mask, not causal, full 32-row query blocks and
// 64-key tiles) and still matches the interpreter.
#include <cmath>
#include <limits>
#include <optional>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "prims/autocast.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"

namespace coil::driver {
namespace {

constexpr char kCausal[] = R"(graph @attn(%0 "q": f32[2, 3, seq, 16], %1 "k": f32[2, 3, seq, 16], %2 "v": f32[2, 3, seq, 8]) {
  symbol seq min 1 max 0 hint 64
  %3: f32[2, 3, seq, 8] = aten.scaled_dot_product_attention(%0, %1, %2) {dropout_p = 0.0, is_causal = true, offset = 0, scale = 0.0, seed = -1, train = true}
  %4: f32[2, 3, seq, 8] = aten.mul(%3, %3)
  return %4
})";

constexpr char kMasked[] = R"(graph @attn(%0 "q": f32[2, 3, seq, 16], %1 "k": f32[2, 3, seq, 16], %2 "v": f32[2, 3, seq, 8], %3 "m": f32[seq, seq]) {
  symbol seq min 1 max 0 hint 64
  %4: f32[2, 3, seq, 8] = aten.scaled_dot_product_attention(%0, %1, %2, %3) {dropout_p = 0.0, is_causal = false, offset = 0, scale = 0.25, seed = -1, train = true}
  return %4
})";

Graph Parse(const char* text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

HostTensor Random(std::vector<int64_t> shape, int seed) {
  HostTensor t = HostTensor::Zeros(proto::FLOAT32, shape);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.StoreDouble(i, std::uniform_real_distribution<double>(-2, 2)(rng));
  }
  return t;
}

int AttentionExterns(const proto::Schedule& s) {
  int n = 0;
  for (const proto::Kernel& k : s.kernels()) {
    n += k.kind() == proto::Kernel::EXTERN && k.extern_op() == "aten.scaled_dot_product_attention";
  }
  return n;
}

void ExpectMatches(const char* text, bool masked, bool fused) {
  SCOPED_TRACE(fused ? "fused" : "decomposed");
  DriverOptions o;
  o.backend = CpuBackend({.runtime = {.num_threads = 2}, .fused_attention = fused});
  o.cache = nullptr;
  o.keep_intermediates = true;
  absl::StatusOr<CompileResult> r = CompileGraph(Parse(text), o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->schedule.has_value());
  EXPECT_EQ(AttentionExterns(*r->schedule), fused ? 1 : 0);
  ASSERT_NE(r->executable, nullptr) << r->load_error;
  for (int64_t seq : {1, 7, 33, 130}) {
    SCOPED_TRACE(seq);
    std::vector<HostTensor> in = {Random({2, 3, seq, 16}, 1), Random({2, 3, seq, 16}, 2),
                                  Random({2, 3, seq, 8}, 3)};
    if (masked) {
      HostTensor m = Random({seq, seq}, 4);
      for (int64_t i = 0; i < seq; i += 3) {  // rows 0, 3, 6, ...: every key masked
        for (int64_t j = 0; j < seq; ++j) m.StoreDouble(i * seq + j, -INFINITY);
      }
      in.push_back(m);
    }
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(Parse(text), in, {.float64 = true});
    absl::StatusOr<std::vector<HostTensor>> got = r->executable->Run(in);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    std::vector<double> a = (*want)[0].ToDoubles(), b = (*got)[0].ToDoubles();
    ASSERT_EQ(a.size(), b.size());
    int64_t nan = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::isnan(a[i])) {
        ++nan;
        EXPECT_TRUE(std::isnan(b[i])) << "element " << i << ": " << b[i] << ", reference NaN";
      } else {
        EXPECT_NEAR(a[i], b[i], 2e-5 * (1 + std::abs(a[i]))) << "element " << i;
      }
    }
    if (masked) {
      EXPECT_GT(nan, 0);
    }
  }
}

TEST(CpuAttentionTest, CausalOverSymbolicSequence) {
  ExpectMatches(kCausal, false, true);
  ExpectMatches(kCausal, false, false);
}

TEST(CpuAttentionTest, MaskWithFullyMaskedRows) {
  ExpectMatches(kMasked, true, true);
  ExpectMatches(kMasked, true, false);
}

// Unmasked attention of static shape q [2, 3, rows, 16], k [2, 3, keys, 16], v [2, 3, keys, 8].
std::string Static(int64_t rows, int64_t keys, bool causal) {
  return absl::StrCat(
      "graph @attn(%0 \"q\": f32[2, 3, ", rows, ", 16], %1 \"k\": f32[2, 3, ", keys,
      ", 16], %2 \"v\": f32[2, 3, ", keys, ", 8]) {\n  %3: f32[2, 3, ", rows,
      ", 8] = aten.scaled_dot_product_attention(%0, %1, %2) {dropout_p = 0.0, is_causal = ",
      causal ? "true" : "false",
      ", offset = 0, scale = 0.0, seed = -1, train = true}\n  return %3\n}");
}

TEST(CpuAttentionTest, DefaultKeepsFullBlocksWithoutMask) {
  unsetenv("COIL_CPU_ATTENTION");  // the default rule, not a forced choice
  struct Case {
    int64_t rows, keys;
    bool causal;
    int externs;
  };
  for (const Case& c : {Case{64, 128, false, 1}, Case{32, 64, false, 1}, Case{33, 128, false, 0},
                        Case{64, 96, false, 0}, Case{64, 64, true, 0}}) {
    const std::string text = Static(c.rows, c.keys, c.causal);
    SCOPED_TRACE(text);
    DriverOptions o;
    o.backend = CpuBackend({.runtime = {.num_threads = 2}});
    o.cache = nullptr;
    o.keep_intermediates = true;
    absl::StatusOr<CompileResult> r = CompileGraph(Parse(text.c_str()), o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->schedule.has_value());
    EXPECT_EQ(AttentionExterns(*r->schedule), c.externs);
    ASSERT_NE(r->executable, nullptr) << r->load_error;
    std::vector<HostTensor> in = {Random({2, 3, c.rows, 16}, 1), Random({2, 3, c.keys, 16}, 2),
                                  Random({2, 3, c.keys, 8}, 3)};
    absl::StatusOr<std::vector<HostTensor>> want =
        Interpret(Parse(text.c_str()), in, {.float64 = true});
    absl::StatusOr<std::vector<HostTensor>> got = r->executable->Run(in);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    std::vector<double> a = (*want)[0].ToDoubles(), b = (*got)[0].ToDoubles();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_NEAR(a[i], b[i], 2e-5 * (1 + std::abs(a[i]))) << "element " << i;
    }
  }
}

// BERT's attention as ONNX spells it (a permuted K, a division by a constant, softmax).
constexpr char kSpelledOut[] = R"(graph @bert(%0 "q": f32[2, 3, 64, 8], %1 "k": f32[2, 3, 128, 8], %2 "v": f32[2, 3, 128, 8]) {
  %3 "c": f32[] = constant dense "f3043540"
  %4: f32[2, 3, 8, 128] = aten.permute(%1) {dims = [0, 1, 3, 2]}
  %5: f32[2, 3, 64, 128] = aten.matmul(%0, %4)
  %6: f32[2, 3, 64, 128] = aten.div(%5, %3) {rounding_mode = ""}
  %7: f32[2, 3, 64, 128] = aten.softmax(%6) {dim = 3, dtype = none}
  %8: f32[2, 3, 64, 8] = aten.matmul(%7, %2)
  return %8
})";

// The kernels' names in order.
std::vector<std::string> KernelNames(const proto::Schedule& s) {
  std::vector<std::string> names;
  for (const proto::Kernel& k : s.kernels()) names.push_back(k.name());
  return names;
}

// Under --precision bf16 the rule (f32 only) declines the attention it would keep in f32, and
// judges it by its bf16 types already where autocast runs the matcher: the program is the one
// compiled with the fused kernel off, not the fused op's decomposition.
TEST(CpuAttentionTest, DefaultDeclinesUnderBf16AsIfOff) {
  unsetenv("COIL_CPU_ATTENTION");
  auto compile = [](std::optional<bool> fused, prims::Precision precision) {
    DriverOptions o;
    o.backend = CpuBackend({.runtime = {.num_threads = 2}, .fused_attention = fused});
    o.cache = nullptr;
    o.keep_intermediates = true;
    o.precision = precision;
    absl::StatusOr<CompileResult> r = CompileGraph(Parse(kSpelledOut), o);
    EXPECT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->schedule.has_value());
    return *std::move(r->schedule);
  };
  EXPECT_EQ(AttentionExterns(compile(std::nullopt, prims::Precision::kF32)), 1);
  const proto::Schedule rule = compile(std::nullopt, prims::Precision::kBF16);
  const proto::Schedule off = compile(false, prims::Precision::kBF16);
  EXPECT_EQ(AttentionExterns(rule), 0);
  EXPECT_EQ(KernelNames(rule), KernelNames(off));
}

}  // namespace
}  // namespace coil::driver
