// nn::Linear: y = x @ weight^T + bias over the last dimension (torch.nn.Linear).
//
//   nn::Linear fc(/*in_features=*/64, /*out_features=*/10, /*seed=*/0);
//   Tensor y = fc(x);  // x [..., 64] -> y [..., 10]
#ifndef COIL_CAPTURE_NN_LINEAR_H_
#define COIL_CAPTURE_NN_LINEAR_H_

#include <cstdint>

#include "capture/nn/module.h"
#include "capture/tensor.h"

namespace coil::nn {

class Linear : public Module {
 public:
  // torch's default init: weight and bias uniform in +-1/sqrt(in_features) (weight by
  // kaiming_uniform(a = sqrt(5))), deterministic in `seed`.
  Linear(int64_t in_features, int64_t out_features, uint64_t seed = 0, bool bias = true);

  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  NamedTensorList NamedTensors(const std::string& prefix = "") override;

  Tensor weight;  // [out_features, in_features]
  Tensor bias;    // [out_features]; undefined without bias
};

}  // namespace coil::nn

#endif  // COIL_CAPTURE_NN_LINEAR_H_
