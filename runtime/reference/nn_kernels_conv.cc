// Reference kernels of convolution: aten.convolution, aten.conv{1,2,3}d and
// aten.conv_transpose{1,2,3}d. One direct loop per output element, accumulating in double
// (int64 for integer tensors).
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/reference/nn_kernels_internal.h"

namespace coil::nn_kernels {
namespace {

absl::StatusOr<std::vector<HostTensor>> Conv(const KernelContext& ctx,
                                             std::optional<bool> transposed_variant) {
  HostTensor x = ctx.inputs[0];
  const HostTensor& w = ctx.inputs[1];
  const HostTensor* bias = ctx.inputs.size() > 2 ? &ctx.inputs[2] : nullptr;
  int64_t d = w.rank() - 2;
  bool unbatched = x.rank() == d + 1;
  if (unbatched) x = Unsqueeze(x, 0);
  bool transposed = transposed_variant.has_value() ? *transposed_variant
                                                   : *GetBool(ctx.attrs, "transposed");
  IntList stride = ExpandedInts(ctx.attrs, "stride", d);
  IntList padding = ExpandedInts(ctx.attrs, "padding", d);
  IntList dilation = ExpandedInts(ctx.attrs, "dilation", d);
  int64_t groups = *GetInt(ctx.attrs, "groups");

  std::vector<int64_t> out_shape = ctx.output_shapes[0];
  if (unbatched) out_shape.insert(out_shape.begin(), 1);
  int64_t c_out = out_shape[1];
  if (w.shape()[0] % groups != 0) {
    return absl::InvalidArgumentError(absl::StrCat("weight dimension 0 (", w.shape()[0],
                                                   ") is not divisible by groups = ", groups));
  }
  // Channels per group of the input and the output.
  int64_t cin_g = transposed ? w.shape()[0] / groups : w.shape()[1];
  int64_t cout_g = c_out / groups;
  if (absl::Status s = CheckSize(x.shape()[1], cin_g * groups, "input channels and the "
                                                               "weight's input channels");
      !s.ok()) {
    return s;
  }
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());

  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], out_shape);
  bool integral = !IsFloating(out.dtype());
  std::vector<int64_t> xi(d + 2), wi(d + 2);
  int64_t flat = 0;
  ForEachIndex(out_shape, [&](absl::Span<const int64_t> o) {
    int64_t oc = o[1], g = oc / cout_g;
    double facc = 0;
    int64_t iacc = 0;
    if (bias != nullptr) {
      if (integral) {
        iacc = bias->GetInt({oc});
      } else {
        facc = bias->GetDouble({oc});
      }
    }
    xi[0] = o[0];
    for (int64_t ic = 0; ic < cin_g; ++ic) {
      xi[1] = g * cin_g + ic;
      wi[0] = transposed ? g * cin_g + ic : oc;
      wi[1] = transposed ? oc % cout_g : ic;
      ForEachIndex(kernel, [&](absl::Span<const int64_t> k) {
        for (int64_t i = 0; i < d; ++i) {
          int64_t pos;
          if (!transposed) {
            pos = o[2 + i] * stride[i] - padding[i] + k[i] * dilation[i];
          } else {
            // Output position o receives input position p when p*stride - pad + k*dil == o.
            int64_t num = o[2 + i] + padding[i] - k[i] * dilation[i];
            if (num < 0 || num % stride[i] != 0) return;
            pos = num / stride[i];
          }
          if (pos < 0 || pos >= x.shape()[2 + i]) return;
          xi[2 + i] = pos;
          wi[2 + i] = k[i];
        }
        if (integral) {
          iacc = WrapAdd(iacc, WrapMul(x.GetInt(xi), w.GetInt(wi)));
        } else {
          facc += x.GetDouble(xi) * w.GetDouble(wi);
        }
      });
    }
    if (integral) {
      out.StoreInt(flat, iacc);
    } else {
      out.StoreDouble(flat, facc);
    }
    ++flat;
  });
  if (unbatched) {
    std::vector<int64_t> strides(out.strides().begin() + 1, out.strides().end());
    out = out.View(ctx.output_shapes[0], strides, 0);
  }
  return std::vector<HostTensor>{out};
}

}  // namespace

void RegisterConvKernels(ReferenceKernels& k) {
  k.Register("aten.convolution", [](const KernelContext& ctx) { return Conv(ctx, std::nullopt); });
  for (int d = 1; d <= 3; ++d) {
    k.Register(absl::StrCat("aten.conv", d, "d"),
               [](const KernelContext& ctx) { return Conv(ctx, false); });
    k.Register(absl::StrCat("aten.conv_transpose", d, "d"),
               [](const KernelContext& ctx) { return Conv(ctx, true); });
  }
}

}  // namespace coil::nn_kernels
