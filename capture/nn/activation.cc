// nn::GELU, nn::ReLU, nn::SiLU.
#include "capture/nn/activation.h"

#include "absl/strings/str_cat.h"

namespace coil::nn {

GELU::GELU(std::string approx) : approximate(std::move(approx)) {
  if (approximate != "none" && approximate != "tanh") {
    throw Error(absl::InvalidArgumentError(absl::StrCat(
        "nn::GELU: approximate must be \"none\" or \"tanh\", got \"", approximate, "\"")));
  }
}

Tensor GELU::forward(const Tensor& x) const { return gelu(x, approximate); }

Tensor ReLU::forward(const Tensor& x) const { return relu(x); }

Tensor SiLU::forward(const Tensor& x) const { return silu(x); }

}  // namespace coil::nn
