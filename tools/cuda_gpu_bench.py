"""GEMM-heavy models on the GPU machine: coil's CUDA backend against torch eager and
torch.compile (default mode) on the same GPU, inputs and weights, in one run.

Usage (from tools/cuda_gpu_job.sh, with the carried `coil` in the working folder):
  python3 cuda_gpu_bench.py COIL_BINARY OUT_DIR
For each model: exports it to ONNX (torch.onnx.export, dynamo=False), checks coil's output
against the float64 reference interpreter at a small batch (`coil run --check`), then times
  torch eager and torch.compile on device tensors (CUDA events over the runs),
  torch.compile with the host copies coil's API makes (host tensor in, host tensor out),
  coil (`coil run --backend cuda --repeat N`: host tensors in and out, like the row above).
TF32 is off everywhere (torch.backends.*.allow_tf32 = False; coil's default), so all four
compute f32 GEMMs in f32. Prints one line per model and writes OUT_DIR/bench.txt.
"""
import importlib.util
import os
import re
import subprocess
import sys
import time

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))


def load_gpt():
    path = os.path.join(HERE, "..", "tests", "real_models", "export_models.py")
    spec = importlib.util.spec_from_file_location("export_models", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.Gpt


class Mlp(nn.Module):
    """Four Linear layers, ReLU between them (bias + ReLU: cuBLASLt's fused epilogue)."""

    def __init__(self, dim=2048, hidden=8192):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim), nn.ReLU(),
                                    nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim))

    def forward(self, x):
        return self.layers(x)


def models():
    Gpt = load_gpt()
    # (name, module, input maker(batch), batch timed (0: check only), batch checked against
    # float64 (0: not checked; the reference interpreter is too slow for the timed GPT, so a
    # smaller one of the same code checks it))
    yield "mlp", Mlp(), lambda n: torch.randn(n, 2048), 1024, 2
    yield ("gpt_check", Gpt(vocab=512, context=64, dim=128, heads=4, layers=2),
           lambda n: torch.randint(0, 10, (n, 64)), 0, 2)
    yield ("gpt", Gpt(vocab=8192, context=256, dim=512, heads=8, layers=4),
           lambda n: torch.randint(0, 10, (n, 256)), 8, 0)


def time_torch(fn, x, runs):
    for _ in range(3):
        fn(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(x)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[0], times[len(times) // 2]


def run_coil(coil, model, args):
    try:
        p = subprocess.run([coil, "run", model, "--backend", "cuda"] + args, capture_output=True,
                           text=True, timeout=150)
    except subprocess.TimeoutExpired:
        return -1, "timed out after 150 s"
    return p.returncode, p.stdout + p.stderr


def main():
    coil, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    gpu = torch.cuda.get_device_name(0)
    lines = ["GPU: %s; torch %s; TF32 off; times: min / median ms over %d runs" % (gpu, torch.__version__, 20)]
    for name, model, make, batch, check_batch in models():
        model.eval()
        path = os.path.join(out, name + ".onnx")
        torch.onnx.export(model, (make(2),), path, opset_version=17, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, dynamo=False)
        check = "not checked"
        if check_batch:
            rc, log = run_coil(coil, path, ["--dim", "batch=%d" % check_batch, "--check"])
            err = re.search(r"max relative error[^0-9]*([0-9.eE+-]+)", log)
            check = "check batch %d: rc %d, max rel err %s" % (check_batch, rc, err.group(1) if err else "?")
            if rc != 0:
                print(log[-3000:])
        if not batch:
            print(name, check, flush=True)
            lines.append("%s: %s" % (name, check))
            continue
        rc, log = run_coil(coil, path, ["--dim", "batch=%d" % batch, "--repeat", "20"])
        m = re.search(r"run x 20\s+([0-9.]+) ms min, ([0-9.]+) ms median", log)
        compile_ms = re.search(r"compile \(cuda\)\s+([0-9.]+) ms", log)
        if rc != 0 or m is None:
            print(log[-3000:])
        coil_min = float(m.group(1)) if m else float("nan")
        coil_med = float(m.group(2)) if m else float("nan")
        gm = model.cuda()
        x = make(batch)
        xd = x.cuda()
        with torch.no_grad():
            eager = time_torch(gm, xd, 20)
            t0 = time.perf_counter()
            compiled = torch.compile(gm)
            compiled(xd)
            torch.cuda.synchronize()
            compile_s = time.perf_counter() - t0
            comp = time_torch(compiled, xd, 20)
            host = time_torch(lambda h: compiled(h.cuda()).cpu(), x, 20)
        line = ("%s batch %d: coil %.3f / %.3f ms (compile %.2f s; %s) | torch eager %.3f / %.3f | "
                "torch.compile %.3f / %.3f (compile %.1f s) | torch.compile + host copies %.3f / %.3f | "
                "coil vs torch.compile + copies %.2fx, vs eager %.2fx" % (
                    name, batch, coil_min, coil_med, float(compile_ms.group(1)) / 1e3 if compile_ms else float("nan"),
                    check, eager[0], eager[1], comp[0], comp[1], compile_s, host[0], host[1],
                    host[0] / coil_min, eager[0] / coil_min))
        print(line, flush=True)
        lines.append(line)
        del gm, compiled
        torch.cuda.empty_cache()
    # resnet18: correctness only (its convolutions still run on the host).
    import torchvision
    r18 = torchvision.models.resnet18(weights=None).eval()
    path = os.path.join(out, "resnet18.onnx")
    torch.onnx.export(r18, (torch.randn(2, 3, 64, 64),), path, opset_version=13, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, dynamo=False)
    rc, log = run_coil(coil, path, ["--dim", "batch=2", "--check"])
    err = re.search(r"max relative error[^0-9]*([0-9.eE+-]+)", log)
    line = "resnet18 batch 2 (64x64): check rc %d, max rel err %s" % (rc, err.group(1) if err else "?")
    print(line, flush=True)
    lines.append(line)
    with open(os.path.join(out, "bench.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
