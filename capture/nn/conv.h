// nn::Conv2d: 2-D convolution over NCHW input (torch.nn.Conv2d, zero padding).
//
//   nn::Conv2d conv(/*in=*/3, /*out=*/16, /*kernel=*/{3, 3}, /*seed=*/0,
//                   {.stride = {2, 2}, .padding = {1, 1}});
//   Tensor y = conv(x);  // [N, 3, H, W] -> [N, 16, H/2, W/2]
#ifndef COIL_CAPTURE_NN_CONV_H_
#define COIL_CAPTURE_NN_CONV_H_

#include <cstdint>
#include <vector>

#include "capture/nn/module.h"
#include "capture/tensor.h"

namespace coil::nn {

struct Conv2dOptions {
  std::vector<int64_t> stride = {1, 1};
  std::vector<int64_t> padding = {0, 0};
  std::vector<int64_t> dilation = {1, 1};
  int64_t groups = 1;
  bool bias = true;
};

class Conv2d : public Module {
 public:
  // torch's default init: weight and bias uniform in +-1/sqrt(fan_in), fan_in =
  // in_channels / groups * kh * kw; deterministic in `seed`.
  Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size,
         uint64_t seed = 0, Conv2dOptions options = {});

  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  NamedTensorList NamedTensors(const std::string& prefix = "") override;

  Tensor weight;  // [out_channels, in_channels / groups, kh, kw]
  Tensor bias;    // [out_channels]; undefined without bias
  Conv2dOptions options;
};

}  // namespace coil::nn

#endif  // COIL_CAPTURE_NN_CONV_H_
