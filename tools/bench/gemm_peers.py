"""f32 GEMM shapes through torch and ONNX Runtime, and an ONNX model of each for `coil run`:
is the GEMM library coil calls (Debian's oneDNN 2.6) the limit on a transformer's matmuls, and
how do small-M products (a classifier at batch 1) compare?

Usage: gemm_peers.py OUT_DIR THREADS MxKxN [MxKxN ...]
For each shape writes OUT_DIR/gemm_MxKxN.onnx (x f32[M, K] @ a constant f32[K, N] weight +
bias, as a Linear layer exports) and prints one line per peer: median ms of 30 runs after 3
warm-ups, the TFLOP/s it implies (2*M*K*N per run) and the GB/s of weights read (4*K*N).
Time coil on the same model with
  coil run OUT_DIR/gemm_MxKxN.onnx --backend cpu --repeat 30 --threads THREADS
(torch and onnxruntime are imported once for all shapes.)
"""
import os
import statistics
import sys
import time

import numpy as np
import onnx
from onnx import helper, numpy_helper


def timed(fn):
    for _ in range(3):
        fn()
    samples = []
    for _ in range(30):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1e3)
    return statistics.median(samples)


def shape_run(out, m, k, n, threads, torch, ort):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, k), dtype=np.float32)
    w = (rng.standard_normal((k, n), dtype=np.float32) / np.sqrt(k)).astype(np.float32)
    b = rng.standard_normal((n,), dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["y"])],
        "gemm", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "gemm_%dx%dx%d.onnx" % (m, k, n))
    # IR version 8 (opset 13 needs 7): a newer onnx package writes its own latest by default,
    # which an older onnxruntime refuses ("Unsupported model IR version: 14, max supported IR
    # version: 13", onnx 1.19 against onnxruntime 1.30 on the GPU machine).
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                ir_version=8), path)
    flop = 2.0 * m * k * n

    def report(name, ms):
        print("%-26s %dx%dx%d threads %d: %8.3f ms  %6.3f TFLOP/s  %6.1f GB/s weights" % (
            name, m, k, n, threads, ms, flop / ms / 1e9, 4.0 * k * n / ms / 1e6))

    tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w.T.copy()), torch.from_numpy(b)
    with torch.no_grad():
        report("torch F.linear", timed(lambda: torch.nn.functional.linear(tx, tw, tb)))
    if ort is not None:
        o = ort.SessionOptions()
        o.intra_op_num_threads, o.inter_op_num_threads = threads, 1
        try:
            s = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
        except Exception as e:  # one shape's failure leaves the others' lines
            print("onnxruntime failed on %dx%dx%d: %s" % (m, k, n, str(e).splitlines()[0]))
        else:
            report("onnxruntime", timed(lambda: s.run(None, {"x": x})))
    print("wrote " + path)


def main():
    out, threads = sys.argv[1], int(sys.argv[2])
    shapes = [tuple(map(int, a.split("x"))) for a in sys.argv[3:]]
    import torch
    torch.set_num_threads(threads)
    try:
        import onnxruntime as ort
    except ImportError as e:
        print("onnxruntime absent (%s)" % e)
        ort = None
    for m, k, n in shapes:
        shape_run(out, m, k, n, threads, torch, ort)


if __name__ == "__main__":
    main()
