// nn::Dropout (dropout.h).
#include "capture/nn/dropout.h"

#include "absl/strings/str_cat.h"
#include "capture/error.h"

namespace coil::nn {

Dropout::Dropout(double p) : p(p) {
  if (!(p >= 0 && p <= 1)) {
    throw Error(absl::InvalidArgumentError(
        absl::StrCat("nn::Dropout: p must be in [0, 1], got ", p)));
  }
}

Tensor Dropout::forward(const Tensor& x) const { return dropout(x, p, training); }

}  // namespace coil::nn
