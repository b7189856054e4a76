// Decompositions of pooling: max_pool{1,2,3}d and avg_pool{1,2,3}d as window reductions
// (one strided prims.slice per window offset, combined with maximum / add), and the adaptive
// pools as gathers of each output's window [floor(o*In/Out), ceil((o+1)*In/Out)).
//
// Pooling is separable: a window over d spatial dims is the product of 1-D windows, so each
// spatial dim is reduced in turn (k1 + k2 slices for a k1 x k2 window), and avg_pool's divisor
// is the product of per-dim window counts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/dtype.h"
#include "prims/decomposition_registry.h"
#include "prims/decompositions/nn_internal.h"

namespace coil::prims::nn_internal {
namespace {

// A 1-D pooling window: size, stride, padding (low and high), dilation, ceil mode.
struct Window {
  int64_t k = 1, s = 1, p = 0, dil = 1;
  bool ceil_mode = false;
  // Extra high padding so that ceil mode's last (partial) window can be sliced.
  int64_t extra() const { return ceil_mode ? s - 1 : 0; }
};

// The pooling attributes of spatial dim i (of d): 1 or d values each; empty stride = kernel.
Window WindowOf(const OpCall& c, int64_t d, int64_t i) {
  auto at = [&](const IntList& v, int64_t fallback) {
    return v.empty() ? fallback : v.size() == 1 ? v[0] : v[i];
  };
  Window w;
  w.k = at(c.Ints("kernel_size"), 1);
  w.s = at(c.Ints("stride"), w.k);
  w.p = at(c.Ints("padding"), 0);
  w.dil = c.Has("dilation") ? at(c.Ints("dilation"), 1) : 1;
  w.ceil_mode = c.Bool("ceil_mode");
  return w;
}

// The value max pooling pads with: -inf, or the integer dtype's lowest value.
double Lowest(DType t) {
  switch (t) {
    case proto::UINT8: return 0;
    case proto::INT8: return -128;
    case proto::INT32: return static_cast<double>(std::numeric_limits<int32_t>::min());
    case proto::INT64: return static_cast<double>(std::numeric_limits<int64_t>::min());
    default: return -std::numeric_limits<double>::infinity();
  }
}

Val PadAxis(Val x, int64_t axis, int64_t low, int64_t high, double value) {
  IntList lo(x.rank(), 0), hi(x.rank(), 0);
  lo[axis] = low;
  hi[axis] = high;
  return Pad(x, lo, hi, value);
}

// x with `axis` sized exactly `size` (the same value, maybe spelled differently).
Val WithSize(Val x, int64_t axis, const SymExpr& size) {
  SymList shape = x.shape();
  shape[axis] = size;
  return AsShape(x, shape);
}

// Reduces the `w.k` taps of each window along `axis` of the padded x: tap j is the strided
// slice starting at j * dil with `out` elements; max or sum.
Val Windows(Val x, int64_t axis, const Window& w, const SymExpr& out, bool is_max) {
  Val acc;
  for (int64_t j = 0; j < w.k; ++j) {
    SymExpr start(j * w.dil);
    Val tap = Slice(x, axis, start, start + (out - 1) * w.s + 1, w.s);
    acc = j == 0 ? tap : is_max ? Maximum(acc, tap) : Add(acc, tap);
  }
  return WithSize(acc, axis, out);
}

// max_pool{d}d(x) -> per spatial dim: pad with the lowest value, max of the k window slices
std::vector<Val> MaxPool(const OpCall& c, int64_t d) {
  Val x = c.in(0);  // max is exact in any dtype: no upcast
  int64_t lead = x.rank() - d;
  double lowest = Lowest(x.dtype());
  for (int64_t i = 0; i < d; ++i) {
    Window w = WindowOf(c, d, i);
    int64_t axis = lead + i;
    x = PadAxis(x, axis, w.p, w.p + w.extra(), lowest);
    x = Windows(x, axis, w, c.out_shape()[axis], /*is_max=*/true);
  }
  return {x};
}

// avg_pool{d}d(x) -> sum of the zero-padded window slices / divisor, the divisor being
// divisor_override, or the product of per-dim window counts (the same windows summed over a
// ones vector padded with 1 (count_include_pad) or 0, and 0 past the padded input).
std::vector<Val> AvgPool(const OpCall& c, int64_t d) {
  Val x = Upcast(c.in(0));
  int64_t lead = x.rank() - d;
  int64_t override_div = c.Has("divisor_override") ? c.Int("divisor_override") : 0;
  bool include_pad = c.Bool("count_include_pad");
  SymList out_spatial(c.out_shape().end() - d, c.out_shape().end());
  // Without ceil mode every window lies inside the padded input: it counts k elements, or k
  // minus the padding it covers.
  bool no_padding = true;
  for (int64_t i = 0; i < d; ++i) no_padding = no_padding && WindowOf(c, d, i).p == 0;
  bool constant_div = override_div != 0 || (!c.Bool("ceil_mode") && (include_pad || no_padding));
  int64_t kernel_volume = 1;
  Val divisor;  // int64 [out spatial] when not constant
  for (int64_t i = 0; i < d; ++i) {
    Window w = WindowOf(c, d, i);
    int64_t axis = lead + i;
    const SymExpr& out = c.out_shape()[axis];
    kernel_volume *= w.k;
    if (!constant_div) {
      Val ones = Full(c.e(), {x.size(axis)}, 1, proto::INT64);
      ones = include_pad ? Pad(Pad(ones, {w.p}, {w.p}, 1), {0}, {w.extra()}, 0)
                         : Pad(ones, {w.p}, {w.p + w.extra()}, 0);
      Val count = BroadcastInDim(Windows(ones, 0, w, out, false), out_spatial, {i});
      divisor = i == 0 ? count : divisor * count;
    }
    x = PadAxis(x, axis, w.p, w.p + w.extra(), 0);
    x = Windows(x, axis, w, out, /*is_max=*/false);
  }
  if (constant_div) {
    double v = static_cast<double>(override_div != 0 ? override_div : kernel_volume);
    return {Cast(x / v, c.out_dtype())};
  }
  return {Cast(x / Cast(divisor, x.dtype()), c.out_dtype())};
}

// The windows of one adaptive dim, In -> Out: window o is [start_o, end_o) with
// start_o = floor(o*In/Out), end_o = ceil((o+1)*In/Out); as a [Out, K] table of positions
// (K the largest window, positions past end_o repeat end_o - 1) with a validity mask.
struct AdaptiveAxis {
  Val index;  // [Out, K] int64
  Val mask;   // [Out, K] bool
  Val count;  // [Out] int64
  SymExpr k;
};

AdaptiveAxis AdaptiveWindows(Emitter& e, const SymExpr& in, int64_t out) {
  AdaptiveAxis a;
  if (auto n = in.AsConstant()) {
    int64_t k = 0;
    for (int64_t o = 0; o < out; ++o) {
      k = std::max(k, ((o + 1) * *n + out - 1) / out - (o * *n) / out);
    }
    a.k = k;
  } else {
    a.k = SymExpr::FloorDiv(in + (out - 1), out) + 1;  // ceil(In/Out) + 1 bounds every window
  }
  Val o = Iota(e, out, 0, 1, proto::INT64);
  Val in_v = Int64Of(e, in);
  Val start = (o * in_v) / static_cast<double>(out);
  Val end = ((o + 1.0) * in_v + static_cast<double>(out - 1)) / static_cast<double>(out);
  Val pos = Unsqueeze(start, 1) + Unsqueeze(Iota(e, a.k, 0, 1, proto::INT64), 0);
  a.index = Minimum(pos, Unsqueeze(end - 1.0, 1));
  a.mask = Lt(pos, Unsqueeze(end, 1));
  a.count = end - start;
  return a;
}

// Gathers the windows of `axis` (In) into two dims [Out, K] at axis, axis + 1.
Val GatherWindows(Val x, int64_t axis, const AdaptiveAxis& a, int64_t out) {
  SymList flat = x.shape();
  flat[axis] = a.k * out;
  Val index = BroadcastInDim(Reshape(a.index, {a.k * out}), flat, {axis});
  SymList split = x.shape();
  split[axis] = SymExpr(out);
  split.insert(split.begin() + axis + 1, a.k);
  return Reshape(Gather(x, axis, index), split);
}

bool AnyZero(const IntList& v) { return std::find(v.begin(), v.end(), 0) != v.end(); }

IntList OutputSize(const OpCall& c, int64_t d) {
  IntList v = c.Ints("output_size");
  return v.size() == 1 ? IntList(d, v[0]) : v;
}

// adaptive_avg_pool{d}d(x) -> per spatial dim: mean (Out = 1), a regular pool (Out divides In),
// else sum of the masked gathered windows / window count
std::vector<Val> AdaptiveAvgPool(const OpCall& c, int64_t d) {
  IntList out_size = OutputSize(c, d);
  if (AnyZero(out_size)) return {Full(c.e(), c.out_shape(), 0, c.out_dtype())};
  Val x = Upcast(c.in(0));
  int64_t lead = x.rank() - d;
  for (int64_t i = 0; i < d; ++i) {
    int64_t axis = lead + i, out = out_size[i];
    SymExpr in = x.size(axis);
    if (out == 1) {
      x = Mean(x, {axis}, /*keepdim=*/true);
    } else if (in.is_constant() && in.constant() % out == 0) {
      int64_t k = in.constant() / out;
      x = Windows(x, axis, Window{k, k, 0, 1, false}, out, /*is_max=*/false) /
          static_cast<double>(k);
    } else {
      AdaptiveAxis a = AdaptiveWindows(c.e(), in, out);
      Val g = GatherWindows(x, axis, a, out);
      g = Where(BroadcastInDim(a.mask, g.shape(), {axis, axis + 1}), g, 0.0);
      SymList shape = x.shape();
      shape[axis] = SymExpr(out);
      x = Sum(g, {axis + 1}) / BroadcastInDim(Cast(a.count, x.dtype()), shape, {axis});
    }
  }
  return {Cast(x, c.out_dtype())};
}

// adaptive_max_pool{d}d(x) -> gather every window into [..., O1, K1, ..., Od, Kd], move the
// K dims last and flatten them; values = amax, indices = the window position (row-major in
// the spatial plane) at argmax (first occurrence: clamped repeats come after their original;
// the last NaN where there are NaNs, as torch)
std::vector<Val> AdaptiveMaxPool(const OpCall& c, int64_t d) {
  IntList out_size = OutputSize(c, d);
  if (AnyZero(out_size)) {
    return {Full(c.e(), c.out_shape(0), 0, c.out_dtype(0)),
            Full(c.e(), c.out_shape(1), 0, c.out_dtype(1))};
  }
  Val x = c.in(0);
  int64_t lead = x.rank() - d;
  Val g = x;
  std::vector<AdaptiveAxis> axes;
  for (int64_t i = 0; i < d; ++i) {
    axes.push_back(AdaptiveWindows(c.e(), x.size(lead + i), out_size[i]));
    g = GatherWindows(g, lead + 2 * i, axes.back(), out_size[i]);
  }
  IntList perm;
  for (int64_t i = 0; i < lead; ++i) perm.push_back(i);
  for (int64_t i = 0; i < d; ++i) perm.push_back(lead + 2 * i);
  for (int64_t i = 0; i < d; ++i) perm.push_back(lead + 2 * i + 1);
  SymList window_shape;  // [O1..Od, K1..Kd]
  SymExpr volume(1);
  for (int64_t i = 0; i < d; ++i) window_shape.push_back(SymExpr(out_size[i]));
  for (int64_t i = 0; i < d; ++i) {
    window_shape.push_back(axes[i].k);
    volume = volume * axes[i].k;
  }
  SymList flat(c.out_shape().begin(), c.out_shape().end());
  flat.push_back(volume);
  g = Reshape(Permute(g, perm), flat);
  // Plane positions of every window element: sum_i index_i * (row-major stride of dim i).
  Val positions;
  SymExpr stride(1);
  for (int64_t i = d - 1; i >= 0; --i) {
    Val p = BroadcastInDim(axes[i].index * Int64Of(c.e(), stride), window_shape, {i, d + i});
    positions = i == d - 1 ? p : positions + p;
    stride = stride * x.size(lead + i);
  }
  SymList plane_flat(window_shape.begin(), window_shape.begin() + d);
  plane_flat.push_back(volume);
  positions = BroadcastTo(Reshape(positions, plane_flat), flat);
  Val arg = Argmax(g, -1, /*keepdim=*/true);
  Val m = Amax(g, {-1}, /*keepdim=*/true);
  if (IsFloating(g.dtype())) {
    // A window with NaNs: torch's index is its last NaN's (the kernel keeps `v > max ||
    // isnan(v)`), argmax's the first: the last NaN is the first NaN of the reversed window.
    Val rev = Rev(g, {g.rank() - 1});
    Val last_nan =
        Int64Of(c.e(), volume - 1) - Argmax(Cast(Ne(rev, rev), proto::INT32), -1, /*keepdim=*/true);
    arg = Where(Ne(m, m), last_nan, arg);
  }
  return {Squeeze(m, {-1}), Squeeze(Gather(positions, -1, arg), {-1})};
}

}  // namespace

void RegisterPoolDecompositions(DecompositionRegistry& r) {
  for (int64_t d = 1; d <= 3; ++d) {
    // max_pool{d}d(x, k, s, p, dil, ceil) -> max over k strided slices of pad(x, -inf), per dim
    r.Add(absl::StrCat("aten.max_pool", d, "d"),
          [d](const OpCall& c) -> std::vector<Val> { return MaxPool(c, d); });
    // avg_pool{d}d(x, ...) -> sum over k strided slices of pad(x, 0) / divisor
    r.Add(absl::StrCat("aten.avg_pool", d, "d"),
          [d](const OpCall& c) -> std::vector<Val> { return AvgPool(c, d); });
    // adaptive_avg_pool{d}d(x, out) -> mean of each window [floor(o*In/Out), ceil((o+1)*In/Out))
    r.Add(absl::StrCat("aten.adaptive_avg_pool", d, "d"),
          [d](const OpCall& c) -> std::vector<Val> { return AdaptiveAvgPool(c, d); });
    // adaptive_max_pool{d}d(x, out) -> (amax, argmax position) of each window
    r.Add(absl::StrCat("aten.adaptive_max_pool", d, "d"),
          [d](const OpCall& c) -> std::vector<Val> { return AdaptiveMaxPool(c, d); });
  }
}

}  // namespace coil::prims::nn_internal
