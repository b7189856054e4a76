// coil::compile's results that alias inputs or each other (capture/internal/output_aliases.h)
// behave as eager's: the same function runs eagerly and compiled (first call and cached call;
// on the compiled CPU backend, whose graphs return fresh buffers, and on the reference
// interpreter, whose view kernels alias already) on equal inputs; every result must have
// eager's shape, strides, storage offset and values, and after the same in-place write into
// one result, the inputs and every result must again equal eager's (a write through a view
// reaches its base, a fresh result reaches nothing).
#include <functional>
#include <memory>
#include <vector>

#include "capture/compile.h"
#include "capture/tensor.h"
#include "coil.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

using Fn = std::function<std::vector<Tensor>(const Tensor&)>;

Tensor Arange12() {
  std::vector<double> v;
  for (int i = 0; i < 12; ++i) v.push_back(i);
  return Tensor::FromValues(v, {3, 4}, proto::FLOAT32);
}

void ExpectSameLayoutAndValues(const Tensor& eager, const Tensor& compiled, const char* what,
                               size_t k) {
  EXPECT_EQ(compiled.strides(), eager.strides()) << what << " result " << k;
  EXPECT_EQ(compiled.storage_offset(), eager.storage_offset()) << what << " result " << k;
  EXPECT_EQ(compiled.tolist(), eager.tolist()) << what << " result " << k;
}

std::vector<std::shared_ptr<Backend>> Backends() { return {CpuBackend(), ReferenceBackend()}; }

// Runs `fn` eagerly and compiled twice, writes 100 into result `write` of each, and compares;
// with static sizes and with every dimension symbolic (views whose attributes name symbols).
void ExpectAliasingAsEager(const Fn& fn, int write) {
  for (const std::shared_ptr<Backend>& backend : Backends()) {
   for (DynamicMode mode : {DynamicMode::kStatic, DynamicMode::kDynamic}) {
    SCOPED_TRACE(backend->name() + (mode == DynamicMode::kDynamic ? " dynamic" : " static"));
    auto compiled = compile([&](const Tensor& x) { return fn(x); },
                            {.dynamic = mode, .backend = backend});
    for (int call = 0; call < 2; ++call) {
      SCOPED_TRACE(call == 0 ? "first call" : "cached call");
      Tensor xe = Arange12(), xc = Arange12();
      std::vector<Tensor> oe = fn(xe), oc = compiled(xc);
      ASSERT_EQ(oc.size(), oe.size());
      for (size_t k = 0; k < oe.size(); ++k) ExpectSameLayoutAndValues(oe[k], oc[k], "before", k);
      oe[write].add_scalar_(100);
      oc[write].add_scalar_(100);
      EXPECT_EQ(xc.tolist(), xe.tolist()) << "the input after writing into result " << write;
      for (size_t k = 0; k < oe.size(); ++k) ExpectSameLayoutAndValues(oe[k], oc[k], "after", k);
    }
    EXPECT_EQ(compiled.stats().compiles, 1);
   }
  }
}

TEST(OutputAliases, TransposeOfAnInputIsAViewOfIt) {
  ExpectAliasingAsEager([](const Tensor& x) { return std::vector<Tensor>{x.t()}; }, 0);
}

TEST(OutputAliases, SliceAndSelectOfAnInputBesideAFreshResult) {
  Fn fn = [](const Tensor& x) {
    return std::vector<Tensor>{x.slice(1, 1, 3), x + 1.0, x.select(0, 2)};
  };
  ExpectAliasingAsEager(fn, 0);
  ExpectAliasingAsEager(fn, 1);  // the fresh result: the input is untouched
  ExpectAliasingAsEager(fn, 2);
}

TEST(OutputAliases, ChainOfViewsAndViewingReshape) {
  ExpectAliasingAsEager(
      [](const Tensor& x) {
        return std::vector<Tensor>{x.slice(0, 1, 3).transpose(0, 1).unsqueeze(0),
                                   x.reshape({2, 6})};
      },
      0);
}

TEST(OutputAliases, TheInputItselfIsReturnedAsIs) {
  for (const std::shared_ptr<Backend>& backend : Backends()) {
    auto f = compile(
        [](const Tensor& x) {
          return std::vector<Tensor>{x, x * 2.0};
        },
        {.backend = backend});
    for (int call = 0; call < 2; ++call) {
      Tensor x = Arange12();
      std::vector<Tensor> out = f(x);
      EXPECT_EQ(out[0].impl(), x.impl()) << backend->name() << " call " << call;
    }
  }
}

TEST(OutputAliases, ResultsViewingAnotherResult) {
  Fn fn = [](const Tensor& x) {
    Tensor y = x * 2.0;
    return std::vector<Tensor>{y.t(), y, y.select(0, 1)};  // views before and after their base
  };
  ExpectAliasingAsEager(fn, 0);
  ExpectAliasingAsEager(fn, 1);
  ExpectAliasingAsEager(fn, 2);
}

TEST(OutputAliases, TheSameValueTwiceIsOneTensor) {
  for (const std::shared_ptr<Backend>& backend : Backends()) {
    auto f = compile(
        [](const Tensor& x) {
          Tensor y = x * 3.0;
          return std::vector<Tensor>{y, y};
        },
        {.backend = backend});
    for (int call = 0; call < 2; ++call) {
      std::vector<Tensor> out = f(Arange12());
      EXPECT_EQ(out[0].impl(), out[1].impl()) << backend->name() << " call " << call;
    }
  }
  ExpectAliasingAsEager(
      [](const Tensor& x) {
        Tensor y = x * 3.0;
        return std::vector<Tensor>{y, y};
      },
      1);
}

TEST(OutputAliases, ViewOfAMutatedInput) {
  ExpectAliasingAsEager(
      [](const Tensor& x) {
        x.add_scalar_(1);
        return std::vector<Tensor>{x.slice(0, 0, 2), x * 1.0};
      },
      0);
}

// A copy of an input taken before the function writes into that input keeps the old values
// (inductor lowers the copy to a view of the input, so its OUTPUT copy must be made before the
// write-back, inductor/passes/lower.cc); a view taken before the write sees the new ones.
TEST(OutputAliases, ACopyTakenBeforeAnInPlaceWriteKeepsTheOldValues) {
  ExpectAliasingAsEager(
      [](const Tensor& x) {
        Tensor before = x.clone();
        Tensor view = x.t();
        x.add_scalar_(10);
        return std::vector<Tensor>{before, view, x.clone()};
      },
      0);
}

// Views whose attributes are symbolic sizes under dynamic shapes (a reshape to [s0 * s1], a
// slice ending at s0 - 1, an expand to [2, s0, s1]) are views of the caller's tensor too.
TEST(OutputAliases, ViewsWithSymbolicAttributes) {
  Fn fn = [](const Tensor& x) {
    return std::vector<Tensor>{x.reshape({x.size(0) * x.size(1)}),
                               x.slice(0, 0, x.size(0) - 1),
                               x.unsqueeze(0).expand({2, x.size(0), x.size(1)}), x.t()};
  };
  ExpectAliasingAsEager(fn, 0);
  ExpectAliasingAsEager(fn, 1);
  ExpectAliasingAsEager(fn, 3);
  // One of them written in place (its result is the in-place op's output) still shares it.
  Fn written = [](const Tensor& x) {
    Tensor s = x * 2.0;
    Tensor v = s.view({-1});
    Tensor rows = s.slice(0, 0, 2);
    v.mul_scalar_(-2.5);
    return std::vector<Tensor>{v, rows};
  };
  ExpectAliasingAsEager(written, 0);
  ExpectAliasingAsEager(written, 1);
}

// In-place writes through unsqueeze / squeeze / view of a slice reach the input when the sizes
// are symbolic (functionalize cannot compute the slice's strides then; these ops view whatever
// the strides are).
TEST(OutputAliases, WritesThroughReshapesOfSlicesWithSymbolicSizes) {
  ExpectAliasingAsEager(
      [](const Tensor& x) {
        x.slice(0, 1, 3).unsqueeze(0).add_scalar_(5);
        x.slice(1, 0, 2).unsqueeze(2).squeeze({2}).mul_scalar_(3);
        Tensor rows = x.slice(0, 0, 2).view({-1});
        rows.neg_();
        return std::vector<Tensor>{rows, x.slice(0, 1, 3).unsqueeze(0)};
      },
      0);
}

// A reshape of a layout it cannot view (an expand, a transpose) copies: taken before a write
// into the input, it keeps the old values, and a write into it reaches nothing.
TEST(OutputAliases, AReshapeThatCopiesIsNoAlias) {
  Fn fn = [](const Tensor& x) {
    Tensor r = x.unsqueeze(0).expand({2, x.size(0), x.size(1)}).reshape({-1});
    Tensor s = x.t().reshape({-1});
    x.add_scalar_(1);
    return std::vector<Tensor>{r, s, x.reshape({-1})};
  };
  ExpectAliasingAsEager(fn, 0);
  ExpectAliasingAsEager(fn, 1);
  ExpectAliasingAsEager(fn, 2);
}

// With symbolic sizes, whether a reshape of a transposed view views or copies is decided from
// the symbols' ranges (prims' functionalize): here it views (a write through it reaches o),
// and the head-merge reshape of attention copies. (With a head size that may be 1 it cannot be
// decided: that compile is refused with a clear error, not guessed.)
TEST(OutputAliases, ReshapesOfTransposesWithSymbolicSizes) {
  ExpectAliasingAsEager(
      [](const Tensor& x) {
        Tensor o = x * 2.0;
        Tensor m = o.unsqueeze(0).transpose(1, 2).reshape({x.size(1), x.size(0)});
        m.add_scalar_(1);
        Tensor heads = x.reshape({1, x.size(0), 2, 2}).transpose(1, 2);
        Tensor merged = heads.reshape({1, 2, x.size(0) * 2});
        merged.mul_scalar_(3);
        return std::vector<Tensor>{m, o, merged};
      },
      0);
}

// Chains of results (b views a, a views x, x is the input and a result): restored bases first
// (the order was sorted with a comparator that read the vector being sorted, and b came
// before a here). Found by tools/fuzz:inplace_program_fuzzer.
TEST(OutputAliases, ViewsOfViewResultsAfterTheirBases) {
  auto fn = [](const Tensor& x, const Tensor& y) {
    y.clamp_(-1.0, 2.0, true, true);
    Tensor a = x.unsqueeze(1);
    Tensor v = y.view({-1});
    y.add_scalar_(2.5);
    Tensor b = a.select(1, 0);
    return std::vector<Tensor>{x, a, v, b};
  };
  for (const std::shared_ptr<Backend>& backend : Backends()) {
    for (DynamicMode mode : {DynamicMode::kStatic, DynamicMode::kDynamic}) {
      auto compiled = compile(fn, {.dynamic = mode, .backend = backend});
      Tensor xe = Tensor::FromValues({1}, {1}), ye = Tensor::FromValues({3}, {1});
      Tensor xc = Tensor::FromValues({1}, {1}), yc = Tensor::FromValues({3}, {1});
      std::vector<Tensor> oe = fn(xe, ye), oc = compiled(xc, yc);
      oe[0].add_scalar_(100);
      oc[0].add_scalar_(100);
      for (size_t k = 0; k < oe.size(); ++k) {
        EXPECT_EQ(oc[k].tolist(), oe[k].tolist()) << backend->name() << " result " << k;
      }
    }
  }
}

// A result written in place after a view of it was taken (z.relu_() returns z's tensor) is the
// base of that view.
TEST(OutputAliases, AViewOfAResultWrittenInPlace) {
  Fn fn = [](const Tensor& x) {
    Tensor z = x.sum({0});
    Tensor s = z.slice(0, 1, 3);
    s.copy_(where(s > 10.0, s, z.slice(0, 0, 2)));
    z.relu_();
    return std::vector<Tensor>{x, z, s};
  };
  ExpectAliasingAsEager(fn, 1);
  ExpectAliasingAsEager(fn, 2);
}

// Results that view one intermediate the function does not return: a write into one reaches the
// others, as in eager (the intermediate is returned by the graph too, output_aliases.h).
TEST(OutputAliases, ResultsViewingAnIntermediateTheyShare) {
  Fn fn = [](const Tensor& x) {
    Tensor z = x * 2.0;
    Tensor w = z.t();
    return std::vector<Tensor>{w.slice(0, 1, 3), z.select(0, 1), w, x + 1.0};
  };
  ExpectAliasingAsEager(fn, 0);
  ExpectAliasingAsEager(fn, 1);
  ExpectAliasingAsEager(fn, 3);
}

// A write through a view of an input whose source is a copy of that input read another way
// (the copy is a view after decomposition, so the write-back's source is a transposed view of
// the buffer it writes): the write-back must read it all before writing.
TEST(OutputAliases, AWriteFromATransposedCopyOfItself) {
  auto fn = [](const Tensor& x) {
    x.t().copy_(x.clone());
    return std::vector<Tensor>{x * 1.0};
  };
  for (const std::shared_ptr<Backend>& backend : Backends()) {
    for (DynamicMode mode : {DynamicMode::kStatic, DynamicMode::kDynamic}) {
      auto compiled = compile(fn, {.dynamic = mode, .backend = backend});
      for (int call = 0; call < 2; ++call) {
        Tensor xe = Arange12().slice(1, 0, 3).contiguous(), xc = xe.clone();
        std::vector<Tensor> oe = fn(xe), oc = compiled(xc);
        EXPECT_EQ(xc.tolist(), xe.tolist()) << backend->name() << " call " << call;
        EXPECT_EQ(oc[0].tolist(), oe[0].tolist()) << backend->name() << " call " << call;
      }
    }
  }
}

// A view result of an input that requires grad is an eager view on the tape: gradients through
// it and through the compiled result reach the input, as eager's.
TEST(OutputAliases, GradientsThroughAViewResultMatchEager) {
  auto fn = [](const Tensor& x) { return std::vector<Tensor>{x.t(), x * 2.0}; };
  auto compiled = compile(fn);
  Tensor c = Arange12().reshape({4, 3}) * 0.5;
  auto grad_of = [&](bool use_compiled) {
    Tensor x = Arange12();
    x.set_requires_grad(true);
    std::vector<Tensor> out = use_compiled ? compiled(x) : fn(x);
    ((out[0] * c).sum() + out[1].sum()).backward();
    return x.grad().tolist();
  };
  std::vector<double> eager = grad_of(false);
  EXPECT_EQ(grad_of(true), eager);
  EXPECT_EQ(grad_of(true), eager);  // cached call
}

}  // namespace
}  // namespace coil
