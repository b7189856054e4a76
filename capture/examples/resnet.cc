// examples::BasicBlock and examples::SmallResNet.
#include "capture/examples/resnet.h"

namespace coil::examples {
namespace {

nn::Conv2dOptions Conv(int64_t stride, int64_t padding) {
  return {.stride = {stride, stride}, .padding = {padding, padding}, .bias = false};
}

}  // namespace

BasicBlock::BasicBlock(int64_t cin, int64_t cout, int64_t stride, uint64_t seed)
    : conv1(cin, cout, {3, 3}, nn::SubSeed(seed, 0), Conv(stride, 1)),
      bn1(cout),
      conv2(cout, cout, {3, 3}, nn::SubSeed(seed, 1), Conv(1, 1)),
      bn2(cout) {
  if (stride != 1 || cin != cout) {
    downsample_conv.emplace(cin, cout, std::vector<int64_t>{1, 1}, nn::SubSeed(seed, 2),
                            Conv(stride, 0));
    downsample_bn.emplace(cout);
  }
}

Tensor BasicBlock::forward(const Tensor& x) const {
  Tensor out = relu(bn1(conv1(x)));
  out = bn2(conv2(out));
  Tensor identity = downsample_conv ? (*downsample_bn)((*downsample_conv)(x)) : x;
  return relu(out + identity);
}

nn::NamedTensorList BasicBlock::NamedTensors(const std::string& prefix) {
  nn::NamedTensorList out;
  nn::AppendChild(prefix, "conv1", conv1, out);
  nn::AppendChild(prefix, "bn1", bn1, out);
  nn::AppendChild(prefix, "conv2", conv2, out);
  nn::AppendChild(prefix, "bn2", bn2, out);
  if (downsample_conv) {
    nn::AppendChild(prefix, "downsample.0", *downsample_conv, out);
    nn::AppendChild(prefix, "downsample.1", *downsample_bn, out);
  }
  return out;
}

SmallResNet::SmallResNet(int64_t num_classes, uint64_t seed)
    : conv1(3, 8, {3, 3}, nn::SubSeed(seed, 0), Conv(1, 1)),
      bn1(8),
      layer1(8, 8, 1, nn::SubSeed(seed, 1)),
      layer2(8, 16, 2, nn::SubSeed(seed, 2)),
      fc(16, num_classes, nn::SubSeed(seed, 3)) {}

Tensor SmallResNet::forward(const Tensor& x) const {
  Tensor h = relu(bn1(conv1(x)));
  h = layer2(layer1(h));
  return fc(h.mean({2, 3}));  // global average pool
}

nn::NamedTensorList SmallResNet::NamedTensors(const std::string& prefix) {
  nn::NamedTensorList out;
  nn::AppendChild(prefix, "conv1", conv1, out);
  nn::AppendChild(prefix, "bn1", bn1, out);
  nn::AppendChild(prefix, "layer1", layer1, out);
  nn::AppendChild(prefix, "layer2", layer2, out);
  nn::AppendChild(prefix, "fc", fc, out);
  return out;
}

}  // namespace coil::examples
