"""coil's `--precision bf16` on the CPU against torch.autocast("cpu", torch.bfloat16), same run.

For each model (tools/bench/torch_peers.py's definitions, random weights, seed 0) and batch:
exports the f32 model to ONNX, then on the same input times torch eager in f32, torch eager
under torch.autocast("cpu", dtype=torch.bfloat16), optionally torch.compile of the model under
autocast (--compile; torch >= 2), and `coil run MODEL.onnx --backend cpu --precision bf16`
(and in f32, for the same run's f32 ratio) with the thread count given; each bf16 output is
compared with torch's f32 eager output (max |y - f32| / max |f32|). Prints a table and, with
--json, writes the numbers.

  cpu_bf16_peers.py --coil PATH/coil --out DIR [--models resnet50:1,16 bert_base:1,8]
                    [--threads N] [--min-seconds S] [--compile] [--export-only]

--export-only writes DIR/MODEL/model.onnx and DIR/MODEL/x_BATCH.pb and times nothing.

Timing: torch as torch_peers.py (2 warm-ups, then calls until --min-seconds, at least 5, at
most 50; the median counts); coil: `coil run --repeat N` (N from torch's bf16 time to cover
--min-seconds, 5 to 50) after its first run, the median counts. Inputs go to coil as
coil.proto.TensorValue files (encoded here: no coil protobuf module is needed).
"""
import argparse
import json
import math
import os
import re
import struct
import subprocess
import sys
import time

import torch

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import torch_peers  # noqa: E402  (build, export)

from tensor_value_io import encode as tensor_value  # noqa: E402
from tensor_value_io import read_f32 as read_tensor_value  # noqa: E402


def time_calls(fn, min_seconds):
    for _ in range(2):
        fn()
    samples, start = [], time.perf_counter()
    while len(samples) < 5 or (len(samples) < 50 and time.perf_counter() - start < min_seconds):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1e3)
    samples.sort()
    return samples[len(samples) // 2]


def rel_err(got, want):
    return float((got.float() - want).abs().max() / want.abs().max())


def run_coil(args, onnx, x_path, out_prefix, precision, reps):
    cmd = [args.coil, "run", onnx, "--backend", "cpu", "--precision", precision,
           "--inputs", x_path, "--repeat", str(reps), "--threads", str(args.threads),
           "--save", out_prefix]
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout)[-400:]}
    m = re.search(r"run x \d+\s+([\d.]+) ms min, ([\d.]+) ms median", p.stdout + p.stderr)
    first = re.search(r"run \(first\)\s+([\d.]+) ms", p.stdout + p.stderr)
    if m is None:
        return {"error": "no timing line in: " + (p.stdout + p.stderr)[-400:]}
    return {"median_ms": float(m.group(2)), "min_ms": float(m.group(1)),
            "first_ms": float(first.group(1)) if first else None, "wall_s": wall,
            "output": out_prefix + "0.pb"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coil", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", nargs="*", default=["resnet50:1,16", "bert_base:1,8"])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--size", default="full", choices=("full", "quick"))
    ap.add_argument("--json")
    ap.add_argument("--export-only", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    print("# torch %s, %d threads, %s" % (torch.__version__, args.threads,
                                          open("/proc/cpuinfo").read().split("model name")[1]
                                          .split("\n")[0].strip(": \t")), flush=True)
    for spec in args.models:
        name, batches = spec.split(":")
        torch.manual_seed(0)
        model, make_input, opset, config = torch_peers.build(name, args.size)
        model.eval()
        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        onnx = os.path.join(d, "model.onnx")
        torch_peers.export(model, make_input(2), onnx, opset)
        for batch in [int(b) for b in batches.split(",")]:
            torch.manual_seed(1000 + batch)
            x = make_input(batch)
            x_path = os.path.join(d, "x_%d.pb" % batch)
            with open(x_path, "wb") as f:
                f.write(tensor_value(x))
            if args.export_only:
                continue
            row = {"model": name, "batch": batch, "config": config}
            with torch.no_grad():
                want = model(x).float()
                row["eager_f32_ms"] = time_calls(lambda: model(x), args.min_seconds)
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    got = model(x)
                    row["eager_bf16_ms"] = time_calls(lambda: model(x), args.min_seconds)
                row["eager_bf16_err"] = rel_err(got, want)
                if args.compile and hasattr(torch, "compile"):
                    try:
                        torch._dynamo.reset()
                        compiled = torch.compile(model, dynamic=False)
                        with torch.autocast("cpu", dtype=torch.bfloat16):
                            start = time.perf_counter()
                            got = compiled(x)
                            row["compile_bf16_first_s"] = time.perf_counter() - start
                            row["compile_bf16_ms"] = time_calls(lambda: compiled(x),
                                                                args.min_seconds)
                        row["compile_bf16_err"] = rel_err(got, want)
                    except Exception as e:  # a peer's failure is reported, not fatal
                        row["compile_bf16_error"] = repr(e)[:300]
            reps = max(5, min(50, math.ceil(args.min_seconds * 1e3 / row["eager_bf16_ms"])))
            for precision in ("bf16", "f32"):
                prefix = os.path.join(d, "coil_%s_%d_" % (precision, batch))
                r = run_coil(args, onnx, x_path, prefix, precision, reps)
                if "output" in r:
                    r["err"] = rel_err(read_tensor_value(r.pop("output")), want)
                row["coil_" + precision] = r
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.export_only:
        return
    print()
    print("| model | batch | torch eager f32 | torch eager autocast bf16 | torch.compile autocast "
          "bf16 | coil f32 | coil bf16 | coil bf16 vs autocast eager | vs torch.compile bf16 | "
          "coil bf16 vs coil f32 | coil bf16 err |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cb, cf = r["coil_bf16"].get("median_ms"), r["coil_f32"].get("median_ms")
        tc = r.get("compile_bf16_ms")
        fmt = lambda v: "%.2f" % v if v else "-"  # noqa: E731
        ratio = lambda a, b: "%.2fx" % (a / b) if a and b else "-"  # noqa: E731
        print("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], r["batch"], fmt(r["eager_f32_ms"]), fmt(r["eager_bf16_ms"]), fmt(tc),
            fmt(cf), fmt(cb), ratio(r["eager_bf16_ms"], cb), ratio(tc, cb), ratio(cf, cb),
            "%.2g" % r["coil_bf16"]["err"] if "err" in r["coil_bf16"] else
            r["coil_bf16"].get("error", "-")))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
