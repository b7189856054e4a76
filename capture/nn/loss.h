// Losses (torch.nn.functional's): cross entropy with class indices and label smoothing, and
// the mean squared error, written with coil's ops so they trace into compiled training steps
// and differentiate through autograd/'s rules.
//
//   Tensor loss = nn::cross_entropy(logits, targets, /*label_smoothing=*/0.1);  // [N, C], [N]
//   Tensor l2 = nn::mse_loss(prediction, target);
#ifndef COIL_CAPTURE_NN_LOSS_H_
#define COIL_CAPTURE_NN_LOSS_H_

#include "capture/tensor.h"

namespace coil::nn {

// F.cross_entropy(logits, targets, label_smoothing=ε) with reduction 'mean': logits [N, C]
// (floating), targets [N] int64 class indices in [0, C). Per row:
// (1 - ε) * -log_softmax[target] + ε * mean over classes of -log_softmax.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, double label_smoothing = 0.0);

// F.mse_loss(input, target) with reduction 'mean' (shapes broadcast).
Tensor mse_loss(const Tensor& input, const Tensor& target);

}  // namespace coil::nn

#endif  // COIL_CAPTURE_NN_LOSS_H_
