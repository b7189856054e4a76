#!/usr/bin/env python3
"""Diagnostics for `coil bench cuda`'s torch side on a GPU (not part of the bench's numbers).

  cuda_timing_probe.py launch    the memory-bound rows (gelu_chain, softmax, layernorm) and the
                                 1 GiB copy, eager and torch.compile, timed as torch_peers.py's
                                 time_cuda does (an event, the call, an event onto an idle GPU)
                                 and from a busy stream (a spin kernel queued before the start
                                 event, so the event and the kernels wait behind it and the span
                                 holds no launch latency): how much of each per-call time is the
                                 launch onto an idle GPU, for torch as COIL_CUDA_TIMING_PROBE=gate2
                                 shows it for coil.
  cuda_timing_probe.py gpt2      torch.profiler's per-kernel device times of torch.compile of
                                 the bench's GPT-2 small (batch 8, 512 tokens, f32, TF32 off) over
                                 5 calls after 3 warm-ups, grouped by kernel name (ms per call).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_peers  # noqa: E402


def time_events(fn, busy, reps=30):
    """Median ms of fn() between two events; busy: a ~1 ms spin kernel queued first."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if busy:
            torch.cuda._sleep(2_000_000)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b))
    out.sort()
    return out[len(out) // 2]


def launch():
    torch.backends.cuda.matmul.allow_tf32 = False
    n = (1 << 30) // 4
    a = torch.randn(n, device="cuda")
    b = torch.empty_like(a)
    copy = lambda: b.copy_(a)  # noqa: E731
    print("%-12s %-14s %10s %10s %8s" % ("row", "side", "idle ms", "busy ms", "gap us"))
    idle, busy = time_events(copy, False), time_events(copy, True)
    print("%-12s %-14s %10.4f %10.4f %8.1f" % ("copy 1 GiB", "torch", idle, busy,
                                               1e3 * (idle - busy)))
    del a, b
    for name in ("gelu_chain", "softmax", "layernorm"):
        torch.manual_seed(0)
        model, make_inputs, _, _, _ = torch_peers.build_micro(name, "full")
        model = model.cuda().eval()
        xs = tuple(x.cuda() for x in make_inputs(torch_peers.MICRO[name][0]))
        compiled = torch.compile(model)
        with torch.no_grad():
            for side, fn in (("eager", model), ("torch.compile", compiled)):
                call = lambda: fn(*xs)  # noqa: E731
                idle, busy = time_events(call, False), time_events(call, True)
                print("%-12s %-14s %10.4f %10.4f %8.1f" % (name, side, idle, busy,
                                                           1e3 * (idle - busy)), flush=True)


def gpt2():
    from torch.profiler import profile, ProfilerActivity
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    model, make_input, _, _ = torch_peers.build("gpt2_small", "full", 512)
    model = model.cuda().eval()
    x = make_input(8).cuda()
    compiled = torch.compile(model)
    with torch.no_grad():
        for _ in range(3):
            compiled(x)
        torch.cuda.synchronize()
        print("median device ms (events, idle start): %.3f" % time_events(lambda: compiled(x),
                                                                          False, 10))
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                compiled(x)
            torch.cuda.synchronize()
    sums = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            t, c = sums.get(e.name, (0.0, 0))
            sums[e.name] = (t + e.time_range.elapsed_us() / 1e3, c + 1)  # ms
    total = sum(t for t, _ in sums.values()) / 5
    print("kernels' sum per call: %.3f ms" % total)
    for name, (t, c) in sorted(sums.items(), key=lambda kv: -kv[1][0])[:30]:
        print("%9.3f ms %4d calls  %s" % (t / 5, c // 5, name[:150]))


if __name__ == "__main__":
    {"launch": launch, "gpt2": gpt2}[sys.argv[1]]()
