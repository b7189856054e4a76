#!/usr/bin/env python3
"""nll_loss with and without class weights: coil's CPU backend against torch eager, same run.

usage: /usr/bin/python3 tools/bench/nllloss_bench.py COIL [WORK_DIR]

Exports torch's F.nll_loss(x, t[, weight]) at opset 13 (N=8, C=21, 128x128: a segmentation
loss), times `COIL run MODEL --backend cpu --repeat 200 --threads 1` (its median) and torch
eager on one thread (median of 200 calls after 3 warm-ups) on the same inputs' shapes, and
prints one ratio row per model (torch ms / coil ms: above 1 means coil is faster). Checks the
weighted loss was vectorized: its optimized LLVM IR (`coil compile --dump`) must hold a
16- or 8-wide masked gather of floats (else it prints "scalar"). Needs Debian's torch.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import torch

N, C, H, W = 8, 21, 128, 128


class Loss(torch.nn.Module):
    def __init__(self, weighted):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w = torch.rand(C, generator=g) + 0.5 if weighted else None

    def forward(self, x, t):
        return torch.nn.functional.nll_loss(x, t, weight=self.w)


def torch_ms(model, x, t):
    for _ in range(3):
        model(x, t)
    times = []
    for _ in range(200):
        t0 = time.perf_counter()
        model(x, t)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def coil_ms(coil, path):
    r = subprocess.run([coil, "run", path, "--backend", "cpu", "--repeat", "200", "--threads", "1"],
                       capture_output=True, text=True, check=True)
    out = r.stdout + r.stderr
    return float(re.search(r"([0-9.]+) ms median", out).group(1))


def vector_width(coil, path, work):
    dump = os.path.join(work, os.path.basename(path) + ".dump")
    subprocess.run([coil, "compile", path, "--dump", dump], capture_output=True, check=True,
                   env=dict(os.environ, COIL_CACHE="off"))
    with open(os.path.join(dump, "04_codegen_cpu.kernels.ll")) as f:
        widths = [int(w) for w in re.findall(r"llvm\.masked\.gather\.v(\d+)f32", f.read())]
    return max(widths) if widths else 0


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    coil = argv[1]
    work = argv[2] if len(argv) == 3 else tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(1)
    x = torch.randn(N, C, H, W).log_softmax(1)
    t = torch.randint(0, C, (N, H, W), generator=torch.Generator().manual_seed(1))
    print("model      coil ms  torch ms  torch/coil  vector width of the loss's gathers")
    for name, weighted in (("weighted", True), ("plain", False)):
        model = Loss(weighted)
        path = os.path.join(work, name + ".onnx")
        torch.onnx.export(model, (x, t), path, opset_version=13, input_names=["x", "t"])
        c, p = coil_ms(coil, path), torch_ms(model, x, t)
        width = vector_width(coil, path, work)
        print("%-9s %8.3f %9.3f %10.2fx  %s" % (name, c, p, p / c, width or "scalar"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
