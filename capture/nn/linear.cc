// nn::Linear.
#include "capture/nn/linear.h"

#include <cmath>

namespace coil::nn {

Linear::Linear(int64_t in_features, int64_t out_features, uint64_t seed, bool has_bias) {
  double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
  weight = UniformInit({out_features, in_features}, bound, SubSeed(seed, 0));
  if (has_bias) bias = UniformInit({out_features}, bound, SubSeed(seed, 1));
}

Tensor Linear::forward(const Tensor& x) const {
  return linear(x, weight, Opt(bias));
}

NamedTensorList Linear::NamedTensors(const std::string& prefix) {
  NamedTensorList out = {{prefix + "weight", &weight}};
  if (bias.defined()) out.push_back({prefix + "bias", &bias});
  return out;
}

}  // namespace coil::nn
