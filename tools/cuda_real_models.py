"""The 13 real models of tests/real_models through a coil backend, against torch's outputs.

Usage (tools/cuda_gpu_job.sh DIR realmodels runs it with the carried `coil`):
  python3 cuda_real_models.py COIL_BINARY OUT_DIR [--backend cuda|cpu] [MODEL...]
Each model is tests/real_models/export_models.py's (random weights, seed 0, 64x64 images for the
torchvision family, the transformer encoder, the small GPT), exported here to ONNX with this
Python's torch (TorchScript exporter: dynamo=False where torch has the flag), run by torch eager
in f32 on the CPU at batch 1 and 3, and by `coil run MODEL --backend B --inputs X --save P`
on the same inputs. Accuracy as in tests/real_models/real_models_test.cc: max|coil - torch| /
max|torch| <= 1e-4 per output (TF32 stays off: coil's default). Prints a line per model and
batch and writes OUT_DIR/real_models.txt; exit status 1 when a model fails. --backend cpu
checks the script itself on a machine without a GPU.
"""
import importlib.util
import os
import re
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "bench"))
import cuda_gpu_bench as gpu_bench  # noqa: E402  (tensor_value, read_tensor_value)
import torch_eager  # noqa: E402  (EXPORT_OPTIONS: the TorchScript exporter on every torch)

MODELS = ("resnet18", "mobilenet_v2", "efficientnet_b0", "densenet121", "googlenet",
          "mobilenet_v3_small", "shufflenet_v2_x0_5", "squeezenet1_0", "regnet_x_400mf",
          "mnasnet0_5", "resnext50_32x4d", "transformer_encoder", "gpt")
MAX_RELATIVE_ERROR = 1e-4


def load_export_models():
    path = os.path.join(HERE, "..", "tests", "real_models", "export_models.py")
    spec = importlib.util.spec_from_file_location("export_models", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def check_model(coil, backend, name, work, exporter):
    torch.manual_seed(0)
    model, make_input, batch_dim, opset = exporter.build(name)
    model.eval()
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(model, (make_input(2),), path, opset_version=opset, input_names=["x"],
                      output_names=["y"],
                      dynamic_axes={"x": {batch_dim: "batch"}, "y": {batch_dim: "batch"}},
                      **torch_eager.EXPORT_OPTIONS)
    lines, ok = [], True
    for n in exporter.BATCH_SIZES:
        x = make_input(n)
        with torch.no_grad():
            want = model(x).float()
        xin = os.path.join(d, "x_%d.pb" % n)
        with open(xin, "wb") as f:
            f.write(gpu_bench.tensor_value(x))
        prefix = os.path.join(d, "coil_%d_" % n)
        try:
            p = subprocess.run([coil, "run", path, "--backend", backend, "--inputs", xin,
                                "--save", prefix], capture_output=True, text=True, timeout=600)
            log = p.stdout + p.stderr
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc, log = -1, "timed out"
        out = prefix + "0.pb"
        if rc != 0 or not os.path.exists(out):
            lines.append("%s batch %d: FAILED (coil exit %d): %s" % (
                name, n, rc, " | ".join(log.strip().splitlines()[-3:])[:400]))
            ok = False
            continue
        got = gpu_bench.read_tensor_value(out)
        if tuple(got.shape) != tuple(want.shape):
            lines.append("%s batch %d: FAILED: coil's output %s, torch's %s" % (
                name, n, list(got.shape), list(want.shape)))
            ok = False
            continue
        err = ((got - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()
        good = err <= MAX_RELATIVE_ERROR
        ok = ok and good
        compile_ms = re.search(r"compile \(\w+\)\s+([0-9.]+) ms", log)
        lines.append("%s batch %d: max relative error %.2e (%s, tolerance %.0e)%s" % (
            name, n, err, "ok" if good else "FAILED", MAX_RELATIVE_ERROR,
            "; compile %s ms" % compile_ms.group(1) if compile_ms else ""))
    return lines, ok


def main():
    args = sys.argv[1:]
    backend = "cuda"
    if "--backend" in args:
        i = args.index("--backend")
        backend = args[i + 1]
        del args[i:i + 2]
    coil, out = args[0], args[1]
    names = args[2:] or list(MODELS)
    for n in names:
        if n not in MODELS:
            raise SystemExit("cuda_real_models.py: unknown model '%s' (known: %s)" % (
                n, ", ".join(MODELS)))
    os.makedirs(out, exist_ok=True)
    work = os.environ.get("COIL_REAL_MODELS_DIR", "/tmp/coil_real_models")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    exporter = load_export_models()
    lines = ["coil --backend %s against torch %s eager (f32, CPU), max|coil - torch| / max|torch|" % (
        backend, torch.__version__)]
    print(lines[0], flush=True)
    failed = 0
    for name in names:
        try:
            model_lines, ok = check_model(coil, backend, name, work, exporter)
        except Exception as e:  # a model that cannot be exported is a failed row, not a crash
            model_lines, ok = ["%s: FAILED: %s" % (name, str(e).splitlines()[0][:300] if str(e)
                                                   else repr(e))], False
        failed += not ok
        for line in model_lines:
            print(line, flush=True)
        lines += model_lines
    lines.append("%d of %d models match torch" % (len(names) - failed, len(names)))
    print(lines[-1], flush=True)
    with open(os.path.join(out, "real_models.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
