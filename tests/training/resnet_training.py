"""torch 1.13's side of resnet_training_test: torchvision's resnet18 structure
(capture/examples/torch_resnet18.py, at a base width; 64 is torchvision.models.resnet18
itself, checked below) in training mode (batch_norm
with batch statistics) on 32x32 images, trained with AdamW from torch's default init under a
fixed seed. Writes a coil.nn_test.NamedValues file: param.<state_dict key> (the initial
weights), x, targets, losses (each step's loss, f64), trained.<running statistic> (each
batch_norm's running_mean / running_var after the steps) and, with GRADS=1, grad.<name> (the first
step's gradients) and, with F64=1, losses_f64: the same training in float64, the reference
that tells how far float32 rounding alone moves the losses (Adam's first steps are
sign(gradient) steps of lr, so rounding differences in near-zero gradients flip whole steps,
and the model memorizes the batch: torch's own float32 losses drift up to 8.5e-3 relative
from its float64 ones over 50 steps at width 64).
Usage: resnet_training.py OUT WIDTH BATCH STEPS GRADS F64   (with Debian's /usr/bin/python3)
"""
import copy
import sys

import torch
import torch.nn.functional as F
from capture.examples.torch_resnet18 import ResNet18
from capture.nn.torch_values import Writer


def train(model, x, targets, steps, grads_writer):
    """AdamW steps; each step's loss (f64). Writes the first step's gradients if asked."""
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), targets)
        loss.backward()
        losses.append(loss.item())
        if step == 0 and grads_writer:
            for k, p in model.named_parameters():
                grads_writer.add("grad." + k, p.grad)
        opt.step()
    return torch.tensor(losses, dtype=torch.float64)


def main():
    out, width, batch, steps, grads, f64 = sys.argv[1], *map(int, sys.argv[2:7])
    torch.manual_seed(0)
    model = ResNet18(10, width)
    x = torch.randn(batch, 3, 32, 32)
    targets = torch.randint(0, 10, (batch,))
    if width == 64:  # the twin is torchvision's resnet18: same keys, shapes and function
        import torchvision
        tv = torchvision.models.resnet18(num_classes=10)
        tv.load_state_dict(model.state_dict())
        with torch.no_grad():
            assert torch.allclose(tv(x), model(x), rtol=1e-5, atol=1e-6)
    w = Writer()
    w.module("param", model)
    w.add("x", x)
    w.add("targets", targets)
    trained = copy.deepcopy(model)
    w.add("losses", train(trained, x, targets, steps, w if grads else None))
    # The running statistics after the steps (training-mode batch_norm updates them in place).
    for k, b in trained.named_buffers():
        if k.endswith("running_mean") or k.endswith("running_var"):
            w.add("trained." + k, b)
    if f64:
        w.add("losses_f64", train(model.double(), x.double(), targets, steps, None))
    with open(out, "wb") as f:
        f.write(w.proto.SerializeToString())


if __name__ == "__main__":
    main()
