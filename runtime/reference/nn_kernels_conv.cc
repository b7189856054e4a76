// Reference kernels of convolution: aten.convolution, aten.conv{1,2,3}d,
// aten.conv_transpose{1,2,3}d and aten.convolution_backward_weight. A direct convolution
// accumulating in double (int64 for integer tensors), in the order bias, then input channel by
// input channel, kernel position by kernel position, for every output element; the weight
// gradient sums x * grad_output over the batch and the output positions in double.
//
// To stay usable on real models it reads the operands once into contiguous arrays and looks up,
// for each kernel position, which input position feeds each output position (a table built
// with the same index formulas as a one-output-at-a-time loop), so the innermost loop is a
// plain multiply-add over output positions.
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/reference/nn_kernels_internal.h"

namespace coil::nn_kernels {
namespace {

// Every element of `t` in row-major order as T (double for floating tensors, int64 otherwise).
template <typename T>
std::vector<T> Elements(const HostTensor& t) {
  if constexpr (std::is_same_v<T, double>) {
    return t.ToDoubles();
  } else {
    std::vector<T> out;
    out.reserve(t.numel());
    ForEachIndex(t.shape(), [&](absl::Span<const int64_t> i) { out.push_back(t.GetInt(i)); });
    return out;
  }
}

int64_t Product(absl::Span<const int64_t> v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

struct ConvGeometry {
  bool transposed = false;
  IntList stride, padding, dilation;
  std::vector<int64_t> in_spatial, out_spatial, kernel;
};

// source[k * out_size + o]: the flat input spatial position that output spatial position o
// reads at kernel position k, or -1 where it reads padding (or, transposed, nothing).
std::vector<int64_t> SourceTable(const ConvGeometry& g) {
  int64_t d = static_cast<int64_t>(g.kernel.size());
  int64_t out_size = Product(g.out_spatial);
  std::vector<int64_t> source(Product(g.kernel) * out_size, -1);
  int64_t k_flat = 0;
  ForEachIndex(g.kernel, [&](absl::Span<const int64_t> k) {
    int64_t o_flat = 0;
    ForEachIndex(g.out_spatial, [&](absl::Span<const int64_t> o) {
      int64_t in_flat = 0;
      bool valid = true;
      for (int64_t i = 0; i < d && valid; ++i) {
        int64_t pos;
        if (!g.transposed) {
          pos = o[i] * g.stride[i] - g.padding[i] + k[i] * g.dilation[i];
        } else {
          // Output position o receives input position p when p*stride - pad + k*dil == o.
          int64_t num = o[i] + g.padding[i] - k[i] * g.dilation[i];
          valid = num >= 0 && num % g.stride[i] == 0;
          pos = valid ? num / g.stride[i] : -1;
        }
        valid = valid && pos >= 0 && pos < g.in_spatial[i];
        in_flat = in_flat * g.in_spatial[i] + pos;
      }
      source[k_flat * out_size + o_flat] = valid ? in_flat : -1;
      ++o_flat;
    });
    ++k_flat;
  });
  return source;
}

inline double MulAdd(double acc, double x, double w) { return acc + x * w; }
inline int64_t MulAdd(int64_t acc, int64_t x, int64_t w) { return WrapAdd(acc, WrapMul(x, w)); }

// out[n, oc, o] = bias[oc] + sum over ic, k of x[n, g*cin_g + ic, source(k, o)] * w[...], where
// w is [c_out, cin_g, k...] (or [c_in, cout_g, k...] transposed).
template <typename T>
std::vector<T> ConvLoops(const HostTensor& x, const HostTensor& w, const HostTensor* bias,
                         const ConvGeometry& geo, int64_t c_out, int64_t groups) {
  std::vector<T> xs = Elements<T>(x), ws = Elements<T>(w);
  std::vector<T> bs = bias != nullptr ? Elements<T>(*bias) : std::vector<T>(c_out, T(0));
  int64_t batch = x.shape()[0], c_in = x.shape()[1];
  int64_t cin_g = c_in / groups, cout_g = c_out / groups;
  int64_t in_size = Product(geo.in_spatial), out_size = Product(geo.out_spatial);
  int64_t k_size = Product(geo.kernel);
  std::vector<int64_t> source = SourceTable(geo);
  std::vector<T> out(batch * c_out * out_size);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t oc = 0; oc < c_out; ++oc) {
      int64_t g = oc / cout_g;
      T* acc = out.data() + (n * c_out + oc) * out_size;
      for (int64_t o = 0; o < out_size; ++o) acc[o] = bs[oc];
      for (int64_t ic = 0; ic < cin_g; ++ic) {
        const T* xc = xs.data() + (n * c_in + g * cin_g + ic) * in_size;
        // The weight's first two indices: (oc, ic), or (g*cin_g + ic, oc % cout_g) transposed.
        const T* wk = ws.data() + (geo.transposed ? ((g * cin_g + ic) * cout_g + oc % cout_g) * k_size
                                                  : (oc * cin_g + ic) * k_size);
        for (int64_t k = 0; k < k_size; ++k) {
          const int64_t* src = source.data() + k * out_size;
          T wv = wk[k];
          for (int64_t o = 0; o < out_size; ++o) {
            if (src[o] >= 0) acc[o] = MulAdd(acc[o], xc[src[o]], wv);
          }
        }
      }
    }
  }
  return out;
}

absl::StatusOr<std::vector<HostTensor>> Conv(const KernelContext& ctx,
                                             std::optional<bool> transposed_variant) {
  HostTensor x = ctx.inputs[0];
  const HostTensor& w = ctx.inputs[1];
  const HostTensor* bias = ctx.inputs.size() > 2 ? &ctx.inputs[2] : nullptr;
  int64_t d = w.rank() - 2;
  bool unbatched = x.rank() == d + 1;
  if (unbatched) x = Unsqueeze(x, 0);
  ConvGeometry geo;
  geo.transposed = transposed_variant.has_value() ? *transposed_variant
                                                  : *GetBool(ctx.attrs, "transposed");
  geo.stride = ExpandedInts(ctx.attrs, "stride", d);
  geo.padding = ExpandedInts(ctx.attrs, "padding", d);
  geo.dilation = ExpandedInts(ctx.attrs, "dilation", d);
  int64_t groups = *GetInt(ctx.attrs, "groups");

  std::vector<int64_t> out_shape = ctx.output_shapes[0];
  if (unbatched) out_shape.insert(out_shape.begin(), 1);
  int64_t c_out = out_shape[1];
  if (w.shape()[0] % groups != 0) {
    return absl::InvalidArgumentError(absl::StrCat("weight dimension 0 (", w.shape()[0],
                                                   ") is not divisible by groups = ", groups));
  }
  // Channels per group of the input.
  int64_t cin_g = geo.transposed ? w.shape()[0] / groups : w.shape()[1];
  if (absl::Status s = CheckSize(x.shape()[1], cin_g * groups, "input channels and the "
                                                               "weight's input channels");
      !s.ok()) {
    return s;
  }
  geo.in_spatial.assign(x.shape().begin() + 2, x.shape().end());
  geo.out_spatial.assign(out_shape.begin() + 2, out_shape.end());
  geo.kernel.assign(w.shape().begin() + 2, w.shape().end());

  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], out_shape);
  if (IsFloating(out.dtype())) {
    std::vector<double> v = ConvLoops<double>(x, w, bias, geo, c_out, groups);
    for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) out.StoreDouble(i, v[i]);
  } else {
    std::vector<int64_t> v = ConvLoops<int64_t>(x, w, bias, geo, c_out, groups);
    for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) out.StoreInt(i, v[i]);
  }
  if (unbatched) {
    std::vector<int64_t> strides(out.strides().begin() + 1, out.strides().end());
    out = out.View(ctx.output_shapes[0], strides, 0);
  }
  return std::vector<HostTensor>{out};
}

// gw[oc, ic, k] = sum over n, o of x[n, g*cin_g + ic, source(k, o)] * gy[n, oc, o], with g
// the group of output channel oc.
absl::StatusOr<std::vector<HostTensor>> ConvWeightGrad(const KernelContext& ctx) {
  const HostTensor& x = ctx.inputs[0];
  const HostTensor& gy = ctx.inputs[1];
  const std::vector<int64_t>& out_shape = ctx.output_shapes[0];
  int64_t d = x.rank() - 2;
  ConvGeometry geo;
  geo.stride = ExpandedInts(ctx.attrs, "stride", d);
  geo.padding = ExpandedInts(ctx.attrs, "padding", d);
  geo.dilation = ExpandedInts(ctx.attrs, "dilation", d);
  int64_t groups = *GetInt(ctx.attrs, "groups");
  int64_t batch = x.shape()[0], c_in = x.shape()[1], c_out = gy.shape()[1];
  if (absl::Status s = CheckSize(out_shape[1] * groups, c_in, "input channels"); !s.ok()) {
    return s;
  }
  geo.in_spatial.assign(x.shape().begin() + 2, x.shape().end());
  geo.out_spatial.assign(gy.shape().begin() + 2, gy.shape().end());
  geo.kernel.assign(out_shape.begin() + 2, out_shape.end());
  std::vector<double> xs = x.ToDoubles(), gs = gy.ToDoubles();
  int64_t cin_g = c_in / groups, cout_g = c_out / groups;
  int64_t in_size = Product(geo.in_spatial), out_size = Product(geo.out_spatial);
  int64_t k_size = Product(geo.kernel);
  std::vector<int64_t> source = SourceTable(geo);
  std::vector<double> gw(c_out * cin_g * k_size, 0.0);
  for (int64_t oc = 0; oc < c_out; ++oc) {
    int64_t g = oc / cout_g;
    for (int64_t ic = 0; ic < cin_g; ++ic) {
      for (int64_t k = 0; k < k_size; ++k) {
        const int64_t* src = source.data() + k * out_size;
        double acc = 0;
        for (int64_t n = 0; n < batch; ++n) {
          const double* xc = xs.data() + (n * c_in + g * cin_g + ic) * in_size;
          const double* gc = gs.data() + (n * c_out + oc) * out_size;
          for (int64_t o = 0; o < out_size; ++o) {
            if (src[o] >= 0) acc += xc[src[o]] * gc[o];
          }
        }
        gw[(oc * cin_g + ic) * k_size + k] = acc;
      }
    }
  }
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], out_shape);
  for (int64_t i = 0; i < static_cast<int64_t>(gw.size()); ++i) out.StoreDouble(i, gw[i]);
  return std::vector<HostTensor>{out};
}

}  // namespace

void RegisterConvKernels(ReferenceKernels& k) {
  k.Register("aten.convolution", [](const KernelContext& ctx) { return Conv(ctx, std::nullopt); });
  k.Register("aten.convolution_backward_weight", ConvWeightGrad);
  for (int d = 1; d <= 3; ++d) {
    k.Register(absl::StrCat("aten.conv", d, "d"),
               [](const KernelContext& ctx) { return Conv(ctx, false); });
    k.Register(absl::StrCat("aten.conv_transpose", d, "d"),
               [](const KernelContext& ctx) { return Conv(ctx, true); });
  }
}

}  // namespace coil::nn_kernels
