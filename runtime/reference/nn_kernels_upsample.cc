// Reference kernels of the ops that resample NCHW images (the ops of
// ir/ops/nn_ops_upsample.cc): aten.upsample_nearest2d, aten.upsample_bilinear2d,
// aten.pixel_shuffle and aten.pixel_unshuffle.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/reference/nn_kernels_internal.h"

namespace coil::nn_kernels {
namespace {

// PyTorch's CPU upsampling computes source indices in float (nearest, every dtype) or in the
// input's "opmath" type (bilinear: double for float64, float otherwise). Mirroring that keeps
// nearest-neighbour picks identical, e.g. row 23 of 14 -> 46 reads row 6, not 7.
template <typename T>
T SourceScale(int64_t in, int64_t out, bool align_corners, double scale_factor) {
  if (align_corners) return out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  if (scale_factor > 0) return static_cast<T>(1.0 / scale_factor);
  return static_cast<T>(in) / static_cast<T>(out);
}

template <typename T>
std::vector<int64_t> NearestIndices(int64_t in, int64_t out, double scale_factor) {
  T scale = SourceScale<T>(in, out, false, scale_factor);
  std::vector<int64_t> idx(out);
  for (int64_t o = 0; o < out; ++o) {
    T src = static_cast<T>(o) * scale;
    idx[o] = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
  }
  return idx;
}

struct LinearTap {
  int64_t i0 = 0, i1 = 0;
  double w0 = 1, w1 = 0;
};

template <typename T>
std::vector<LinearTap> LinearTaps(int64_t in, int64_t out, bool align_corners,
                                  double scale_factor) {
  T scale = SourceScale<T>(in, out, align_corners, scale_factor);
  std::vector<LinearTap> taps(out);
  for (int64_t o = 0; o < out; ++o) {
    LinearTap& t = taps[o];
    if (in == out) {
      t.i0 = t.i1 = o;
      continue;
    }
    T src = align_corners ? scale * static_cast<T>(o)
                          : scale * (static_cast<T>(o) + T(0.5)) - T(0.5);
    if (!align_corners && src < 0) src = 0;
    t.i0 = static_cast<int64_t>(src);
    t.i1 = t.i0 + (t.i0 < in - 1 ? 1 : 0);
    T lambda = std::min(std::max(src - static_cast<T>(t.i0), T(0)), T(1));
    t.w1 = static_cast<double>(lambda);
    t.w0 = 1.0 - t.w1;
  }
  return taps;
}

absl::StatusOr<std::vector<HostTensor>> Upsample(const KernelContext& ctx, bool linear) {
  const HostTensor& x = ctx.inputs[0];
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
  FloatList scales = *GetFloats(ctx.attrs, "scale_factors");
  bool align_corners = linear && *GetBool(ctx.attrs, "align_corners");
  bool wide = x.dtype() == proto::FLOAT64;
  std::vector<LinearTap> taps[2];
  for (int64_t i = 0; i < 2; ++i) {
    int64_t in = x.shape()[2 + i], n = out.shape()[2 + i];
    double sf = scales.empty() ? 0.0 : scales[i];
    if (linear) {
      taps[i] = wide ? LinearTaps<double>(in, n, align_corners, sf)
                     : LinearTaps<float>(in, n, align_corners, sf);
    } else {
      std::vector<int64_t> idx = NearestIndices<float>(in, n, sf);
      for (int64_t o = 0; o < n; ++o) taps[i].push_back({idx[o], idx[o], 1.0, 0.0});
    }
  }
  bool integral = !IsFloating(out.dtype());
  int64_t flat = 0;
  ForEachIndex(out.shape(), [&](absl::Span<const int64_t> o) {
    const LinearTap& h = taps[0][o[2]];
    const LinearTap& w = taps[1][o[3]];
    if (integral) {  // nearest only
      out.StoreInt(flat++, x.GetInt({o[0], o[1], h.i0, w.i0}));
      return;
    }
    auto at = [&](int64_t hi, int64_t wi) { return x.GetDouble({o[0], o[1], hi, wi}); };
    double v = h.w0 * (w.w0 * at(h.i0, w.i0) + w.w1 * at(h.i0, w.i1)) +
               h.w1 * (w.w0 * at(h.i1, w.i0) + w.w1 * at(h.i1, w.i1));
    if (!linear) v = at(h.i0, w.i0);  // keeps NaN/inf neighbours out of a pure copy
    out.StoreDouble(flat++, v);
  });
  return std::vector<HostTensor>{out};
}

// pixel_shuffle (up) moves channel c*r*r + i*r + j to spatial offset (i, j) of an r x r block;
// pixel_unshuffle (down) is its inverse.
absl::StatusOr<std::vector<HostTensor>> Shuffle(const KernelContext& ctx, bool up) {
  const HostTensor& x = ctx.inputs[0];
  int64_t r = *GetInt(ctx.attrs, up ? "upscale_factor" : "downscale_factor");
  // torch's checks and wording; a symbolic size the meta function could not check gets here.
  const int64_t xr = x.rank();
  if (up && x.shape()[xr - 3] % (r * r) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
        "upscale_factor, but input.size(-3)=", x.shape()[xr - 3], " is not divisible by ", r * r));
  }
  for (int64_t i = xr - 2; !up && i < xr; ++i) {
    if (x.shape()[i] % r != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pixel_unshuffle expects ", i == xr - 2 ? "height" : "width",
          " to be divisible by downscale_factor, but input.size(", i - xr, ")=", x.shape()[i],
          " is not divisible by ", r));
    }
  }
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
  int64_t n = out.rank();
  std::vector<int64_t> xi(n);
  int64_t flat = 0;
  ForEachIndex(out.shape(), [&](absl::Span<const int64_t> o) {
    std::copy(o.begin(), o.end(), xi.begin());
    int64_t c = o[n - 3], h = o[n - 2], w = o[n - 1];
    if (up) {
      xi[n - 3] = c * r * r + (h % r) * r + (w % r);
      xi[n - 2] = h / r;
      xi[n - 1] = w / r;
    } else {
      int64_t block = c % (r * r);
      xi[n - 3] = c / (r * r);
      xi[n - 2] = h * r + block / r;
      xi[n - 1] = w * r + block % r;
    }
    if (IsFloating(out.dtype())) {
      out.StoreDouble(flat++, x.GetDouble(xi));
    } else {
      out.StoreInt(flat++, x.GetInt(xi));
    }
  });
  return std::vector<HostTensor>{out};
}

}  // namespace

void RegisterUpsampleKernels(ReferenceKernels& k) {
  k.Register("aten.upsample_nearest2d",
             [](const KernelContext& ctx) { return Upsample(ctx, /*linear=*/false); });
  k.Register("aten.upsample_bilinear2d",
             [](const KernelContext& ctx) { return Upsample(ctx, /*linear=*/true); });
  k.Register("aten.pixel_shuffle",
             [](const KernelContext& ctx) { return Shuffle(ctx, /*up=*/true); });
  k.Register("aten.pixel_unshuffle",
             [](const KernelContext& ctx) { return Shuffle(ctx, /*up=*/false); });
}

}  // namespace coil::nn_kernels
