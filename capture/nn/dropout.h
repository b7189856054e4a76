// nn::Dropout: torch.nn.Dropout as a module. In training mode it zeroes each element with
// probability p and scales the rest by 1 / (1 - p), drawing from the default generator
// (capture/random.h: under coil::compile a fresh mask per call without recompiling, the
// backward drawing the same mask again); otherwise it is the identity.
#ifndef COIL_CAPTURE_NN_DROPOUT_H_
#define COIL_CAPTURE_NN_DROPOUT_H_

#include <string>

#include "capture/nn/module.h"
#include "capture/tensor.h"

namespace coil::nn {

class Dropout : public Module {
 public:
  // p in [0, 1]; anything else throws coil::Error.
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  NamedTensorList NamedTensors(const std::string& prefix = "") override { return {}; }

  double p;
  bool training = true;  // torch's default mode; eval(): false
};

}  // namespace coil::nn

#endif  // COIL_CAPTURE_NN_DROPOUT_H_
