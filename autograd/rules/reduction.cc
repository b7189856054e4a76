// Derivative rules of reductions, scans, softmax/log_softmax and the normalizations (the ops of
// ir/ops/reduction_ops.cc and ir/ops/normalization_ops.cc). A reduced gradient is brought
// back to the input's shape by `Expand` (keepdim shape, then broadcast).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

#include "autograd/derivative_registry.h"
#include "autograd/rules/register.h"

namespace coil::autograd {
namespace {

using namespace coil::prims;  // NOLINT: the rule language

// The dims a reduction's `dim` attribute names, normalized; [] means every dim.
IntList ReducedDims(const GradCall& c, const Val& x, const char* attr = "dim") {
  IntList dims = c.Ints(attr);
  if (dims.empty()) {
    for (int64_t d = 0; d < x.rank(); ++d) dims.push_back(d);
  }
  for (int64_t& d : dims) {
    if (d < 0) d += x.rank();
  }
  return dims;
}

// A reduced value (or gradient) brought back to x's shape: reduced dims become 1 (unless kept),
// then broadcast.
Val Expand(Val v, const Val& x, const IntList& dims, bool keepdim) {
  if (!keepdim) {
    SymList shape = x.shape();
    for (int64_t d : dims) shape[d] = SymExpr(1);
    v = Reshape(v, shape);
  }
  return BroadcastTo(v, x.shape());
}

// The number of elements reduced over `dims`, as a rank-0 tensor of `dtype`.
Val Count(const Val& x, const IntList& dims, DType dtype) {
  return SymValue(x.emitter(), x.rank() == 0 ? SymExpr(1) : NumElements(x, dims), dtype);
}

// amax/amin backward: the gradient is shared evenly among the elements equal to the extreme.
Val ExtremeGrad(Val x, Val extreme, Val g, const IntList& dims) {
  Val mask = Cast(Eq(x, extreme), g.dtype());
  return BroadcastTo(g, x.shape()) * mask / Sum(mask, dims, /*keepdim=*/true);
}

// (x - mean) * rstd over `dims` of x (computing dtype), and rstd.
struct Standardized {
  Val xhat;
  Val rstd;
};
Standardized Standardize(Val x, const IntList& dims, double eps) {
  Val d = x - Mean(x, dims, /*keepdim=*/true);
  Val rstd = Rsqrt(Mean(d * d, dims, /*keepdim=*/true) + eps);
  return {d * rstd, rstd};
}

// The gradient through standardization over `dims`, given gxhat = dL/dxhat:
//   rstd (gxhat - mean(gxhat) - xhat mean(gxhat xhat))
Val StandardizeGrad(const Standardized& s, Val gxhat, const IntList& dims) {
  return s.rstd * (gxhat - Mean(gxhat, dims, true) - s.xhat * Mean(gxhat * s.xhat, dims, true));
}

IntList DimsFrom(int64_t first, int64_t rank) {
  IntList dims;
  for (int64_t d = first; d < rank; ++d) dims.push_back(d);
  return dims;
}

// A per-channel [C] parameter as [1, C, 1, ...] next to x.
Val PerChannel(Val p, const Val& x) {
  SymList shape(x.rank(), SymExpr(1));
  shape[1] = p.size(0);
  return BroadcastInDim(Upcast(p), shape, {1});
}

// Sum over every dim but the channel dim 1: a per-channel parameter's gradient.
Val ChannelSum(Val v) {
  IntList dims = {0};
  for (int64_t d = 2; d < v.rank(); ++d) dims.push_back(d);
  return Sum(v, dims);
}

// batch_norm with training=true: outputs y = xhat w + b (xhat standardized over every dim but
// 1, n values per channel), rm' = (1 - m) rm + m mean, rv' = (1 - m) rv + m var n / (n - 1):
//   x  <- standardize's gradient of g w, + g_rm m / n, + g_rv m 2 (x - mean) / (n - 1)
//   rm <- (1 - m) g_rm, rv <- (1 - m) g_rv, w <- sum(g xhat), b <- sum(g)
// (a training step gives the running statistics zero tangents: PyTorch updates them outside
// autograd; the terms are exact derivatives of the outputs, as the gradcheck demands).
std::vector<Val> BatchNormTrainingGrad(const GradCall& c) {
  Val x = Upcast(c.in(0)), g = c.grad(0);
  IntList dims = {0};
  for (int64_t d = 2; d < x.rank(); ++d) dims.push_back(d);
  Standardized s = Standardize(x, dims, c.Float("eps"));
  Val gxhat = c.has_in(3) ? g * PerChannel(c.in(3), x) : g;
  Val gx = StandardizeGrad(s, gxhat, dims);
  double m = c.Float("momentum");
  Val n = Count(x, dims, x.dtype());
  std::vector<Val> out = {Val(), Val(), Val()};
  if (c.has_grad(1)) {
    gx = gx + PerChannel(c.grad(1), x) * m / n;
    out[1] = c.grad(1) * (1 - m);
  }
  if (c.has_grad(2)) {
    Val centered = x - Mean(x, dims, /*keepdim=*/true);
    gx = gx + PerChannel(c.grad(2), x) * centered * (2 * m) / (n - 1.0);
    out[2] = c.grad(2) * (1 - m);
  }
  out[0] = gx;
  if (c.has_in(3)) out.push_back(ChannelSum(g * s.xhat));
  if (c.has_in(4)) out.push_back(ChannelSum(g));
  return out;
}

// group_norm / instance_norm backward: x [N, C, *] standardized per (n, group).
std::vector<Val> GroupNormGrad(const GradCall& c, int64_t groups, double eps) {
  Val x = Upcast(c.in(0)), g = c.grad();
  SymList grouped = {x.size(0), groups, SymExpr(1)};
  grouped[2] = SymExpr::FloorDiv(NumElements(x, DimsFrom(1, x.rank())), groups);
  Standardized s = Standardize(Reshape(x, grouped), {2}, eps);
  Val xhat = Reshape(s.xhat, x.shape());
  Val gxhat = c.has_in(1) ? g * PerChannel(c.in(1), x) : g;
  Val gx = Reshape(StandardizeGrad(s, Reshape(gxhat, grouped), {2}), x.shape());
  std::vector<Val> out = {gx};
  if (c.has_in(1)) out.push_back(ChannelSum(g * xhat));
  if (c.has_in(2)) out.push_back(ChannelSum(g));
  return out;
}

// var/std (and their _mean forms) backward.
std::vector<Val> VarGrad(const GradCall& c, bool is_std, bool with_mean) {
  Val x = Upcast(c.in(0));
  IntList dims = ReducedDims(c, x);
  bool keepdim = c.Bool("keepdim");
  Val diff = x - Mean(x, dims, /*keepdim=*/true);
  Val denom = SymValue(c.e(), NumElements(x, dims) - SymExpr(c.Int("correction")), x.dtype());
  Val gx = FullLike(x, 0.0);
  if (c.has_grad(0)) {
    Val g = Expand(c.grad(0), x, dims, keepdim);
    // var: g 2 (x - mean) / (N - correction); std: g (x - mean) / ((N - correction) std)
    gx = is_std ? g * diff / (denom * Expand(Upcast(c.out(0)), x, dims, keepdim))
                : g * 2.0 * diff / denom;
  }
  if (with_mean && c.has_grad(1)) {
    gx = gx + Expand(c.grad(1), x, dims, keepdim) / Count(x, dims, x.dtype());
  }
  return {gx};
}

// rms_norm's eps = -1: the machine epsilon of the computing dtype (torch.finfo(dtype).eps).
double MachineEps(DType t) {
  switch (t) {
    case proto::FLOAT16: return 0.0009765625;
    case proto::BFLOAT16: return 0.0078125;
    case proto::FLOAT32: return FLT_EPSILON;
    default: return DBL_EPSILON;
  }
}

}  // namespace

void RegisterReductionRules(DerivativeRegistry& r) {
  // sum(x, dim, keepdim): expand(g)
  r.Add("aten.sum", [](const GradCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    return {Expand(c.grad(), x, ReducedDims(c, x), c.Bool("keepdim"))};
  });
  // mean(x, dim, keepdim): expand(g) / N
  r.Add("aten.mean", [](const GradCall& c) -> std::vector<Val> {
    Val x = c.in(0), g = c.grad();
    IntList dims = ReducedDims(c, x);
    return {Expand(g, x, dims, c.Bool("keepdim")) / Count(x, dims, g.dtype())};
  });
  // amax/amin(x, dim, keepdim): expand(g) shared evenly among the elements equal to out
  for (const char* op : {"aten.amax", "aten.amin"}) {
    r.Add(op, [](const GradCall& c) -> std::vector<Val> {
      Val x = Upcast(c.in(0));
      IntList dims = ReducedDims(c, x);
      bool keep = c.Bool("keepdim");
      return {ExtremeGrad(x, Expand(Upcast(c.out()), x, dims, keep),
                          Expand(c.grad(), x, dims, keep), dims)};
    });
  }
  // max_dim/min_dim(x, dim, keepdim) -> (values, indices): g written at the indices
  for (const char* op : {"aten.max_dim", "aten.min_dim"}) {
    r.Add(op, [](const GradCall& c) -> std::vector<Val> {
      Val x = Upcast(c.in(0));
      if (x.rank() == 0) return {c.grad(0)};
      int64_t d = c.Int("dim");
      if (d < 0) d += x.rank();
      Val idx = c.out(1), g = c.grad(0);
      if (!c.Bool("keepdim")) {
        idx = Unsqueeze(idx, d);
        g = Unsqueeze(g, d);
      }
      return {Scatter(FullLike(x, 0.0), d, idx, g)};
    });
  }
  // logsumexp(x, dim, keepdim): expand(g) exp(x - expand(out))
  r.Add("aten.logsumexp", [](const GradCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0));
    IntList dims = ReducedDims(c, x);
    bool keep = c.Bool("keepdim");
    return {Expand(c.grad(), x, dims, keep) * Exp(x - Expand(Upcast(c.out()), x, dims, keep))};
  });
  // norm(x, p, dim, keepdim): g x |x|^(p-2) / out^(p-1) (0 where out == 0);
  //   p = +-inf: g shared among the elements with |x| == out; p = 0: zero
  r.Add("aten.norm", [](const GradCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0));
    IntList dims = ReducedDims(c, x);
    bool keep = c.Bool("keepdim");
    double p = c.Float("p");
    Val g = Expand(c.grad(), x, dims, keep), out = Expand(Upcast(c.out()), x, dims, keep);
    if (p == 0) return {FullLike(x, 0.0)};
    if (std::isinf(p)) return {ExtremeGrad(Abs(x), out, g, dims) * Sign(x)};
    Val scale = p == 2 ? x / out : Sign(x) * Pow(Abs(x), p - 1.0) / Pow(out, p - 1.0);
    return {Where(Eq(out, 0.0), 0.0, g * scale)};
  });
  // var/std(x, dim, correction, keepdim) and var_mean/std_mean (the mean's gradient added)
  r.Add("aten.var", [](const GradCall& c) { return VarGrad(c, false, false); });
  r.Add("aten.std", [](const GradCall& c) { return VarGrad(c, true, false); });
  r.Add("aten.var_mean", [](const GradCall& c) { return VarGrad(c, false, true); });
  r.Add("aten.std_mean", [](const GradCall& c) { return VarGrad(c, true, true); });
  // prod(x, dim, keepdim): g times the product of the other reduced elements, computed
  // without dividing (exact with zeros): the reduced dims moved last and flattened to K, then
  // exclusive cumulative products from the left and from the right
  r.Add("aten.prod", [](const GradCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0));
    if (x.rank() == 0) return {c.grad()};
    IntList dims = ReducedDims(c, x);
    std::sort(dims.begin(), dims.end());
    IntList perm, kept;
    SymList kept_shape;
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) {
        perm.push_back(d);
        kept_shape.push_back(x.size(d));
      }
    }
    perm.insert(perm.end(), dims.begin(), dims.end());
    SymExpr k = NumElements(x, dims);
    SymList flat_shape = kept_shape;
    flat_shape.push_back(k);
    int64_t last = static_cast<int64_t>(kept_shape.size());
    Val flat = Reshape(Permute(x, perm), flat_shape);
    IntList no_pad(last + 1, 0), one_front = no_pad;
    one_front[last] = 1;
    // left[i] = prod(flat[:i]), right[i] = prod(flat[i+1:])
    Val left = Slice(Pad(Cumprod(flat, last), one_front, no_pad, 1.0), last, 0, k);
    Val right = Rev(Slice(Pad(Cumprod(Rev(flat, {last}), last), one_front, no_pad, 1.0), last, 0,
                          k),
                    {last});
    SymList permuted;
    for (int64_t d : perm) permuted.push_back(x.size(d));
    IntList inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
    Val others = Permute(Reshape(left * right, permuted), inverse);
    return {Expand(c.grad(), x, dims, c.Bool("keepdim")) * others};
  });
  // cumsum(x, dim): reverse cumulative sum of g
  r.Add("aten.cumsum", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    if (g.rank() == 0) return {g};
    int64_t d = c.Int("dim");
    return {Rev(Cumsum(Rev(g, {d}), d), {d})};
  });
  // cumprod(x, dim): x_i <- sum_{j >= i} g_j prod_{k <= j, k != i} x_k, exact with zeros: an
  // [.., n (i), n (k)] copy of x with x_i replaced by 1 on row i, its cumulative product along
  // k, masked to j >= i and contracted with g (O(n^2) in the scanned dim's size n)
  r.Add("aten.cumprod", [](const GradCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0)), g = c.grad();
    if (x.rank() == 0) return {g};
    int64_t d = c.Int("dim");
    if (d < 0) d += x.rank();
    int64_t last = x.rank() - 1;
    Val xl = Transpose(x, d, last), gl = Transpose(g, d, last);  // scanned dim last
    SymExpr n = xl.size(-1);
    SymList square(xl.shape().begin(), xl.shape().end());
    square.push_back(n);  // [.., n (i), n (k)]
    Emitter& e = c.e();
    Val i = Unsqueeze(Iota(e, n, 0, 1, proto::INT64), 1);
    Val k = Unsqueeze(Iota(e, n, 0, 1, proto::INT64), 0);
    Val rows = Where(Eq(i, k), 1.0, BroadcastTo(Unsqueeze(xl, -2), square));
    Val y = Cumprod(rows, last + 1);  // y[.., i, j] = prod_{k <= j, k != i} x_k
    Val terms = Where(Ge(k, i), y * Unsqueeze(gl, -2), 0.0);
    return {Transpose(Sum(terms, {last + 1}), d, last)};
  });
  // softmax(x, dim): y (g - sum(g y, dim))
  r.Add("aten.softmax", [](const GradCall& c) -> std::vector<Val> {
    Val y = Upcast(c.out()), g = c.grad();
    int64_t d = c.Int("dim");
    return {y * (g - Sum(g * y, {d}, /*keepdim=*/true))};
  });
  // log_softmax(x, dim): g - exp(y) sum(g, dim)
  r.Add("aten.log_softmax", [](const GradCall& c) -> std::vector<Val> {
    Val y = Upcast(c.out()), g = c.grad();
    int64_t d = c.Int("dim");
    return {g - Exp(y) * Sum(g, {d}, /*keepdim=*/true)};
  });
  // layer_norm(x, w?, b?, normalized_shape, eps): xhat = standardize(x over trailing dims);
  //   x <- rstd (gw - mean(gw) - xhat mean(gw xhat)) with gw = g w; w <- sum(g xhat); b <- sum(g)
  r.Add("aten.layer_norm", [](const GradCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0)), g = c.grad();
    IntList dims = DimsFrom(x.rank() - static_cast<int64_t>(c.Syms("normalized_shape").size()),
                            x.rank());
    Standardized s = Standardize(x, dims, c.Float("eps"));
    Val gxhat = c.has_in(1) ? g * Upcast(c.in(1)) : g;
    std::vector<Val> out = {StandardizeGrad(s, gxhat, dims)};
    if (c.has_in(1)) out.push_back(c.SumTo(1, g * s.xhat));
    if (c.has_in(2)) out.push_back(c.SumTo(2, g));
    return out;
  });
  // rms_norm(x, w?, normalized_shape, eps): r = rsqrt(mean(x^2) + eps);
  //   x <- r (gw - x r^2 mean(gw x)) with gw = g w; w <- sum(g x r)
  r.Add("aten.rms_norm", [](const GradCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0)), g = c.grad();
    IntList dims = DimsFrom(x.rank() - static_cast<int64_t>(c.Syms("normalized_shape").size()),
                            x.rank());
    double eps = c.Float("eps") == -1.0 ? MachineEps(c.out_dtype()) : c.Float("eps");
    Val rs = Rsqrt(Mean(x * x, dims, /*keepdim=*/true) + eps);
    Val gy = c.has_in(1) ? g * Upcast(c.in(1)) : g;
    std::vector<Val> out = {rs * (gy - x * rs * rs * Mean(gy * x, dims, /*keepdim=*/true))};
    if (c.has_in(1)) out.push_back(c.SumTo(1, g * x * rs));
    return out;
  });
  // batch_norm(x, mean, var, w?, b?, training=false, eps): x <- g w rsqrt(var + eps);
  //   w <- sum(g xhat), b <- sum(g) over every dim but channels; running stats: none
  // training=true: see BatchNormTrainingGrad
  r.Add("aten.batch_norm", [](const GradCall& c) -> std::vector<Val> {
    if (c.Bool("training")) return BatchNormTrainingGrad(c);
    Val x = Upcast(c.in(0)), g = c.grad();
    Val rstd = Rsqrt(PerChannel(c.in(2), x) + c.Float("eps"));
    Val scale = c.has_in(3) ? rstd * PerChannel(c.in(3), x) : rstd;
    std::vector<Val> out = {g * scale, Val(), Val()};
    if (c.has_in(3)) out.push_back(ChannelSum(g * (x - PerChannel(c.in(1), x)) * rstd));
    if (c.has_in(4)) out.push_back(ChannelSum(g));
    return out;
  });
  // local_response_norm(x, size, alpha, beta, k): y = x D^-beta, D = k + alpha/size * the sum of
  // x^2 over a channel window [c - size/2, c + (size-1)/2];
  //   x <- g D^-beta + 2 x alpha/size * sum over the windows holding x's channel of
  //        h = -beta g x D^(-beta-1)   (the same window with its low and high ends swapped)
  r.Add("aten.local_response_norm", [](const GradCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0)), g = c.grad();
    int64_t size = c.Int("size");
    double alpha = c.Float("alpha"), beta = c.Float("beta");
    auto window_sum = [&](Val v, int64_t lo, int64_t hi) {
      IntList low(v.rank(), 0), high(v.rank(), 0);
      low[1] = lo;
      high[1] = hi;
      Val padded = Pad(v, low, high, 0.0);
      Val sum = Slice(padded, 1, 0, x.size(1));
      for (int64_t j = 1; j < size; ++j) sum = sum + Slice(padded, 1, j, SymExpr(j) + x.size(1));
      return sum;
    };
    Val d = window_sum(x * x, size / 2, (size - 1) / 2) * (alpha / static_cast<double>(size)) +
            c.Float("k");
    Val h = g * x * -beta * Pow(d, -beta - 1.0);
    Val back = window_sum(h, (size - 1) / 2, size / 2);
    return {g * Pow(d, -beta) + back * x * (2.0 * alpha / static_cast<double>(size))};
  });
  // group_norm(x, w?, b?, G, eps), instance_norm(x, w?, b?, eps) (G = C): standardization
  // per (sample, group), as layer_norm's backward on x viewed as [N, G, C/G * spatial]
  r.Add("aten.group_norm", [](const GradCall& c) {
    return GroupNormGrad(c, c.Int("num_groups"), c.Float("eps"));
  });
  r.Add("aten.instance_norm", [](const GradCall& c) -> std::vector<Val> {
    const SymExpr& channels = c.in(0).size(1);
    if (!channels.is_constant()) {
      c.e().Fail(absl::UnimplementedError(
          "aten.instance_norm: derivative needs a static channel count"));
      return {};
    }
    return GroupNormGrad(c, channels.constant(), c.Float("eps"));
  });
}

}  // namespace coil::autograd
