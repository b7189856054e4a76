// nn::GELU, nn::ReLU, nn::SiLU: elementwise activations as modules (torch.nn.GELU, ...), so
// that model code can hold them as members. Each is also a free function (coil::gelu, ...).
#ifndef COIL_CAPTURE_NN_ACTIVATION_H_
#define COIL_CAPTURE_NN_ACTIVATION_H_

#include <string>

#include "capture/nn/module.h"
#include "capture/tensor.h"

namespace coil::nn {

// GELU; `approximate` is "none" (erf) or "tanh".
class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  NamedTensorList NamedTensors(const std::string& prefix = "") override { return {}; }

  std::string approximate;
};

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  NamedTensorList NamedTensors(const std::string& prefix = "") override { return {}; }
};

// x * sigmoid(x).
class SiLU : public Module {
 public:
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  NamedTensorList NamedTensors(const std::string& prefix = "") override { return {}; }
};

}  // namespace coil::nn

#endif  // COIL_CAPTURE_NN_ACTIVATION_H_
