// Derivative rules of convolution (ir/ops/nn_ops_conv.cc): aten.convolution (plain and
// transposed) and the conv{1,2,3}d / conv_transpose{1,2,3}d wrappers; static spatial sizes.
// Plain, y = conv(x, w [O, C/G, *k]):
//   x <- conv_transpose(g, w, same stride/padding/dilation/groups, output_padding chosen so the
//        result has x's size)
//   w <- convolution_backward_weight(x, g, kernel sizes, same stride/padding/dilation/groups)
//        (decomposed, where a backend does not keep it, into conv(x^T, g^T)^T cropped to the
//        kernel: prims/decompositions/nn.cc)
// Transposed, y = conv_transpose(x, w [C, O/G, *k]) (the adjoint of a plain convolution):
//   x <- conv(g, w, same stride/padding/dilation/groups)
//   w <- the plain rule's weight gradient with x and g swapped
//   bias <- sum(g) over every dim but channels (both)
#include <cstdint>
#include <vector>

#include "autograd/derivative_registry.h"
#include "autograd/rules/register.h"

namespace coil::autograd {
namespace {

using namespace coil::prims;  // NOLINT: the rule language

// An attribute given as 1 or `n` values, as `n` values.
IntList PerDim(const GradCall& c, const char* name, int64_t n) {
  IntList v = c.Ints(name);
  if (v.size() == 1) v.assign(n, v[0]);
  return v;
}

struct ConvAttrs {
  IntList stride, padding, dilation;
  int64_t groups = 1;
};

// The gradient w.r.t. the weight of a plain convolution of `in` [N, C, *] producing `out`
// [N, O, *], for a kernel of sizes `kernel`: [O, C/G, *k]. One op, which backends with a
// weight-gradient primitive keep whole (the CPU backend: oneDNN's backward-weights) and the
// others decompose (prims/decompositions/nn.cc: a convolution of the transposed operands).
Val WeightGrad(Emitter& e, Val in, Val out, const ConvAttrs& a, const SymList& kernel) {
  IntList k;
  for (const SymExpr& s : kernel) k.push_back(s.constant());
  return e.Op1("aten.convolution_backward_weight", {in, out},
               {{"kernel_size", k}, {"stride", a.stride}, {"padding", a.padding},
                {"dilation", a.dilation}, {"groups", a.groups}});
}

// Gradients of (x, w, bias?) for output gradient g; x and g batched ([N, C, *]).
std::vector<Val> ConvGrad(const GradCall& c, Val x, Val w, bool has_bias, Val g,
                          bool transposed) {
  Emitter& e = c.e();
  int64_t n = x.rank() - 2;
  ConvAttrs a{PerDim(c, "stride", n), PerDim(c, "padding", n), PerDim(c, "dilation", n),
              c.Int("groups")};
  SymList kernel(w.shape().begin() + 2, w.shape().end());
  for (int64_t d = 0; d < n; ++d) {
    if (!x.size(2 + d).is_constant() || !g.size(2 + d).is_constant() ||
        !kernel[d].is_constant()) {
      e.Fail(absl::UnimplementedError(absl::StrCat(
          c.op(), ": derivative needs static spatial sizes (symbolic batch is fine)")));
      return {};
    }
  }
  Val gx, gw;
  if (!transposed) {
    IntList output_padding;
    for (int64_t d = 0; d < n; ++d) {
      output_padding.push_back(x.size(2 + d).constant() + 2 * a.padding[d] -
                               a.dilation[d] * (kernel[d].constant() - 1) - 1 -
                               (g.size(2 + d).constant() - 1) * a.stride[d]);
    }
    gx = e.Op1("aten.convolution", {g, w},
               {{"stride", a.stride}, {"padding", a.padding}, {"dilation", a.dilation},
                {"transposed", true}, {"output_padding", output_padding},
                {"groups", a.groups}});
    if (c.needs_grad(1)) gw = WeightGrad(e, x, g, a, kernel);
  } else {
    gx = e.Op1("aten.convolution", {g, w},
               {{"stride", a.stride}, {"padding", a.padding}, {"dilation", a.dilation},
                {"groups", a.groups}});
    // y = conv_transpose(x, w) is the adjoint of x = conv(y, w): the weight's gradient is the
    // plain rule's with the roles of x and g exchanged.
    if (c.needs_grad(1)) gw = WeightGrad(e, g, x, a, kernel);
  }
  std::vector<Val> out = {gx, gw};
  if (has_bias) {
    IntList dims = {0};
    for (int64_t d = 2; d < g.rank(); ++d) dims.push_back(d);
    out.push_back(Sum(g, dims));
  }
  return out;
}

// A wrapper's rule: convolution's, an unbatched x given a batch of 1.
std::vector<Val> WrapperGrad(const GradCall& c, int64_t d, bool transposed) {
  Val x = Upcast(c.in(0)), g = c.grad();
  bool unbatched = x.rank() == d + 1;
  if (unbatched) {
    x = Unsqueeze(x, 0);
    g = Unsqueeze(g, 0);
  }
  std::vector<Val> out = ConvGrad(c, x, Upcast(c.in(1)), c.has_in(2), g, transposed);
  if (unbatched && !out.empty()) out[0] = Squeeze(out[0], {0});
  return out;
}

}  // namespace

void RegisterConvRules(DerivativeRegistry& r) {
  // convolution(x, w, b?, stride, padding, dilation, transposed, output_padding, groups)
  r.Add("aten.convolution", [](const GradCall& c) -> std::vector<Val> {
    return ConvGrad(c, Upcast(c.in(0)), Upcast(c.in(1)), c.has_in(2), c.grad(),
                    c.Bool("transposed"));
  });
  for (int64_t d = 1; d <= 3; ++d) {
    // conv{d}d(x, w, b?) and conv_transpose{d}d(x, w, b?)
    r.Add(absl::StrCat("aten.conv", d, "d"),
          [d](const GradCall& c) { return WrapperGrad(c, d, /*transposed=*/false); });
    r.Add(absl::StrCat("aten.conv_transpose", d, "d"),
          [d](const GradCall& c) { return WrapperGrad(c, d, /*transposed=*/true); });
  }
}

}  // namespace coil::autograd
