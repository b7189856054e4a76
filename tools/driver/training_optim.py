"""torch 1.13's optimizer numbers for training_test: SGD (momentum, weight decay, nesterov),
Adam and AdamW over 5 steps with fixed gradients.

Writes, as text lines `name dim... : value...`, the initial parameters, each step's gradients,
and the parameters after each step of each optimizer (run by Bazel with Debian's
/usr/bin/python3).
"""
import sys

import torch

torch.manual_seed(1)
shapes = [(4, 3), (3,), (2, 2, 2)]
steps = 5
init = [torch.randn(s) for s in shapes]
grads = [[torch.randn(s) for s in shapes] for _ in range(steps)]
lines = []


def put(name, t):
    t = t.detach().double()
    dims = " ".join(str(d) for d in t.shape)
    vals = " ".join(repr(float(v)) for v in t.reshape(-1))
    lines.append("%s %s : %s" % (name, dims, vals))


for i, p in enumerate(init):
    put("p%d" % i, p)
for k in range(steps):
    for i, g in enumerate(grads[k]):
        put("g%d_s%d" % (i, k), g)

configs = {
    "sgd_momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
    "sgd_nesterov": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.8, nesterov=True),
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1, weight_decay=0.1),
    "adam": lambda ps: torch.optim.Adam(ps, lr=0.01, weight_decay=0.02),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01, betas=(0.8, 0.99), weight_decay=0.1),
}
for name, make in configs.items():
    params = [p.clone().requires_grad_() for p in init]
    opt = make(params)
    for k in range(steps):
        for p, g in zip(params, grads[k]):
            p.grad = g.clone()
        opt.step()
        for i, p in enumerate(params):
            put("%s_p%d_s%d" % (name, i, k), p)
with open(sys.argv[1], "w") as f:
    f.write("\n".join(lines) + "\n")
