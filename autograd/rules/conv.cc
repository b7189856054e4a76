// Derivative rules of convolution (ir/ops/nn_ops_conv.cc): aten.convolution and the
// conv{1,2,3}d wrappers, non-transposed, groups = 1 for the weight's gradient.
//   input  <- convolution(g, w, transposed=true, same stride/padding/dilation, output_padding
//             chosen so the result has the input's size)
//   weight <- convolution(x^T, g^T, stride=dilation, dilation=stride, same padding)^T, cropped
//             to the kernel size (x^T: batch and channels swapped)
//   bias   <- sum(g) over every dim but channels
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

// The gradients of x [N, C, *] and w [O, C, *k] (and the bias) for the output gradient g.
std::vector<Val> ConvGrad(const GradCall& c, Val x, Val w, bool has_bias, Val g) {
  Emitter& e = c.e();
  int64_t n = x.rank() - 2;
  IntList stride = PerDim(c, "stride", n), padding = PerDim(c, "padding", n);
  IntList dilation = PerDim(c, "dilation", n);
  int64_t groups = c.Int("groups");
  if (c.Has("transposed") && c.Bool("transposed")) {
    e.Fail(absl::UnimplementedError("convolution: no derivative of a transposed convolution yet"));
    return {};
  }
  // output_padding that makes the transposed convolution's size the input's.
  IntList output_padding;
  for (int64_t d = 0; d < n; ++d) {
    const SymExpr& in = x.size(2 + d);
    const SymExpr& out = g.size(2 + d);
    const SymExpr& k = w.size(2 + d);
    if (!in.is_constant() || !out.is_constant() || !k.is_constant()) {
      e.Fail(absl::UnimplementedError(
          "convolution: derivative needs static spatial sizes (symbolic batch is fine)"));
      return {};
    }
    output_padding.push_back(in.constant() + 2 * padding[d] - dilation[d] * (k.constant() - 1) -
                             1 - (out.constant() - 1) * stride[d]);
  }
  Val gx = e.Op1("aten.convolution", {g, w},
                 {{"stride", stride}, {"padding", padding}, {"dilation", dilation},
                  {"transposed", true}, {"output_padding", output_padding},
                  {"groups", groups}});
  Val gw;
  if (c.needs_grad(1)) {
    if (groups != 1) {
      e.Fail(absl::UnimplementedError(
          "convolution: no weight derivative with groups > 1 yet"));
      return {};
    }
    Val r = e.Op1("aten.convolution", {Transpose(x, 0, 1), Transpose(g, 0, 1)},
                  {{"stride", dilation}, {"padding", padding}, {"dilation", stride},
                   {"groups", int64_t{1}}});
    for (int64_t d = 0; d < n; ++d) r = Slice(r, 2 + d, 0, w.size(2 + d));
    gw = Transpose(r, 0, 1);
  }
  std::vector<Val> out = {gx, gw};
  if (has_bias) {
    IntList dims = {0};
    for (int64_t d = 2; d < g.rank(); ++d) dims.push_back(d);
    out.push_back(Sum(g, dims));
  }
  return out;
}

}  // namespace

void RegisterConvRules(DerivativeRegistry& r) {
  // convolution(x, w, b?, stride, padding, dilation, transposed=false, groups): see above
  r.Add("aten.convolution", [](const GradCall& c) -> std::vector<Val> {
    return ConvGrad(c, Upcast(c.in(0)), Upcast(c.in(1)), c.has_in(2), c.grad());
  });
  // conv{1,2,3}d(x, w, b?): convolution's rule, an unbatched x given a batch of 1
  for (int64_t d = 1; d <= 3; ++d) {
    r.Add(absl::StrCat("aten.conv", d, "d"), [d](const GradCall& c) -> std::vector<Val> {
      Val x = Upcast(c.in(0)), g = c.grad();
      bool unbatched = x.rank() == d + 1;
      if (unbatched) {
        x = Unsqueeze(x, 0);
        g = Unsqueeze(g, 0);
      }
      std::vector<Val> out = ConvGrad(c, x, Upcast(c.in(1)), c.has_in(2), g);
      if (unbatched && !out.empty()) out[0] = Squeeze(out[0], {0});
      return out;
    });
  }
}

}  // namespace coil::autograd
