// examples::ResNet18.
#include "capture/examples/resnet18.h"

namespace coil::examples {

ResNet18::ResNet18(int64_t num_classes, int64_t width, uint64_t seed)
    : conv1(3, width, {7, 7}, nn::SubSeed(seed, 0),
            {.stride = {2, 2}, .padding = {3, 3}, .bias = false}),
      bn1(width),
      fc(8 * width, num_classes, nn::SubSeed(seed, 1)) {
  int64_t in = width;
  for (int64_t l = 0; l < 4; ++l) {
    int64_t out = width << l;
    std::vector<BasicBlock> blocks;
    blocks.emplace_back(in, out, l == 0 ? 1 : 2, nn::SubSeed(seed, 2 + 2 * l));
    blocks.emplace_back(out, out, 1, nn::SubSeed(seed, 3 + 2 * l));
    layers.push_back(std::move(blocks));
    in = out;
  }
}

Tensor ResNet18::forward(const Tensor& x) const {
  Tensor h = relu(bn1(conv1(x)));
  h = max_pool2d(h, {3, 3}, {2, 2}, {1, 1});
  for (const auto& layer : layers) {
    for (const BasicBlock& block : layer) h = block(h);
  }
  return fc(h.mean({2, 3}));  // adaptive average pooling to 1x1, flattened
}

nn::NamedTensorList ResNet18::NamedTensors(const std::string& prefix) {
  nn::NamedTensorList out;
  nn::AppendChild(prefix, "conv1", conv1, out);
  nn::AppendChild(prefix, "bn1", bn1, out);
  for (size_t l = 0; l < layers.size(); ++l) {
    for (size_t b = 0; b < layers[l].size(); ++b) {
      nn::AppendChild(prefix, "layer" + std::to_string(l + 1) + "." + std::to_string(b),
                      layers[l][b], out);
    }
  }
  nn::AppendChild(prefix, "fc", fc, out);
  return out;
}

void ResNet18::SetTraining(bool training) {
  bn1.training = training;
  for (auto& layer : layers) {
    for (BasicBlock& block : layer) {
      block.bn1.training = training;
      block.bn2.training = training;
      if (block.downsample_bn) block.downsample_bn->training = training;
    }
  }
}

}  // namespace coil::examples
