"""The torch side of `coil bench train`: times torch 1.13 eager training steps (forward,
backward, torch.optim.AdamW) of the GPT-style decoder (token embedding, a pre-LN causal
decoder block, a linear LM head; label-smoothed cross entropy) or torchvision's resnet18
structure on 32x32 images (training-mode batch_norm; cross entropy), and prints the median and
minimum step time in milliseconds and torch's version as `torch_step_ms MEDIAN MIN VERSION`
(Debian's /usr/bin/python3 here; the GPU machine's python3 has torch 2.11). With
COIL_TORCH_COMPILE=1 it then times the same steps with the model under `torch.compile`
(default mode; backward and AdamW as torch runs them) and prints `torch_compile_step_ms MEDIAN
MIN FIRST_STEP_S`, or `torch_compile_step_ms absent REASON` where torch has no torch.compile.

Usage: torch_train_step.py gpt THREADS WARMUP REPS V E H L B
       torch_train_step.py resnet18 THREADS WARMUP REPS WIDTH BATCH
"""
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, ROOT)

MODEL = sys.argv[1]
THREADS, WARMUP, REPS = (int(a) for a in sys.argv[2:5])
SIZES = [int(a) for a in sys.argv[5:]]
torch.set_num_threads(THREADS)
torch.manual_seed(0)

if MODEL == "gpt":
    from capture.examples.torch_gpt import GptDecoder  # noqa: E402
    V, E, H, L, B = SIZES
    model = GptDecoder(V, E, H)
    net = model
    inputs = torch.randint(0, V, (B, L))
    targets = torch.randint(0, V, (B * L,))

    def loss_fn():
        return F.cross_entropy(net(inputs).reshape(-1, V), targets, label_smoothing=0.1)
elif MODEL == "resnet18":
    from capture.examples.torch_resnet18 import ResNet18  # noqa: E402
    WIDTH, B = SIZES
    model = ResNet18(10, WIDTH)
    model.train()
    net = model
    inputs = torch.randn(B, 3, 32, 32)
    targets = torch.randint(0, 10, (B,))

    def loss_fn():
        return F.cross_entropy(net(inputs), targets)
else:
    sys.exit("torch_train_step.py: unknown model %s (gpt, resnet18)" % MODEL)

opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)


def step():
    opt.zero_grad()
    loss = loss_fn()
    loss.backward()
    opt.step()
    return loss.item()


def timed(reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


for _ in range(WARMUP):
    step()
times = timed(REPS)
print("torch_step_ms %.4f %.4f %s" % (statistics.median(times), min(times), torch.__version__),
      flush=True)
if os.environ.get("COIL_TORCH_COMPILE") == "1":
    if not hasattr(torch, "compile"):
        print("torch_compile_step_ms absent no-torch.compile-in-torch-%s" % torch.__version__)
    else:
        torch._dynamo.reset()
        net = torch.compile(model)
        first = timed(1)[0] / 1e3  # Inductor's compile of the forward and backward
        for _ in range(WARMUP):
            step()
        times = timed(REPS)
        print("torch_compile_step_ms %.4f %.4f %.2f" % (statistics.median(times), min(times),
                                                       first))
