// nn::LayerNorm and nn::BatchNorm2d.
#include "capture/nn/norm.h"

namespace coil::nn {

LayerNorm::LayerNorm(std::vector<int64_t> shape, double eps_, bool elementwise_affine)
    : normalized_shape(std::move(shape)), eps(eps_) {
  if (elementwise_affine) {
    weight = Tensor::Ones(normalized_shape);
    bias = Tensor::Zeros(normalized_shape);
  }
}

Tensor LayerNorm::forward(const Tensor& x) const {
  std::vector<SymInt> shape(normalized_shape.begin(), normalized_shape.end());
  return layer_norm(x, shape, Opt(weight), Opt(bias), eps);
}

NamedTensorList LayerNorm::NamedTensors(const std::string& prefix) {
  if (!weight.defined()) return {};
  return {{prefix + "weight", &weight}, {prefix + "bias", &bias}};
}

BatchNorm2d::BatchNorm2d(int64_t num_features, double eps_, bool affine) : eps(eps_) {
  if (affine) {
    weight = Tensor::Ones({num_features});
    bias = Tensor::Zeros({num_features});
  }
  running_mean = Tensor::Zeros({num_features});
  running_var = Tensor::Ones({num_features});
}

Tensor BatchNorm2d::forward(const Tensor& x) const {
  return batch_norm(x, running_mean, running_var, Opt(weight), Opt(bias), training, /*momentum=*/0.1,
                    eps);
}

NamedTensorList BatchNorm2d::NamedTensors(const std::string& prefix) {
  NamedTensorList out;
  if (weight.defined()) {
    out.push_back({prefix + "weight", &weight});
    out.push_back({prefix + "bias", &bias});
  }
  out.push_back({prefix + "running_mean", &running_mean});
  out.push_back({prefix + "running_var", &running_var});
  return out;
}

}  // namespace coil::nn
