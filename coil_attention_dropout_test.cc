// Dropout inside scaled_dot_product_attention (the softmax weights dropped, times 1 / (1 - p))
// drawn from the default generator (capture/random.h), eagerly and through coil::compile with
// the CPU backend: the compiled call draws the mask eager draws from the same generator state
// (eager runs the float64 reference kernel, the oracle), a fresh mask on every call without a
// recompile, the backward draws the forward's mask again (gradients against eager's tape), the
// fraction dropped is p, p = 0 / train=false / p = 1 draw nothing, and a bad p is an error.
// Gradients against central finite differences: autograd:gradcheck_test; torch 1.13 with this
// mask: tests/torch_oracle:autograd_oracle_test.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "capture/nn/attention.h"
#include "coil.h"
#include "gtest/gtest.h"
#include "runtime/testing/test_kit.h"

namespace coil {
namespace {

using test_kit::ExpectClose;

// The identity [n, n]: attention with v = I returns the (dropped) weights themselves.
Tensor Eye(int64_t n) {
  std::vector<double> v(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i) v[i * n + i] = 1;
  return Tensor::FromValues(v, {n, n});
}

Tensor Attend(const Tensor& q, const Tensor& k, const Tensor& v, double p, bool train = true) {
  return scaled_dot_product_attention(q, k, v, std::nullopt, p, /*is_causal=*/false,
                                      /*scale=*/0.0, train);
}

// Positions where the two tensors' zero patterns differ.
int MaskDifferences(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.tolist(), y = b.tolist();
  int n = 0;
  for (size_t i = 0; i < x.size(); ++i) n += (x[i] == 0) != (y[i] == 0);
  return n;
}

int Zeros(const Tensor& t) {
  int n = 0;
  for (double v : t.tolist()) n += v == 0;
  return n;
}

TEST(AttentionDropout, CompiledDrawsEagersMaskAndAFreshOneEachCall) {
  // q [2, 3, 6, 4] against k [1, 3, 8, 4] and v = I [8, 8]: the output is the weights
  // [2, 3, 6, 8] (batch dims broadcast), 288 of them drawn per call.
  Tensor q = Tensor::Randn({2, 3, 6, 4}, 1), k = Tensor::Randn({1, 3, 8, 4}, 2), v = Eye(8);
  auto f = compile([](const Tensor& q, const Tensor& k, const Tensor& v) {
    return Attend(q, k, v, 0.25);
  });
  manual_seed(7);
  Tensor previous;
  for (int call = 0; call < 3; ++call) {
    RandomState before = random_state();
    Tensor got = f(q, k, v);
    RandomState after = random_state();
    EXPECT_EQ(after.offset, before.offset + 288) << "one counter per weight";
    set_random_state(before);
    Tensor want = Attend(q, k, v, 0.25);  // eager: the reference kernel
    EXPECT_EQ(random_state().offset, after.offset);
    ExpectClose(want.host(), got.host(), {.abs = 1e-6, .rel = 1e-5},
                "call " + std::to_string(call));
    EXPECT_EQ(MaskDifferences(want, got), 0);
    // The kept weights are softmax / (1 - p): compare with no dropout where kept.
    std::vector<double> w = Attend(q, k, v, 0.0).tolist(), d = got.tolist();
    for (size_t i = 0; i < w.size(); ++i) {
      if (d[i] != 0) {
        ASSERT_NEAR(d[i], w[i] / 0.75, 1e-6) << i;
      }
    }
    EXPECT_GT(Zeros(got), 40) << "p = 0.25 of 288";
    EXPECT_LT(Zeros(got), 105);
    if (call > 0) {
      EXPECT_GT(MaskDifferences(previous, got), 40) << "the same mask twice";
    }
    previous = got;
  }
  EXPECT_EQ(f.stats().graphs_compiled, 1) << "a new counter value recompiled the graph";
  EXPECT_EQ(f.stats().fn_calls, 1) << "cached calls traced the function again";
}

// Weights 1/S each (q = k = 0) and v = 1: each output is (kept weights of its row) / (S (1 - p)),
// so the mean output times (1 - p) is the fraction kept over 4 * 256 * 256 weights (binomial
// standard deviation 0.0009 of the fraction at p = 0.3).
TEST(AttentionDropout, FractionDroppedIsP) {
  Tensor q = Tensor::Zeros({4, 256, 8}), k = Tensor::Zeros({4, 256, 8});
  Tensor v = Tensor::Ones({256, 1});
  auto f = compile([](const Tensor& q, const Tensor& k, const Tensor& v) {
    return Attend(q, k, v, 0.3).mean();
  });
  manual_seed(123);
  for (int call = 0; call < 2; ++call) {
    double kept = f(q, k, v).item() * 0.7;
    EXPECT_NEAR(kept, 0.7, 0.005) << "compiled, call " << call;
  }
  EXPECT_NEAR(Attend(q, k, v, 0.3).mean().item() * 0.7, 0.7, 0.005) << "eager";
  manual_seed(5);
  EXPECT_NEAR(f(q, k, v).item() * 0.1, 0.1, 0.003) << "p = 0.9";
}

TEST(AttentionDropout, TrainingStepGradientsFollowEachCallsMask) {
  Tensor x = Tensor::Randn({2, 5, 4}, 3), target = Tensor::Randn({2, 5, 4}, 4);
  Tensor wq = Tensor::Randn({4, 4}, 5), wv = Tensor::Randn({4, 4}, 6);
  wq.set_requires_grad(true);
  wv.set_requires_grad(true);
  auto loss_of = [&](const Tensor& x, const Tensor& target) {
    Tensor out = Attend(x.matmul(wq), x, x.matmul(wv), 0.4);
    return ((out - target) * (out - target)).mean();
  };
  auto step = compile(loss_of);
  manual_seed(9);
  std::vector<double> previous;
  for (int call = 0; call < 2; ++call) {
    RandomState before = random_state();
    Tensor loss = step(x, target);
    loss.backward();
    Tensor gq = wq.grad(), gv = wv.grad();
    wq.zero_grad();
    wv.zero_grad();
    set_random_state(before);
    Tensor want = loss_of(x, target);  // the eager tape, from the same generator state
    want.backward();
    EXPECT_NEAR(want.item(), loss.item(), 1e-5 * std::abs(want.item()));
    ExpectClose(wq.grad().host(), gq.host(), {.abs = 1e-5, .rel = 1e-4}, "wq");
    ExpectClose(wv.grad().host(), gv.host(), {.abs = 1e-5, .rel = 1e-4}, "wv");
    wq.zero_grad();
    wv.zero_grad();
    std::vector<double> now = gv.tolist();
    if (call > 0) {
      EXPECT_NE(previous, now) << "two calls drew the same mask";
    }
    previous = now;
  }
  EXPECT_EQ(step.stats().compiles, 1);
}

TEST(AttentionDropout, NoDropoutDrawsNothing) {
  Tensor q = Tensor::Randn({2, 6, 4}, 1), k = Tensor::Randn({2, 7, 4}, 2);
  Tensor v = Tensor::Randn({2, 7, 3}, 3);
  Tensor plain = scaled_dot_product_attention(q, k, v);
  manual_seed(1);
  ExpectClose(plain.host(), Attend(q, k, v, 0.0).host(), {.abs = 0, .rel = 0}, "p = 0");
  ExpectClose(plain.host(), Attend(q, k, v, 0.5, /*train=*/false).host(), {.abs = 0, .rel = 0},
              "train = false");
  EXPECT_EQ(random_state().offset, 0);
  // p = 1: every weight dropped, so zeros (as torch), and zero gradients.
  q.set_requires_grad(true);
  v.set_requires_grad(true);
  auto f = compile([](const Tensor& q, const Tensor& k, const Tensor& v) {
    return Attend(q, k, v, 1.0);
  });
  Tensor y = f(q, k, v);
  EXPECT_EQ(random_state().offset, 0);
  ExpectClose(Tensor::Zeros({2, 6, 3}).host(), y.host(), {.abs = 0, .rel = 0}, "p = 1");
  y.sum().backward();
  ExpectClose(Tensor::Zeros({2, 6, 4}).host(), q.grad().host(), {.abs = 0, .rel = 0}, "dq");
  ExpectClose(Tensor::Zeros({2, 7, 3}).host(), v.grad().host(), {.abs = 0, .rel = 0}, "dv");
}

// nn::MultiheadAttention's dropout: scaled_dot_product_attention and the explicit softmax +
// coil::dropout form draw the same mask over [B, heads, L, S] from the same generator state
// (an independent path to the same numbers: aten.dropout's kernel on the explicit weights);
// eval mode draws nothing; dropout 1 gives the output projection's bias.
TEST(AttentionDropout, MultiheadAttentionDropsTheWeightsLikeExplicitDropout) {
  Tensor x = Tensor::Randn({2, 5, 8}, 4);
  for (bool causal : {false, true}) {
    nn::MultiheadAttention sdpa(8, 2, 3, {.batch_first = true, .causal = causal, .dropout = 0.3});
    nn::MultiheadAttention plain(
        8, 2, 3, {.batch_first = true, .causal = causal, .use_sdpa = false, .dropout = 0.3});
    manual_seed(17);
    Tensor a = sdpa(x);
    RandomState after = random_state();
    EXPECT_EQ(after.offset, 2 * 2 * 5 * 5);
    manual_seed(17);
    Tensor b = plain(x);
    EXPECT_EQ(random_state().offset, after.offset);
    ExpectClose(b.host(), a.host(), {.abs = 1e-6, .rel = 1e-5}, "sdpa vs explicit");
    auto f = compile([&](const Tensor& x) { return sdpa(x); });
    manual_seed(17);
    ExpectClose(b.host(), f(x).host(), {.abs = 1e-6, .rel = 1e-5}, "compiled");
    manual_seed(18);
    Tensor c = sdpa(x);
    EXPECT_GT(std::abs((c - a).abs().sum().item()), 1e-3) << "another state, the same mask";
    sdpa.training = false;
    plain.training = false;
    RandomState at = random_state();
    ExpectClose(plain(x).host(), sdpa(x).host(), {.abs = 1e-6, .rel = 1e-5}, "eval");
    EXPECT_EQ(random_state().offset, at.offset) << "eval drew random numbers";
  }
  nn::MultiheadAttention all(8, 2, 3, {.batch_first = true, .dropout = 1.0});
  nn::MultiheadAttention all_plain(8, 2, 3,
                                   {.batch_first = true, .use_sdpa = false, .dropout = 1.0});
  all.out_proj.bias = Tensor::Ones({8});
  all_plain.out_proj.bias = Tensor::Ones({8});
  ExpectClose(Tensor::Ones({2, 5, 8}).host(), all(x).host(), {.abs = 0, .rel = 0}, "p = 1");
  ExpectClose(Tensor::Ones({2, 5, 8}).host(), all_plain(x).host(), {.abs = 0, .rel = 0},
              "p = 1, explicit");
  try {
    nn::MultiheadAttention bad(8, 2, 3, {.dropout = 1.5});
    FAIL() << "dropout 1.5 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nn::MultiheadAttention: dropout must be in [0, 1], "
                                         "got 1.5"),
              std::string::npos)
        << e.what();
  }
}

TEST(AttentionDropout, BadProbabilitiesAreErrors) {
  Tensor q = Tensor::Randn({2, 6, 4}, 1);
  auto f = compile([](const Tensor& q, double p) { return Attend(q, q, q, p); });
  for (double p : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    for (bool compiled : {false, true}) {
      try {
        Tensor y = compiled ? f(q, p) : Attend(q, q, q, p);
        FAIL() << "dropout_p " << p << " was accepted";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("aten.scaled_dot_product_attention: dropout_p "
                                             "must be in [0, 1], got"),
                  std::string::npos)
            << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace coil
