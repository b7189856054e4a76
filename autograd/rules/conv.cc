// Derivative rules of convolution (ir/ops/nn_ops_conv.cc): aten.convolution (plain and
// transposed) and the conv{1,2,3}d / conv_transpose{1,2,3}d wrappers; static spatial sizes.
// Plain, y = conv(x, w [O, C/G, *k]):
//   x <- conv_transpose(g, w, same stride/padding/dilation/groups, output_padding chosen so the
//        result has x's size)
//   w <- conv(x', g', stride=dilation, dilation=stride, same padding, groups=G)^T cropped to
//        the kernel, where x' = x as [C/G, G*N, *] and g' = g^T [O, N, *] (group j's output
//        channels read group j's copy of the batch)
// Transposed, y = conv_transpose(x, w [C, O/G, *k]) (the adjoint of a plain convolution):
//   x <- conv(g, w, same stride/padding/dilation/groups)
//   w <- the plain rule's weight gradient with x and g swapped, transposed back
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
// [N, O, *], for a kernel of sizes `kernel`: [O, C/G, *k].
Val WeightGrad(Emitter& e, Val in, Val out, const ConvAttrs& a, const SymList& kernel) {
  int64_t n = in.rank() - 2, groups = a.groups;
  Val x = in;
  if (groups > 1) {
    // [N, G*Cg, *] -> [N, G, Cg, *] -> [Cg, G, N, *] -> [Cg, G*N, *]
    SymList split = {x.size(0), groups, SymExpr::FloorDiv(x.size(1), groups)};
    for (int64_t d = 0; d < n; ++d) split.push_back(x.size(2 + d));
    IntList perm = {2, 1, 0};
    for (int64_t d = 0; d < n; ++d) perm.push_back(3 + d);
    Val p = Permute(Reshape(x, split), perm);
    SymList merged = {split[2], x.size(0) * groups};
    for (int64_t d = 0; d < n; ++d) merged.push_back(x.size(2 + d));
    x = Reshape(p, merged);
  } else {
    x = Transpose(x, 0, 1);
  }
  Val r = e.Op1("aten.convolution", {x, Transpose(out, 0, 1)},
                {{"stride", a.dilation}, {"padding", a.padding}, {"dilation", a.stride},
                 {"groups", groups}});
  for (int64_t d = 0; d < n; ++d) r = Slice(r, 2 + d, 0, kernel[d]);
  return Transpose(r, 0, 1);
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
