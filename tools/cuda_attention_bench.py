#!/usr/bin/env python3
"""coil's fused attention kernels alone on a GPU, against torch's SDPA backends (cuDNN, flash,
efficient) on the same inputs: correctness against float64 SDPA and per-call device times.

Runs on the GPU machine from the repository alone (no Bazel, no coil binary): the kernels'
source is read from codegen_cuda/internal/attention_source.cc (its kCommon raw string), wrapped
in the extern "C" entry points the emitter writes, compiled by NVRTC to an sm_90 cubin as coil
compiles it (ptxas' register report and SASS instruction counts printed), and launched through the driver API (ctypes)
with kernel_abi.h's CoilAttentionParams layout on torch's tensors.

  python3 tools/cuda_attention_bench.py [--cases gpt2,bert,...] [--dtypes bf16,f16,f32]
      [--variants 'label|body|threads|rows|minblocks[|source]#...'] [--no-peers] [--ncu] [--graph]
Prints one line per case and variant: coil ms, each torch backend's ms, the ratios to cuDNN and
to the fastest backend, and the error (|out - ref| / |ref|). --ncu launches each once, untimed
(for `ncu --kernel-name regex:coil_attention ...`). Used for docs/benchmarks.md "Fused attention
on CUDA: masks summarized per tile" and "... 4 blocks per SM, an unmasked entry point, ex2".
"""
import argparse
import ctypes
import os
import re
import struct
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pick(field, d):
    """A variant's field: "x" for both head dims, or "x64~x128"."""
    parts = field.split("~")
    return parts[0] if d <= 64 or len(parts) == 1 else parts[1]


def kernel_source(v):
    text = open(os.path.join(ROOT, v.get("source") or "codegen_cuda/internal/attention_source.cc")).read()
    m = re.search(r'constexpr char kCommon\[\] = R"CUDA\((.*?)\)CUDA";', text, re.S)
    body = m.group(1)
    # The emitter's entry points (AttentionKernelsSource), every variant; the f16 / bf16 body
    # and launch bounds may be replaced (--variants) to compare instantiations.
    entries = []
    for dt, dcode in (("f16", 1), ("bf16", 2)):
        for d in (64, 128):
            for mask, suffix in ((1, ""), (0, "_nomask")):
                half = pick(v["body"], d).format(d=d, dt=dcode, mask=mask)
                minb = int(pick(v["minb"], d))
                threads = int(pick(v["threads"], d))
                bounds = f"{threads}, {minb}" if minb else f"{threads}"
                entries.append(f"extern \"C\" __global__ void __launch_bounds__({bounds}) "
                               f"coil_attention_{dt}_d{d}{suffix}(CoilAttentionParams p) {{ {half} }}\n")
    for d in (64, 128):
        entries.append(f"extern \"C\" __global__ void __launch_bounds__(256) "
                       f"coil_attention_f32_d{d}(CoilAttentionParams p) {{ "
                       f"coil_attn_f32<{d}, {'4, 4' if d <= 64 else '2, 2'}>(p); }}\n")
    return body + "".join(entries)


# label|half body|threads|rows per block|min blocks per SM (0: none)[|source file, relative to
# the repository: another version of attention_source.cc, e.g. `git show REV:...`]; each field "x" for both
# head dims or "x64~x128"; {d}, {dt} and {mask} in the body are the head dim, the dtype code and
# 1 for the masked entry point (coil_attention_bf16_d64), 0 for the one of calls without a mask
# (coil_attention_bf16_d64_nomask; its body may ignore p.mask_kind). The
# default is what coil emits (codegen_cuda/internal/attention_source.cc, AttentionKernelsSource).
DEFAULT_VARIANT = ("coil|coil_attn_tc<{d}, {dt}, 2, 4, 64, 0, {mask}>(p);~coil_attn_tc<{d}, {dt}, 2, 4, 32, 1, {mask}>(p);"
                   "|128|64|4~0")


def nvrtc_cubin(src):
    """src compiled as coil compiles it (codegen_cuda/nvrtc.cc): NVRTC, sm_90, C++17."""
    lib = None
    for name in ("libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.13", "libnvrtc.so"):
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            pass
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"attn.cu", 0, None, None) == 0
    opts = [b"--gpu-architecture=sm_90", b"-std=c++17", b"--ptxas-options=-v"]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        print(log.value.decode())
        sys.exit(1)
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
    cubin = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    return cubin.raw, log.value.decode()


def build(src):
    tmp = tempfile.mkdtemp()
    cubin_path = os.path.join(tmp, "attn.cubin")
    cubin, log = nvrtc_cubin(src)
    open(cubin_path, "wb").write(cubin)
    fn = ""
    for line in log.splitlines():
        if "Compiling entry" in line:
            fn = line.split("'")[1]
        if ("registers" in line or "spill" in line) and "f16_" not in fn:
            print("  ptxas:", fn, line.split(":", 1)[-1].strip())
    sass = subprocess.run(["cuobjdump", "-sass", cubin_path], capture_output=True, text=True).stdout
    return cubin, sass


class Driver:
    def __init__(self, cubin):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.mod = ctypes.c_void_p()
        buf = ctypes.create_string_buffer(cubin)
        self._check(self.cu.cuModuleLoadData(ctypes.byref(self.mod), buf), "cuModuleLoadData")
        self.funcs = {}

    def _check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: CUDA error {rc}")

    def func(self, name):
        if name not in self.funcs:
            f = ctypes.c_void_p()
            self._check(self.cu.cuModuleGetFunction(ctypes.byref(f), self.mod, name.encode()),
                        name)
            self.funcs[name] = f
        return self.funcs[name]

    def launch(self, name, grid, block, params_bytes):
        buf = ctypes.create_string_buffer(params_bytes, len(params_bytes))
        arr = (ctypes.c_void_p * 1)(ctypes.cast(buf, ctypes.c_void_p))
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self._check(self.cu.cuLaunchKernel(self.func(name), grid[0], grid[1], 1, block, 1, 1, 0,
                                           stream, arr, None), "cuLaunchKernel " + name)


def params(q, k, v, out, scale, causal, mask=None):
    heads = q.numel() // (q.shape[-2] * q.shape[-1])
    L, S = q.shape[-2], k.shape[-2]
    bdim = [1, 1, 1, 1]
    mst = [0, 0, 0, 0]
    mask_ptr, kind, mrow, mcol = 0, 0, 0, 0
    if mask is not None:
        full = mask.expand(*out.shape[:-1], S)
        st = full.stride()
        r = out.dim()
        for d in range(r - 2):
            bdim[4 - (r - 2) + d] = out.shape[d]
            mst[4 - (r - 2) + d] = st[d]
        mrow, mcol = st[r - 2], st[r - 1]
        mask_ptr = mask.data_ptr()
        kind = 1 if mask.dtype == torch.bool else 2
    return struct.pack("<5Qq4q4q2q2ifiii", q.data_ptr(), k.data_ptr(), v.data_ptr(), mask_ptr,
                       out.data_ptr(), heads, *bdim, *mst, mrow, mcol, L, S, scale,
                       1 if causal else 0, kind, 0)


GRAPH = False  # --graph


def time_ms(fn, reps=50):
    """Median ms per call of 7 x reps back-to-back calls; under --graph the reps calls are
    captured once in a CUDA graph and replayed (no CPU launch cost in the time; nan where the
    call cannot be captured)."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    run = lambda: [fn() for _ in range(reps)]
    if GRAPH:
        try:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                run()
            run = g.replay
            run()
            torch.cuda.synchronize()
        except Exception:
            return float("nan")
    ts = []
    for _ in range(7):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        run()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / reps)
    ts.sort()
    return ts[len(ts) // 2]


CASES = {
    # name: (batch, heads, L, S, D, causal, mask)   mask: None, "causal_bool", "pad_bool", "add"
    "gpt2": (8, 12, 512, 512, 64, True, None),
    "gpt2_boolmask": (8, 12, 512, 512, 64, False, "causal_bool"),
    "gpt2_addinf": (8, 12, 512, 512, 64, False, "causal_add"),
    "bert": (8, 12, 512, 512, 64, False, None),
    "bert128": (32, 12, 128, 128, 64, False, None),
    "d128": (4, 16, 1024, 1024, 128, True, None),
    "odd": (2, 3, 129, 77, 64, True, None),
    "odd_nc": (2, 3, 129, 77, 64, False, "pad_bool"),
    "odd_add": (2, 3, 200, 130, 128, False, "add"),
}


def make_mask(kind, B, H, L, S, dtype):
    if kind == "causal_bool":
        return torch.ones(L, S, dtype=torch.bool, device="cuda").tril().expand(B, 1, L, S).contiguous()
    if kind == "causal_add":
        m = torch.zeros(L, S, device="cuda")
        m.masked_fill_(torch.ones(L, S, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
        return m.to(dtype)
    if kind == "pad_bool":
        m = torch.rand(B, 1, 1, S, device="cuda") > 0.3
        m[..., 0] = True
        return m
    if kind == "add":
        return torch.randn(1, H, L, S, device="cuda").to(dtype)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--dtypes", default="bf16")
    ap.add_argument("--variants", default=DEFAULT_VARIANT,
                    help="#-separated label|body|threads|rows|minblocks")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--ncu", action="store_true", help="one launch per case, no timing")
    ap.add_argument("--graph", action="store_true",
                    help="time CUDA graphs of the calls (no CPU launch cost; torch's calls too)")
    a = ap.parse_args()
    global GRAPH
    GRAPH = a.graph
    torch.zeros(1, device="cuda")  # the primary context, current
    variants = []
    for spec in a.variants.split("#"):
        label, body, threads, rows, minb, *source = spec.split("|")
        v = {"body": body, "threads": threads, "rows": rows, "minb": minb,
             "source": source[0] if source else None}
        cubin, sass = build(kernel_source(v))
        for name in ("coil_attention_bf16_d64_nomask", "coil_attention_bf16_d64", "coil_attention_f32_d64"):
            part = sass.split("Function : " + name)
            if len(part) > 1:
                b = part[1].split("Function :")[0]
                print(f"  {label} sass {name}: {b.count(chr(10))} lines, HMMA {b.count('HMMA')} LDSM {b.count('LDSM')} "
                      f"LDL {b.count('LDL')} STL {b.count('STL')} MUFU {b.count('MUFU')} "
                      f"BAR {b.count('BAR')}")
        variants.append((label, Driver(cubin), threads, rows))
    torch.manual_seed(0)
    dts = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
    print(f"{'case':<14}{'dt':<5}{'variant':<10}{'coil':>8}{'cudnn':>8}{'flash':>8}{'effic':>8}"
          f"{'x cudnn':>8}{'x best':>8}{'relerr':>10}")
    from torch.nn.attention import sdpa_kernel, SDPBackend
    for cname in a.cases.split(","):
        B, H, L, S, D, causal, mk = CASES[cname]
        for dn in a.dtypes.split(","):
            dt = dts[dn]
            q = torch.randn(B, H, L, D, device="cuda").to(dt)
            k = torch.randn(B, H, S, D, device="cuda").to(dt)
            v = torch.randn(B, H, S, D, device="cuda").to(dt)
            mask = make_mask(mk, B, H, L, S, dt)
            scale = 1.0 / D ** 0.5
            half = dn != "f32"
            peers = {"cudnn": float("nan"), "flash": float("nan"), "effic": float("nan")}
            if not a.ncu:
                # float64 reference (torch's math SDPA); is_causal with L != S is top-left
                # aligned, as coil's j > i.
                ref = F.scaled_dot_product_attention(
                    q.double(), k.double(), v.double(),
                    attn_mask=None if mask is None else (mask if mask.dtype == torch.bool else mask.double()),
                    is_causal=causal, scale=scale)
                for bname, be in (() if a.no_peers else (
                        ("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
                        ("effic", SDPBackend.EFFICIENT_ATTENTION))):
                    try:
                        with sdpa_kernel([be]):
                            f = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale)
                            f()
                            peers[bname] = time_ms(f)
                    except Exception:
                        pass
            for label, drv, threads, rows in variants:
                if not half and label != variants[0][0]:
                    continue  # the f32 kernel is the same in every variant
                out = torch.full_like(q, float("nan"))
                r = int(pick(rows, D)) if half else (64 if D <= 64 else 32)
                grid = ((L + r - 1) // r, min(B * H, 65535))
                sym = f"coil_attention_{dn}_d{D}" + ("_nomask" if half and mask is None else "")
                pb = params(q, k, v, out, scale, causal, mask)
                nt = int(pick(threads, D)) if half else 256
                run = lambda: drv.launch(sym, grid, nt, pb)
                run()
                torch.cuda.synchronize()
                if a.ncu:
                    continue
                err = ((out.double() - ref).norm() / ref.norm()).item()
                t = time_ms(run)
                ok = [x for x in peers.values() if x == x]
                best = min(ok) if ok else float("nan")
                print(f"{cname:<14}{dn:<5}{label:<10}{t:8.4f}{peers['cudnn']:8.4f}{peers['flash']:8.4f}"
                      f"{peers['effic']:8.4f}{t / peers['cudnn']:8.2f}{t / best:8.2f}{err:10.2e}",
                      flush=True)


if __name__ == "__main__":
    main()
