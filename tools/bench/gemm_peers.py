"""One f32 GEMM shape through torch and ONNX Runtime, and an ONNX model of it for `coil run`:
is the GEMM library coil calls (Debian's oneDNN 2.6) the limit on a transformer's matmuls?

Usage: gemm_peers.py OUT_DIR M K N THREADS
Writes OUT_DIR/gemm_MxKxN.onnx (x f32[M, K] @ a constant f32[K, N] weight + bias, as a
Linear layer exports) and prints one line per peer: median ms of 30 runs after 3 warm-ups and
the TFLOP/s it implies (2*M*K*N per run). Time coil on the same model with
  coil run OUT_DIR/gemm_MxKxN.onnx --backend cpu --repeat 30 --threads THREADS
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


def main():
    out, m, k, n, threads = sys.argv[1], *map(int, sys.argv[2:6])
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
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    flop = 2.0 * m * k * n

    def report(name, ms):
        print("%-26s %dx%dx%d threads %d: %8.3f ms  %6.3f TFLOP/s" % (
            name, m, k, n, threads, ms, flop / ms / 1e9))

    import torch
    torch.set_num_threads(threads)
    tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w.T.copy()), torch.from_numpy(b)
    with torch.no_grad():
        report("torch F.linear", timed(lambda: torch.nn.functional.linear(tx, tw, tb)))
    try:
        import onnxruntime as ort
    except ImportError as e:
        print("onnxruntime absent (%s)" % e)
        return
    o = ort.SessionOptions()
    o.intra_op_num_threads, o.inter_op_num_threads = threads, 1
    s = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
    report("onnxruntime", timed(lambda: s.run(None, {"x": x})))
    print("wrote " + path)


if __name__ == "__main__":
    main()
