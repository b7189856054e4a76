// Decompositions of the nn family (see register.h): the matmul family (onto the externs
// aten.mm / aten.bmm), the convolution wrappers and a convolution's weight gradient (onto the
// extern aten.convolution), embedding and dropout. Pooling is in nn_pool.cc, attention in nn_attention.cc, upsampling and pixel
// (un)shuffle in nn_upsample.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/dtype.h"
#include "prims/decomposition_registry.h"
#include "prims/decompositions/nn_internal.h"
#include "prims/decompositions/register.h"

namespace coil::prims {
namespace nn_internal {

Val Int64Of(Emitter& e, const SymExpr& v) { return SymValue(e, v, proto::INT64); }

Val AsShape(Val x, const SymList& shape) { return Reshape(x, shape); }

Val Matmul(Val a, Val b, const SymList& out) {
  if (!a.ok() || !b.ok()) return Val();
  Emitter& e = a.emitter();
  if (a.rank() == 1) a = Unsqueeze(a, 0);
  if (b.rank() == 1) b = Unsqueeze(b, 1);
  SymExpr n = a.size(-2), k = a.size(-1), m = b.size(-1);
  Val r;
  if (b.rank() == 2) {
    // [batch..., n, k] @ [k, m]: the batch folds into the rows of one mm.
    SymExpr rows(1);
    for (int64_t d = 0; d + 1 < a.rank(); ++d) rows = rows * a.size(d);
    r = e.Op1("aten.mm", {Reshape(a, {rows, k}), b});
  } else {
    // Broadcast batch dims (the leading dims of `out`), flattened into one bmm batch.
    int64_t batch_rank = std::max(a.rank(), b.rank()) - 2;
    SymList batch(out.begin(), out.begin() + batch_rank);
    SymExpr nb(1);
    for (const SymExpr& s : batch) nb = nb * s;
    auto with = [&](SymExpr x, SymExpr y) {
      SymList s = batch;
      s.push_back(x);
      s.push_back(y);
      return s;
    };
    Val a3 = Reshape(BroadcastTo(a, with(n, k)), {nb, n, k});
    Val b3 = Reshape(BroadcastTo(b, with(k, m)), {nb, k, m});
    r = e.Op1("aten.bmm", {a3, b3});
  }
  return Reshape(r, out);
}

}  // namespace nn_internal

namespace {

using nn_internal::Matmul;

// beta * self + alpha * product; beta == 0 ignores self (its NaNs included); integer results
// truncate beta and alpha, as PyTorch.
Val AddScaled(const OpCall& c, Val self, Val product) {
  double beta = c.Float("beta"), alpha = c.Float("alpha");
  if (!IsFloating(c.out_dtype())) {
    beta = std::trunc(beta);
    alpha = std::trunc(alpha);
  }
  Val p = Upcast(product);
  if (alpha != 1) p = p * alpha;
  if (beta != 0) {
    Val s = Upcast(self);
    p = p + (beta == 1 ? s : s * beta);
  }
  return Cast(BroadcastTo(p, c.out_shape()), c.out_dtype());
}

// conv{1,2,3}d / conv_transpose{1,2,3}d -> aten.convolution, unbatched inputs given a batch of 1.
std::vector<Val> ConvWrapper(const OpCall& c, int64_t d, bool transposed) {
  Val x = c.in(0);
  bool unbatched = x.rank() == d + 1;
  if (unbatched) x = Unsqueeze(x, 0);
  std::vector<Val> ins = {x, c.in(1)};
  if (c.has_in(2)) ins.push_back(c.in(2));
  AttrMap attrs = {{"stride", c.Ints("stride")},
                   {"padding", c.Ints("padding")},
                   {"dilation", c.Ints("dilation")},
                   {"transposed", transposed},
                   {"output_padding", transposed ? c.Ints("output_padding") : IntList{0}},
                   {"groups", c.Int("groups")}};
  Val y = c.e().Op1("aten.convolution", ins, attrs);
  return {unbatched ? Squeeze(y, {0}) : y};
}

// convolution_backward_weight(x [N, C, *], g [N, O, *]) for kernel sizes k, groups G:
//   conv(x', g', stride=dilation, dilation=stride, same padding, groups=G)^T cropped to k,
//   where x' = x as [C/G, G*N, *] and g' = g^T [O, N, *] (group j's output channels read
//   group j's copy of the batch).
Val ConvWeightGrad(const OpCall& c) {
  Val x = c.in(0), g = c.in(1);
  const IntList kernel = c.Ints("kernel_size");
  const int64_t n = static_cast<int64_t>(kernel.size()), groups = c.Int("groups");
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
  Val r = c.e().Op1("aten.convolution", {x, Transpose(g, 0, 1)},
                    {{"stride", c.Ints("dilation")}, {"padding", c.Ints("padding")},
                     {"dilation", c.Ints("stride")}, {"groups", groups}});
  for (int64_t d = 0; d < n; ++d) r = Slice(r, 2 + d, 0, kernel[d]);
  return Transpose(r, 0, 1);
}

}  // namespace

void RegisterNnDecompositions(DecompositionRegistry& r) {
  // matmul(a, b) -> mm / bmm of a and b with 1-D operands as row/column, batch broadcast
  r.Add("aten.matmul", [](const OpCall& c) -> std::vector<Val> {
    return {Matmul(c.in(0), c.in(1), c.out_shape())};
  });
  // dot(a, b) -> mm([1, k], [k, 1]) reshaped to []
  r.Add("aten.dot", [](const OpCall& c) -> std::vector<Val> {
    return {Matmul(c.in(0), c.in(1), c.out_shape())};
  });
  // mv(m, v) -> mm(m, v[:, None])[:, 0]
  r.Add("aten.mv", [](const OpCall& c) -> std::vector<Val> {
    return {Matmul(c.in(0), c.in(1), c.out_shape())};
  });
  // addmm(self, m1, m2, beta, alpha) -> beta * self + alpha * mm(m1, m2)
  r.Add("aten.addmm", [](const OpCall& c) -> std::vector<Val> {
    return {AddScaled(c, c.in(0), c.e().Op1("aten.mm", {c.in(1), c.in(2)}))};
  });
  // baddbmm(self, b1, b2, beta, alpha) -> beta * self + alpha * bmm(b1, b2)
  r.Add("aten.baddbmm", [](const OpCall& c) -> std::vector<Val> {
    return {AddScaled(c, c.in(0), c.e().Op1("aten.bmm", {c.in(1), c.in(2)}))};
  });
  // linear(x, w, b?) -> matmul(x, w.T) + b
  r.Add("aten.linear", [](const OpCall& c) -> std::vector<Val> {
    Val w = c.in(1);
    Val y = Matmul(c.in(0), w.rank() == 2 ? Transpose(w, 0, 1) : w, c.out_shape());
    if (!c.has_in(2)) return {y};
    return {Cast(Upcast(y) + Upcast(c.in(2)), c.out_dtype())};
  });
  // outer(a, b) -> a[:, None] * b[None, :]   (bool: logical and)
  r.Add("aten.outer", [](const OpCall& c) -> std::vector<Val> {
    Val a = Upcast(Cast(c.in(0), c.out_dtype())), b = Upcast(Cast(c.in(1), c.out_dtype()));
    return {Cast(Unsqueeze(a, 1) * Unsqueeze(b, 0), c.out_dtype())};
  });

  // conv{d}d(x, w, b?) -> convolution(x, w, b?, transposed=false)
  // conv_transpose{d}d(x, w, b?) -> convolution(x, w, b?, transposed=true)
  for (int64_t d = 1; d <= 3; ++d) {
    r.Add(absl::StrCat("aten.conv", d, "d"), [d](const OpCall& c) -> std::vector<Val> {
      return ConvWrapper(c, d, /*transposed=*/false);
    });
    r.Add(absl::StrCat("aten.conv_transpose", d, "d"), [d](const OpCall& c) -> std::vector<Val> {
      return ConvWrapper(c, d, /*transposed=*/true);
    });
  }

  r.Add("aten.convolution_backward_weight", [](const OpCall& c) -> std::vector<Val> {
    return {ConvWeightGrad(c)};
  });

  // embedding(w, idx) -> gather(w, 0, flatten(idx)[:, None] broadcast to [n, D]) reshaped
  r.Add("aten.embedding", [](const OpCall& c) -> std::vector<Val> {
    Val w = c.in(0), idx = c.in(1);
    SymExpr n = NumElements(idx, {});
    Val flat = Reshape(idx, {n});
    Val index = BroadcastInDim(flat, {n, w.size(1)}, {0});
    return {Reshape(Gather(w, 0, index), c.out_shape())};
  });
  // dropout(x, p, train=false) -> x
  // dropout(x, p, train=true, seed, offset)
  //   -> where(philox_uniform(shape, seed, offset, f32) < 1 - p, x * (1 / (1 - p)), 0)
  // (p = 1: zeros). The mask is a function of (seed, offset) alone, so the backward draws it
  // again instead of saving it (autograd's rule is dropout of the gradient).
  r.Add("aten.dropout", [](const OpCall& c) -> std::vector<Val> {
    double p = c.Float("p");
    if (!c.Bool("train") || p == 0) return {c.in(0)};
    if (p == 1) return {FullLike(c.in(0), 0.0, c.out_dtype())};
    Val x = Upcast(c.in(0));
    Val u = PhiloxUniform(c.e(), x.shape(), c.Int("seed"), c.Sym("offset"), proto::FLOAT32);
    return {Cast(Where(Lt(u, 1 - p), x * (1 / (1 - p)), 0.0), c.out_dtype())};
  });

  nn_internal::RegisterPoolDecompositions(r);
  nn_internal::RegisterAttentionDecompositions(r);
  nn_internal::RegisterUpsampleDecompositions(r);
}

}  // namespace coil::prims
