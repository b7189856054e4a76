// nn::cross_entropy, nn::mse_loss.
#include "capture/nn/loss.h"

#include "absl/strings/str_cat.h"
#include "capture/error.h"

namespace coil::nn {

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, double label_smoothing) {
  if (logits.dim() != 2 || targets.dim() != 1) {
    throw Error(absl::InvalidArgumentError(
        absl::StrCat("cross_entropy: logits must be [N, C] and targets [N]; got ",
                     logits.TypeString(), " and ", targets.TypeString())));
  }
  if (label_smoothing < 0 || label_smoothing > 1) {
    throw Error(absl::InvalidArgumentError(
        absl::StrCat("cross_entropy: label_smoothing must be in [0, 1], got ", label_smoothing)));
  }
  const SymInt classes = logits.size(1);
  Tensor logp = logits.log_softmax(1);
  // The targets' one-hot rows select -log p[target] (one_hot checks the class range).
  Tensor onehot = one_hot(targets, classes.guard_int()).to_dtype(logits.dtype());
  Tensor nll = -(logp * onehot).sum({1});
  if (label_smoothing == 0) return nll.mean();
  Tensor smooth = -logp.mean({1});
  return (nll * (1 - label_smoothing) + smooth * label_smoothing).mean();
}

Tensor mse_loss(const Tensor& input, const Tensor& target) {
  Tensor d = input - target;
  return (d * d).mean();
}

}  // namespace coil::nn
