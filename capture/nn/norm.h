// nn::LayerNorm and nn::BatchNorm2d (eval mode: normalizes with the running statistics;
// training mode: with the batch's).
//
//   nn::LayerNorm ln({64});                  // over the last dimension
//   nn::BatchNorm2d bn(16);                  // [N, 16, H, W]
//   Tensor y = bn(ln(x));
#ifndef COIL_CAPTURE_NN_NORM_H_
#define COIL_CAPTURE_NN_NORM_H_

#include <cstdint>
#include <vector>

#include "capture/nn/module.h"
#include "capture/tensor.h"

namespace coil::nn {

// torch.nn.LayerNorm: normalizes over the trailing `normalized_shape` dimensions.
class LayerNorm : public Module {
 public:
  // weight ones, bias zeros (torch's init).
  explicit LayerNorm(std::vector<int64_t> normalized_shape, double eps = 1e-5,
                     bool elementwise_affine = true);

  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  NamedTensorList NamedTensors(const std::string& prefix = "") override;

  Tensor weight;  // normalized_shape; undefined without elementwise_affine
  Tensor bias;    // normalized_shape; undefined without elementwise_affine
  std::vector<int64_t> normalized_shape;
  double eps;
};

// torch.nn.BatchNorm2d. Eval mode (the default): (x - running_mean) / sqrt(running_var + eps)
// * weight + bias per channel of [N, C, H, W]. With `training` set: the same with the batch's
// mean and biased variance over N, H, W (torch's train()), so a training step's output and
// gradients are torch's, and the running statistics are updated in place as torch's:
// (1 - momentum) * running + momentum * batch statistic (the unbiased variance), eagerly and
// inside coil::compile (the compiled forward writes them back).
class BatchNorm2d : public Module {
 public:
  // weight ones, bias zeros, running_mean zeros, running_var ones (torch's init).
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, bool affine = true);

  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  NamedTensorList NamedTensors(const std::string& prefix = "") override;

  Tensor weight;  // [C]; undefined without affine
  Tensor bias;    // [C]; undefined without affine
  Tensor running_mean;  // [C]
  Tensor running_var;   // [C]
  double eps;
  double momentum = 0.1;
  bool training = false;
};

}  // namespace coil::nn

#endif  // COIL_CAPTURE_NN_NORM_H_
