// Derivative rules of max_pool{1,2,3}d and avg_pool{1,2,3}d (ir/ops/nn_ops_pool.cc), for static
// spatial sizes. Both sum, over the kernel offsets o, the window elements each output reads:
//   window_o(v) = v (padded) sliced at o * dilation + i * stride along every pooled dim
//   max: x <- sum_o place_o(where(window_o(x) == y, g, 0))   (a tie sends g to every maximum;
//        torch sends it to the first)
//   avg: x <- sum_o place_o(g / divisor)   divisor: kernel size, divisor_override, or (without
//        count_include_pad) the number of real elements in the window
// place_o writes a window-shaped value back at its positions (slice_scatter per dim) and the
// padding is cropped at the end.
//   adaptive_max: g added at the forward's argmax positions (its second output);
//   adaptive_avg: separable; along each pooled dim, g [.., Out] @ A [Out, In] with
//        A[o, i] = 1 / |window o| for i in window o = [floor(o In / Out), ceil((o + 1) In / Out))
#include <cstdint>
#include <limits>
#include <vector>

#include "autograd/derivative_registry.h"
#include "autograd/rules/register.h"

namespace coil::autograd {
namespace {

using namespace coil::prims;  // NOLINT: the rule language

struct Window {
  int64_t first = 0;  // the first pooled dim
  IntList kernel, stride, dilation, out;
  SymList padded;     // the padded input's shape
  IntList low, high;  // pads of every dim
};

IntList PerDim(IntList v, int64_t n, int64_t fallback) {
  if (v.empty()) v.assign(n, fallback);
  if (v.size() == 1) v.assign(n, v[0]);
  return v;
}

// The window geometry, or an error recorded in the emitter.
bool Geometry(const GradCall& c, int64_t n, bool is_max, const Val& x, const Val& g, Window& w) {
  w.first = x.rank() - n;
  w.kernel = PerDim(c.Ints("kernel_size"), n, 1);
  IntList stride = c.Ints("stride");
  w.stride = stride.empty() ? w.kernel : PerDim(stride, n, 1);
  IntList padding = PerDim(c.Ints("padding"), n, 0);
  w.dilation = is_max ? PerDim(c.Ints("dilation"), n, 1) : IntList(n, 1);
  w.low.assign(x.rank(), 0);
  w.high.assign(x.rank(), 0);
  w.padded = x.shape();
  for (int64_t i = 0; i < n; ++i) {
    const SymExpr& in = x.size(w.first + i);
    const SymExpr& out = g.size(w.first + i);
    if (!in.is_constant() || !out.is_constant()) {
      c.e().Fail(absl::UnimplementedError(absl::StrCat(
          c.op(), ": derivative needs static spatial sizes (symbolic batch is fine)")));
      return false;
    }
    w.out.push_back(out.constant());
    int64_t reach = (out.constant() - 1) * w.stride[i] + (w.kernel[i] - 1) * w.dilation[i] + 1;
    w.low[w.first + i] = padding[i];
    w.high[w.first + i] = std::max(padding[i], reach - in.constant() - padding[i]);
    w.padded[w.first + i] = in + padding[i] + w.high[w.first + i];
  }
  return true;
}

// v (padded shape) at kernel offset `o`: one element per output position.
Val Take(const Val& v, const Window& w, const IntList& o) {
  Val r = v;
  for (size_t i = 0; i < o.size(); ++i) {
    int64_t start = o[i] * w.dilation[i];
    r = Slice(r, w.first + i, start, start + (w.out[i] - 1) * w.stride[i] + 1, w.stride[i]);
  }
  return r;
}

// The inverse of Take: a window-shaped value written into zeros of the padded shape.
Val Place(Emitter& e, Val v, const Window& w, const IntList& o) {
  for (int64_t i = static_cast<int64_t>(o.size()) - 1; i >= 0; --i) {
    SymList shape = v.shape();
    shape[w.first + i] = w.padded[w.first + i];
    int64_t start = o[i] * w.dilation[i];
    v = e.Op1("aten.slice_scatter", {Full(e, shape, 0.0, v.dtype()), v},
              {{"dim", w.first + i}, {"start", SymExpr(start)},
               {"end", SymExpr(start + (w.out[i] - 1) * w.stride[i] + 1)},
               {"step", w.stride[i]}});
  }
  return v;
}

// Every kernel offset, in row-major order.
std::vector<IntList> Offsets(const IntList& kernel) {
  std::vector<IntList> all = {{}};
  for (int64_t k : kernel) {
    std::vector<IntList> next;
    for (const IntList& o : all) {
      for (int64_t j = 0; j < k; ++j) {
        IntList p = o;
        p.push_back(j);
        next.push_back(p);
      }
    }
    all = next;
  }
  return all;
}

std::vector<Val> PoolGrad(const GradCall& c, int64_t n, bool is_max) {
  Emitter& e = c.e();
  Val x = Upcast(c.in(0)), g = c.grad();
  Window w;
  if (!Geometry(c, n, is_max, x, g, w)) return {};
  std::vector<IntList> offsets = Offsets(w.kernel);
  Val divisor;
  if (!is_max) {
    if (c.Bool("ceil_mode")) {
      e.Fail(absl::UnimplementedError(absl::StrCat(c.op(), ": no derivative with ceil_mode yet")));
      return {};
    }
    int64_t override_divisor = c.Has("divisor_override") ? c.Int("divisor_override") : 0;
    if (override_divisor > 0) {
      divisor = Full(e, {}, static_cast<double>(override_divisor), g.dtype());
    } else if (c.Bool("count_include_pad")) {
      divisor = Full(e, {}, static_cast<double>(offsets.size()), g.dtype());
    } else {
      Val ones = Pad(FullLike(x, 1.0), w.low, w.high, 0.0);
      divisor = Take(ones, w, offsets[0]);
      for (size_t j = 1; j < offsets.size(); ++j) divisor = divisor + Take(ones, w, offsets[j]);
    }
  }
  Val xp = is_max ? Pad(x, w.low, w.high, -std::numeric_limits<double>::infinity()) : Val();
  Val y = Upcast(c.out());
  Val acc;
  for (const IntList& o : offsets) {
    Val part = is_max ? Where(Eq(Take(xp, w, o), y), g, 0.0) : g / divisor;
    Val placed = Place(e, part, w, o);
    acc = acc.ok() ? acc + placed : placed;
  }
  IntList crop_low, crop_high;
  for (size_t i = 0; i < w.low.size(); ++i) {
    crop_low.push_back(-w.low[i]);
    crop_high.push_back(-w.high[i]);
  }
  return {Pad(acc, crop_low, crop_high, 0.0)};
}

// A [Out, In] of adaptive average pooling along one dim (In may be symbolic).
Val AdaptiveMatrix(Emitter& e, const SymExpr& in, int64_t out, DType dtype) {
  Val o = Unsqueeze(Iota(e, out, 0, 1, proto::INT64), 1);  // [Out, 1]
  Val i = Unsqueeze(Iota(e, in, 0, 1, proto::INT64), 0);   // [1, In]
  Val n = SymValue(e, in, proto::INT64);
  Val start = o * n / static_cast<double>(out);
  Val end = ((o + 1.0) * n + static_cast<double>(out - 1)) / static_cast<double>(out);
  Val inside = BitwiseAnd(Ge(i, start), Lt(i, end));
  return Where(inside, 1.0 / Cast(end - start, dtype), 0.0);
}

std::vector<Val> AdaptiveAvgPoolGrad(const GradCall& c, int64_t n) {
  Emitter& e = c.e();
  Val x = c.in(0), g = c.grad();
  int64_t last = g.rank() - 1;
  for (int64_t d = 0; d < n; ++d) {
    int64_t axis = x.rank() - n + d;
    const SymExpr& out = g.size(axis);
    if (!out.is_constant()) {
      e.Fail(absl::UnimplementedError(absl::StrCat(c.op(), ": output size must be static")));
      return {};
    }
    Val a = AdaptiveMatrix(e, x.size(axis), out.constant(), g.dtype());
    g = Transpose(e.Op1("aten.matmul", {Transpose(g, axis, last), a}), axis, last);
  }
  return {g};
}

// adaptive_max_pool: g added into zeros at the forward's indices (output 1: positions in each
// flattened spatial plane), the planes flattened.
std::vector<Val> AdaptiveMaxPoolGrad(const GradCall& c, int64_t n) {
  Val x = c.in(0), g = c.grad(0), idx = c.out(1);
  int64_t lead = x.rank() - n;
  SymList xs(x.shape().begin(), x.shape().begin() + lead), gs = xs;
  SymExpr plane(1), window(1);
  for (int64_t d = lead; d < x.rank(); ++d) {
    plane = plane * x.size(d);
    window = window * g.size(d);
  }
  xs.push_back(plane);
  gs.push_back(window);
  Val flat = Scatter(Full(c.e(), xs, 0.0, g.dtype()), lead, Reshape(idx, gs), Reshape(g, gs),
                     "add");
  return {Reshape(flat, x.shape())};
}

}  // namespace

void RegisterPoolRules(DerivativeRegistry& r) {
  for (int64_t n = 1; n <= 3; ++n) {
    r.Add(absl::StrCat("aten.adaptive_max_pool", n, "d"),
          [n](const GradCall& c) { return AdaptiveMaxPoolGrad(c, n); });
  }
  for (int64_t n = 1; n <= 3; ++n) {
    r.Add(absl::StrCat("aten.adaptive_avg_pool", n, "d"),
          [n](const GradCall& c) { return AdaptiveAvgPoolGrad(c, n); });
  }
  for (int64_t n = 1; n <= 3; ++n) {
    r.Add(absl::StrCat("aten.max_pool", n, "d"),
          [n](const GradCall& c) { return PoolGrad(c, n, /*is_max=*/true); });
    r.Add(absl::StrCat("aten.avg_pool", n, "d"),
          [n](const GradCall& c) { return PoolGrad(c, n, /*is_max=*/false); });
  }
}

}  // namespace coil::autograd
