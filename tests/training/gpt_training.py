"""torch 1.13's losses for gpt_training_test: a GPT-style decoder (token embedding, the
pre-LN causal decoder block of capture/examples/gpt_block.h, a linear LM head) trained with
AdamW from torch's default init under a fixed seed.

Run A: F.cross_entropy with label smoothing 0.1. Run B, from the same initial weights:
F.cross_entropy without smoothing + 0.5 * F.mse_loss(logits, soft_targets) (coil's step has
a graph break there). Writes the initial state_dict, the data and each step's loss as text
lines `name dim... : value...` (run by Bazel with Debian's /usr/bin/python3).
Usage: gpt_training.py OUT [STEPS]   (6 steps by default; the main job asks for 40)
"""
import copy
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from capture.examples.torch_gpt import GptDecoder  # noqa: E402

V, E, H, L, B = 16, 16, 2, 8, 2
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 6  # the main job trains longer
torch.manual_seed(0)


lines = []


def put(name, t):
    t = t.detach().double()
    dims = " ".join(str(d) for d in t.shape)
    vals = " ".join(repr(float(v)) for v in t.reshape(-1))
    lines.append("%s %s : %s" % (name, dims, vals))


model = GptDecoder(V, E, H)
tokens = torch.randint(0, V, (B, L))
targets = torch.randint(0, V, (B, L))
soft = torch.rand(B, L, V)
for k, v in model.state_dict().items():
    put("param." + k, v)
put("tokens", tokens)
put("targets", targets)
put("soft", soft)


def train(m, loss_fn, run):
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.01)
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = loss_fn(m(tokens))
        loss.backward()
        losses.append(loss.item())
        if step == 0:  # the first step's gradients, for a direct check
            for k, p in m.named_parameters():
                put("grad_%s.%s" % (run, k), p.grad)
        opt.step()
    put("losses_" + run, torch.tensor(losses, dtype=torch.float64))


train(copy.deepcopy(model), lambda z: F.cross_entropy(
    z.reshape(-1, V), targets.reshape(-1), label_smoothing=0.1), "a")
train(copy.deepcopy(model), lambda z: F.cross_entropy(
    z.reshape(-1, V), targets.reshape(-1)) + 0.5 * F.mse_loss(z, soft), "b")
with open(sys.argv[1], "w") as f:
    f.write("\n".join(lines) + "\n")
