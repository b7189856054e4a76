// Training from C++: the eager autograd tape (capture/autograd.h) with autograd/'s rules, and
// coil::compile'd functions on the tape as compiled forward/backward segments (graph breaks
// chain several). Gradients are checked against central finite differences in float64 (the
// oracle) and compiled gradients against the eager tape's; bad input gets one expected-error
// test each.
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "capture/logging.h"
#include "coil.h"
#include "gtest/gtest.h"
#include "runtime/testing/test_kit.h"

namespace coil {
namespace {

using test_kit::ExpectClose;

Tensor Param(std::vector<int64_t> shape, uint64_t seed, DType dtype = proto::FLOAT64) {
  Tensor t = Tensor::Randn(std::move(shape), seed, dtype);
  t.set_requires_grad(true);
  return t;
}

// d loss / d params[i] by central differences of loss() in float64 (the params are perturbed
// in place, under no_grad).
std::vector<double> FiniteDifferences(const std::function<Tensor()>& loss, Tensor& p) {
  no_grad guard;
  HostTensor data = p.host();
  std::vector<double> values = data.ToDoubles();
  std::vector<double> grad(values.size());
  const double eps = 1e-6;
  for (size_t i = 0; i < values.size(); ++i) {
    std::vector<double> v = values;
    v[i] = values[i] + eps;
    p.copy_(Tensor::FromValues(v, data.shape(), data.dtype()));
    double plus = loss().item();
    v[i] = values[i] - eps;
    p.copy_(Tensor::FromValues(v, data.shape(), data.dtype()));
    double minus = loss().item();
    grad[i] = (plus - minus) / (2 * eps);
  }
  p.copy_(Tensor::FromValues(values, data.shape(), data.dtype()));
  return grad;
}

void ExpectGradsClose(const std::vector<double>& want, const Tensor& grad, double tol,
                      const std::string& what) {
  ASSERT_TRUE(grad.defined()) << what << ": no gradient";
  std::vector<double> got = grad.tolist();
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(want[i], got[i], tol * (1 + std::abs(want[i]))) << what << " element " << i;
  }
}

// A small MLP with a broadcast bias, tanh, softmax and a mean: several rules on one tape.
Tensor MlpLoss(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2) {
  Tensor h = (x.matmul(w1) + b1).tanh();
  Tensor z = h.matmul(w2).log_softmax(-1);
  return -(z * z.exp()).sum({-1}).mean();
}

TEST(EagerTape, GradientsMatchFiniteDifferences) {
  Tensor x = Tensor::Randn({4, 3}, 1, proto::FLOAT64);
  Tensor w1 = Param({3, 5}, 2), b1 = Param({5}, 3), w2 = Param({5, 2}, 4);
  Tensor loss = MlpLoss(x, w1, b1, w2);
  EXPECT_TRUE(loss.requires_grad());
  EXPECT_FALSE(loss.is_leaf());
  loss.backward();
  auto f = [&] { return MlpLoss(x, w1, b1, w2); };
  ExpectGradsClose(FiniteDifferences(f, w1), w1.grad(), 1e-6, "w1");
  ExpectGradsClose(FiniteDifferences(f, b1), b1.grad(), 1e-6, "b1");
  ExpectGradsClose(FiniteDifferences(f, w2), w2.grad(), 1e-6, "w2");
  EXPECT_FALSE(x.grad().defined());  // x does not require grad
}

TEST(EagerTape, ValueUsedTwiceAndViewsAccumulate) {
  Tensor a = Param({2, 3}, 5);
  // a reaches the loss three ways: directly, through a transpose and through a slice.
  auto f = [&] {
    return (a * a).sum() + a.t().matmul(a).sum() + a.slice(1, 1, 3).exp().sum();
  };
  f().backward();
  ExpectGradsClose(FiniteDifferences(f, a), a.grad(), 1e-6, "a");
}

TEST(EagerTape, NoGradAndZeroGradAndAccumulation) {
  Tensor w = Param({3}, 6);
  {
    no_grad guard;
    EXPECT_FALSE(is_grad_enabled());
    Tensor y = w * 2.0;
    EXPECT_FALSE(y.requires_grad());
  }
  EXPECT_TRUE(is_grad_enabled());
  Tensor loss = (w * w).sum();
  loss.backward(Tensor(), /*retain_graph=*/true);
  std::vector<double> once = w.grad().tolist();
  loss.backward();  // accumulates
  std::vector<double> twice = w.grad().tolist();
  std::vector<double> wv = w.tolist();
  for (size_t i = 0; i < wv.size(); ++i) {
    EXPECT_DOUBLE_EQ(once[i], 2 * wv[i]);
    EXPECT_DOUBLE_EQ(twice[i], 4 * wv[i]);
  }
  zero_grad({w});
  EXPECT_FALSE(w.grad().defined());
  // A detached tensor is outside the tape.
  EXPECT_FALSE(w.detach().requires_grad());
}

// ---- compiled functions on the tape ----

TEST(CompiledTape, CompiledGradientsMatchEagerTape) {
  Tensor x = Tensor::Randn({4, 3}, 1);
  Tensor w1 = Param({3, 5}, 2, proto::FLOAT32), b1 = Param({5}, 3, proto::FLOAT32);
  Tensor w2 = Param({5, 2}, 4, proto::FLOAT32);
  // Eager reference.
  MlpLoss(x, w1, b1, w2).backward();
  std::vector<HostTensor> want = {w1.grad().host(), b1.grad().host(), w2.grad().host()};
  zero_grad({w1, b1, w2});
  // w2 is read from the closure (a lifted graph input), the others are arguments.
  auto f = compile([&](const Tensor& x, const Tensor& w1, const Tensor& b1) {
    return MlpLoss(x, w1, b1, w2);
  });
  for (int call = 0; call < 2; ++call) {  // the second call runs the cached training compile
    Tensor loss = f(x, w1, b1);
    EXPECT_TRUE(loss.requires_grad());
    loss.backward();
    ExpectClose(want[0], w1.grad().host(), {.abs = 1e-5, .rel = 1e-4}, "w1");
    ExpectClose(want[1], b1.grad().host(), {.abs = 1e-5, .rel = 1e-4}, "b1");
    ExpectClose(want[2], w2.grad().host(), {.abs = 1e-5, .rel = 1e-4}, "w2");
    zero_grad({w1, b1, w2});
  }
  EXPECT_EQ(f.stats().compiles, 1);
  EXPECT_EQ(f.stats().cache_hits, 1);
  // Without gradients the same function runs as inference, with the same value.
  {
    no_grad guard;
    Tensor loss = f(x, w1, b1);
    EXPECT_FALSE(loss.requires_grad());
    EXPECT_NEAR(loss.item(), MlpLoss(x, w1, b1, w2).item(), 1e-5);
  }
}

// A compiled function that writes into an input after its forward read it: the compiled
// function is functional, so the gradient uses the value from before the write (the eager tape
// refuses the same program: TapeErrors.SavedTensorModifiedInPlace) and the write reaches the
// caller's tensor. Oracle: d/dw sum(w * x) = x as it was at the call.
TEST(CompiledTape, InputWrittenAfterItsForwardReadGivesTheOldValuesGradient) {
  auto f = compile([](const Tensor& w, const Tensor& x) {
    Tensor loss = (w * x).sum();
    x.add_(Tensor::Scalar(1.0, proto::FLOAT32));
    return loss;
  });
  Tensor w = Param({5}, 30, proto::FLOAT32);
  for (int call = 0; call < 2; ++call) {
    Tensor x = Tensor::Randn({5}, 31 + call);
    std::vector<double> before = x.tolist();
    f(w, x).backward();
    EXPECT_EQ(w.grad().tolist(), before) << "call " << call;
    for (size_t i = 0; i < before.size(); ++i) {
      EXPECT_FLOAT_EQ(x.tolist()[i], before[i] + 1.0) << "call " << call;
    }
    zero_grad({w});
  }
  EXPECT_EQ(f.stats().compiles, 1);
}

// As in eager, only results computed (through floating values) from an input that requires
// grad require grad; the others are plain tensors, which may be written in place. First call
// (the trace's run) and cached call.
TEST(CompiledTape, OnlyResultsOfGradInputsRequireGrad) {
  auto fn = [](const Tensor& w, const Tensor& x) {
    return std::vector<Tensor>{w * x, x * 3.0, w.argmax({0}), (w > 0.0)};
  };
  auto f = compile(fn);
  Tensor w = Param({5}, 32, proto::FLOAT32);
  for (int call = 0; call < 2; ++call) {
    Tensor x = Tensor::Randn({5}, 33 + call);
    std::vector<Tensor> eager = fn(w, x), compiled = f(w, x);
    for (size_t k = 0; k < eager.size(); ++k) {
      EXPECT_EQ(compiled[k].requires_grad(), eager[k].requires_grad())
          << "result " << k << ", call " << call;
    }
    compiled[1].add_scalar_(1.0);  // not on the tape: allowed, as eagerly
    compiled[0].sum().backward();
    EXPECT_EQ(w.grad().tolist(), x.tolist()) << "call " << call;
    zero_grad({w});
  }
  EXPECT_EQ(f.stats().compiles, 1);
}

// Results that view one intermediate (made views of it again after the run, from the graph's
// extra output) are on the tape, and their gradients reach the input, first call included.
TEST(CompiledTape, ResultsViewingASharedIntermediateCarryGradients) {
  auto fn = [](const Tensor& w) {
    Tensor s = w * 2.0;
    return std::vector<Tensor>{s.slice(0, 0, 3), s.unsqueeze(0)};
  };
  auto f = compile(fn);
  for (int call = 0; call < 2; ++call) {
    std::vector<double> grads[2];
    for (int compiled = 0; compiled < 2; ++compiled) {
      Tensor w = Param({5}, 34, proto::FLOAT32);
      std::vector<Tensor> r = compiled ? f(w) : fn(w);
      for (const Tensor& t : r) EXPECT_TRUE(t.requires_grad()) << "call " << call;
      (r[0].sum() + r[1].sum() * 2.0).backward();
      grads[compiled] = w.grad().tolist();
    }
    EXPECT_EQ(grads[1], grads[0]) << "call " << call;
  }
}

TEST(CompiledTape, EmbeddingWithRepeatedIndicesAccumulates) {
  Tensor idx = Tensor::FromValues({3, 1, 3, 0, 3, 1}, {2, 3}, proto::INT64);
  Tensor w = Param({4, 2}, 19, proto::FLOAT32);
  Tensor g = Tensor::Randn({2, 3, 2}, 20);
  auto f = [&](const Tensor& idx) { return (embedding(w, idx) * g).sum(); };
  f(idx).backward();
  std::vector<double> eager = w.grad().tolist();
  // Row r of the gradient is the sum of g over the positions holding index r.
  std::vector<double> gv = g.tolist(), iv = idx.tolist(), want(8, 0.0);
  for (int p = 0; p < 6; ++p) {
    for (int k = 0; k < 2; ++k) want[static_cast<int>(iv[p]) * 2 + k] += gv[p * 2 + k];
  }
  ExpectGradsClose(want, w.grad(), 1e-6, "eager embedding");
  w.zero_grad();
  compile(f)(idx).backward();
  ExpectGradsClose(want, w.grad(), 1e-6, "compiled embedding");
}

TEST(CompiledTape, GraphBreakChainsCompiledSegments) {
  Tensor x = Tensor::Randn({4, 3}, 7);
  Tensor w1 = Param({3, 5}, 8, proto::FLOAT32), w2 = Param({5, 2}, 9, proto::FLOAT32);
  // Two breaks (item() twice): three segments on the tape, plus an eager op after the call.
  auto step = [&](const Tensor& x) {
    Tensor h = x.matmul(w1).tanh();
    double scale = 1.0 + 0.0 * h.sum().item();  // reads a value: a graph break
    Tensor z = (h * scale).matmul(w2);
    double s2 = z.abs().amax().item();         // a second break
    return (z * z).mean() * (1.0 + 0.0 * s2) + x.sum() * 0.0;
  };
  Tensor eager_loss = step(x);
  (eager_loss * 3.0).backward();
  HostTensor want1 = w1.grad().host(), want2 = w2.grad().host();
  zero_grad({w1, w2});
  auto f = compile(step);
  for (int call = 0; call < 2; ++call) {
    Tensor loss = f(x) * 3.0;  // the eager mul is one more node after the segments
    loss.backward();
    ExpectClose(want1, w1.grad().host(), {.abs = 1e-5, .rel = 1e-4}, "w1");
    ExpectClose(want2, w2.grad().host(), {.abs = 1e-5, .rel = 1e-4}, "w2");
    zero_grad({w1, w2});
  }
  EXPECT_EQ(f.explanation().breaks.size(), 2u);
}

TEST(CompiledTape, ArgumentUsedAfterABreakStillGetsItsGradient) {
  Tensor x = Param({3, 4}, 10, proto::FLOAT32);
  auto step = [](const Tensor& x) {
    Tensor y = x.sin();
    (void)y.sum().item();  // break; x is read again after it
    return (y * x).sum();
  };
  step(x).backward();
  HostTensor want = x.grad().host();
  x.zero_grad();
  compile(step)(x).backward();
  ExpectClose(want, x.grad().host(), {.abs = 1e-5, .rel = 1e-4}, "x");
}

TEST(CompiledTape, AotGraphsLogPrintsJointForwardAndBackward) {
  std::string path = ::testing::TempDir() + "/aot_graphs.log";
  ConfigureLogs("aot_graphs", path);
  Tensor w = Param({3, 2}, 21, proto::FLOAT32);
  Tensor x = Tensor::Randn({4, 3}, 22);
  compile([&](const Tensor& x) { return x.matmul(w).tanh().sum(); })(x).backward();
  ConfigureLogs("");
  std::ifstream in(path);
  std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* part : {"[coil:aot_graphs]", "saved", "joint graph:", "forward graph:",
                           "backward graph:", "aten.mm", "tangent_0"}) {
    EXPECT_NE(log.find(part), std::string::npos) << part << " missing from\n" << log;
  }
  EXPECT_LT(log.find("joint graph:"), log.find("forward graph:"));
  EXPECT_LT(log.find("forward graph:"), log.find("backward graph:"));
}

// ---- bad input: each a clear error naming the op or call and the source location ----

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(TapeErrors, BackwardOfNonScalarWithoutGradient) {
  Tensor w = Param({2, 3}, 11);
  Tensor y = w * 2.0;
  std::string m = ErrorOf([&] { y.backward(); });
  EXPECT_NE(m.find("scalar"), std::string::npos) << m;
  EXPECT_NE(m.find("f64[2, 3]"), std::string::npos) << m;
  EXPECT_NE(m.find("coil_autograd_test.cc:"), std::string::npos) << m;
  // With a gradient of its shape it works.
  y.backward(Tensor::Ones({2, 3}, proto::FLOAT64));
  EXPECT_EQ(w.grad().tolist(), std::vector<double>(6, 2.0));
}

TEST(TapeErrors, BackwardOfTensorThatDoesNotRequireGrad) {
  Tensor x = Tensor::Randn({3}, 12);
  Tensor y = (x * 2.0).sum();
  std::string m = ErrorOf([&] { y.backward(); });
  EXPECT_NE(m.find("does not require grad"), std::string::npos) << m;
  EXPECT_NE(m.find("coil_autograd_test.cc:"), std::string::npos) << m;
  // Computed under no_grad: the same error.
  Tensor w = Param({3}, 13);
  Tensor z;
  {
    no_grad guard;
    z = (w * 2.0).sum();
  }
  EXPECT_NE(ErrorOf([&] { z.backward(); }).find("does not require grad"), std::string::npos);
}

TEST(TapeErrors, SecondBackwardThroughFreedGraph) {
  Tensor w = Param({3}, 14);
  Tensor loss = (w.exp() * w).sum();
  loss.backward();
  std::vector<double> first = w.grad().tolist();
  std::string m = ErrorOf([&] { loss.backward(); });
  EXPECT_NE(m.find("second time"), std::string::npos) << m;
  EXPECT_NE(m.find("retain_graph"), std::string::npos) << m;
  EXPECT_NE(m.find("aten."), std::string::npos) << m;  // names the op whose values were freed
  EXPECT_EQ(w.grad().tolist(), first);                // nothing accumulated
}

TEST(TapeErrors, SecondBackwardThroughFreedCompiledSegment) {
  Tensor w = Param({3}, 15, proto::FLOAT32);
  auto f = compile([](const Tensor& w) { return (w.exp() * w).sum(); });
  Tensor loss = f(w);
  loss.backward();
  std::string m = ErrorOf([&] { loss.backward(); });
  EXPECT_NE(m.find("second time"), std::string::npos) << m;
  EXPECT_NE(m.find("graph fn_0"), std::string::npos) << m;
}

TEST(TapeErrors, BackwardThroughNonDifferentiableOp) {
  Tensor a = Param({4}, 16), b = Param({4}, 17);
  Tensor q = b.floor_divide(Tensor::Scalar(0.5, proto::FLOAT64));  // recorded here
  Tensor bad = (a * a).sum() + q.sum();
  std::string m = ErrorOf([&] { bad.backward(); });
  EXPECT_NE(m.find("aten.floor_divide"), std::string::npos) << m;
  EXPECT_NE(m.find("not differentiable"), std::string::npos) << m;
  EXPECT_NE(m.find("coil_autograd_test.cc:"), std::string::npos) << m;
  // Nothing was accumulated and the tape still works for a loss that avoids the op.
  EXPECT_FALSE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
  (a * a).sum().backward();
  std::vector<double> av = a.tolist(), ag = a.grad().tolist();
  for (size_t i = 0; i < av.size(); ++i) EXPECT_DOUBLE_EQ(ag[i], 2 * av[i]);
}

TEST(TapeErrors, InPlaceOpOnTensorThatRequiresGrad) {
  Tensor w = Param({3}, 18);
  std::vector<double> before = w.tolist();
  std::string m = ErrorOf([&] { w.mul_(Tensor::Scalar(2.0, proto::FLOAT64)); });
  EXPECT_NE(m.find("aten.mul_"), std::string::npos) << m;
  EXPECT_NE(m.find("in-place"), std::string::npos) << m;
  EXPECT_NE(m.find("coil_autograd_test.cc:"), std::string::npos) << m;
  EXPECT_EQ(w.tolist(), before);  // not applied
  {
    no_grad guard;  // an optimizer's update
    w.mul_(Tensor::Scalar(2.0, proto::FLOAT64));
  }
  EXPECT_EQ(w.tolist()[0], 2 * before[0]);
}

// A tensor saved for backward and then changed in place (here one that needs no gradient, so
// the in-place op itself is allowed): backward refuses, as torch does, naming the op that saved
// it and the in-place op, instead of a gradient computed from the new values. Also through a
// view sharing the storage, and under no_grad (an optimizer step between backwards).
// As PyTorch: an input written in place after the forward matters only if the gradients are
// computed from it. aten.add's are not (torch 1.13: w.grad is ones); aten.mul's are (above).
TEST(EagerTape, InputWrittenAfterAnOpWhoseGradientDoesNotReadIt) {
  Tensor w = Param({3}, 23);
  Tensor x = Tensor::Randn({3}, 24);
  Tensor loss = (w + x).sum();
  x.add_(Tensor::Scalar(1.0, proto::FLOAT64));
  loss.backward();
  EXPECT_EQ(w.grad().tolist(), (std::vector<double>{1, 1, 1}));
}

TEST(TapeErrors, SavedTensorModifiedInPlace) {
  Tensor w = Param({3}, 19);
  Tensor x = Tensor::Randn({3}, 20);
  Tensor loss = (w * x).sum();  // aten.mul saves x
  x.add_(Tensor::Scalar(1.0, proto::FLOAT64));
  std::string m = ErrorOf([&] { loss.backward(); });
  EXPECT_NE(m.find("modified by an inplace operation"), std::string::npos) << m;
  EXPECT_NE(m.find("of aten.mul (recorded at"), std::string::npos) << m;
  EXPECT_NE(m.find("last written by aten.add_ (at"), std::string::npos) << m;
  EXPECT_NE(m.find("version 0 and is now at version 1"), std::string::npos) << m;
  EXPECT_NE(m.find("coil_autograd_test.cc:"), std::string::npos) << m;
  EXPECT_FALSE(w.grad().defined());  // nothing accumulated

  // Without the in-place op the same loss has its gradient (x).
  Tensor y = Tensor::Randn({3}, 21);
  (w * y).sum().backward();
  EXPECT_EQ(w.grad().tolist(), y.tolist());

  // Through a view of the saved tensor's storage.
  w.zero_grad();
  Tensor z = Tensor::Randn({4}, 22);
  Tensor loss2 = (w * z.slice(0, 1, 4)).sum();
  z.select(0, 2).mul_(Tensor::Scalar(3.0, proto::FLOAT64));
  m = ErrorOf([&] { loss2.backward(); });
  EXPECT_NE(m.find("last written by aten.mul_"), std::string::npos) << m;

  // A saved parameter changed under no_grad between two backwards (retain_graph).
  Tensor v = Param({3}, 23);
  Tensor loss3 = (v * v).sum();
  loss3.backward(Tensor(), /*retain_graph=*/true);
  {
    no_grad guard;
    v.mul_(Tensor::Scalar(0.5, proto::FLOAT64));
  }
  m = ErrorOf([&] { loss3.backward(); });
  EXPECT_NE(m.find("modified by an inplace operation"), std::string::npos) << m;
}

}  // namespace
}  // namespace coil
