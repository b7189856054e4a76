// nn::LayerNorm and nn::BatchNorm2d.
#include "capture/nn/norm.h"

#include <source_location>
#include <utility>
#include <vector>

#include "capture/autograd.h"
#include "capture/dispatch.h"
#include "ir/attribute.h"

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
  if (!training) {
    return batch_norm(x, running_mean, running_var, Opt(weight), Opt(bias), false, momentum, eps);
  }
  // Training: aten.batch_norm's three outputs (y, new running_mean, new running_var); the new
  // statistics are copied into the buffers outside autograd, as torch updates them in place.
  // Inside coil::compile the copies are writes into the graph's inputs: the compiled forward
  // performs them (autograd/joint_graph.h).
  std::vector<Tensor> inputs = {x, running_mean, running_var};
  if (weight.defined()) {
    inputs.push_back(weight);
    inputs.push_back(bias);
  }
  AttrMap attrs = {{"training", Attribute(true)},
                   {"momentum", Attribute(momentum)},
                   {"eps", Attribute(eps)}};
  std::vector<Tensor> out = capture_internal::Dispatch("aten.batch_norm", std::move(inputs),
                                                       std::move(attrs),
                                                       std::source_location::current());
  {
    no_grad guard;
    running_mean.copy_(out[1]);
    running_var.copy_(out[2]);
  }
  return out[0];
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
