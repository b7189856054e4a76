"""The torch side of train_bench: times torch 1.13 eager training steps of the GPT-style decoder
(token embedding, a pre-LN causal decoder block, a linear LM head; label-smoothed cross
entropy; torch.optim.AdamW) at the sizes given, and prints the median and minimum step time
in milliseconds as `torch_step_ms MEDIAN MIN` (run with Debian's /usr/bin/python3).

Usage: torch_train_step.py V E H L B THREADS WARMUP REPS
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

V, E, H, L, B, THREADS, WARMUP, REPS = (int(a) for a in sys.argv[1:9])
torch.set_num_threads(THREADS)
torch.manual_seed(0)


class GptBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(E)
        self.attn = nn.MultiheadAttention(E, H, batch_first=True)
        self.ln2 = nn.LayerNorm(E)
        self.fc = nn.Linear(E, 4 * E)
        self.act = nn.GELU(approximate="tanh")
        self.proj = nn.Linear(4 * E, E)

    def forward(self, x):
        n = x.shape[1]
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.proj(self.act(self.fc(self.ln2(x))))


model = nn.Sequential(nn.Embedding(V, E), GptBlock(), nn.Linear(E, V))
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
