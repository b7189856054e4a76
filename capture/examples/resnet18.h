// torchvision's resnet18 written with coil's eager API, with a base width knob (an example
// model, trained by tests/training/resnet_training_test.cc and `coil bench train`).
//
//   examples::ResNet18 net(/*num_classes=*/10, /*width=*/64);  // torchvision's resnet18
//   net.SetTraining(true);                   // batch_norm with the batch's statistics
//   Tensor logits = net(images);             // [N, 3, H, W] -> [N, 10]
//
// Structure and parameter names are torchvision.models.resnet18's: conv1 (7x7, stride 2,
// padding 3), bn1, relu, max_pool2d (3, stride 2, padding 1), layer1..layer4 of two
// BasicBlocks each (width, 2 width, 4 width, 8 width channels; the first block of layers 2-4
// strided with a 1x1 conv + bn shortcut), global average pooling and fc. `width` 64 is
// torchvision's; smaller widths keep the structure for cheap tests.
#ifndef COIL_CAPTURE_EXAMPLES_RESNET18_H_
#define COIL_CAPTURE_EXAMPLES_RESNET18_H_

#include <cstdint>
#include <string>
#include <vector>

#include "capture/examples/resnet.h"
#include "capture/nn/nn.h"
#include "capture/tensor.h"

namespace coil::examples {

class ResNet18 : public nn::Module {
 public:
  ResNet18(int64_t num_classes, int64_t width = 64, uint64_t seed = 0);

  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  nn::NamedTensorList NamedTensors(const std::string& prefix = "") override;

  // Sets every batch_norm's training flag (torch's train() / eval()).
  void SetTraining(bool training);

  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  // layers[l][b] is torchvision's layer{l+1}.{b}.
  std::vector<std::vector<BasicBlock>> layers;
  nn::Linear fc;
};

}  // namespace coil::examples

#endif  // COIL_CAPTURE_EXAMPLES_RESNET18_H_
