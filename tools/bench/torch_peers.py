"""The peers side of `coil bench cpu --peers`: builds five standard-size models, exports each to
ONNX with its inputs and torch eager's outputs for coil, and times torch eager, torch.compile
(default mode) and ONNX Runtime on the same inputs with the same thread count.

Usage (`coil bench cpu --peers` runs it for you, with the Python given by --python):
  torch_peers.py --out DIR [--size full|quick] [--models resnet50,gpt2_small] [--batches 1,8]
                 [--threads N] [--warmup W] [--min-reps K] [--max-reps M] [--min-seconds S]
                 [--device cpu|cuda]

Models (random weights, fixed seed; nothing is downloaded):
  resnet50, mobilenet_v3_large, vit_b_16: torchvision's definitions, 3x224x224 images;
  bert_base: BERT-base's encoder (embeddings, 12 post-norm layers of width 768, 12 heads,
    feed-forward 3072, erf GELU), 128 tokens, no padding mask; output the last hidden state;
  gpt2_small: GPT-2 small (12 pre-norm causal blocks of width 768, 12 heads, tanh GELU, vocab
    50257, LM head tied to the token embedding), 128 tokens; output the logits.
  --device cuda only, the issue's memory-bound and MLP rows (one 2-D input or two, the batch
  being the rows): gelu_chain (gelu(1.25x + 0.5) * x - 0.125, f32 [1024, 65536]: 64M),
  softmax (bf16 [16384, 8192]), layernorm (gelu(layer_norm(x + r)), bf16 [16384, 8192]),
  mlp_bf16 (Linear 2048->8192->2048->8192->2048 with ReLU between, bf16, batch 1024). Their
  runs carry "bytes": what the op must move (each input read once, the output written once;
  0 for the MLP), and the JSON "copy_gb_per_s": a 1 GiB device-to-device copy timed the same
  way (the bandwidth ceiling; --size quick: 64 MiB).
  Both transformers are defined here (transformers' own classes do not export with the
  TorchScript exporter on every version); where torch has scaled_dot_product_attention, torch
  eager and torch.compile run attention through it, and the ONNX graph spells it out.
Default batch sizes are each model's BATCHES (the issue's), --batches replaces them for all.

--device cuda only, MODEL_bf16 for each model (resnet50_bf16, bert_base_bf16, ...): the fp32
  model exported as it is, torch eager and torch.compile run under torch.autocast("cuda",
  torch.bfloat16), their output cast to f32 (the saved output is autocast eager's); the JSON
  model says "precision": "bf16" (coil compiles it with --precision bf16, its autocast pass).

--device cuda (`coil bench cuda`): torch eager and torch.compile run on the first GPU, model and
input moved there, TF32 off (torch.backends.*.allow_tf32 = False: exact f32, coil's default),
timed by CUDA events around samples of calls back to back (at least --sample-ms of them, so
that only a sample's first call starts on an idle GPU; per-call device time, as coil's, which is
timed the same way); default batches CUDA_BATCHES,
gpt2_small at 512 tokens (CUDA_TOKENS; the CUDA issue's row);
ONNX Runtime is not measured (absent); the JSON names the GPU ("gpu"). The saved input and
output are host tensors, as on the CPU.

Peers the Python lacks are reported absent, never substituted: torch.compile needs torch >= 2,
ONNX Runtime needs the onnxruntime package. COIL_PEERS_SKIP=compiled (and/or onnxruntime, comma
separated) leaves a peer out on purpose; the report then says it was skipped. torch.compile is called per (model, batch) with
dynamic=False after torch._dynamo.reset(), in a fresh Inductor cache folder (cold); its
compile_seconds is the first call's time minus one eager call. ONNX Runtime runs the exported
model with every graph optimization, intra-op threads N, inter-op 1. Each peer's output is
compared with torch eager's (max|peer - eager| / max|eager|).

Prints one JSON object on stdout (tools/bench/cpu_bench.proto, TorchEagerResults, with the
peer fields); files as torch_eager.py (DIR/MODEL/model.onnx, DIR/MODEL/batch_N/*.pb).

--serve (CPU; `coil bench cpu --peers` uses it for its rounds, tools/bench/cpu_bench_rounds.h):
the first pass times each system with one call only (its outputs checked as always) and keeps
every row's eager model, torch.compile'd module and ONNX Runtime session alive (torch.compile
compiles once per row: torch._dynamo.reset() runs once, not per row); the JSON is one line.
Then it reads requests on stdin, one per line, until stdin closes: "time MODEL BATCH" prints
one line {"eager": T, "compiled": T, "onnxruntime": T} (cpu_bench.proto's PeerRound; T a
median_ms/min_ms/reps timing under the timing flags, or an error; absent peers left out), in
that order of timing. Anything else is an error (exit status 1). Protocol lines are written to
the original stdout only; every other print goes to stderr.
"""
import argparse
import json
import math
import os
import sys
import tempfile
import time

# A fresh Inductor cache unless the caller chose one: torch.compile's times are cold compiles.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="coil_peers_inductor_"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import torch_eager  # noqa: E402  (save, time_calls, log, EXPORT_OPTIONS, positive_ints)

MODELS = ("resnet50", "mobilenet_v3_large", "vit_b_16", "bert_base", "gpt2_small")
# --device cuda only: MODEL + BF16_SUFFIX runs MODEL under torch.autocast bf16.
BF16_SUFFIX = "_bf16"
# --device cuda only: rows (the batch) at --size full and quick per micro row.
MICRO = {"gelu_chain": (1024, 4), "softmax": (16384, 8), "layernorm": (16384, 8),
         "mlp_bf16": (1024, 8)}
BATCHES = {"resnet50": [1, 16], "mobilenet_v3_large": [1, 16], "vit_b_16": [1, 8],
           "bert_base": [1, 8], "gpt2_small": [1, 4]}
CUDA_BATCHES = {"resnet50": [64], "mobilenet_v3_large": [64], "vit_b_16": [32],
                "bert_base": [8], "gpt2_small": [8]}
# --device cuda at --size full: sequence lengths other than SIZES' (the CUDA issue's GPT-2 row is
# batch 8 at 512 tokens).
CUDA_TOKENS = {"gpt2_small": 512}
SIZES = {
    "full": {"image": 224, "tokens": 128,
             "bert": {"vocab": 30522, "dim": 768, "heads": 12, "ff": 3072, "layers": 12},
             "gpt2": {"vocab": 50257, "context": 1024, "dim": 768, "heads": 12, "layers": 12}},
    "quick": {"image": 32, "tokens": 8,
              "bert": {"vocab": 64, "dim": 32, "heads": 2, "ff": 64, "layers": 2},
              "gpt2": {"vocab": 64, "context": 16, "dim": 32, "heads": 2, "layers": 2}},
}

# Off while exporting: the ONNX graph gets the attention spelled out (matmul, softmax, matmul).
USE_SDPA = hasattr(F, "scaled_dot_product_attention")


def attend(q, k, v, causal_mask):
    """softmax(q k^T / sqrt(d) [causal]) v on (batch, heads, tokens, head_dim)."""
    if USE_SDPA:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal_mask is not None)
    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal_mask is not None:
        t = q.shape[2]
        s = s.masked_fill(~causal_mask[:t, :t], float("-inf"))
    return F.softmax(s, dim=-1) @ v


def split_heads(x, heads):
    b, t, c = x.shape
    return x.reshape(b, t, heads, c // heads).transpose(1, 2)


def merge_heads(y):
    b, h, t, d = y.shape
    return y.transpose(1, 2).reshape(b, t, h * d)


class BertLayer(nn.Module):
    def __init__(self, dim, heads, ff):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.ln1 = nn.LayerNorm(dim, eps=1e-12)
        self.fc = nn.Linear(dim, ff)
        self.out = nn.Linear(ff, dim)
        self.ln2 = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, x):
        h = self.heads
        a = attend(split_heads(self.q(x), h), split_heads(self.k(x), h),
                   split_heads(self.v(x), h), None)
        x = self.ln1(x + self.proj(merge_heads(a)))
        return self.ln2(x + self.out(F.gelu(self.fc(x))))


class BertEncoder(nn.Module):
    """BERT's embeddings (token, position, token type 0, layer norm) and post-norm layers."""

    def __init__(self, vocab, dim, heads, ff, layers, positions=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(positions, dim)
        self.segment = nn.Embedding(2, dim)
        self.norm = nn.LayerNorm(dim, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(dim, heads, ff) for _ in range(layers)])

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.norm(self.tok(ids) + self.pos(pos) + self.segment.weight[0])
        for layer in self.layers:
            x = layer(x)
        return x


class Gpt2Block(nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)
        self.register_buffer("causal", torch.tril(torch.ones(context, context, dtype=torch.bool)))

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[2], dim=2)
        h = self.heads
        a = attend(split_heads(q, h), split_heads(k, h), split_heads(v, h), self.causal)
        x = x + self.proj(merge_heads(a))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    def __init__(self, vocab, context, dim, heads, layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(context, dim)
        self.blocks = nn.ModuleList([Gpt2Block(dim, heads, context) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied, as GPT-2

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos)
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x))


def build(name, size, tokens=None):
    """(model, input maker taking a batch size, opset, config text); batch is dimension 0.
    tokens: the transformers' sequence length (default SIZES[size]["tokens"])."""
    import torchvision
    s = SIZES[size]
    image = s["image"]
    if name in ("resnet50", "mobilenet_v3_large", "vit_b_16"):
        if name == "vit_b_16" and size == "quick":
            model = torchvision.models.VisionTransformer(
                image_size=image, patch_size=16, num_layers=1, num_heads=2, hidden_dim=32,
                mlp_dim=64, num_classes=10)
        else:
            model = getattr(torchvision.models, name)(weights=None)
        if name == "vit_b_16":
            # torchvision zero-initializes ViT's classifier: every output would be 0 and every
            # comparison with torch vacuous.
            nn.init.normal_(model.heads.head.weight, std=0.02)
            nn.init.normal_(model.heads.head.bias, std=0.02)
        opset = 17 if name == "vit_b_16" else 13
        return (model, lambda n: torch.randn(n, 3, image, image), opset,
                "3x%dx%d images" % (image, image))
    tokens = tokens or s["tokens"]
    if name == "bert_base":
        b = s["bert"]
        config = "%d tokens, width %d, %d heads, ff %d, %d layers, vocab %d" % (
            tokens, b["dim"], b["heads"], b["ff"], b["layers"], b["vocab"])
        return (BertEncoder(**b), lambda n: torch.randint(0, b["vocab"], (n, tokens)), 17,
                config)
    if name == "gpt2_small":
        g = s["gpt2"]
        config = "%d tokens, width %d, %d heads, %d blocks, vocab %d, logits out" % (
            tokens, g["dim"], g["heads"], g["layers"], g["vocab"])
        return (Gpt2(**g), lambda n: torch.randint(0, g["vocab"], (n, tokens)), 17, config)
    raise SystemExit("torch_peers.py: unknown model '%s' (known: %s)" % (name, ", ".join(MODELS)))


class GeluChain(nn.Module):
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


class Unpacked(nn.Module):
    """model(*xs) as a module of one tuple argument (time_compiled passes one)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, xs):
        return self.model(*xs)


def build_micro(name, size):
    """(model in its dtype, input maker(rows) -> tuple, opset, config, bytes(rows))."""
    quick = size == "quick"
    if name == "gelu_chain":
        width = 256 if quick else 65536
        return (GeluChain(), lambda n: (torch.randn(n, width),), 17,
                "f32 [rows, %d]" % width, lambda n: 2 * 4 * n * width)
    if name == "mlp_bf16":
        dim, hidden = (64, 128) if quick else (2048, 8192)
        model = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim), nn.ReLU(),
                              nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim))
        return (model.bfloat16(), lambda n: (torch.randn(n, dim).bfloat16(),), 17,
                "bf16 Linear %d-%d-%d-%d-%d, ReLU" % (dim, hidden, dim, hidden, dim),
                lambda n: 0)
    width = 256 if quick else 8192
    if name == "softmax":
        return (Softmax(), lambda n: (torch.randn(n, width).bfloat16(),), 17,
                "bf16 [rows, %d]" % width, lambda n: 2 * 2 * n * width)
    return (LayerNormResidualGelu(width).bfloat16(),
            lambda n: (torch.randn(n, width).bfloat16(), torch.randn(n, width).bfloat16()), 17,
            "gelu(layer_norm(x + r)), bf16 [rows, %d]" % width, lambda n: 3 * 2 * n * width)


def copy_gb_per_s(args):
    """A device-to-device copy of 1 GiB (quick: 64 MiB) timed by CUDA events: GB/s of the bytes
    read and written."""
    n = (64 << 20) // 4 if args.size == "quick" else (1 << 30) // 4
    a = torch.randn(n, device="cuda")
    b = torch.empty_like(a)
    median_ms, _, _ = time_cuda(lambda: b.copy_(a), args)
    del a, b
    return 2 * 4 * n / (median_ms * 1e6)


def export(model, example, path, opset, names=("x",)):
    global USE_SDPA
    saved, USE_SDPA = USE_SDPA, False
    # nn.MultiheadAttention's fused fast path (vit_b_16) has no ONNX export: switched off where
    # torch can, and grad stays on (torch 1.13 takes the fast path only without grad).
    fastpath = getattr(torch.backends, "mha", None)
    was_fast = fastpath.get_fastpath_enabled() if fastpath else None
    if fastpath:
        fastpath.set_fastpath_enabled(False)
    try:
        axes = {n: {0: "batch"} for n in list(names) + ["y"]}
        torch.onnx.export(model, example if isinstance(example, tuple) else (example,), path,
                          opset_version=opset, input_names=list(names), output_names=["y"],
                          dynamic_axes=axes, **torch_eager.EXPORT_OPTIONS)
    finally:
        USE_SDPA = saved
        if fastpath:
            fastpath.set_fastpath_enabled(was_fast)


def checked(timing, got, want):
    """timing with max_relative_error against torch eager's output, or an error."""
    got, want = torch.as_tensor(got).detach().cpu().double(), want.detach().cpu().double()
    if got.shape != want.shape:
        return {"error": "output shape %s, torch eager's %s" % (list(got.shape),
                                                                list(want.shape))}
    timing["max_relative_error"] = float(
        (got - want).abs().max() / want.abs().max().clamp_min(1e-30))
    return timing


def absent_peers(device="cpu"):
    """(reason torch.compile is absent or "", onnxruntime module or None, its reason or "")."""
    skip = [p for p in os.environ.get("COIL_PEERS_SKIP", "").split(",") if p]
    for p in skip:
        if p not in ("compiled", "onnxruntime"):
            raise SystemExit("torch_peers.py: COIL_PEERS_SKIP: unknown peer '%s'" % p)
    compile_absent = ("" if hasattr(torch, "compile") else
                      "torch %s has no torch.compile" % torch.__version__)
    if "compiled" in skip:
        compile_absent = "skipped (COIL_PEERS_SKIP)"
    if "onnxruntime" in skip:
        return compile_absent, None, "skipped (COIL_PEERS_SKIP)"
    if device == "cuda":
        return compile_absent, None, "not measured with --device cuda"
    try:
        import onnxruntime
        return compile_absent, onnxruntime, ""
    except ImportError as e:
        return compile_absent, None, "onnxruntime is not importable (%s)" % e


def peer_failure(e):
    return {"error": ("%s: %s" % (type(e).__name__, e)).splitlines()[0][:300]}


def passes_for(single_ms, args):
    """Calls per CUDA sample for a call that takes single_ms alone: calls back to back for at
    least --sample-ms (at most --max-passes), so that only a sample's first call starts on an idle
    GPU (the launch onto an idle GPU costs 21-36 us on an H200, 10-20% of a memory-bound row).
    coil's rows are timed by the same rule (runtime/cuda/executable.h, PassesForSample), whose
    numbers `coil bench cuda` passes here."""
    return max(1, min(args.max_passes, math.ceil(args.sample_ms / max(single_ms, 1e-3))))


def time_cuda(fn, args):
    """(median, min, reps) of fn() in ms per call by CUDA events around samples of calls back to
    back (passes_for), under the same policy as torch_eager.time_calls for the samples (warm-ups,
    then min/max reps and min seconds)."""
    for _ in range(args.warmup):
        fn()
    torch.cuda.synchronize()

    def sample(passes):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(passes):
            fn()
        b.record()
        b.synchronize()
        return a.elapsed_time(b) / passes

    passes = passes_for(sample(1), args)
    samples = []
    start = time.perf_counter()
    while len(samples) < args.min_reps or (len(samples) < args.max_reps and
                                           time.perf_counter() - start < args.min_seconds):
        samples.append(sample(passes))
    samples.sort()
    torch_eager.log("  %d samples of %d call%s back to back" % (
        len(samples), passes, "" if passes == 1 else "s"))
    return samples[len(samples) // 2] if len(samples) % 2 else (
        samples[len(samples) // 2 - 1] + samples[len(samples) // 2]) / 2, samples[0], len(samples)


def time_on(args):
    return time_cuda if args.device == "cuda" else torch_eager.time_calls


def synchronized(fn, args):
    """fn, followed by a device synchronize on --device cuda (wall times of first calls)."""
    def call():
        y = fn()
        if args.device == "cuda":
            torch.cuda.synchronize()
        return y
    return call


def no_grad_call(fn):
    """fn() under torch.no_grad() (the calls --serve keeps for its rounds)."""
    def call():
        with torch.no_grad():
            return fn()
    return call


def time_compiled(model, x, want, eager_ms, args, keep=None):
    """keep (--serve): a dict that gets "compiled", the compiled call, when it checks out."""
    if keep is None:  # --serve resets once: a reset would drop the kept rows' compiled code
        torch._dynamo.reset()
    try:
        # COIL_BENCH_COMPILE_MODE=reduce-overhead: torch.compile with CUDA graphs (against coil's
        # COIL_CUDA_GRAPHS=1); unset: the default mode.
        mode = os.environ.get("COIL_BENCH_COMPILE_MODE")
        compiled = torch.compile(model, dynamic=False, **({"mode": mode} if mode else {}))
        with torch.no_grad():
            start = time.perf_counter()
            y = synchronized(lambda: compiled(x), args)()
            first_s = time.perf_counter() - start
            # reduce-overhead's outputs live in its CUDA graph's memory, which the timed calls
            # overwrite: keep a copy for the check.
            y = y.clone()
            median_ms, min_ms, reps = time_on(args)(lambda: compiled(x), args)
    except Exception as e:  # a peer failing is a result, not a crash of the benchmark
        return peer_failure(e)
    if keep is not None:
        keep["compiled"] = no_grad_call(lambda c=compiled, x=x: c(x))
    return checked({"median_ms": median_ms, "min_ms": min_ms, "reps": reps,
                    "compile_seconds": max(first_s - eager_ms / 1e3, 0.0)}, y, want)


def time_onnxruntime(ort, onnx_path, x, want, args, keep=None):
    """keep (--serve): a dict that gets "onnxruntime", the session's run, kept alive."""
    try:
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        start = time.perf_counter()
        session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        feed = {"x": x.numpy()}
        y = session.run(None, feed)[0]
        first_s = time.perf_counter() - start
        median_ms, min_ms, reps = torch_eager.time_calls(lambda: session.run(None, feed), args)
        if keep is not None:
            # Bound now: the `del session` below empties the variable a closure would read.
            keep["onnxruntime"] = lambda s=session, f=feed: s.run(None, f)
        del session
    except Exception as e:
        return peer_failure(e)
    return checked({"median_ms": median_ms, "min_ms": min_ms, "reps": reps,
                    "compile_seconds": first_s}, y, want)


class Autocast(nn.Module):
    """model(*xs) under torch.autocast("cuda", torch.bfloat16), its output cast to f32."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *xs):
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            return self.model(*xs).float()


def run_model(name, args, compile_absent, ort, kept=None):
    """kept (--serve): a dict that gets, per (name, batch), the row's calls by system."""
    torch.manual_seed(0)
    cuda = args.device == "cuda"
    bytes_moved = lambda n: 0  # noqa: E731
    base = name
    if name not in MICRO and name.endswith(BF16_SUFFIX):  # (mlp_bf16 is a micro row)
        base = name[:-len(BF16_SUFFIX)]
    if (name in MICRO or base != name) and not cuda:
        raise SystemExit("torch_peers.py: %s is a --device cuda row" % name)
    if name in MICRO:
        model, make_inputs, opset, config, bytes_moved = build_micro(name, args.size)
    else:
        tokens = CUDA_TOKENS.get(base) if cuda and args.size == "full" else None
        model, make_input, opset, config = build(base, args.size, tokens)
        make_inputs = lambda n: (make_input(n),)  # noqa: E731
    model.eval()
    names = ("x", "r")[:len(make_inputs(1))]
    model_dir = os.path.join(args.out, name)
    os.makedirs(model_dir, exist_ok=True)
    onnx_path = os.path.join(model_dir, "model.onnx")
    start = time.perf_counter()
    export(model, make_inputs(2), onnx_path, opset, names)
    export_seconds = time.perf_counter() - start
    if base != name:
        model = Autocast(model)
        config += ", torch.autocast bf16"
    torch_eager.log("%s exported in %.1f s" % (name, export_seconds))
    runs = []
    if cuda:
        model.cuda()
    default = [MICRO[name][args.size == "quick"]] if name in MICRO else (
        CUDA_BATCHES if cuda else BATCHES)[base]
    for batch in args.batches or default:
        torch.manual_seed(1000 + batch)
        xs_host = make_inputs(batch)
        xs = tuple(x.cuda() for x in xs_host) if cuda else xs_host
        with torch.no_grad():
            y = model(*xs)
            median_ms, min_ms, reps = time_on(args)(lambda: model(*xs), args)
        y = y.cpu()
        if not bool(y.abs().max() > 0):
            raise SystemExit("torch_peers.py: %s's output is all zeros (or NaN): comparing with "
                             "it would check nothing" % name)
        d = os.path.join(model_dir, "batch_%d" % batch)
        os.makedirs(d, exist_ok=True)
        torch_eager.save(y, os.path.join(d, "output_0.pb"))
        paths = [os.path.join(d, "input_%d.pb" % i) for i in range(len(xs_host))]
        for x_host, path in zip(xs_host, paths):
            torch_eager.save(x_host, path)
        run = {"batch": batch, "input": paths[0], "output": os.path.join(d, "output_0.pb"),
               "median_ms": median_ms, "min_ms": min_ms, "reps": reps}
        if len(paths) > 1:
            run["more_inputs"] = paths[1:]
        if bytes_moved(batch) > 0:
            run["bytes"] = bytes_moved(batch)
        keep = None
        if kept is not None:
            keep = kept[(name, batch)] = {"eager": no_grad_call(
                lambda model=model, xs=xs: model(*xs))}
        if not compile_absent:
            one = (model, xs[0]) if len(xs) == 1 else (Unpacked(model), xs)
            run["compiled"] = time_compiled(one[0], one[1], y, median_ms, args, keep)
        if ort is not None:
            run["onnxruntime"] = time_onnxruntime(ort, onnx_path, xs_host[0], y, args, keep)
        torch_eager.log("%s batch %d: eager %.3f ms, torch.compile %s, onnxruntime %s" % (
            name, batch, median_ms, run.get("compiled", {}).get("median_ms", "-"),
            run.get("onnxruntime", {}).get("median_ms", "-")))
        runs.append(run)
    result = {"name": name, "onnx": onnx_path, "config": config, "opset": opset,
              "export_seconds": export_seconds, "runs": runs}
    if base != name:
        result["precision"] = "bf16"
    return result


def timing(fn, args):
    """{"median_ms", "min_ms", "reps"} of fn under the timing flags, or an error."""
    try:
        median_ms, min_ms, reps = torch_eager.time_calls(fn, args)
    except Exception as e:  # a peer failing in a round is a result
        return peer_failure(e)
    return {"median_ms": median_ms, "min_ms": min_ms, "reps": reps}


# --serve: seconds between the last timed call of a round and its answer.
IDLE_BEFORE_ANSWER_S = 0.1


def serve(kept, args, out):
    """--serve's request loop: one PeerRound line on `out` per "time MODEL BATCH" line."""
    for line in sys.stdin:
        words = line.split()
        if len(words) != 3 or words[0] != "time" or not words[2].isdigit():
            raise SystemExit("torch_peers.py --serve: bad request %r (want 'time MODEL BATCH')" %
                             line.strip())
        calls = kept.get((words[1], int(words[2])))
        if calls is None:
            raise SystemExit("torch_peers.py --serve: no row %s batch %s (rows: %s)" % (
                words[1], words[2], ", ".join("%s %d" % k for k in kept)))
        answer = {system: timing(calls[system], args)
                  for system in ("eager", "compiled", "onnxruntime") if system in calls}
        torch_eager.log("round %s batch %s: %s" % (words[1], words[2], ", ".join(
            "%s %.3f ms" % (k, v["median_ms"]) if "median_ms" in v else "%s failed" % k
            for k, v in answer.items())))
        # Before answering (coil times next): torch's and ONNX Runtime's threads spin for a
        # while after a call (libgomp's default policy spins ~300k times), then sleep; this
        # lets them reach their sleep so they take no CPU from coil's timed runs.
        time.sleep(IDLE_BEFORE_ANSWER_S)
        out.write(json.dumps(answer) + "\n")
        out.flush()


def main():
    args, names = torch_eager.parse_common_args(__doc__.splitlines()[0], SIZES,
                                                MODELS + tuple(MICRO) +
                                                tuple(m + BF16_SUFFIX for m in MODELS), None,
                                                devices=("cpu", "cuda"), serve=True)
    out, kept, first = sys.stdout, None, args
    if args.serve:
        if args.device != "cpu":
            raise SystemExit("torch_peers.py: --serve is for --device cpu")
        # The protocol owns the original stdout; any other print (a library's too) goes to stderr.
        out = os.fdopen(os.dup(1), "w")
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        kept = {}
        # The first pass only checks: one call per system (the rounds are the measurement).
        first = argparse.Namespace(**vars(args))
        first.warmup, first.min_reps, first.max_reps, first.min_seconds = 0, 1, 1, 0.0
    gpu = ""
    if args.device == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit("torch_peers.py: --device cuda, but torch %s sees no CUDA device" %
                             torch.__version__)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        gpu = torch.cuda.get_device_name(0)
    compile_absent, ort, ort_absent = absent_peers(args.device)
    if args.serve and not compile_absent:
        torch._dynamo.reset()  # once: time_compiled does not reset under --serve
    results = {"gpu": gpu, "torch_version": torch.__version__, "threads": torch.get_num_threads(),
               "compiled_absent": compile_absent, "onnxruntime_absent": ort_absent,
               "onnxruntime_version": ort.__version__ if ort is not None else "",
               "models": [run_model(name, first, compile_absent, ort, kept) for name in names]}
    if args.device == "cuda":
        results["copy_gb_per_s"] = copy_gb_per_s(args)
    if args.serve:
        out.write(json.dumps(results) + "\n")
        out.flush()
        serve(kept, args, out)
        return
    json.dump(results, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
