"""coil's CUDA backend against torch eager and torch.compile (default mode) on the same GPU,
inputs and weights, in one run.

Usage (from tools/cuda_gpu_job.sh, with the carried `coil` in the working folder):
  python3 cuda_gpu_bench.py COIL_BINARY OUT_DIR [ROW...]     (ROW: copy gelu softmax layernorm
                                                              mlp gpt gpt_check resnet18 resnet50)
For each model: exports it to ONNX (torch.onnx.export, dynamo=False), checks coil's output
against the float64 reference interpreter at a small batch (`coil run --check`), then times
  coil: `coil run --backend cuda --repeat N`, whose "device x N" line is CUDA events from the
    first kernel to the end of the last (device tensors: what torch's rows below measure), and
    whose "run x N" line is the whole Run with host tensors in and out;
  torch eager and torch.compile on device tensors (CUDA events around each call);
  torch.compile with host copies (`compiled(x.cuda()).cpu()`), the work coil's "run" does.
Ratios are torch's time over coil's (above 1: coil is faster). Memory-bound rows also print
the share of the device-to-device copy bandwidth (bytes read + written, measured first).
TF32 is off everywhere (torch.backends.*.allow_tf32 = False; coil's default), so all compute
f32 GEMMs and convolutions in f32, unless COIL_BENCH_TF32=1 turns it on in both. Prints one line per row and writes OUT_DIR/bench.txt; for the rows named in
COIL_BENCH_PROFILE (space-separated), coil's per-kernel device times (`--profile`) go to
OUT_DIR/profile.txt. The exported models go to COIL_BENCH_MODELS (default /tmp/coil_bench).
resnet18 / resnet50 (torchvision, random weights): checked at 64x64 batch 2 against the float64
reference, timed at 224x224 batch 64 f32 on one input also given to torch, whose eager output
coil's is compared with; the row says how each convolution ran (cuDNN fused, cuDNN, host).
"""
import importlib.util
import math
import os
import re
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REPEAT = 20
# COIL_BENCH_TF32=1: TF32 on for f32 GEMMs and convolutions in torch (its cuDNN default) and
# coil (COIL_CUDA_TF32=1); resnet rows then skip the float64 check.
TF32 = os.environ.get("COIL_BENCH_TF32", "0") == "1"


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


class GeluChain(nn.Module):
    """A pointwise chain: one read, one write per element."""

    def forward(self, x):
        return F.gelu(x * 1.25 + 0.5) * x - 0.125


class Softmax(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


class LayerNormResidualGelu(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, r):
        return F.gelu(self.norm(x + r))


def rows():
    """(name, module, dtype, input maker(batch), timed batch (0: check only), checked batch,
    bytes moved at the timed batch (0: not memory-bound), description)."""
    yield ("gelu", GeluChain(), torch.float32, lambda n: (torch.randn(n, 65536),), 1024, 2,
           2 * 4 * 1024 * 65536, "pointwise gelu chain, f32 [1024, 65536] (64M)")
    yield ("softmax", Softmax(), torch.bfloat16, lambda n: (torch.randn(n, 8192).bfloat16(),), 16384, 4,
           2 * 2 * 16384 * 8192, "softmax, bf16 [16384, 8192]")
    yield ("layernorm", LayerNormResidualGelu(8192), torch.bfloat16,
           lambda n: (torch.randn(n, 8192).bfloat16(), torch.randn(n, 8192).bfloat16()), 16384, 4,
           3 * 2 * 16384 * 8192, "gelu(layer_norm(x + r)), bf16 [16384, 8192]")
    yield ("mlp", Mlp(), torch.float32, lambda n: (torch.randn(n, 2048),), 1024, 2, 0,
           "MLP 2048-8192-2048-8192-2048, ReLU, f32, batch 1024 (137 GFLOP)")
    Gpt = load_gpt()
    yield ("gpt_check", Gpt(vocab=512, context=64, dim=128, heads=4, layers=2), torch.float32,
           lambda n: (torch.randint(0, 10, (n, 64)),), 0, 2, 0, "small GPT (checked only)")
    yield ("gpt", Gpt(vocab=8192, context=256, dim=512, heads=8, layers=4), torch.float32,
           lambda n: (torch.randint(0, 10, (n, 256)),), 8, 0, 0,
           "GPT-style decoder, vocab 8192, 256 tokens, dim 512, 8 heads, 4 layers, f32, batch 8")


def time_events(fn, args, runs=REPEAT):
    """Median / min ms of fn(*args) over CUDA events (3 warm-ups)."""
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn(*args)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[0], times[len(times) // 2]


def time_host(fn, args, runs=REPEAT):
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(*args)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[0], times[len(times) // 2]


def run_coil(coil, model, args, timeout=200):
    try:
        p = subprocess.run([coil, "run", model, "--backend", "cuda"] + args, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "timed out after %d s" % timeout
    return p.returncode, p.stdout + p.stderr


def export(model, example, path, names):
    dyn = {n: {0: "batch"} for n in names + ["y"]}
    torch.onnx.export(model, example, path, opset_version=17, input_names=names, output_names=["y"],
                      dynamic_axes=dyn, dynamo=False)


sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "bench"))
from tensor_value_io import encode as tensor_value  # noqa: E402
from tensor_value_io import read_f32 as read_tensor_value  # noqa: E402


def resnet_row(coil, name, models_dir, lines, ratios, batch=64):
    """torchvision's resnet (random weights, eval: the exporter folds batch norm into the
    convolutions): checked at 64x64 batch 2 against the float64 reference interpreter, then
    timed at 224x224 batch `batch` f32 on the same input as torch eager and torch.compile, and
    coil's output compared with torch eager's (TF32 off in both, unless COIL_BENCH_TF32=1)."""
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    if TF32:
        check = "TF32 on in coil and torch: not checked against the float64 reference"
    else:
        small = os.path.join(models_dir, name + "_64.onnx")
        export(model, (torch.randn(2, 3, 64, 64),), small, ["x"])
        rc, log = run_coil(coil, small, ["--dim", "batch=2", "--check"], timeout=300)
        err = re.search(r"max relative error[^0-9]*([0-9.eE+-]+)", log)
        check = "check 64x64 batch 2: max rel err %s%s" % (err.group(1) if err else "?", "" if rc == 0 else " (rc %d)" % rc)
        if err is None:
            print(log[-3000:])
    print("%s: %s" % (name, check), flush=True)
    path = os.path.join(models_dir, name + ".onnx")
    export(model, (torch.randn(2, 3, 224, 224),), path, ["x"])
    x = torch.randn(batch, 3, 224, 224)
    xin = os.path.join(models_dir, name + "_x.pb")
    with open(xin, "wb") as f:
        f.write(tensor_value(x))
    prefix = os.path.join(models_dir, name + "_out")
    rc, log = run_coil(coil, path, ["--inputs", xin, "--repeat", str(REPEAT), "--save", prefix, "--profile"], timeout=300)
    run = re.search(r"run x \d+\s+([0-9.]+) ms min, ([0-9.]+) ms median", log)
    dev = re.search(r"device x \d+\s+([0-9.]+) ms min, ([0-9.]+) ms median", log)
    compile_ms = re.search(r"compile \(cuda\)\s+([0-9.]+) ms", log)
    with open(os.path.join(os.path.dirname(xin), name + "_coil.log"), "w") as f:
        f.write(log)
    if rc != 0 or run is None or dev is None:
        print(log[-3000:])
    nan = float("nan")
    c_dev = (float(dev.group(1)), float(dev.group(2))) if dev else (nan, nan)
    c_run = (float(run.group(1)), float(run.group(2))) if run else (nan, nan)
    gm = model.cuda()
    xd = x.cuda()
    with torch.no_grad():
        ref = gm(xd).float().cpu()
        eager = time_events(gm, (xd,))
        t0 = time.perf_counter()
        compiled = torch.compile(gm)
        compiled(xd)
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
        comp = time_events(compiled, (xd,))
    vs_torch = "?"
    if os.path.exists(prefix + "0.pb"):
        got = read_tensor_value(prefix + "0.pb")
        vs_torch = "%.2e" % ((got - ref).abs().max().item() / max(ref.abs().max().item(), 1e-30))
    r_comp = comp[1] / c_dev[1]
    ratios.append(r_comp)
    kinds = {}
    for m in re.finditer(r"extern aten\.convolution \(([^)]*)\)", log):
        kinds[m.group(1)] = kinds.get(m.group(1), 0) + 1
    line = ("%s f32 batch %d 224x224: coil device %.3f / %.3f ms, whole run %.3f / %.3f (compile %.2f s; %s; "
            "coil vs torch eager output: max |diff| / max |torch| %s; convolutions %s) | torch eager %.3f / %.3f | "
            "torch.compile %.3f / %.3f (compile %.1f s) | vs torch.compile %.2fx, vs eager %.2fx" % (
                name, batch, c_dev[0], c_dev[1], c_run[0], c_run[1],
                float(compile_ms.group(1)) / 1e3 if compile_ms else nan, check, vs_torch,
                ", ".join("%s: %d" % kv for kv in sorted(kinds.items())) or "?", eager[0], eager[1],
                comp[0], comp[1], compile_s, r_comp, eager[1] / c_dev[1]))
    print(line, flush=True)
    lines.append(line)
    del gm, compiled, xd
    torch.cuda.empty_cache()


def copy_bandwidth():
    x = torch.randn(256 * 1024 * 1024, device="cuda")  # 1 GiB
    y = torch.empty_like(x)
    _, med = time_events(lambda: y.copy_(x), ())
    return 2 * x.numel() * 4 / (med * 1e-3) / 1e12, med


def main():
    coil, out = sys.argv[1], sys.argv[2]
    only = set(sys.argv[3:])
    profile_rows = set(os.environ.get("COIL_BENCH_PROFILE", "").split())
    os.makedirs(out, exist_ok=True)
    models_dir = os.environ.get("COIL_BENCH_MODELS", "/tmp/coil_bench")
    os.makedirs(models_dir, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = TF32
    torch.backends.cudnn.allow_tf32 = TF32
    if TF32:
        os.environ["COIL_CUDA_TF32"] = "1"
    torch.manual_seed(0)
    gpu = torch.cuda.get_device_name(0)
    lines = ["GPU: %s; torch %s; TF32 %s; min / median ms over %d runs; ratios: torch / coil "
             "(median)" % (gpu, torch.__version__, "on" if TF32 else "off", REPEAT)]
    print(lines[0], flush=True)
    tbps, copy_ms = copy_bandwidth()
    lines.append("copy: device-to-device 1 GiB, %.3f ms median = %.2f TB/s (read + write)" % (copy_ms, tbps))
    print(lines[-1], flush=True)
    ratios = []
    for name, model, dtype, make, batch, check_batch, nbytes, what in rows():
        if only and name not in only:
            continue
        try:
            model = model.eval().to(dtype) if dtype != torch.float32 else model.eval()
            example = make(2)
            names = ["x"] if len(example) == 1 else ["x", "r"]
            path = os.path.join(models_dir, name + ".onnx")
            export(model, example, path, names)
        except Exception as e:  # an export torch cannot do is a row that says so
            lines.append("%s: export failed: %s" % (name, str(e).splitlines()[0][:200]))
            print(lines[-1], flush=True)
            continue
        check = "not checked"
        if check_batch:
            rc, log = run_coil(coil, path, ["--dim", "batch=%d" % check_batch, "--check"])
            err = re.search(r"max relative error[^0-9]*([0-9.eE+-]+)", log)
            check = "check batch %d: max rel err %s%s" % (check_batch, err.group(1) if err else "?",
                                                           "" if rc == 0 else " (rc %d)" % rc)
            if err is None:
                print(log[-3000:])
        if not batch:
            lines.append("%s: %s" % (name, check))
            print(lines[-1], flush=True)
            continue
        args = ["--dim", "batch=%d" % batch, "--repeat", str(REPEAT)]
        rc, log = run_coil(coil, path, args + (["--profile"] if name in profile_rows else []))
        run = re.search(r"run x \d+\s+([0-9.]+) ms min, ([0-9.]+) ms median", log)
        dev = re.search(r"device x \d+\s+([0-9.]+) ms min, ([0-9.]+) ms median", log)
        copies = re.search(r"host copies\s+([0-9.]+) ms median in, ([0-9.]+) ms median out", log)
        compile_ms = re.search(r"compile \(cuda\)\s+([0-9.]+) ms", log)
        if rc != 0 or run is None or dev is None:
            print(log[-3000:])
        if name in profile_rows:
            prof = log[log.find("  kernel "):] if "  kernel " in log else "(no profile)"
            with open(os.path.join(out, "profile.txt"), "a") as f:
                f.write("== %s (%s)\n%s\n" % (name, what, prof))
            print("coil profile, %s:\n%s" % (name, "\n".join(prof.splitlines()[:40])), flush=True)
        nan = float("nan")
        c_run = (float(run.group(1)), float(run.group(2))) if run else (nan, nan)
        c_dev = (float(dev.group(1)), float(dev.group(2))) if dev else (nan, nan)
        x = make(batch)
        xd = tuple(t.cuda() for t in x)
        gm = model.cuda()
        with torch.no_grad():
            eager = time_events(gm, xd)
            t0 = time.perf_counter()
            compiled = torch.compile(gm)
            compiled(*xd)
            torch.cuda.synchronize()
            compile_s = time.perf_counter() - t0
            comp = time_events(compiled, xd)
            host = time_host(lambda *h: compiled(*(t.cuda() for t in h)).cpu(), x)
        r_comp = comp[1] / c_dev[1]
        ratios.append(r_comp)
        bw = ""
        if nbytes:
            bw = " | %% of copy bandwidth: coil %.0f%%, torch.compile %.0f%%" % (
                100 * nbytes / (c_dev[1] * 1e-3) / (tbps * 1e12), 100 * nbytes / (comp[1] * 1e-3) / (tbps * 1e12))
        line = ("%s (%s): coil device %.3f / %.3f ms, whole run %.3f / %.3f (copies in %s, out %s; compile %.2f s; %s)"
                " | torch eager %.3f / %.3f | torch.compile %.3f / %.3f (compile %.1f s) | torch.compile + host copies"
                " %.3f / %.3f | vs torch.compile %.2fx, vs eager %.2fx, whole run vs torch.compile + copies %.2fx%s" % (
                    name, what, c_dev[0], c_dev[1], c_run[0], c_run[1], copies.group(1) if copies else "?",
                    copies.group(2) if copies else "?",
                    float(compile_ms.group(1)) / 1e3 if compile_ms else nan, check, eager[0], eager[1],
                    comp[0], comp[1], compile_s, host[0], host[1], r_comp, eager[1] / c_dev[1],
                    host[1] / c_run[1], bw))
        print(line, flush=True)
        lines.append(line)
        del gm, compiled, xd
        torch.cuda.empty_cache()
    if ratios:
        good = [r for r in ratios if r == r and r > 0]
        if good:
            lines.append("geomean coil vs torch.compile (device, %d rows): %.2fx" % (
                len(good), math.exp(sum(math.log(r) for r in good) / len(good))))
            print(lines[-1], flush=True)
    for name in ("resnet18", "resnet50"):
        if not only or name in only:
            resnet_row(coil, name, models_dir, lines, ratios)
    if ratios:
        good = [r for r in ratios if r == r and r > 0]
        lines.append("geomean coil vs torch.compile (device, %d rows, resnets included): %.2fx" % (
            len(good), math.exp(sum(math.log(r) for r in good) / len(good))))
        print(lines[-1], flush=True)
    with open(os.path.join(out, "bench.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
