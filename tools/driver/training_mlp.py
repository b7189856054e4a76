"""torch 1.13's losses for training_test: a 2-layer MLP classifier trained with SGD.

Writes the initial weights, the data and the loss of each step as text lines
`name dim... : value...` (run by Bazel with Debian's /usr/bin/python3).
"""
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(8, 4)
labels = torch.randint(0, 3, (8,))
w1, b1 = torch.randn(16, 4) * 0.5, torch.randn(16) * 0.1
w2, b2 = torch.randn(3, 16) * 0.5, torch.randn(3) * 0.1
lines = []


def put(name, t):
    t = t.detach().double()
    dims = " ".join(str(d) for d in t.shape)
    vals = " ".join(repr(float(v)) for v in t.reshape(-1))
    lines.append("%s %s : %s" % (name, dims, vals))


put("x", x)
put("onehot", F.one_hot(labels, 3).float())
for name, t in [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)]:
    put(name, t)
params = [t.clone().requires_grad_() for t in (w1, b1, w2, b2)]
opt = torch.optim.SGD(params, lr=0.5)
losses = []
for step in range(8):
    opt.zero_grad()
    z = F.linear(torch.relu(F.linear(x, params[0], params[1])), params[2], params[3])
    loss = F.cross_entropy(z, labels)
    loss.backward()
    losses.append(loss.item())
    opt.step()
put("losses", torch.tensor(losses, dtype=torch.float64))
with open(sys.argv[1], "w") as f:
    f.write("\n".join(lines) + "\n")
