"""torch 1.13's losses for training_test: a small CNN (conv2d, batch_norm in training mode,
relu, max_pool2d, linear, cross entropy) trained with SGD (momentum, weight decay), and the
same CNN with dropout before the linear layer trained with AdamW.

Writes the initial weights, the data, the loss of each step and the running statistics and
parameters after the last step as text lines `name dim... : value...` (run by Bazel with
Debian's /usr/bin/python3). The dropout mask is coil's: prims.philox_uniform(seed, offset)
< 1 - p (docs/prims.md), computed here from Philox4x32-10's definition.
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
M32 = 0xFFFFFFFF


def philox_uniform(seed, counter):
    """Philox4x32-10 (key = seed, counter words = (counter, counter >> 32, 0, 0)): the first
    output word u as (u >> 8) * 2^-24."""
    c = [counter & M32, (counter >> 32) & M32, 0, 0]
    k = [seed & M32, (seed >> 32) & M32]
    for r in range(10):
        if r > 0:
            k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & M32, (p0 >> 32) ^ c[3] ^ k[1], p0 & M32]
    return (c[0] >> 8) * 2.0 ** -24


def train(params, opt, dropout=None):
    losses = []
    for step in range(steps):
        opt.zero_grad()
        h = F.max_pool2d(torch.relu(bn(conv(x))), 2).flatten(1)
        if dropout is not None:
            mask, p = dropout
            h = h * mask * (1 / (1 - p))
        loss = F.cross_entropy(fc(h), labels)
        loss.backward()
        losses.append(loss.item())
        opt.step()
    return losses


init = [p.detach().clone() for _, p in named]
params = [p for _, p in named]
losses = train(params, torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-3))
put("losses", torch.tensor(losses, dtype=torch.float64))
put("running_mean", bn.running_mean)
put("running_var", bn.running_var)
for name, p in named:
    put("final_" + name, p)

# Dropout (p = 0.25, seed 2024, offset 0) on the flattened [8, 36] features, AdamW, from the
# same initial weights and fresh running statistics.
with torch.no_grad():
    for p, p0 in zip(params, init):
        p.copy_(p0)
bn.reset_running_stats()
u = torch.tensor([philox_uniform(2024, i) for i in range(8 * 36)], dtype=torch.float32)
mask = (u < 0.75).float().reshape(8, 36)
losses = train(params, torch.optim.AdamW(params, lr=0.01, weight_decay=0.05), (mask, 0.25))
put("dropout_adamw_losses", torch.tensor(losses, dtype=torch.float64))
put("dropout_kept", mask.sum())
for name, p in named:
    put("dropout_adamw_final_" + name, p)
with open(sys.argv[1], "w") as f:
    f.write("\n".join(lines) + "\n")
