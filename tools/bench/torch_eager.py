"""The torch side of `coil bench cpu`: builds the benchmark models with torch 1.13, exports them
to ONNX with the inputs and torch's outputs for coil, and times torch eager on those inputs.

Usage (run with Debian's /usr/bin/python3; `coil bench cpu` runs it for you):
  torch_eager.py --out DIR [--size full|quick] [--models resnet18,gpt] [--batches 1,8]
                 [--threads N] [--warmup W] [--min-reps K] [--max-reps M] [--min-seconds S]

Models are the definitions of tests/real_models/export_models.py (torchvision resnet18 and
mobilenet_v2, the 2-layer nn.TransformerEncoder, the GPT-style decoder), random weights with a
fixed seed, at benchmark sizes (SIZES below; "quick" is the real-model test's small sizes).
Writes DIR/MODEL/model.onnx (batch dimension dynamic) and DIR/MODEL/batch_N/{input_0,output_0}.pb
(ONNX TensorProtos), and prints one JSON object on stdout (tools/bench/cpu_bench.proto,
TorchEagerResults); progress goes to stderr.

Timing: torch.set_num_threads(N), torch.inference_mode(), W warm-up calls, then timed calls
until at least K calls and S seconds (at most M calls); median and minimum in milliseconds.
coil times its compiled programs with the same policy (tools/bench/cpu_bench_timing.h).
"""
import argparse
import inspect
import json
import os
import statistics
import sys
import time

import torch

try:
    from onnx import numpy_helper
except ImportError:  # a Python without the onnx package (the GPU machine's): save() by hand
    numpy_helper = None

# The model definitions are the real-model test's (one source of truth for what is compared);
# importing them must not write __pycache__ into the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..",
                                "tests", "real_models"))
import export_models  # noqa: E402

MODELS = ("resnet18", "mobilenet_v2", "transformer_encoder", "gpt")

# Benchmark sizes. "full": 224x224 images; 128-token sequences; a GPT with 4 blocks of width 256.
# "quick": small enough for a smoke test in a debug build.
SIZES = {
    "full": {"image": 224, "sequence": 128,
             "gpt": {"vocab": 2048, "context": 128, "dim": 256, "heads": 8, "layers": 4}},
    "quick": {"image": 32, "sequence": 10,
              "gpt": {"vocab": 96, "context": 16, "dim": 64, "heads": 4, "layers": 2}},
}


# Newer torch (2.x) defaults to another ONNX exporter; ask for the TorchScript-based one that
# torch 1.13 uses, so both export the same graphs.
EXPORT_OPTIONS = ({"dynamo": False}
                  if "dynamo" in inspect.signature(torch.onnx.export).parameters else {})


def log(message):
    print("torch_eager: " + message, file=sys.stderr, flush=True)


def build(name, size):
    """(model, input maker taking a batch size, batch dimension, opset, config text)."""
    s = SIZES[size]
    if name in ("resnet18", "mobilenet_v2"):
        export_models.IMAGE_SIZE = s["image"]  # read by the input maker at call time
        model, make_input, batch_dim, opset = export_models.build(name)
        return model, make_input, batch_dim, opset, "3x%dx%d images" % (s["image"], s["image"])
    if name == "transformer_encoder":
        model, _, batch_dim, opset = export_models.build(name)
        seq = s["sequence"]
        config = "sequence %d, d_model 256, 8 heads, ff 512, 2 layers" % seq
        return model, lambda n: torch.randn(seq, n, 256), batch_dim, opset, config
    if name == "gpt":
        g = s["gpt"]
        model = export_models.Gpt(**g)
        config = "%d tokens, width %d, %d heads, %d blocks, vocab %d" % (
            g["context"], g["dim"], g["heads"], g["layers"], g["vocab"])
        return (model, lambda n: torch.randint(0, g["vocab"], (n, g["context"])), 0, 17, config)
    raise SystemExit("torch_eager.py: unknown model '%s' (known: %s)" % (name, ", ".join(MODELS)))


# ONNX TensorProto's data_type per torch dtype (onnx.proto's DataType), for save() without onnx.
ONNX_TYPES = {torch.float32: 1, torch.uint8: 2, torch.int8: 3, torch.int32: 6, torch.int64: 7,
              torch.bool: 9, torch.float16: 10, torch.float64: 11, torch.bfloat16: 16}


def _varint(v):
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def tensor_proto_bytes(tensor):
    """A serialized ONNX TensorProto (dims = 1, data_type = 2, raw_data = 9, little-endian),
    the bytes numpy_helper.from_array(...).SerializeToString() holds for the same tensor."""
    t = tensor.detach().cpu().contiguous()
    raw = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
    out = b"".join(b"\x08" + _varint(d) for d in t.shape)
    out += b"\x10" + _varint(ONNX_TYPES[t.dtype])
    return out + b"\x4a" + _varint(len(raw)) + raw


def save(tensor, path):
    with open(path, "wb") as f:
        if numpy_helper is None or tensor.dtype == torch.bfloat16:  # numpy has no bfloat16
            f.write(tensor_proto_bytes(tensor))
        else:
            f.write(numpy_helper.from_array(tensor.detach().cpu().numpy()).SerializeToString())


def time_calls(fn, args):
    for _ in range(args.warmup):
        fn()
    samples = []
    start = time.perf_counter()
    while len(samples) < args.min_reps or (len(samples) < args.max_reps and
                                           time.perf_counter() - start < args.min_seconds):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1e3)
    return statistics.median(samples), min(samples), len(samples)


def run_model(name, args):
    torch.manual_seed(0)
    model, make_input, batch_dim, opset, config = build(name, args.size)
    model.eval()
    model_dir = os.path.join(args.out, name)
    os.makedirs(model_dir, exist_ok=True)
    onnx_path = os.path.join(model_dir, "model.onnx")
    start = time.perf_counter()
    torch.onnx.export(model, (make_input(2),), onnx_path, opset_version=opset,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {batch_dim: "batch"}, "y": {batch_dim: "batch"}},
                      **EXPORT_OPTIONS)
    export_seconds = time.perf_counter() - start
    runs = []
    for batch in args.batches:
        torch.manual_seed(1000 + batch)
        x = make_input(batch)
        with torch.inference_mode():
            y = model(x)
            median_ms, min_ms, reps = time_calls(lambda: model(x), args)
        d = os.path.join(model_dir, "batch_%d" % batch)
        os.makedirs(d, exist_ok=True)
        save(x, os.path.join(d, "input_0.pb"))
        save(y, os.path.join(d, "output_0.pb"))
        runs.append({"batch": batch, "input": os.path.join(d, "input_0.pb"),
                     "output": os.path.join(d, "output_0.pb"), "median_ms": median_ms,
                     "min_ms": min_ms, "reps": reps})
        log("%s batch %d: %.3f ms (median of %d)" % (name, batch, median_ms, reps))
    return {"name": name, "onnx": onnx_path, "config": config, "opset": opset,
            "export_seconds": export_seconds, "runs": runs}


def positive_ints(text):
    values = [int(v) for v in text.split(",") if v]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("expected positive integers separated by commas")
    return values


def parse_common_args(description, sizes, models, default_batches, devices=("cpu",),
                      serve=False):
    """The flags this script and torch_peers.py share (serve: also torch_peers.py's --serve);
    returns (args, model names). Sets the thread count and creates --out."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", required=True, help="folder for the ONNX models and tensors")
    p.add_argument("--size", choices=sorted(sizes), default="full")
    p.add_argument("--models", default=",".join(models))
    p.add_argument("--batches", type=positive_ints, default=default_batches)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--min-reps", type=int, default=5)
    p.add_argument("--max-reps", type=int, default=50)
    p.add_argument("--min-seconds", type=float, default=1.0)
    p.add_argument("--device", choices=devices, default="cpu")
    if "cuda" in devices:
        # The rule coil times its CUDA rows by (runtime/cuda/executable.h, PassesForSample):
        # `coil bench cuda` passes its numbers, so the two sides cannot drift apart.
        p.add_argument("--sample-ms", type=float,
                       help="--device cuda: each sample is calls back to back for at least this "
                            "many ms (coil bench cuda passes its own)")
        p.add_argument("--max-passes", type=int,
                       help="--device cuda: at most this many calls per sample")
    if serve:
        p.add_argument("--serve", action="store_true",
                       help="stay running and time rows on request (see the script's help)")
    args = p.parse_args()
    if args.threads < 1 or args.warmup < 0 or args.min_reps < 1 or args.max_reps < args.min_reps:
        p.error("need --threads >= 1, --warmup >= 0, 1 <= --min-reps <= --max-reps")
    if args.device == "cuda" and not (args.sample_ms and args.sample_ms > 0 and
                                      args.max_passes and args.max_passes >= 1):
        p.error("--device cuda needs --sample-ms > 0 and --max-passes >= 1 (coil bench cuda "
                "passes runtime/cuda/executable.h's kSampleMs and kMaxTimedPasses)")
    names = [m for m in args.models.split(",") if m]
    for name in names:
        if name not in models:
            p.error("unknown model '%s' (known: %s)" % (name, ", ".join(models)))
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    return args, names


def main():
    args, names = parse_common_args(__doc__.splitlines()[0], SIZES, MODELS, [1, 8])
    results = {"torch_version": torch.__version__, "threads": torch.get_num_threads(),
               "models": [run_model(name, args) for name in names]}
    json.dump(results, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
