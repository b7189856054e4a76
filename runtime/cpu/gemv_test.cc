// The small-M product path (internal/gemv.h) against a float64 product computed here: the
// kernel for [k, n] and [n, k] (transposed) weights, odd sizes, bias and every epilogue step,
// m = 1..8, on 1 and 4 threads; aten.mm and 1x1 convolutions of a 1x1 input routed to it
// through RunExtern / RunExternFused (and calls that must not be); the thread rules of gemv.h
// and of oneDNN's calls (internal/dnnl_plans.h).
#include "runtime/cpu/internal/gemv.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/attribute.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/internal/dnnl_plans.h"
#include "runtime/cpu/kernel_testing.h"
#include "runtime/cpu/thread_pool.h"

namespace coil::cpu {
namespace {

using internal::GemvWeights;
using testing::RandomTensor;

std::vector<float> Random(int64_t size, int seed) { return testing::RandomFloats(size, seed); }

// The float64 oracle (kernel_testing.h), W read from `w` as `layout` says.
void Reference(const std::vector<float>& x, int64_t m, int64_t ldx, const std::vector<float>& w,
               int64_t k, int64_t n, GemvWeights::Layout layout, const float* bias,
               const std::vector<ExternEpilogueStep>& steps, std::vector<double>& want,
               std::vector<double>& scale) {
  testing::ReferenceProduct(
      x, m, ldx, k, n,
      [&](int64_t c, int64_t j) -> double {
        return layout == GemvWeights::kKN ? w[c * n + j] : w[j * k + c];
      },
      bias, steps, want, scale);
}

void ExpectNear(const float* got, int64_t m, int64_t n, int64_t ldo,
                const std::vector<double>& want, const std::vector<double>& scale,
                const std::string& what) {
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      ASSERT_NEAR(got[r * ldo + j], want[r * n + j], 2e-6 * scale[r * n + j])
          << what << " row " << r << " column " << j;
    }
  }
}

struct Shape {
  int64_t m, k, n;
};

// Small and odd sizes (1 column, a partial last panel, k = 1) and ones that split over 4
// threads (at least 2 * 64 KB of weights) with partial panels.
const std::vector<Shape> kShapes = {{1, 1, 1},     {1, 3, 17},     {2, 33, 15},  {3, 7, 33},
                                    {4, 64, 48},   {5, 17, 65},    {8, 128, 130}, {1, 960, 1280},
                                    {3, 257, 1001}, {7, 300, 333}, {8, 96, 2000}, {6, 1, 4100}};

TEST(GemvTest, KernelMatchesFloat64Product) {
  ThreadPool pool4(4);
  int seed = 1;
  for (const Shape& s : kShapes) {
    for (GemvWeights::Layout layout : {GemvWeights::kKN, GemvWeights::kNK}) {
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool4}) {
        for (bool with_bias : {false, true}) {
          const int64_t ldx = s.k + (with_bias ? 3 : 0), ldo = s.n + (with_bias ? 5 : 0);
          const std::vector<float> x = Random(s.m * ldx, seed++), w = Random(s.k * s.n, seed++),
                                   bias = Random(s.n, seed++);
          GemvWeights packed;
          ASSERT_TRUE(packed.Pack(w.data(), s.k, s.n, layout));
          EXPECT_TRUE(packed.Holds(w.data(), s.k, s.n, layout));
          EXPECT_FALSE(packed.Holds(w.data(), s.k, s.n,
                                    layout == GemvWeights::kKN ? GemvWeights::kNK
                                                               : GemvWeights::kKN));
          std::vector<float> out(s.m * ldo, -7.0f);
          const float* b = with_bias ? bias.data() : nullptr;
          internal::Gemv(x.data(), s.m, ldx, packed, b, {}, out.data(), ldo, pool);
          std::vector<double> want, scale;
          Reference(x, s.m, ldx, w, s.k, s.n, layout, b, {}, want, scale);
          ExpectNear(out.data(), s.m, s.n, ldo, want, scale,
                     absl::StrCat(s.m, "x", s.k, "x", s.n, " layout ", layout, " threads ",
                                  pool == nullptr ? 1 : 4, " bias ", with_bias));
          // Padding between rows is left alone.
          for (int64_t r = 0; r < s.m; ++r) {
            for (int64_t j = s.n; j < ldo; ++j) ASSERT_EQ(out[r * ldo + j], -7.0f);
          }
        }
      }
    }
  }
}

TEST(GemvTest, EpilogueStepsInOrder) {
  ThreadPool pool(4);
  const int64_t m = 3, k = 200, n = 777;
  const std::vector<float> x = Random(m * k, 5), w = Random(k * n, 6), bias = Random(n, 7);
  std::vector<float> residual = Random(m * n, 8);
  const ExternTensor other{proto::FLOAT32, {m, n}, reinterpret_cast<char*>(residual.data())};
  std::vector<float> second_bias = Random(n, 9);  // an aten.mm epilogue's bias step
  const ExternTensor column{proto::FLOAT32, {n}, reinterpret_cast<char*>(second_bias.data())};
  const std::vector<std::vector<ExternEpilogueStep>> chains = {
      {{ExternEpilogueStep::kRelu}},
      {{ExternEpilogueStep::kClip, 0.0f, 6.0f}},
      {{ExternEpilogueStep::kHardswish}},
      {{ExternEpilogueStep::kAdd, 0, 0, &other}, {ExternEpilogueStep::kRelu}},
      {{ExternEpilogueStep::kHardswish}, {ExternEpilogueStep::kClip, -0.25f, 0.5f}},
      {{ExternEpilogueStep::kBias, 0, 0, &column}, {ExternEpilogueStep::kGeluErf}},
      {{ExternEpilogueStep::kGeluTanh}, {ExternEpilogueStep::kAdd, 0, 0, &other}},
  };
  GemvWeights packed;
  ASSERT_TRUE(packed.Pack(w.data(), k, n, GemvWeights::kNK));
  for (size_t i = 0; i < chains.size(); ++i) {
    std::vector<float> out(m * n);
    internal::Gemv(x.data(), m, k, packed, bias.data(), chains[i], out.data(), n, &pool);
    std::vector<double> want, scale;
    Reference(x, m, k, w, k, n, GemvWeights::kNK, bias.data(), chains[i], want, scale);
    ExpectNear(out.data(), m, n, n, want, scale, absl::StrCat("chain ", i));
  }
}

TEST(GemvTest, ThreadRule) {
  // One thread per 64 KB of weights, at most the pool's and the panels'.
  EXPECT_EQ(internal::GemvThreads(960, 1280, 16), 16);
  EXPECT_EQ(internal::GemvThreads(960, 1280, 4), 4);
  EXPECT_EQ(internal::GemvThreads(64, 512, 16), 2);   // 128 KB
  EXPECT_EQ(internal::GemvThreads(100000, 16, 16), 1);  // one panel
  EXPECT_EQ(internal::GemvThreads(10, 10, 16), 1);
  EXPECT_TRUE(internal::UseGemv(1, 960, 1280, 16));
  EXPECT_TRUE(internal::UseGemv(8, 960, 1280, 2));
  EXPECT_FALSE(internal::UseGemv(9, 960, 1280, 16));   // a GEMM
  EXPECT_FALSE(internal::UseGemv(1, 960, 1280, 1));    // one thread: oneDNN's
  EXPECT_FALSE(internal::UseGemv(1, 64, 100, 16));     // 25 KB: one thread
}

TEST(GemvTest, OneDnnThreadRuleDependsOnThreadCount) {
  using dnnl_internal::ParallelBounds;
  using dnnl_internal::ThreadsForCall;
  const ParallelBounds d;
  const double mb = 1 << 20;
  // Flop-bound calls take every thread.
  EXPECT_EQ(ThreadsForCall(9e6, 0.1 * mb, 16, d), 16);
  EXPECT_EQ(ThreadsForCall(9e6, 0.1 * mb, 2, d), 2);
  // Small memory-bound calls: one thread per 256 KB when that makes at least 4.
  EXPECT_EQ(ThreadsForCall(1e6, 1 * mb, 16, d), 4);
  EXPECT_EQ(ThreadsForCall(1e6, 2.5 * mb, 16, d), 10);
  EXPECT_EQ(ThreadsForCall(1e6, 8 * mb, 16, d), 16);
  EXPECT_EQ(ThreadsForCall(1e6, 0.5 * mb, 16, d), 1);
  EXPECT_EQ(ThreadsForCall(1e6, 8 * mb, 4, d), 4);
  EXPECT_EQ(ThreadsForCall(1e6, 0.9 * mb, 4, d), 1);
  // On 2 (or 3) threads such calls stay on one, whatever their bytes (the CI machine's rule).
  EXPECT_EQ(ThreadsForCall(1e6, 64 * mb, 2, d), 1);
  EXPECT_EQ(ThreadsForCall(7.9e6, 64 * mb, 3, d), 1);
  // Overrides: no byte rule; an explicit byte bound; flops per thread.
  ParallelBounds off = d;
  off.bytes_per_thread = 0;
  EXPECT_EQ(ThreadsForCall(1e6, 8 * mb, 16, off), 1);
  ParallelBounds bound = d;
  bound.min_bytes = 0.5 * mb;
  EXPECT_EQ(ThreadsForCall(1e6, 0.5 * mb, 16, bound), 16);
  EXPECT_EQ(ThreadsForCall(1e6, 0.5 * mb, 2, bound), 2);
  ParallelBounds per = d;
  per.flops_per_thread = 4e6;
  EXPECT_EQ(ThreadsForCall(2e7, 0.1 * mb, 16, per), 5);
}

TEST(GemvTest, MmTakesThePathForSmallMWithConstantWeights) {
  ThreadPool pool(4);
  for (int64_t m : {1, 2, 5, 8, 9}) {
    const int64_t k = 300, n = 1001;
    RandomTensor x({m, k}, 20), w({k, n}, 21, /*constant=*/true), out({m, n}, 22);
    ExternStateSlot state;
    const std::vector<ExternTensor> in = {x.t, w.t};
    std::vector<double> want, scale;
    Reference(x.data, m, k, w.data, k, n, GemvWeights::kKN, nullptr, {}, want, scale);
    for (int call = 0; call < 2; ++call) {  // packed once, used again
      const int64_t before = internal::GemvCallCount();
      absl::Status s = RunExtern("aten.mm", ExternArgs{in, out.t, {}, 4, &state, &pool});
      ASSERT_TRUE(s.ok()) << s;
      EXPECT_EQ(internal::GemvCallCount() - before, m <= 8 ? 1 : 0) << "m " << m;
      ExpectNear(out.data.data(), m, n, n, want, scale, absl::StrCat("aten.mm m ", m));
    }
  }
  // Weights computed at run time, or no pool: not this path.
  RandomTensor x({1, 300}, 23), w({300, 1001}, 24), out({1, 1001}, 25);
  ExternStateSlot state;
  const std::vector<ExternTensor> in = {x.t, w.t};
  const int64_t before = internal::GemvCallCount();
  ASSERT_TRUE(RunExtern("aten.mm", ExternArgs{in, out.t, {}, 4, &state, &pool}).ok());
  EXPECT_EQ(internal::GemvCallCount(), before);
}

// With an epilogue (bias, hardswish, a residual add) as the executable passes a matched one:
// the same path, the epilogue in its stores.
TEST(GemvTest, MmWithEpilogueTakesThePathForSmallM) {
  ThreadPool pool(4);
  for (int64_t m : {1, 3, 9}) {
    const int64_t k = 300, n = 1001;
    RandomTensor x({m, k}, 30), w({k, n}, 31, /*constant=*/true), bias({n}, 32, true),
        residual({m, n}, 33), out({m, n}, 34);
    const std::vector<ExternEpilogueStep> steps = {{ExternEpilogueStep::kBias, 0, 0, &bias.t},
                                                   {ExternEpilogueStep::kHardswish},
                                                   {ExternEpilogueStep::kAdd, 0, 0, &residual.t}};
    ExternStateSlot state;
    const std::vector<ExternTensor> in = {x.t, w.t};
    std::vector<double> want, scale;
    Reference(x.data, m, k, w.data, k, n, GemvWeights::kKN, bias.data.data(),
              {steps.begin() + 1, steps.end()}, want, scale);
    const int64_t before = internal::GemvCallCount();
    absl::StatusOr<bool> fused =
        RunExternFused("aten.mm", ExternArgs{in, out.t, {}, 4, &state, &pool}, steps);
    ASSERT_TRUE(fused.ok()) << fused.status();
    if (m > 8 && !*fused) continue;  // oneDNN declined: the caller's generated epilogue runs
    ASSERT_TRUE(*fused) << "m " << m;
    EXPECT_EQ(internal::GemvCallCount() - before, m <= 8 ? 1 : 0) << "m " << m;
    ExpectNear(out.data.data(), m, n, n, want, scale, absl::StrCat("aten.mm + epilogue m ", m));
  }
}

AttrMap Conv1x1(bool channels_last) {
  AttrMap a = {{"stride", IntList{1}},      {"padding", IntList{0}},
               {"dilation", IntList{1}},    {"transposed", false},
               {"groups", int64_t{1}},      {"output_padding", IntList{0}}};
  if (channels_last) a["coil.channels_last"] = IntList{1, 1};
  return a;
}

TEST(GemvTest, OneByOneConvolutionOfAOneByOneInput) {
  ThreadPool pool(4);
  const int64_t batch = 2, c = 480, oc = 120;  // a squeeze-excitation block's first 1x1
  for (bool channels_last : {false, true}) {
    const std::vector<int64_t> xs = channels_last ? std::vector<int64_t>{batch, 1, 1, c}
                                                  : std::vector<int64_t>{batch, c, 1, 1};
    const std::vector<int64_t> os = channels_last ? std::vector<int64_t>{batch, 1, 1, oc}
                                                  : std::vector<int64_t>{batch, oc, 1, 1};
    RandomTensor x(xs, 30), w({oc, c, 1, 1}, 31, /*constant=*/true), bias({oc}, 32, true);
    RandomTensor out(os, 33), residual(os, 34);
    const AttrMap attrs = Conv1x1(channels_last);
    ExternStateSlot state;
    const std::vector<ExternTensor> in = {x.t, w.t, bias.t};
    std::vector<double> want, scale;
    Reference(x.data, batch, c, w.data, c, oc, GemvWeights::kNK, bias.data.data(), {}, want,
              scale);
    int64_t before = internal::GemvCallCount();
    absl::Status s = RunExtern("aten.convolution", ExternArgs{in, out.t, attrs, 4, &state, &pool});
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(internal::GemvCallCount() - before, 1);
    ExpectNear(out.data.data(), batch, oc, oc, want, scale, "convolution");
    // With post-ops: residual add, then clip.
    const std::vector<ExternEpilogueStep> steps = {{ExternEpilogueStep::kAdd, 0, 0, &residual.t},
                                                   {ExternEpilogueStep::kClip, 0.0f, 6.0f}};
    Reference(x.data, batch, c, w.data, c, oc, GemvWeights::kNK, bias.data.data(), steps, want,
              scale);
    before = internal::GemvCallCount();
    absl::StatusOr<bool> fused = RunExternFused(
        "aten.convolution", ExternArgs{in, out.t, attrs, 4, &state, &pool}, steps);
    ASSERT_TRUE(fused.ok()) << fused.status();
    EXPECT_TRUE(*fused);
    EXPECT_EQ(internal::GemvCallCount() - before, 1);
    ExpectNear(out.data.data(), batch, oc, oc, want, scale, "convolution + add + clip");
  }
  // Not products: padding (the output is 3x3), a 3x3 kernel; these run as before.
  RandomTensor x({1, c, 1, 1}, 40), w({oc, c, 1, 1}, 41, true), w3({oc, c, 3, 3}, 42, true);
  RandomTensor out3({1, oc, 3, 3}, 43), out1({1, oc, 1, 1}, 44);
  AttrMap padded = Conv1x1(false);
  padded["padding"] = IntList{1};
  ExternStateSlot s1, s2;
  const int64_t before = internal::GemvCallCount();
  const std::vector<ExternTensor> in_padded = {x.t, w.t}, in_3x3 = {x.t, w3.t};
  ASSERT_TRUE(
      RunExtern("aten.convolution", ExternArgs{in_padded, out3.t, padded, 4, &s1, &pool}).ok());
  ASSERT_TRUE(
      RunExtern("aten.convolution", ExternArgs{in_3x3, out1.t, padded, 4, &s2, &pool}).ok());
  EXPECT_EQ(internal::GemvCallCount(), before);
}

}  // namespace
}  // namespace coil::cpu
