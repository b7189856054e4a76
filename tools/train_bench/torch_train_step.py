"""The torch side of train_bench: times torch 1.13 eager training steps of the GPT-style decoder
(token embedding, a pre-LN causal decoder block, a linear LM head; label-smoothed cross
entropy; torch.optim.AdamW) at the sizes given, and prints the median and minimum step time
in milliseconds as `torch_step_ms MEDIAN MIN` (run with Debian's /usr/bin/python3).

Usage: torch_train_step.py V E H L B THREADS WARMUP REPS
"""
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from capture.examples.torch_gpt import GptDecoder  # noqa: E402

V, E, H, L, B, THREADS, WARMUP, REPS = (int(a) for a in sys.argv[1:9])
torch.set_num_threads(THREADS)
torch.manual_seed(0)


model = GptDecoder(V, E, H)
tokens = torch.randint(0, V, (B, L))
targets = torch.randint(0, V, (B * L,))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)


def step():
    opt.zero_grad()
    loss = F.cross_entropy(model(tokens).reshape(-1, V), targets, label_smoothing=0.1)
    loss.backward()
    opt.step()
    return loss.item()


for _ in range(WARMUP):
    step()
times = []
for _ in range(REPS):
    t0 = time.perf_counter()
    step()
    times.append((time.perf_counter() - t0) * 1e3)
print("torch_step_ms %.4f %.4f" % (statistics.median(times), min(times)))
