// A small ResNet written with coil's eager API (an example model, compiled by
// examples_test.cc): a conv-bn-relu stem, two BasicBlocks (the second strided, with a 1x1
// conv shortcut), global average pooling and a Linear classifier.
//
//   examples::SmallResNet net(/*num_classes=*/10, /*seed=*/0);
//   Tensor logits = net(images);                // [N, 3, H, W] -> [N, 10]
//
// Parameter names follow torchvision's ResNet (conv1, bn1, layer1.conv1, layer2.downsample.0,
// fc, ...), as the torch twin in examples_cases.py does.
#ifndef COIL_CAPTURE_EXAMPLES_RESNET_H_
#define COIL_CAPTURE_EXAMPLES_RESNET_H_

#include <cstdint>
#include <optional>

#include "capture/nn/nn.h"
#include "capture/tensor.h"

namespace coil::examples {

// relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)); the shortcut is a 1x1 conv + bn when
// the stride or channel count changes, else the identity.
class BasicBlock : public nn::Module {
 public:
  BasicBlock(int64_t in_channels, int64_t out_channels, int64_t stride, uint64_t seed = 0);

  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  nn::NamedTensorList NamedTensors(const std::string& prefix = "") override;

  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  nn::Conv2d conv2;
  nn::BatchNorm2d bn2;
  // downsample.0 and downsample.1 in torchvision's naming.
  std::optional<nn::Conv2d> downsample_conv;
  std::optional<nn::BatchNorm2d> downsample_bn;
};

class SmallResNet : public nn::Module {
 public:
  explicit SmallResNet(int64_t num_classes, uint64_t seed = 0);

  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  nn::NamedTensorList NamedTensors(const std::string& prefix = "") override;

  nn::Conv2d conv1;  // 3 -> 8, 3x3
  nn::BatchNorm2d bn1;
  nn::ReLU relu;
  BasicBlock layer1;  // 8 -> 8
  BasicBlock layer2;  // 8 -> 16, stride 2
  nn::Linear fc;      // 16 -> num_classes
};

}  // namespace coil::examples

#endif  // COIL_CAPTURE_EXAMPLES_RESNET_H_
