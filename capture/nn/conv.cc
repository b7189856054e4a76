// nn::Conv2d.
#include "capture/nn/conv.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace coil::nn {

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size,
               uint64_t seed, Conv2dOptions opts)
    : options(std::move(opts)) {
  if (kernel_size.size() == 1) kernel_size.push_back(kernel_size[0]);
  if (kernel_size.size() != 2 || options.groups < 1 || in_channels % options.groups != 0 ||
      out_channels % options.groups != 0) {
    throw Error(absl::InvalidArgumentError(absl::StrCat(
        "nn::Conv2d: bad configuration (in_channels ", in_channels, ", out_channels ",
        out_channels, ", groups ", options.groups, ", ", kernel_size.size(),
        " kernel dimensions)")));
  }
  int64_t fan_in = in_channels / options.groups * kernel_size[0] * kernel_size[1];
  double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  weight = UniformInit({out_channels, in_channels / options.groups, kernel_size[0],
                        kernel_size[1]},
                       bound, SubSeed(seed, 0));
  if (options.bias) bias = UniformInit({out_channels}, bound, SubSeed(seed, 1));
}

Tensor Conv2d::forward(const Tensor& x) const {
  return conv2d(x, weight, Opt(bias), options.stride, options.padding, options.dilation,
                options.groups);
}

NamedTensorList Conv2d::NamedTensors(const std::string& prefix) {
  NamedTensorList out = {{prefix + "weight", &weight}};
  if (bias.defined()) out.push_back({prefix + "bias", &bias});
  return out;
}

}  // namespace coil::nn
