// coil's own GEMM (internal/own_gemm.h) against a float64 product computed here: odd M, N
// and K (a partial micro-tile of rows, a partial panel of columns, K not a multiple of the K
// block), bias and every epilogue step, on 1 and 7 threads; the portable tile loop on every
// CPU and the AVX-512 one where the CPU has AVX-512F; aten.mm / its fused form with constant
// weights routed to it through RunExtern / RunExternFused on such CPUs (elsewhere oneDNN runs
// and the values are checked all the same).
#include "runtime/cpu/internal/own_gemm.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/kernel_testing.h"
#include "runtime/cpu/thread_pool.h"

namespace coil::cpu {
namespace {

using internal::OwnGemmWeights;
using testing::RandomTensor;

std::vector<float> Random(int64_t size, int seed) { return testing::RandomFloats(size, seed); }

// The float64 oracle (kernel_testing.h) for [k, n] weights.
void Reference(const std::vector<float>& x, int64_t m, int64_t ldx, const std::vector<float>& w,
               int64_t k, int64_t n, const float* bias,
               const std::vector<ExternEpilogueStep>& steps, std::vector<double>& want,
               std::vector<double>& scale) {
  testing::ReferenceProduct(
      x, m, ldx, k, n, [&](int64_t c, int64_t j) -> double { return w[c * n + j]; }, bias, steps,
      want, scale);
}

void ExpectNear(const float* got, int64_t m, int64_t n, int64_t ldo,
                const std::vector<double>& want, const std::vector<double>& scale,
                const std::string& what) {
  int bad = 0;
  for (int64_t r = 0; r < m && bad < 5; ++r) {
    for (int64_t j = 0; j < n && bad < 5; ++j) {
      const double g = got[r * ldo + j], w = want[r * n + j];
      if (!(std::abs(g - w) <= 4e-6 * scale[r * n + j])) {
        ADD_FAILURE() << what << ": [" << r << ", " << j << "] " << g << " want " << w;
        ++bad;
      }
    }
  }
}

// Which tile loops this CPU can run: the portable one always, the AVX-512 one where present.
std::vector<bool> Portables() {
  std::vector<bool> p = {true};
  if (internal::OwnGemmCpu()) p.push_back(false);
  return p;
}

TEST(OwnGemmTest, KernelMatchesFloat64ProductOnOddShapes) {
  ThreadPool pool(7);
  struct Shape {
    int64_t m, k, n;
  };
  // Rows: partial micro-tiles (9, 13, 25, 50); columns: partial panels (1, 31, 33, 70, 97);
  // K: 1, below and above the K block (384) and not a multiple of it (385, 1000).
  for (Shape s : {Shape{9, 1, 33}, Shape{13, 17, 31}, Shape{25, 385, 70}, Shape{50, 1000, 97},
                  Shape{12, 64, 32}, Shape{37, 200, 1}}) {
    const int64_t ldx = s.k + 3, ldo = s.n + 5;
    const std::vector<float> x = Random(s.m * ldx, 1), w = Random(s.k * s.n, 2);
    OwnGemmWeights packed;
    ASSERT_TRUE(packed.Pack(w.data(), s.k, s.n));
    EXPECT_TRUE(packed.Holds(w.data(), s.k, s.n));
    std::vector<double> want, scale;
    Reference(x, s.m, ldx, w, s.k, s.n, nullptr, {}, want, scale);
    for (bool portable : Portables()) {
      for (int threads : {1, 7}) {
        std::vector<float> out(s.m * ldo, -7.0f);
        internal::OwnGemm(x.data(), s.m, ldx, packed, nullptr, {}, out.data(), ldo, threads,
                          &pool, portable);
        ExpectNear(out.data(), s.m, s.n, ldo, want, scale,
                   absl::StrCat(s.m, "x", s.k, "x", s.n, portable ? " portable" : " avx512",
                                " threads ", threads));
        for (int64_t r = 0; r < s.m; ++r) {  // the padding columns of each row stay untouched
          for (int64_t j = s.n; j < ldo; ++j) ASSERT_EQ(out[r * ldo + j], -7.0f);
        }
      }
    }
  }
}

TEST(OwnGemmTest, BiasAndEpilogueSteps) {
  ThreadPool pool(7);
  const int64_t m = 29, k = 390, n = 75;
  const std::vector<float> x = Random(m * k, 3), w = Random(k * n, 4), bias = Random(n, 5);
  std::vector<float> residual = Random(m * n, 6);
  for (float& v : residual) v *= 4;  // push values across GELU's and clip's interesting range
  const ExternTensor rt{proto::FLOAT32, {m, n}, reinterpret_cast<char*>(residual.data())};
  OwnGemmWeights packed;
  ASSERT_TRUE(packed.Pack(w.data(), k, n));
  using S = ExternEpilogueStep;
  const std::vector<std::vector<S>> chains = {
      {},
      {S{S::kRelu}},
      {S{S::kAdd, 0, 0, &rt}, S{S::kClip, -1.5f, 2.0f}},
      {S{S::kHardswish}},
      {S{S::kAdd, 0, 0, &rt}, S{S::kGeluErf}},
      {S{S::kAdd, 0, 0, &rt}, S{S::kGeluTanh}, S{S::kAdd, 0, 0, &rt}},
  };
  for (bool with_bias : {false, true}) {
    for (size_t c = 0; c < chains.size(); ++c) {
      std::vector<double> want, scale;
      const float* b = with_bias ? bias.data() : nullptr;
      Reference(x, m, k, w, k, n, b, chains[c], want, scale);
      for (bool portable : Portables()) {
        for (int threads : {1, 7}) {
          std::vector<float> out(m * n);
          internal::OwnGemm(x.data(), m, k, packed, b, chains[c], out.data(), n, threads, &pool,
                            portable);
          ExpectNear(out.data(), m, n, n, want, scale,
                     absl::StrCat("chain ", c, with_bias ? " +bias" : "",
                                  portable ? " portable" : " avx512", " threads ", threads));
        }
      }
    }
  }
}

TEST(OwnGemmTest, MmWithConstantWeightsTakesThePathOnAvx512) {
  setenv("COIL_OWN_GEMM", "1", 1);  // off by default (own_gemm.h); read at the first call
  ThreadPool pool(4);
  const int64_t m = 40, k = 200, n = 301;  // 4.8 MFLOP: above UseOwnGemm's floor
  RandomTensor x({m, k}, 10), w({k, n}, 11, /*constant=*/true), bias({n}, 12, true),
      res({m, n}, 13), out({m, n}, 14);
  const std::vector<ExternTensor> in = {x.t, w.t};
  ExternStateSlot state, fused_state;
  using S = ExternEpilogueStep;
  const std::vector<S> steps = {S{S::kBias, 0, 0, &bias.t}, S{S::kAdd, 0, 0, &res.t},
                                S{S::kGeluErf}};
  const std::vector<S> post(steps.begin() + 1, steps.end());
  std::vector<double> want, scale, want_fused, scale_fused;
  Reference(x.data, m, k, w.data, k, n, nullptr, {}, want, scale);
  Reference(x.data, m, k, w.data, k, n, bias.data.data(), post, want_fused, scale_fused);
  for (int call = 0; call < 2; ++call) {  // packed once, used again
    const int64_t before = internal::OwnGemmCallCount();
    absl::Status s = RunExtern("aten.mm", ExternArgs{in, out.t, {}, 4, &state, &pool});
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(internal::OwnGemmCallCount() - before, internal::OwnGemmAvailable() ? 1 : 0);
    ExpectNear(out.data.data(), m, n, n, want, scale, "aten.mm");
    absl::StatusOr<bool> f =
        RunExternFused("aten.mm", ExternArgs{in, out.t, {}, 4, &fused_state, &pool}, steps);
    ASSERT_TRUE(f.ok()) << f.status();
    if (*f) ExpectNear(out.data.data(), m, n, n, want_fused, scale_fused, "fused aten.mm");
    if (internal::OwnGemmAvailable()) EXPECT_TRUE(*f);  // the own path always runs there
  }
  // Weights computed at run time: not this path.
  RandomTensor w2({k, n}, 15);
  const std::vector<ExternTensor> in2 = {x.t, w2.t};
  ExternStateSlot state2;
  const int64_t before = internal::OwnGemmCallCount();
  ASSERT_TRUE(RunExtern("aten.mm", ExternArgs{in2, out.t, {}, 4, &state2, &pool}).ok());
  EXPECT_EQ(internal::OwnGemmCallCount(), before);
}

}  // namespace
}  // namespace coil::cpu
