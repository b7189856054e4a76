"""torch 1.13's losses for training_test: a small CNN (conv2d, batch_norm in training mode,
relu, max_pool2d, linear, cross entropy) trained with SGD (momentum, weight decay).

Writes the initial weights, the data, the loss of each step and the running statistics and
parameters after the last step as text lines `name dim... : value...` (run by Bazel with
Debian's /usr/bin/python3).
"""
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_num_threads(1)
steps = 6
x = torch.randn(8, 2, 6, 6)
labels = torch.randint(0, 3, (8,))
conv = torch.nn.Conv2d(2, 4, 3, padding=1)
bn = torch.nn.BatchNorm2d(4)
fc = torch.nn.Linear(36, 3)
with torch.no_grad():  # a non-trivial affine start for batch_norm
    bn.weight.uniform_(0.5, 1.5)
    bn.bias.uniform_(-0.2, 0.2)
lines = []


def put(name, t):
    t = t.detach().double()
    dims = " ".join(str(d) for d in t.shape)
    vals = " ".join(repr(float(v)) for v in t.reshape(-1))
    lines.append("%s %s : %s" % (name, dims, vals))


put("x", x)
put("onehot", F.one_hot(labels, 3).float())
named = [("conv_w", conv.weight), ("conv_b", conv.bias), ("bn_w", bn.weight),
         ("bn_b", bn.bias), ("fc_w", fc.weight), ("fc_b", fc.bias)]
for name, p in named:
    put(name, p)
params = [p for _, p in named]
opt = torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-3)
losses = []
for step in range(steps):
    opt.zero_grad()
    h = F.max_pool2d(torch.relu(bn(conv(x))), 2)
    loss = F.cross_entropy(fc(h.flatten(1)), labels)
    loss.backward()
    losses.append(loss.item())
    opt.step()
put("losses", torch.tensor(losses, dtype=torch.float64))
put("running_mean", bn.running_mean)
put("running_var", bn.running_var)
for name, p in named:
    put("final_" + name, p)
with open(sys.argv[1], "w") as f:
    f.write("\n".join(lines) + "\n")
