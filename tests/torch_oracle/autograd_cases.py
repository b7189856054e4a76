"""Gradients from torch 1.13's autograd for coil's derivative rules (autograd/).

Each case is one op: its inputs (every floating input requires grad), then as expected values
the op's outputs followed by the gradient of every floating input, for the tangents
t_i[k] = cos(0.7 k + i) (row-major k, rounded to output i's dtype), which
autograd_oracle_test.cc recomputes the same way. Run by Bazel with Debian's /usr/bin/python3.
"""
import torch
import torch.nn.functional as F

from oracle import Suite

torch.manual_seed(0)
s = Suite("autograd")
F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
TOL = {F32: (1e-4, 1e-5), F64: (1e-10, 1e-12), F16: (2e-2, 2e-2), BF16: (5e-2, 5e-2)}
NAME = {F32: "f32", F64: "f64", F16: "f16", BF16: "bf16"}


def tangent(out, i):
    k = torch.arange(out.numel(), dtype=F64)
    return torch.cos(0.7 * k + i).reshape(out.shape).to(out.dtype)


def rand(shape, dt=F32, lo=None, hi=None):
    if lo is not None:
        return (torch.rand(shape, dtype=F64) * (hi - lo) + lo).to(dt)
    return torch.randn(shape, dtype=F64).to(dt)


def case(op, inputs, fn, attrs=None, name="", dt=F32, rtol=None, atol=None):
    leaves = [x.detach().requires_grad_(x.is_floating_point()) for x in inputs]
    # Views (non-contiguous inputs) are passed as torch holds them; gradients are w.r.t. them.
    args = [l for l in leaves]
    outs = fn(*args)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    floating = [(i, o) for i, o in enumerate(outs) if o.is_floating_point()]
    grads_in = [l for l in leaves if l.is_floating_point()]
    grads = torch.autograd.grad([o for _, o in floating],
                                grads_in,
                                [tangent(o, i) for i, (_, o) in enumerate(floating)],
                                allow_unused=True)
    grads = [torch.zeros_like(x) if g is None else g for x, g in zip(grads_in, grads)]
    r, a = TOL[dt]
    s.case(op, [x.detach() for x in inputs], [o.detach() for o in outs] + list(grads),
           attrs=attrs, name=(name + "_" if name else "") + NAME[dt],
           rtol=rtol or r, atol=atol or a)


x23 = rand((2, 3))
# ---- elementwise, broadcasting, non-contiguous ----
case("aten.add", [rand((2, 3)), rand((3,))], lambda a, b: torch.add(a, b, alpha=2.0),
     {"alpha": 2.0}, "broadcast")
case("aten.sub", [rand((4, 1, 3)), rand((2, 1))], lambda a, b: torch.sub(a, b), {}, "broadcast")
case("aten.mul", [rand((3, 2)).t(), rand((1, 3))], torch.mul, {}, "transposed")
case("aten.mul", [rand((2, 3), F64), rand((2, 1), F64)], torch.mul, {}, "", F64)
case("aten.mul", [rand((2, 3), F16), rand((3,), F16)], torch.mul, {}, "", F16)
case("aten.div", [rand((2, 3)), rand((3,), lo=0.5, hi=2)], torch.div, {}, "")
case("aten.pow", [rand((2, 3), lo=0.5, hi=2), rand((3,))], torch.pow, {}, "")
case("aten.maximum", [rand((2, 3)), rand((2, 1))], torch.maximum, {}, "")
case("aten.where", [rand((2, 3)) > 0, rand((2, 3)), rand((3,))], torch.where, {}, "")
case("aten.masked_fill", [rand((2, 3)), rand((3,)) > 0],
     lambda a, m: a.masked_fill(m, 2.0), {"value": 2.0}, "")
case("aten.add", [rand((0, 3)), rand((3,))], torch.add, {}, "empty")
for op, fn in [("exp", torch.exp), ("tanh", torch.tanh), ("sigmoid", torch.sigmoid),
               ("relu", torch.relu), ("silu", F.silu), ("abs", torch.abs), ("neg", torch.neg),
               ("sin", torch.sin), ("erf", torch.erf), ("mish", F.mish),
               ("log_sigmoid", F.logsigmoid), ("hardswish", F.hardswish)]:
    case("aten." + op, [rand((2, 1, 3))], fn, {}, "")
for op, fn in [("log", torch.log), ("sqrt", torch.sqrt), ("rsqrt", torch.rsqrt),
               ("reciprocal", torch.reciprocal)]:
    case("aten." + op, [rand((2, 3), lo=0.5, hi=2)], fn, {}, "")
case("aten.gelu", [rand((2, 3))], F.gelu, {}, "")
case("aten.gelu", [rand((2, 3))], lambda x: F.gelu(x, approximate="tanh"),
     {"approximate": "tanh"}, "tanh")
case("aten.gelu", [rand((4, 8), BF16)], F.gelu, {}, "", BF16)
case("aten.softplus", [rand((6,))], lambda x: F.softplus(x, 2.0, 1.0),
     {"beta": 2.0, "threshold": 1.0}, "")
case("aten.leaky_relu", [rand((6,))], lambda x: F.leaky_relu(x, 0.2),
     {"negative_slope": 0.2}, "")
case("aten.elu", [rand((6,))], lambda x: F.elu(x, 0.5), {"alpha": 0.5}, "")
case("aten.clamp", [rand((6,))], lambda x: torch.clamp(x, -0.5, 0.7),
     {"min": -0.5, "max": 0.7, "has_min": True, "has_max": True}, "")
# ---- reductions, normalizations ----
case("aten.sum", [rand((2, 3, 4))], lambda x: torch.sum(x, [1], keepdim=True),
     {"dim": [1], "keepdim": True}, "keepdim")
case("aten.mean", [rand((2, 3, 4))], lambda x: torch.mean(x, [0, 2]), {"dim": [0, 2]}, "")
case("aten.amax", [rand((3, 4))], lambda x: torch.amax(x, [1]), {"dim": [1]}, "")
case("aten.max_dim", [rand((3, 4))], lambda x: torch.max(x, 1), {"dim": 1}, "")
case("aten.logsumexp", [rand((3, 4))], lambda x: torch.logsumexp(x, [1]), {"dim": [1]}, "")
case("aten.var", [rand((3, 4))], lambda x: torch.var(x, [1]), {"dim": [1]}, "")
case("aten.std", [rand((3, 4))], lambda x: torch.std(x, [0], keepdim=True),
     {"dim": [0], "keepdim": True}, "")
case("aten.norm", [rand((3, 4))], lambda x: torch.norm(x, 2.0, [1]), {"dim": [1]}, "")
case("aten.cumsum", [rand((3, 4))], lambda x: torch.cumsum(x, 1), {"dim": 1}, "")
case("aten.softmax", [rand((3, 5))], lambda x: torch.softmax(x, -1), {"dim": -1}, "")
case("aten.softmax", [rand((3, 5), F16)], lambda x: torch.softmax(x.float(), -1).half(),
     {"dim": -1}, "", F16)
case("aten.log_softmax", [rand((3, 5))], lambda x: torch.log_softmax(x, 1), {"dim": 1}, "")
case("aten.layer_norm", [rand((2, 3, 8)), rand((8,)), rand((8,))],
     lambda x, w, b: F.layer_norm(x, [8], w, b), {"normalized_shape": [8]}, "affine")
case("aten.layer_norm", [rand((2, 8), BF16), rand((8,), BF16), rand((8,), BF16)],
     lambda x, w, b: F.layer_norm(x, [8], w, b), {"normalized_shape": [8]}, "affine", BF16)
case("aten.group_norm", [rand((2, 4, 3)), rand((4,)), rand((4,))],
     lambda x, w, b: F.group_norm(x, 2, w, b), {"num_groups": 2}, "")
rm, rv = rand((3,)), rand((3,), lo=0.5, hi=2)
case("aten.batch_norm", [rand((2, 3, 2)), rm, rv, rand((3,)), rand((3,))],
     lambda x, m, v, w, b: F.batch_norm(x, m.detach(), v.detach(), w, b, False, 0.1, 1e-5),
     {}, "eval")


def bn_train(mom, eps, dims):
    """batch_norm(training=True) as coil's functional op: (y, new running_mean, new running_var).

    y is torch's own batch_norm (its backward is what is checked); the running statistics are
    written out as the formula torch applies in place, checked against that update first.
    """
    def fn(x, m, v, w=None, b=None):
        m2, v2 = m.detach().clone(), v.detach().clone()
        y = F.batch_norm(x, m2, v2, w, b, True, mom, eps)
        new_m = (1 - mom) * m + mom * x.mean(dims)
        new_v = (1 - mom) * v + mom * x.var(dims, unbiased=True)
        tol = 1e-2 if x.dtype in (F16, BF16) else 1e-5
        assert torch.allclose(new_m.detach().to(m2.dtype), m2, rtol=tol, atol=tol)
        assert torch.allclose(new_v.detach().to(v2.dtype), v2, rtol=tol, atol=tol)
        return y, new_m.to(m.dtype), new_v.to(v.dtype)
    return fn


for dt in (F32, F64):
    case("aten.batch_norm",
         [rand((4, 3, 2, 2), dt), rand((3,), dt), rand((3,), dt, 0.5, 2), rand((3,), dt),
          rand((3,), dt)],
         bn_train(0.3, 1e-3, (0, 2, 3)), {"training": True, "momentum": 0.3, "eps": 1e-3},
         "train", dt)
case("aten.batch_norm", [rand((5, 3)), rand((3,)), rand((3,), lo=0.5, hi=2)],
     bn_train(0.1, 1e-5, (0,)), {"training": True}, "train_2d")
# bf16 input with f32 running statistics and affine parameters (torch's mixed-dtype kernel).
case("aten.batch_norm",
     [rand((4, 3, 2, 2), BF16), rand((3,)), rand((3,), lo=0.5, hi=2), rand((3,)), rand((3,))],
     bn_train(0.1, 1e-5, (0, 2, 3)), {"training": True}, "train_mixed", BF16)
# ---- shape ----
case("aten.reshape", [rand((2, 3))], lambda x: x.reshape(3, 2), {"shape": [3, 2]}, "")
case("aten.permute", [rand((2, 3, 4))], lambda x: x.permute(2, 0, 1), {"dims": [2, 0, 1]}, "")
case("aten.transpose", [rand((2, 3))], lambda x: x.transpose(0, 1), {"dim0": 0, "dim1": 1}, "")
case("aten.expand", [rand((3, 1))], lambda x: x.expand(2, 3, 4), {"size": [2, 3, 4]}, "")
case("aten.slice", [rand((5, 3))], lambda x: x[1:5:2], {"dim": 0, "start": 1, "end": 5,
                                                         "step": 2}, "")
case("aten.select", [rand((2, 5))], lambda x: x[:, -2], {"dim": 1, "index": -2}, "")
case("aten.cat", [rand((2, 3)), rand((1, 3))], lambda a, b: torch.cat([a, b]), {}, "")
case("aten.stack", [rand((2, 3)), rand((2, 3))], lambda a, b: torch.stack([a, b], 1),
     {"dim": 1}, "")
case("aten.split", [rand((5, 2))], lambda x: torch.split(x, 2), {"split_size": 2}, "")
case("aten.flip", [rand((2, 3))], lambda x: torch.flip(x, [1]), {"dims": [1]}, "")
case("aten.roll", [rand((2, 3))], lambda x: torch.roll(x, 1, 1), {"shifts": [1], "dims": [1]},
     "")
case("aten.repeat", [rand((2, 3))], lambda x: x.repeat(2, 1, 2), {"repeats": [2, 1, 2]}, "")
case("aten.pad", [rand((2, 3))], lambda x: F.pad(x, [1, 2]), {"pad": [1, 2]}, "")
case("aten.tril", [rand((3, 4))], lambda x: torch.tril(x, 1), {"diagonal": 1}, "")
# ---- nn ----
case("aten.mm", [rand((2, 3)), rand((4, 3)).t()], torch.mm, {}, "transposed")
case("aten.bmm", [rand((2, 2, 3)), rand((2, 3, 4))], torch.bmm, {}, "")
case("aten.matmul", [rand((2, 1, 2, 3)), rand((3, 3, 4))], torch.matmul, {}, "broadcast")
case("aten.matmul", [rand((3,)), rand((2, 3, 4))], torch.matmul, {}, "vector")
case("aten.addmm", [rand((4,)), rand((2, 3)), rand((3, 4))],
     lambda s_, a, b: torch.addmm(s_, a, b, beta=0.5, alpha=2.0), {"beta": 0.5, "alpha": 2.0},
     "")
case("aten.linear", [rand((2, 3, 5)), rand((4, 5)), rand((4,))], F.linear, {}, "")
case("aten.linear", [rand((4, 8), BF16), rand((6, 8), BF16), rand((6,), BF16)], F.linear, {},
     "", BF16)
idx = torch.tensor([[0, 4, 0], [2, 2, 1]])
case("aten.embedding", [rand((5, 3)), idx], lambda w, i: F.embedding(i, w), {}, "repeated")
case("aten.embedding", [rand((5, 3)), idx], lambda w, i: F.embedding(i, w, padding_idx=0),
     {"padding_idx": 0}, "padding")
case("aten.gather", [rand((3, 4)), torch.randint(0, 3, (2, 4))],
     lambda x, i: torch.gather(x, 0, i), {"dim": 0}, "")
case("aten.index_select", [rand((3, 4)), torch.tensor([3, 0, 3])],
     lambda x, i: torch.index_select(x, 1, i), {"dim": 1}, "")
case("aten.scatter_add", [rand((3, 4)), torch.randint(0, 3, (2, 4)), rand((2, 4))],
     lambda x, i, u: torch.scatter_add(x, 0, i, u), {"dim": 0}, "")
case("aten.conv2d", [rand((2, 3, 7, 6)), rand((4, 3, 3, 3)), rand((4,))],
     lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), {"stride": [2], "padding": [1]},
     "")
case("aten.conv1d", [rand((2, 3, 9)), rand((2, 3, 3))],
     lambda x, w: F.conv1d(x, w, dilation=2), {"dilation": [2]}, "dilated")
case("aten.max_pool2d", [rand((2, 3, 7, 6))],
     lambda x: F.max_pool2d(x, 3, 2, 1), {"kernel_size": [3], "stride": [2], "padding": [1]}, "")
case("aten.avg_pool2d", [rand((2, 3, 7, 6))],
     lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
     {"kernel_size": [3], "stride": [2], "padding": [1], "count_include_pad": False}, "")
case("aten.adaptive_avg_pool2d", [rand((2, 3, 7, 6))],
     lambda x: F.adaptive_avg_pool2d(x, (3, 4)), {"output_size": [3, 4]}, "")
case("aten.scaled_dot_product_attention", [rand((2, 2, 5, 4)), rand((2, 2, 5, 4)),
                                             rand((2, 2, 5, 3))],
     lambda q, k, v: torch.softmax(
         (q @ k.transpose(-2, -1) / 2.0).masked_fill(
             torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf")), -1) @ v,
     {"is_causal": True}, "causal")
M32 = 0xFFFFFFFF


def philox_uniform(seed, counter):
    """coil's prims.philox_uniform element (docs/prims.md; the same function as
    tools/driver/training_cnn.py's): Philox4x32-10 with key = seed and counter words
    (counter, counter >> 32, 0, 0), the first output word u as (u >> 8) * 2^-24."""
    c = [counter & M32, (counter >> 32) & M32, 0, 0]
    k = [seed & M32, (seed >> 32) & M32]
    for r in range(10):
        if r > 0:
            k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & M32, (p0 >> 32) ^ c[3] ^ k[1], p0 & M32]
    return (c[0] >> 8) * 2.0 ** -24


def dropped_attention(p, seed, offset, causal=False, scale=None):
    """torch 2's math attention with dropout, with coil's mask: weight i of [batch..., L, S]
    kept, times 1 / (1 - p), where philox_uniform(seed, offset + i) < float32(1 - p)."""
    def fn(q, k, v, mask=None):
        e = q.shape[-1]
        s = q @ k.transpose(-2, -1) * (scale if scale else 1 / e ** 0.5)
        if causal:
            s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
        if mask is not None:
            s = s + mask
        w = torch.softmax(s, -1)
        w = w.expand(torch.broadcast_shapes(w.shape, v.shape[:-2] + w.shape[-2:]))
        u = torch.tensor([philox_uniform(seed, offset + i) for i in range(w.numel())],
                         dtype=F32).reshape(w.shape)
        keep = u < torch.tensor(1 - p, dtype=F32)
        return (w * keep * (1 / (1 - p))) @ v
    return fn


# Dropout of the weights (torch 1.13 has no scaled_dot_product_attention and its dropout
# draws another mask: coil's mask is applied to torch's formula).
case("aten.scaled_dot_product_attention", [rand((2, 2, 5, 4)), rand((1, 2, 5, 4)),
                                             rand((2, 1, 5, 3))],
     dropped_attention(0.3, 5, 7, causal=True),
     {"is_causal": True, "dropout_p": 0.3, "seed": 5, "offset": 7}, "dropout_causal")
case("aten.scaled_dot_product_attention", [rand((3, 4, 6), F64), rand((3, 5, 6), F64),
                                             rand((3, 5, 2), F64), rand((4, 5), F64)],
     dropped_attention(0.5, 2, 1 << 33, scale=0.3),
     {"dropout_p": 0.5, "seed": 2, "offset": 1 << 33, "scale": 0.3}, "dropout_mask", F64)
case("aten.conv2d", [rand((2, 4, 6, 5)), rand((4, 1, 3, 3)), rand((4,))],
     lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=4), {"padding": [1], "groups": 4},
     "depthwise")
case("aten.conv_transpose2d", [rand((2, 4, 3, 4)), rand((4, 3, 3, 2)), rand((6,))],
     lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                        groups=2),
     {"stride": [2], "padding": [1], "output_padding": [1], "groups": 2}, "")
case("aten.prod", [torch.tensor([[1.5, 0.0, 2.0], [0.0, 0.0, -1.0], [0.5, 3.0, -2.0]])],
     lambda x: torch.prod(x, 1), {"dim": [1]}, "zeros")
case("aten.diagonal", [rand((2, 4, 3))], lambda x: torch.diagonal(x, -1, 2, 1),
     {"offset": -1, "dim1": 2, "dim2": 1}, "")
case("aten.upsample_nearest2d", [rand((1, 2, 3, 2))],
     lambda x: F.interpolate(x, size=(5, 4), mode="nearest"), {"output_size": [5, 4]}, "")
case("aten.cumprod", [torch.tensor([[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 2.0]])],
     lambda x: torch.cumprod(x, 1), {"dim": 1}, "zeros")
case("aten.local_response_norm", [rand((2, 6, 3, 2))],
     lambda x: F.local_response_norm(x, 3, 0.1, 0.75, 1.0),
     {"size": 3, "alpha": 0.1, "beta": 0.75, "k": 1.0}, "")
case("aten.upsample_bilinear2d", [rand((1, 2, 3, 2))],
     lambda x: F.interpolate(x, size=(5, 4), mode="bilinear", align_corners=False),
     {"output_size": [5, 4]}, "")
case("aten.adaptive_max_pool2d", [rand((2, 3, 7, 6))],
     lambda x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True),
     {"output_size": [3, 4]}, "")
s.main()
