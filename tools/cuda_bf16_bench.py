"""`--precision bf16` on the GPU: fp32 ONNX models run by coil's CUDA backend with the autocast
pass, against torch.autocast(device_type="cuda", dtype=torch.bfloat16) eager and torch.compile
of the same model, weights and input, in one run; every output checked against torch fp32.

Usage (tools/cuda_gpu_job.sh DIR bf16, with the carried `coil` in the working folder):
  python3 cuda_bf16_bench.py COIL_BINARY OUT_DIR [MODEL...]   (resnet50 bert_base gpt2_small)
Models are tools/bench/torch_peers.py's (random weights, seed 0): resnet50 at 224x224 batch 64,
BERT-base and GPT-2 small at 128 tokens batch 8, exported fp32 (opset 13 / 17, attention spelled
out). Per model, on one input:
  coil: `coil run MODEL --backend cuda --inputs X --repeat N --save P` with --precision bf16,
    and without it (f32, for the speed-up); the "device x N" line (CUDA events) is its time;
  torch: eager fp32, eager and torch.compile (default mode, cold) under torch.autocast bf16,
    CUDA events around each call; TF32 off (coil's f32 default, so the f32 rows are exact f32).
COIL_BF16_AB="VAR=VALUE ...": coil bf16 once more with those variables set (an A/B in one run).
Errors are max |out - torch fp32| / max |torch fp32|; coil's bf16 output must be within TOL
(bf16 keeps 8 significant bits; torch.autocast's own error is printed beside it). Prints one
line per model and writes OUT_DIR/bf16.txt; exit status 1 when a check fails.
"""
import os
import re
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "bench"))
import cuda_gpu_bench as gpu_bench  # noqa: E402  (time_events, tensor_value, read_tensor_value)
import torch_peers  # noqa: E402  (build, export)

BATCH = {"resnet50": 64, "bert_base": 8, "gpt2_small": 8}
REPEAT = 20
TOL = 5e-2


def run_coil(coil, args, timeout=300, env=None):
    try:
        p = subprocess.run([coil, "run"] + args, capture_output=True, text=True, timeout=timeout,
                           env=env)
    except subprocess.TimeoutExpired:
        return -1, "timed out after %d s" % timeout
    return p.returncode, p.stdout + p.stderr


def rel_err(got, want):
    return ((got.float() - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()


def coil_row(coil, path, xin, prefix, extra, env=None):
    rc, log = run_coil(coil, [path, "--backend", "cuda", "--inputs", xin, "--repeat", str(REPEAT),
                              "--save", prefix] + extra, env=env)
    dev = re.search(r"device x \d+\s+([0-9.]+) ms min, ([0-9.]+) ms median", log)
    comp = re.search(r"compile \(cuda\)\s+([0-9.]+) ms", log)
    out = gpu_bench.read_tensor_value(prefix + "0.pb") if rc == 0 and os.path.exists(prefix + "0.pb") else None
    if rc != 0 or dev is None:
        print(log[-3000:], flush=True)
    nan = float("nan")
    return (float(dev.group(2)) if dev else nan, float(comp.group(1)) / 1e3 if comp else nan, out, log)


def model_row(coil, name, work):
    torch.manual_seed(0)
    model, make, opset, config = torch_peers.build(name, "full")
    model.eval()
    path = os.path.join(work, name + ".onnx")
    torch_peers.export(model, make(2), path, opset)
    torch.manual_seed(1)
    batch = BATCH[name]
    x = make(batch)
    xin = os.path.join(work, name + "_x.pb")
    with open(xin, "wb") as f:
        f.write(gpu_bench.tensor_value(x))
    bf_ms, bf_compile, bf_out, bf_log = coil_row(coil, path, xin, os.path.join(work, name + "_bf16_"),
                                                 ["--precision", "bf16"])
    with open(os.path.join(work, name + "_bf16.log"), "w") as f:
        f.write(bf_log)
    f32_ms, _, f32_out, _ = coil_row(coil, path, xin, os.path.join(work, name + "_f32_"), [])
    # COIL_BF16_AB="NAME=VALUE ...": coil bf16 once more with those variables set (an A/B of a
    # switch in the same run, e.g. COIL_CHANNELS_LAST=0), its median printed beside the row.
    ab = os.environ.get("COIL_BF16_AB", "")
    if ab:
        env = dict(os.environ)
        env.update(kv.split("=", 1) for kv in ab.split())
        ab_ms, _, ab_out, _ = coil_row(coil, path, xin, os.path.join(work, name + "_ab_"),
                                       ["--precision", "bf16"], env)
    model.cuda()
    xd = x.cuda()
    with torch.no_grad():
        ref = model(xd).float().cpu()
        eager32 = gpu_bench.time_events(model, (xd,))[1]
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            eager_out = model(xd).float().cpu()
            eager_ac = gpu_bench.time_events(model, (xd,))[1]
            torch._dynamo.reset()
            compiled = torch.compile(model)
            t0 = time.perf_counter()
            compiled(xd)
            torch.cuda.synchronize()
            compile_s = time.perf_counter() - t0
            comp_out = compiled(xd).float().cpu()
            comp_ac = gpu_bench.time_events(compiled, (xd,))[1]
    nan = float("nan")
    err = rel_err(bf_out, ref) if bf_out is not None else nan
    ok = err <= TOL
    line = ("%s (%s, batch %d): coil bf16 %.3f ms (compile %.2f s; f32 %.3f ms, %.2fx) | torch.autocast "
            "eager %.3f ms (fp32 %.3f) | torch.compile + autocast %.3f ms (compile %.1f s) | coil bf16 vs "
            "torch.compile %.2fx, vs autocast eager %.2fx | error vs torch fp32: coil bf16 %.2e (%s, tol %.0e), "
            "coil f32 %s, autocast eager %.2e, torch.compile %.2e" % (
                name, config, batch, bf_ms, bf_compile, f32_ms, f32_ms / bf_ms, eager_ac, eager32, comp_ac,
                compile_s, comp_ac / bf_ms, eager_ac / bf_ms, err, "ok" if ok else "FAILED", TOL,
                "%.2e" % rel_err(f32_out, ref) if f32_out is not None else "?", rel_err(eager_out, ref),
                rel_err(comp_out, ref)))
    if ab:
        line += " | coil bf16 with %s: %.3f ms (error %s)" % (
            ab, ab_ms, "%.2e" % rel_err(ab_out, ref) if ab_out is not None else "?")
    del model, compiled, xd
    torch.cuda.empty_cache()
    return line, ok


def main():
    coil, out = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or list(BATCH)
    os.makedirs(out, exist_ok=True)
    work = os.environ.get("COIL_BENCH_MODELS", "/tmp/coil_bench_bf16")
    os.makedirs(work, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    lines = ["GPU: %s; torch %s; TF32 off; medians over %d runs (CUDA events); ratios: torch / coil" % (
        torch.cuda.get_device_name(0), torch.__version__, REPEAT)]
    print(lines[0], flush=True)
    failed = 0
    for name in names:
        try:
            line, ok = model_row(coil, name, work)
        except Exception as e:  # one model failing is a row that says so
            line, ok = "%s: FAILED: %s" % (name, str(e).splitlines()[0][:300] if str(e) else repr(e)), False
        failed += not ok
        print(line, flush=True)
        lines.append(line)
    with open(os.path.join(out, "bf16.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
