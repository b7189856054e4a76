// Dropout drawn from the default generator (capture/random.h) through coil::compile with the
// CPU backend: a compiled call draws the mask eager would draw from the same generator state
// (the eager op runs the reference kernel, the oracle), a fresh mask on every call without a
// recompile (the Philox counter is a run-time input binding a symbol), and its backward draws
// the forward's mask again (checked against the gradient eager gives from the same state).
#include <cmath>
#include <vector>

#include "capture/nn/dropout.h"
#include "coil.h"
#include "gtest/gtest.h"
#include "runtime/testing/test_kit.h"

namespace coil {
namespace {

using test_kit::ExpectClose;

// Positions where the two tensors' zero patterns differ.
int MaskDifferences(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.tolist(), y = b.tolist();
  int n = 0;
  for (size_t i = 0; i < x.size(); ++i) n += (x[i] == 0) != (y[i] == 0);
  return n;
}

TEST(CompiledDropout, DrawsEagersMaskAndAFreshOneEachCallWithoutRecompiling) {
  Tensor x = Tensor::Rand({50, 40}, 1) + 0.5;  // no zeros of its own
  auto f = compile([](const Tensor& x) { return dropout(x * 2.0, 0.3, true); });
  manual_seed(11);
  Tensor previous;
  for (int call = 0; call < 3; ++call) {
    RandomState before = random_state();
    Tensor got = f(x);
    RandomState after = random_state();
    EXPECT_EQ(after.seed, 11);
    EXPECT_EQ(after.offset, before.offset + 2000) << "one counter per element";
    set_random_state(before);
    Tensor want = dropout(x * 2.0, 0.3, true);  // eager: the reference kernel
    EXPECT_EQ(random_state().offset, after.offset);
    ExpectClose(want.host(), got.host(), {.abs = 0, .rel = 1e-6}, "call " + std::to_string(call));
    EXPECT_EQ(MaskDifferences(want, got), 0);
    int zeros = 0;
    for (double v : got.tolist()) zeros += v == 0;
    EXPECT_GT(zeros, 500) << "p = 0.3 of 2000";
    EXPECT_LT(zeros, 700);
    if (call > 0) EXPECT_GT(MaskDifferences(previous, got), 500) << "the same mask twice";
    previous = got;
  }
  EXPECT_EQ(f.stats().graphs_compiled, 1) << "a new counter value recompiled the graph";
  EXPECT_EQ(f.stats().compiles, 1);
  EXPECT_EQ(f.stats().fn_calls, 1) << "cached calls traced the function again";
}

// A symbolic batch: a cached call draws as many counters as this call's elements.
TEST(CompiledDropout, DrawsFollowTheBatchOfEachCall) {
  auto f = compile([](const Tensor& x) { return dropout(x + 1.0, 0.5, true); },
                   {.dynamic = DynamicMode::kDynamic});
  manual_seed(2);
  for (int64_t batch : {6, 9, 4, 9}) {
    Tensor x = Tensor::Rand({batch, 10}, static_cast<uint64_t>(batch));
    RandomState before = random_state();
    Tensor got = f(x);
    EXPECT_EQ(random_state().offset, before.offset + batch * 10) << "batch " << batch;
    set_random_state(before);
    Tensor want = dropout(x + 1.0, 0.5, true);
    ExpectClose(want.host(), got.host(), {.abs = 0, .rel = 1e-6}, "batch " + std::to_string(batch));
    EXPECT_EQ(MaskDifferences(want, got), 0);
  }
  EXPECT_EQ(f.stats().graphs_compiled, 1);
  EXPECT_EQ(f.stats().fn_calls, 1);
}

TEST(CompiledDropout, BackwardDrawsTheForwardsMask) {
  Tensor x = Tensor::Rand({8, 30}, 2) + 0.5;
  Tensor w = Tensor::Randn({30}, 3);
  w.set_requires_grad(true);
  auto f = compile([](const Tensor& x, const Tensor& w) {
    return (dropout(x * w, 0.5, true) * x).sum();
  });
  manual_seed(5);
  for (int call = 0; call < 2; ++call) {
    RandomState before = random_state();
    Tensor loss = f(x, w);
    loss.backward();
    Tensor got = w.grad();
    w.zero_grad();
    // Eager from the same state: d loss / d w = sum over rows of x^2 * mask / (1 - p).
    set_random_state(before);
    Tensor want_loss = (dropout(x * w, 0.5, true) * x).sum();
    want_loss.backward();
    Tensor want = w.grad();
    w.zero_grad();
    EXPECT_NEAR(want_loss.item(), loss.item(), 1e-4 * std::abs(want_loss.item()));
    ExpectClose(want.host(), got.host(), {.abs = 1e-5, .rel = 1e-5},
                "gradient, call " + std::to_string(call));
    // The gradient is the mask's: recompute it from the mask eager draws once more.
    set_random_state(before);
    Tensor scaled_mask = dropout(Tensor::Ones({8, 30}), 0.5, true);
    ExpectClose((scaled_mask * x * x).sum({0}).host(), got.host(), {.abs = 1e-5, .rel = 1e-5},
                "mask * x^2, call " + std::to_string(call));
  }
  EXPECT_EQ(f.stats().compiles, 1);
}

TEST(CompiledDropout, AnExplicitSeedLeavesTheGeneratorAlone) {
  manual_seed(3);
  Tensor x = Tensor::Ones({100});
  Tensor a = dropout(x, 0.5, true, /*seed=*/9, /*offset=*/SymInt(4));
  Tensor b = dropout(x, 0.5, true, /*seed=*/9, /*offset=*/SymInt(4));
  EXPECT_EQ(random_state().offset, 0);
  EXPECT_EQ(MaskDifferences(a, b), 0);
  // Not training: the identity, no draw.
  Tensor c = dropout(x, 0.5, false);
  EXPECT_EQ(random_state().offset, 0);
  ExpectClose(x.host(), c.host(), {.abs = 0, .rel = 0}, "train=false");
}

TEST(CompiledDropout, TheModuleDrawsInTrainingAndIsTheIdentityInEval) {
  Tensor x = Tensor::Rand({300}, 4) + 0.5;
  nn::Dropout d(0.2);
  manual_seed(21);
  RandomState before = random_state();
  Tensor y = d(x);
  set_random_state(before);
  ExpectClose(dropout(x, 0.2, true).host(), y.host(), {.abs = 0, .rel = 0}, "training");
  d.training = false;
  RandomState at = random_state();
  ExpectClose(x.host(), d(x).host(), {.abs = 0, .rel = 0}, "eval");
  EXPECT_EQ(random_state().offset, at.offset) << "eval drew random numbers";
  try {
    nn::Dropout bad(1.5);
    FAIL() << "nn::Dropout(1.5) was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nn::Dropout: p must be in [0, 1], got 1.5"),
              std::string::npos)
        << e.what();
  }
}

TEST(CompiledDropout, BadSeedsAreErrors) {
  try {
    manual_seed(-1);
    FAIL() << "manual_seed(-1) was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("seed must be >= 0"), std::string::npos) << e.what();
  }
  try {
    set_random_state({.seed = 1, .offset = -3});
    FAIL() << "a negative offset was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("offset must be >= 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace coil
