"""The torch twin of capture/examples/resnet18.h: torchvision's resnet18 structure with a base
width knob (width 64 is torchvision.models.resnet18; tests/training/resnet_training.py checks
that), parameter names as torchvision's. Used by tests/training/resnet_training.py and
tools/bench/torch_train_step.py (`coil bench train`).
"""
import torch.nn.functional as F
from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class ResNet18(nn.Module):
    def __init__(self, num_classes, width):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        cin = width
        for l in range(4):
            cout = width << l
            setattr(self, "layer%d" % (l + 1), nn.Sequential(
                BasicBlock(cin, cout, 1 if l == 0 else 2), BasicBlock(cout, cout, 1)))
            cin = cout
        self.fc = nn.Linear(8 * width, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(x.mean(dim=(2, 3)))
