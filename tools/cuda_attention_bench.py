#!/usr/bin/env python3
"""coil's fused attention kernels alone on a GPU, against torch's SDPA backends (cuDNN, flash,
efficient) on the same inputs: correctness against float64 SDPA and per-call device times.

Runs on the GPU machine from the repository alone (no Bazel, no coil binary): the kernels'
source is read from codegen_cuda/internal/attention_source.cc (its kCommon raw string), wrapped
in the extern "C" entry points the emitter writes, compiled by nvcc to an sm_90 cubin
(ptxas' register report and SASS instruction counts printed), and launched through the driver API (ctypes)
with kernel_abi.h's CoilAttentionParams layout on torch's tensors.

  python3 tools/cuda_attention_bench.py [--cases gpt2,bert,...] [--dtypes bf16,f16,f32]
      [--variants 'label|body|threads|rows|minblocks#...'] [--no-peers] [--ncu]
Prints one line per case and variant: coil ms, each torch backend's ms, the ratios to cuDNN and
to the fastest backend, and the error (|out - ref| / |ref|). --ncu launches each once, untimed
(for `ncu --kernel-name regex:coil_attention ...`). Used for docs/benchmarks.md "Fused attention
on CUDA: masks summarized per tile".
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


def kernel_source(body_tmpl, threads, rows, minb):
    text = open(os.path.join(ROOT, "codegen_cuda/internal/attention_source.cc")).read()
    m = re.search(r'constexpr char kCommon\[\] = R"CUDA\((.*?)\)CUDA";', text, re.S)
    body = m.group(1)
    # The emitter's entry points (AttentionKernelsSource), every variant; the f16 / bf16 body
    # and launch bounds may be replaced (--variants) to compare instantiations.
    bounds = f"{threads}, {minb}" if minb else f"{threads}"
    entries = []
    for dt, dcode in (("f16", 1), ("bf16", 2)):
        for d in (64, 128):
            half = body_tmpl.format(d=d, dt=dcode, st=2 if d <= 64 else 1,
                                   wm=block_rows(rows, d) // 64)
            entries.append(f"extern \"C\" __global__ void __launch_bounds__({bounds}) "
                           f"coil_attention_{dt}_d{d}(CoilAttentionParams p) {{ {half} }}\n")
    for d in (64, 128):
        entries.append(f"extern \"C\" __global__ void __launch_bounds__(256) "
                       f"coil_attention_f32_d{d}(CoilAttentionParams p) {{ "
                       f"coil_attn_f32<{d}, {'4, 4' if d <= 64 else '2, 2'}>(p); }}\n")
    return body + "".join(entries)


# label|half body|threads|rows per block|min blocks per SM (0: none)
# rows: a number (for both head dims) or "auto" (128 for D = 64, 64 for D = 128: the 32-rows-a-warp
# variant measured slower); {wm} in the body is rows / 64. The default is what coil emits.
DEFAULT_VARIANT = "coil|coil_attn_tc<{d}, {dt}, {st}, 1>(p);|128|64|0"


def block_rows(rows, d):
    return (128 if d <= 64 else 64) if rows == "auto" else int(rows)


def build(src):
    tmp = tempfile.mkdtemp()
    cu = os.path.join(tmp, "attn.cu")
    open(cu, "w").write(src)
    cubin = os.path.join(tmp, "attn.cubin")
    r = subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-O3", "-std=c++17", "-Xptxas", "-v",
                        cu, "-o", cubin], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr)
        sys.exit(1)
    for line in r.stderr.splitlines():
        if "registers" in line or "Compiling entry" in line or "spill" in line:
            print("  ptxas:", line.strip())
    sass = subprocess.run(["cuobjdump", "-sass", cubin], capture_output=True, text=True).stdout
    return open(cubin, "rb").read(), sass


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


def time_ms(fn, reps=50):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(7):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
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
    a = ap.parse_args()
    torch.zeros(1, device="cuda")  # the primary context, current
    variants = []
    for spec in a.variants.split("#"):
        label, body, threads, rows, minb = spec.split("|")
        cubin, sass = build(kernel_source(body, int(threads), rows, int(minb)))
        for name in ("coil_attention_bf16_d64", "coil_attention_f32_d64"):
            part = sass.split("Function : " + name)
            if len(part) > 1:
                b = part[1].split("Function :")[0]
                print(f"  {label} sass {name}: HMMA {b.count('HMMA')} LDSM {b.count('LDSM')} "
                      f"LDL {b.count('LDL')} STL {b.count('STL')} MUFU {b.count('MUFU')} "
                      f"BAR {b.count('BAR')}")
        variants.append((label, Driver(cubin), int(threads), rows))
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
                r = block_rows(rows, D) if half else (64 if D <= 64 else 32)
                grid = ((L + r - 1) // r, min(B * H, 65535))
                sym = f"coil_attention_{dn}_d{D}"
                pb = params(q, k, v, out, scale, causal, mask)
                run = lambda: drv.launch(sym, grid, threads if half else 256, pb)
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
