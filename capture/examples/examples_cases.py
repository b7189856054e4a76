"""Torch twins of the coil examples (capture/examples/gpt_block.h, resnet.h) with their
parameters (torch's default init under a fixed seed; norm statistics randomized), inputs
for several batch sizes and torch's outputs, for examples_test.cc.

Written: gpt.<state_dict key>, gpt/x_b<B>, gpt/expected_b<B>; the same for resnet.
"""
import torch
from torch import nn

from capture.examples.torch_gpt import GptBlock
from capture.nn.torch_values import Writer

torch.manual_seed(0)
w = Writer()
BATCHES = (2, 3, 5)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


class SmallResNet(nn.Module):
    """conv-bn-relu stem, BasicBlocks (8 -> 8, 8 -> 16 stride 2), global average pool, fc."""

    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.layer1 = BasicBlock(8, 8, 1)
        self.layer2 = BasicBlock(8, 16, 2)
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        return self.fc(x.mean(dim=(2, 3)))


def randomize_norms(m):
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, (nn.LayerNorm, nn.BatchNorm2d)):
                mod.weight.copy_(1 + 0.2 * torch.randn(mod.weight.shape))
                mod.bias.copy_(0.2 * torch.randn(mod.bias.shape))
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.copy_(0.2 * torch.randn(mod.running_mean.shape))
                mod.running_var.copy_(0.5 + torch.rand(mod.running_var.shape))
            if isinstance(mod, nn.MultiheadAttention):
                mod.in_proj_bias.copy_(0.1 * torch.randn(mod.in_proj_bias.shape))
                mod.out_proj.bias.copy_(0.1 * torch.randn(mod.out_proj.bias.shape))


def export(name, m, input_shape):
    randomize_norms(m)
    m.eval()
    w.module(name, m)
    for b in BATCHES:
        x = torch.randn(b, *input_shape)
        with torch.no_grad():
            y = m(x)
        w.add("%s/x_b%d" % (name, b), x)
        w.add("%s/expected_b%d" % (name, b), y)


export("gpt", GptBlock(16, 2), (6, 16))
export("resnet", SmallResNet(5), (3, 8, 8))
w.main()
