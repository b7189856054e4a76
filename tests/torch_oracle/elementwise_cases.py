"""Oracle cases for the elementwise op family (ir/ops/elementwise_ops*.cc).

torch's CPU build lacks float16 kernels for many math ops; coil follows the CUDA build there,
so where torch refuses a float16/bfloat16 input the expectation is computed in float32 and
rounded to the low-precision dtype (what CUDA's opmath does).
"""
import math

import torch
import torch.nn.functional as F

from oracle import Suite

torch.manual_seed(0)
s = Suite("elementwise")

f32, f64, f16, bf16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
i64, i32, i8, u8, b8 = torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool
FLOATS = [f32, f64, f16, bf16]
INTS = [i64, i32, i8, u8]
TOL = {f32: (1e-5, 1e-6), f64: (1e-9, 1e-12), f16: (1e-2, 1e-3), bf16: (2e-2, 1e-2)}
NAN, INF = float("nan"), float("inf")


def rnd(shape, dtype, lo=-3.0, hi=3.0):
    if dtype == b8:
        return torch.randint(0, 2, shape).bool()
    if dtype.is_floating_point:
        return (torch.rand(shape, dtype=f64) * (hi - lo) + lo).to(dtype)
    lo, hi = int(lo), int(hi)
    if dtype == u8:
        lo = max(lo, 0)
    return torch.randint(lo, hi + 1, shape).to(dtype)


def tol(*dtypes):
    """Loosest tolerance over the float dtypes involved."""
    r, a = TOL[f64]
    for d in dtypes:
        if d in TOL:
            r, a = max(r, TOL[d][0]), max(a, TOL[d][1])
    return r, a


def evaluate(fn, inputs, out_dtype=None):
    """torch's answer; low-precision floats torch refuses are computed in float32."""
    try:
        return fn(*inputs)
    except RuntimeError:
        up = [x.float() if x.dtype in (f16, bf16) else x for x in inputs]
        r = fn(*up)
        low = [x.dtype for x in inputs if x.dtype in (f16, bf16)]
        return r.to(out_dtype or low[0])


def case(op, inputs, fn, attrs=None, name="", out_dtype=None, rt=None, at=None, **kw):
    expect = evaluate(fn, inputs, out_dtype)
    dts = [x.dtype for x in inputs] + [expect.dtype]
    r, a = tol(*dts)
    s.case(op, inputs, expect=expect, attrs=attrs, name=name, rtol=rt or r, atol=at or a, **kw)


def variants(dtype, lo, hi):
    """(name, tensor) inputs of one dtype: shapes, strides, empty, size-1 and rank-0."""
    n = str(dtype).replace("torch.", "")
    return [
        (n, rnd((3, 4), dtype, lo, hi)),
        (n + "_transposed", rnd((5, 3), dtype, lo, hi).t()),
        (n + "_sliced", rnd((4, 6), dtype, lo, hi)[:, ::2]),
        (n + "_size1", rnd((1, 5, 1), dtype, lo, hi)),
        (n + "_empty", rnd((0, 3), dtype, lo, hi)),
        (n + "_rank0", rnd((), dtype, lo, hi)),
    ]


def unary(op, fn, dtypes, lo=-3.0, hi=3.0, edges=None, attrs=None, full=(f32,), tag=""):
    """Cases for a unary op: all layouts for `full` dtypes, one case for the others."""
    for dt in dtypes:
        vs = variants(dt, lo, hi)
        for name, x in (vs if dt in full else vs[:2]):
            case(op, [x], fn, attrs=attrs, name=tag + name, out_dtype=dt)
    if edges is not None:
        for dt in [d for d in (f32, f64) if d in dtypes]:
            case(op, [torch.tensor(edges, dtype=dt)], fn, attrs=attrs, name=tag + "edges_" + str(dt)[6:])


EDGES = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 1e-8, 100.0]
ALL = FLOATS + INTS + [b8]

# ---- unary math ----
float_fns = {
    "exp": (torch.exp, -5, 5), "exp2": (torch.exp2, -5, 5), "expm1": (torch.expm1, -2, 2),
    "log": (torch.log, 0.01, 10), "log2": (torch.log2, 0.01, 10), "log10": (torch.log10, 0.01, 10),
    "log1p": (torch.log1p, -0.9, 10), "sqrt": (torch.sqrt, 0, 10), "rsqrt": (torch.rsqrt, 0.1, 10),
    "sin": (torch.sin, -6, 6), "cos": (torch.cos, -6, 6), "tan": (torch.tan, -1.3, 1.3),
    "asin": (torch.asin, -1, 1), "acos": (torch.acos, -1, 1), "atan": (torch.atan, -5, 5),
    "sinh": (torch.sinh, -3, 3), "cosh": (torch.cosh, -3, 3), "tanh": (torch.tanh, -3, 3),
    "asinh": (torch.asinh, -5, 5), "acosh": (torch.acosh, 1, 5), "atanh": (torch.atanh, -0.95, 0.95),
    "sigmoid": (torch.sigmoid, -6, 6), "erf": (torch.erf, -3, 3), "erfc": (torch.erfc, -3, 3),
    "reciprocal": (torch.reciprocal, 0.2, 4),
}
for name, (fn, lo, hi) in float_fns.items():
    unary("aten." + name, fn, FLOATS, lo, hi, edges=EDGES)
    for dt in (i64, i32, u8, b8):
        x = rnd((2, 5), dt, max(lo, 0) if name in ("log", "log2", "log10", "sqrt", "rsqrt", "acosh") else lo,
                min(hi, 1) if name in ("asin", "acos", "atanh") else hi)
        case("aten." + name, [x], fn, name="from_" + str(dt)[6:])

same_fns = {"abs": torch.abs, "neg": torch.neg, "floor": torch.floor, "ceil": torch.ceil,
            "round": torch.round, "trunc": torch.trunc, "sign": torch.sign, "square": torch.square}
for name, fn in same_fns.items():
    unary("aten." + name, fn, FLOATS + INTS, -5, 5, edges=EDGES + [0.5, 1.5, -0.5, -1.5, 2.5001])
    if name in ("sign", "square"):
        unary("aten." + name, fn, [b8])
case("aten.abs", [torch.tensor([-128, 127, 0], dtype=i8)], torch.abs, name="i8_min")
case("aten.neg", [torch.tensor([0, 1, 255], dtype=u8)], torch.neg, name="u8_wrap")
unary("aten.frac", torch.frac, FLOATS, -5, 5, edges=EDGES)

for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "logical_not"):
    fn = getattr(torch, name)
    unary("aten." + name, fn, ALL, -3, 3, edges=EDGES)
unary("aten.bitwise_not", torch.bitwise_not, INTS + [b8], -100, 100)

unary("aten.nan_to_num", torch.nan_to_num, ALL, edges=EDGES)
for dt in FLOATS:
    e = torch.tensor(EDGES, dtype=dt)
    case("aten.nan_to_num", [e], lambda x: torch.nan_to_num(x, nan=1.5, posinf=7.0, neginf=-8.0),
         attrs={"nan": 1.5, "posinf": 7.0, "neginf": -8.0, "has_posinf": True, "has_neginf": True},
         name="given_" + str(dt)[6:])
    case("aten.nan_to_num", [e], lambda x: torch.nan_to_num(x, posinf=3.0),
         attrs={"posinf": 3.0, "has_posinf": True}, name="posinf_only_" + str(dt)[6:])

# ---- activations ----
unary("aten.relu", torch.relu, FLOATS + INTS, -5, 5, edges=EDGES)
unary("aten.relu6", F.relu6, FLOATS + INTS, -8, 8, edges=EDGES)
unary("aten.gelu", F.gelu, FLOATS, -5, 5, edges=EDGES)
unary("aten.gelu", lambda x: F.gelu(x, approximate="tanh"), FLOATS, -5, 5, edges=EDGES,
      attrs={"approximate": "tanh"}, tag="tanh_")
unary("aten.silu", F.silu, FLOATS, -8, 8, edges=EDGES)
unary("aten.mish", F.mish, FLOATS, -8, 8, edges=EDGES)
unary("aten.hardswish", F.hardswish, FLOATS, -5, 5, edges=EDGES)
unary("aten.hardsigmoid", F.hardsigmoid, FLOATS, -5, 5, edges=EDGES)
unary("aten.hardtanh", F.hardtanh, FLOATS + [i64, i32, i8], -3, 3, edges=EDGES)
unary("aten.hardtanh", lambda x: F.hardtanh(x, -0.5, 2.0), [f32, f64, i64], -3, 3,
      attrs={"min_val": -0.5, "max_val": 2.0}, tag="bounds_")
unary("aten.softplus", F.softplus, FLOATS, -25, 25, edges=EDGES)
unary("aten.softplus", lambda x: F.softplus(x, beta=2.0, threshold=5.0), [f32, f64], -5, 5,
      attrs={"beta": 2.0, "threshold": 5.0}, tag="beta2_")
unary("aten.leaky_relu", F.leaky_relu, FLOATS, -5, 5, edges=EDGES)
unary("aten.leaky_relu", lambda x: F.leaky_relu(x, 0.2), [f32], -5, 5,
      attrs={"negative_slope": 0.2}, tag="slope_")
unary("aten.elu", F.elu, FLOATS, -5, 5, edges=EDGES)
unary("aten.elu", lambda x: torch.ops.aten.elu(x, 0.5, 2.0, 1.5), [f32, f64], -3, 3,
      attrs={"alpha": 0.5, "scale": 2.0, "input_scale": 1.5}, tag="scaled_")
unary("aten.selu", F.selu, FLOATS, -5, 5, edges=EDGES)
unary("aten.celu", F.celu, FLOATS, -5, 5, edges=EDGES)
unary("aten.celu", lambda x: F.celu(x, alpha=2.0), [f32, f64], -5, 5, attrs={"alpha": 2.0},
      tag="alpha2_")
unary("aten.threshold", lambda x: F.threshold(x, 0.5, -2.0), FLOATS + [i64, i32, i8], -3, 3, edges=EDGES,
      attrs={"threshold": 0.5, "value": -2.0})
unary("aten.threshold", lambda x: F.threshold(x, 1, 9), [i64, i32, f32], -3, 3,
      attrs={"threshold": 1, "value": 9}, tag="int_")
unary("aten.hardshrink", F.hardshrink, FLOATS, -2, 2, edges=EDGES)
unary("aten.softshrink", lambda x: F.softshrink(x, 0.7), FLOATS, -2, 2, edges=EDGES,
      attrs={"lambd": 0.7})
unary("aten.log_sigmoid", F.logsigmoid, FLOATS, -30, 30, edges=EDGES)

clamps = [
    ({"min": -1.0, "max": 1.5, "has_min": True, "has_max": True}, dict(min=-1.0, max=1.5), "ff"),
    ({"min": -1, "max": 2, "has_min": True, "has_max": True}, dict(min=-1, max=2), "ii"),
    ({"min": 0.5, "has_min": True}, dict(min=0.5), "min_only"),
    ({"max": 1, "has_max": True}, dict(max=1), "max_only"),
    ({"min": 2, "max": -1, "has_min": True, "has_max": True}, dict(min=2, max=-1), "crossed"),
]
for attrs, kws, tag in clamps:
    unary("aten.clamp", lambda x, kws=kws: torch.clamp(x, **kws), FLOATS + [i64, i32, b8], -4, 4,
          edges=EDGES, attrs=attrs, tag=tag + "_")
case("aten.clamp", [torch.tensor([1.0, 2.0])], lambda x: torch.clamp(x, NAN, 3.0),
     attrs={"min": NAN, "max": 3.0, "has_min": True, "has_max": True}, name="nan_bound")
for v, tag in ((0.5, "f"), (1, "i")):
    for dt in (f32, f16, i64, u8, b8):
        x = rnd((3, 4), dt, -3, 3)
        case("aten.clamp_min", [x], lambda x: torch.clamp_min(x, v), attrs={"min": v},
             name="%s_%s" % (tag, str(dt)[6:]))
        case("aten.clamp_max", [x], lambda x: torch.clamp_max(x, v), attrs={"max": v},
             name="%s_%s" % (tag, str(dt)[6:]))

# ---- cast ----
CAST_VALUES = [-3.7, -1.5, 0.0, 0.5, 2.9, 100.2, 127.0, -0.0]
for src in ALL:
    if src.is_floating_point:
        x = torch.tensor(CAST_VALUES, dtype=src).reshape(2, 4).t()
    else:
        x = rnd((4, 3), src, -100, 120 if src != i8 else 100).t()
    if src in (u8,):
        x = rnd((4, 3), src, 0, 255).t()
    for dst in ALL:
        case("aten.to_dtype", [x], lambda x: x.to(dst), attrs={"dtype": dst},
             name="%s_to_%s" % (str(src)[6:], str(dst)[6:]))
    if src.is_floating_point:
        case("aten.to_dtype", [torch.tensor([NAN, INF, -INF, 0.0], dtype=src)],
             lambda x: x.to(b8), attrs={"dtype": b8}, name="special_%s_to_bool" % str(src)[6:])
case("aten.to_dtype", [torch.tensor([-1.5, 300.7, -300.7])], lambda x: x.to(u8),
     attrs={"dtype": u8}, name="f32_to_u8_wrap")
case("aten.to_dtype", [rnd((0, 2), f32)], lambda x: x.to(i32), attrs={"dtype": i32}, name="empty")

# ---- binary tensor-tensor ----
MIXED = [(f32, i64), (i32, i64), (u8, b8), (i64, f16), (bf16, f16), (f64, f32), (i8, i32), (b8, f32)]


def binary(op, fn, pairs=None, lo=-5, hi=5, attrs=None, nonzero=False, tag="", edges=True):
    """Broadcast, layouts, mixed dtypes, rank-0 operands, empty and special values."""
    def mk(shape, dt):
        x = rnd(shape, dt, lo, hi)
        if nonzero and not dt.is_floating_point:
            x = torch.where(x == 0, torch.ones_like(x), x)
        return x
    same = [f32, f64, f16, bf16, i64, i32, i8, u8, b8]
    for dt in same if pairs is None else pairs:
        a, b = (dt, dt) if not isinstance(dt, tuple) else dt
        nm = tag + "%s_%s" % (str(a)[6:], str(b)[6:])
        case(op, [mk((3, 1, 4), a), mk((5, 4), b)], fn, attrs=attrs, name=nm + "_bcast")
        if a == b and a in (f32, i64):
            case(op, [mk((4, 3), a).t(), mk((6, 4), b)[::2]], fn, attrs=attrs, name=nm + "_strided")
            case(op, [mk((0, 4), a), mk((1, 4), b)], fn, attrs=attrs, name=nm + "_empty")
            case(op, [mk((2, 3), a), mk((), b)], fn, attrs=attrs, name=nm + "_rank0")
            case(op, [mk((), a), mk((), b)], fn, attrs=attrs, name=nm + "_both_rank0")
            case(op, [mk((1, 3), a).expand(4, 3), mk((4, 1), b)], fn, attrs=attrs, name=nm + "_expanded")
    if pairs is None or any(p == f32 for p in pairs):
        case(op, [mk((2, 3), i32), torch.tensor(2.5, dtype=f64)], fn, attrs=attrs, name=tag + "i32_rank0_f64")
        case(op, [mk((2, 3), f16), torch.tensor(2.5, dtype=f32)], fn, attrs=attrs, name=tag + "f16_rank0_f32")
    if edges and (pairs is None or any(p == f32 for p in pairs)):
        e = torch.tensor(EDGES, dtype=f32)
        case(op, [e.reshape(-1, 1), e.reshape(1, -1)], fn, attrs=attrs, name=tag + "edges")


ARITH = [f32, f64, f16, bf16, i64, i32, i8, u8] + MIXED
binary("aten.add", torch.add, ARITH + [b8])
binary("aten.add", lambda a, b: torch.add(a, b, alpha=2.5), [f32, f64, (i64, f32)], attrs={"alpha": 2.5}, tag="alpha_")
binary("aten.add", lambda a, b: torch.add(a, b, alpha=-3), [f32, i64, i8, u8, b8], attrs={"alpha": -3}, tag="ialpha_")
NOBOOL = [p for p in ARITH if not (isinstance(p, tuple) and b8 in p)]
binary("aten.sub", torch.sub, NOBOOL)
binary("aten.sub", lambda a, b: torch.sub(a, b, alpha=0.5), [f32, f16], attrs={"alpha": 0.5}, tag="alpha_")
binary("aten.sub", lambda a, b: torch.sub(a, b, alpha=3), [i32, u8], attrs={"alpha": 3}, tag="ialpha_")
binary("aten.rsub", lambda a, b: torch.rsub(a, b, alpha=2), [f32, i64, (i32, f32)], attrs={"alpha": 2})
binary("aten.mul", torch.mul, ARITH + [b8])
binary("aten.div", torch.div, ARITH + [b8], nonzero=True)
for mode in ("trunc", "floor"):
    binary("aten.div", lambda a, b: torch.div(a, b, rounding_mode=mode), NOBOOL, nonzero=True,
           attrs={"rounding_mode": mode}, tag=mode + "_")
    case("aten.div", [torch.tensor([7, -7, 7, -7, -128, 5], dtype=i64), torch.tensor([2, 2, -2, -2, -1, 7], dtype=i64)],
         lambda a, b: torch.div(a, b, rounding_mode=mode), attrs={"rounding_mode": mode}, name=mode + "_signs")
binary("aten.floor_divide", torch.floor_divide, NOBOOL, nonzero=True)
binary("aten.remainder", torch.remainder, NOBOOL, nonzero=True)
binary("aten.fmod", torch.fmod, NOBOOL, nonzero=True)
binary("aten.pow", torch.pow, [f32, f64, f16, bf16, (f32, i64), (i64, f16), (f64, f32)], lo=0.1, hi=3)
binary("aten.pow", torch.pow, [i64, i32, u8, (i32, i64), (u8, b8)], lo=0, hi=4, tag="int_", edges=False)
case("aten.pow", [torch.tensor([2, 1, -1, 0, 3, -1, -2]), torch.tensor([-1, -2, -3, -1, 0, -4, 3])], torch.pow,
     name="int_negative_exponents")
case("aten.pow", [rnd((3, 4), f32, -3, 3), torch.tensor([0.5, 2.0, -1.0, 3.0])], torch.pow, name="negative_base")
for name in ("maximum", "minimum", "fmax", "fmin"):
    binary("aten." + name, getattr(torch, name), ARITH + [b8])
binary("aten.atan2", torch.atan2, [f32, f64, f16, bf16, i64, (f32, i64), (i32, u8), b8])
binary("aten.copysign", torch.copysign, [f32, f64, f16, bf16, i64, (f32, i64), b8])
binary("aten.hypot", torch.hypot, [f32, f64, f16, bf16, (f32, i64), (f64, f32)])
for name in ("eq", "ne", "lt", "le", "gt", "ge"):
    binary("aten." + name, getattr(torch, name), ARITH + [b8], lo=-2, hi=2)
    case("aten." + name, [torch.tensor([16777217, 3]), torch.tensor([16777216.0, 3.0])], getattr(torch, name),
         name="i64_vs_f32_rounding")
for name in ("logical_and", "logical_or", "logical_xor"):
    binary("aten." + name, getattr(torch, name), ARITH + [b8, (u8, i8)], lo=-1, hi=1)
for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    binary("aten." + name, getattr(torch, name), [i64, i32, i8, u8, b8, (i32, i64), (u8, b8), (b8, i8)],
           lo=-100, hi=100, edges=False)

# ---- tensor-scalar ----
SCALAR_DTYPES = [f32, f64, f16, bf16, i64, i32, i8, u8, b8]


def scalar(op, fn, others, dtypes=SCALAR_DTYPES, lo=-5, hi=5, attrs=None, tag="", nonzero=False):
    for other in others:
        kind = "i" if isinstance(other, int) else "f"
        at = dict(attrs or {}, other=other)
        for dt in dtypes:
            x = rnd((3, 4), dt, lo, hi)
            if nonzero and not dt.is_floating_point:
                x = torch.where(x == 0, torch.ones_like(x), x)
            nm = "%s%s%s_%s" % (tag, kind, str(other).replace("-", "m").replace(".", "p"), str(dt)[6:])
            case(op, [x], lambda x: fn(x, other), attrs=at, name=nm)
        d2 = i32 if i32 in dtypes else dtypes[0]
        case(op, [rnd((5, 3), dtypes[0], lo, hi).t()], lambda x: fn(x, other), attrs=at, name=tag + kind + "_strided")
        case(op, [rnd((0, 3), d2, lo, hi)], lambda x: fn(x, other), attrs=at, name=tag + kind + "_empty")
        case(op, [rnd((), d2, lo, hi)], lambda x: fn(x, other), attrs=at, name=tag + kind + "_rank0")


scalar("aten.add_scalar", torch.add, [2, -1.5, 300])
scalar("aten.add_scalar", lambda x, o: torch.add(x, o, alpha=3), [2, 0.25], attrs={"alpha": 3}, tag="alpha_")
scalar("aten.add_scalar", lambda x, o: torch.add(x, o, alpha=2.5), [2, 0.25], [f32, f16, f64], attrs={"alpha": 2.5},
       tag="falpha_")
NB = [d for d in SCALAR_DTYPES if d != b8]
scalar("aten.sub_scalar", torch.sub, [2, -1.5], NB)
scalar("aten.sub_scalar", lambda x, o: torch.sub(x, o, alpha=2), [3], NB, attrs={"alpha": 2}, tag="alpha_")
scalar("aten.rsub_scalar", torch.rsub, [2, -1.5], NB)
scalar("aten.rsub_scalar", lambda x, o: torch.rsub(x, o, alpha=0.5), [2, 1.5], [f32, f64], attrs={"alpha": 0.5},
       tag="alpha_")
scalar("aten.mul_scalar", torch.mul, [3, -0.5, 0])
scalar("aten.div_scalar", torch.div, [2, -0.75, 0, 0.0])
for mode in ("trunc", "floor"):
    scalar("aten.div_scalar", lambda x, o: torch.div(x, o, rounding_mode=mode), [2, -3, 0.75], NB,
           attrs={"rounding_mode": mode}, tag=mode + "_")
scalar("aten.remainder_scalar", torch.remainder, [3, -2, 1.5], NB)
scalar("aten.fmod_scalar", torch.fmod, [3, -2, 1.5], NB)
scalar("aten.pow_scalar", torch.pow, [2, 3, 0.5, -1.0, 0], [f32, f64, f16, bf16], lo=0.1, hi=3)
scalar("aten.pow_scalar", torch.pow, [2, 3, 0, 2.5], [i64, i32, u8, b8], lo=0, hi=4, tag="int_")
case("aten.pow_scalar", [torch.tensor([-2.0, 2.0, 0.0, -0.0, NAN, INF])], lambda x: torch.pow(x, -1.5),
     attrs={"other": -1.5}, name="edges")
for name in ("eq", "ne", "lt", "le", "gt", "ge"):
    scalar("aten.%s_scalar" % name, getattr(torch, name), [1, -0.5, 2.0], lo=-2, hi=2)
    case("aten.%s_scalar" % name, [torch.tensor([16777217, 3])], lambda x: getattr(torch, name)(x, 16777216.0),
         attrs={"other": 16777216.0}, name="i64_vs_float_rounding")
    case("aten.%s_scalar" % name, [torch.tensor([44, 43], dtype=u8)], lambda x: getattr(torch, name)(x, 300),
         attrs={"other": 300}, name="u8_wrapped_scalar")
    case("aten.%s_scalar" % name, [torch.tensor([0.1, 0.2], dtype=f32)], lambda x: getattr(torch, name)(x, 0.1),
         attrs={"other": 0.1}, name="f32_rounded_scalar")

# ---- ternary ----
for a, b in [(f32, f32), (f64, f64), (f16, f16), (bf16, bf16), (i64, i64), (i32, u8), (f32, i64), (b8, b8),
             (u8, b8), (i64, f16)]:
    nm = "%s_%s" % (str(a)[6:], str(b)[6:])
    case("aten.where", [rnd((3, 1, 4), b8), rnd((5, 1), a), rnd((4,), b)], torch.where, name=nm)
case("aten.where", [rnd((4, 3), b8).t(), rnd((3, 4), f32), rnd((), f64)], torch.where, name="rank0_other")
case("aten.where", [rnd((2, 3), u8, 0, 1).bool().to(u8), rnd((2, 3), f32), rnd((2, 3), f32)],
     lambda c, a, b: torch.where(c.bool(), a, b), name="u8_condition")
case("aten.where", [rnd((0, 3), b8), rnd((1, 3), f32), rnd((0, 1), f32)], torch.where, name="empty")
case("aten.where", [rnd((2, 3), b8), torch.tensor(1), torch.tensor(2.5)], torch.where, name="rank0_values")

for dt in (f32, f64, f16, bf16):
    nm = str(dt)[6:]
    case("aten.lerp", [rnd((3, 1, 4), dt), rnd((5, 4), dt), rnd((4,), dt, -0.5, 1.5)], torch.lerp, name=nm)
case("aten.lerp", [rnd((4, 3), f32).t(), rnd((3, 4), f32), rnd((), f32, 0, 1)], torch.lerp, name="strided_rank0_weight")
case("aten.lerp", [rnd((0, 3), f32), rnd((1, 3), f32), rnd((3,), f32)], torch.lerp, name="empty")

for op, fn in (("aten.addcmul", torch.addcmul), ("aten.addcdiv", torch.addcdiv)):
    combos = [(f32, f32, f32), (f64, f64, f64), (f16, f16, f16), (bf16, bf16, bf16), (f32, i64, f32),
              (i64, f32, f16), (f64, f32, i32)]
    if op == "aten.addcmul":
        combos += [(i64, i64, i64), (i32, u8, i8), (u8, u8, u8), (b8, i32, i32)]
    for a, b, c in combos:
        nm = "%s_%s_%s" % (str(a)[6:], str(b)[6:], str(c)[6:])
        t2 = rnd((4,), c, 0.5, 3) if op == "aten.addcdiv" else rnd((4,), c)
        case(op, [rnd((3, 1, 4), a), rnd((5, 4), b), t2], fn, name=nm)
        case(op, [rnd((3, 1, 4), a), rnd((5, 4), b), t2], lambda x, y, z: fn(x, y, z, value=2),
             attrs={"value": 2}, name=nm + "_value2")
        if a.is_floating_point:
            case(op, [rnd((3, 1, 4), a), rnd((5, 4), b), t2], lambda x, y, z: fn(x, y, z, value=-0.5),
                 attrs={"value": -0.5}, name=nm + "_value_m0p5")
    case(op, [rnd((4, 3), f32).t(), rnd((3, 4), f32), rnd((), f32, 1, 2)], fn, name="strided_rank0")
    case(op, [rnd((0, 3), f32), rnd((1, 3), f32), rnd((3,), f32, 1, 2)], fn, name="empty")
case("aten.addcmul", [rnd((2, 3), i64), rnd((2, 3), i64), rnd((2, 3), i64)],
     lambda x, y, z: torch.addcmul(x, y, z, value=2.5), attrs={"value": 2.5}, name="int_value_truncated")

for dt in ALL:
    for value in (1.5, -2, 0.0):
        nm = "%s_%s" % (str(dt)[6:], str(value).replace("-", "m").replace(".", "p"))
        case("aten.masked_fill", [rnd((3, 4), dt), rnd((4,), b8)], lambda x, m: x.masked_fill(m, value),
             attrs={"value": value}, name=nm)
case("aten.masked_fill", [rnd((2, 3), f32), rnd((4, 2, 3), b8)], lambda x, m: x.masked_fill(m, 1.0),
     attrs={"value": 1.0}, name="mask_broadcasts_self")
case("aten.masked_fill", [rnd((4, 3), f32).t(), rnd((3, 1), b8)], lambda x, m: x.masked_fill(m, NAN),
     attrs={"value": NAN}, name="strided_nan")
case("aten.masked_fill", [rnd((0, 3), f32), rnd((3,), b8)], lambda x, m: x.masked_fill(m, 1.0),
     attrs={"value": 1.0}, name="empty")
case("aten.masked_fill", [rnd((2, 3), f32), rnd((2, 3), u8, 0, 1)], lambda x, m: x.masked_fill(m.bool(), 3.0),
     attrs={"value": 3.0}, name="u8_mask")
case("aten.masked_fill", [rnd((), f32), rnd((), b8)], lambda x, m: x.masked_fill(m, 3.0),
     attrs={"value": 3.0}, name="rank0")


# ---- creation ----
def creation(op, fn, attrs, name):
    expect = fn()
    s.case(op, [], expect=expect, attrs=attrs, name=name, rtol=tol(expect.dtype)[0], atol=tol(expect.dtype)[1])


for size in ([2, 3], [0, 4], [], [1, 5, 1]):
    sz = "x".join(map(str, size)) or "scalar"
    creation("aten.full", lambda: torch.full(size, 1.5), {"size": size, "value": 1.5}, "f_" + sz)
    creation("aten.full", lambda: torch.full(size, 7), {"size": size, "value": 7}, "i_" + sz)
    creation("aten.zeros", lambda: torch.zeros(size), {"size": size}, sz)
    creation("aten.ones", lambda: torch.ones(size), {"size": size}, sz)
for dt in ALL:
    nm = str(dt)[6:]
    v = 2.7 if dt == u8 else -2.7
    creation("aten.full", lambda: torch.full([2, 2], v, dtype=dt),
             {"size": [2, 2], "value": v, "dtype": dt, "has_dtype": True}, "dtype_" + nm)
    creation("aten.full", lambda: torch.full([3], 3, dtype=dt), {"size": [3], "value": 3, "dtype": dt, "has_dtype": True},
             "int_dtype_" + nm)
    creation("aten.zeros", lambda: torch.zeros([2, 3], dtype=dt), {"size": [2, 3], "dtype": dt}, nm)
    creation("aten.ones", lambda: torch.ones([2, 3], dtype=dt), {"size": [2, 3], "dtype": dt}, nm)
creation("aten.full", lambda: torch.full([2], INF), {"size": [2], "value": INF}, "inf")
creation("aten.full", lambda: torch.full([2], 0.5, dtype=b8), {"size": [2], "value": 0.5, "dtype": b8, "has_dtype": True},
         "bool_half")

aranges = [
    ({"end": 5}, dict(end=5)),
    ({"end": 0}, dict(end=0)),
    ({"start": 2, "end": 11, "step": 3}, dict(start=2, end=11, step=3)),
    ({"start": 10, "end": -3, "step": -4}, dict(start=10, end=-3, step=-4)),
    ({"start": 0.5, "end": 5, "step": 1.5}, dict(start=0.5, end=5, step=1.5)),
    ({"start": 5, "end": 0, "step": -1.5}, dict(start=5, end=0, step=-1.5)),
    ({"start": -1.0, "end": 3}, dict(start=-1.0, end=3)),
    ({"start": 1, "end": 4, "step": 0.25}, dict(start=1, end=4, step=0.25)),
]
for attrs, kws in aranges:
    nm = "_".join("%s%s" % (k, str(v).replace("-", "m").replace(".", "p")) for k, v in sorted(attrs.items()))
    creation("aten.arange", lambda: torch.arange(**kws), attrs, nm)
    for dt in (f64, f16, i64, i32, u8):
        if dt == u8 and (kws.get("start", 0) < 0 or kws["end"] < 0):
            continue
        if not dt.is_floating_point and abs(kws.get("step", 1)) < 1:
            continue  # torch: "step must be nonzero" after truncation (a meta error test)
        creation("aten.arange", lambda: torch.arange(**kws, dtype=dt), dict(attrs, dtype=dt, has_dtype=True),
                 nm + "_" + str(dt)[6:])

for dt in ALL:
    nm = str(dt)[6:]
    x = rnd((4, 3), dt).t()
    case("aten.zeros_like", [x], torch.zeros_like, name=nm)
    case("aten.ones_like", [x], torch.ones_like, name=nm)
    v = 1.7 if dt == u8 else -1.7
    case("aten.full_like", [x], lambda x: torch.full_like(x, v), attrs={"value": v}, name=nm)
    case("aten.full_like", [x], lambda x: torch.full_like(x, 3), attrs={"value": 3}, name="int_" + nm)
    for dst in (f16, i32, b8):
        d = "%s_to_%s" % (nm, str(dst)[6:])
        case("aten.zeros_like", [x], lambda x: torch.zeros_like(x, dtype=dst), attrs={"dtype": dst, "has_dtype": True}, name=d)
        case("aten.ones_like", [x], lambda x: torch.ones_like(x, dtype=dst), attrs={"dtype": dst, "has_dtype": True}, name=d)
        case("aten.full_like", [x], lambda x: torch.full_like(x, 2.5, dtype=dst),
             attrs={"value": 2.5, "dtype": dst, "has_dtype": True}, name=d)
for op, fn in (("aten.zeros_like", torch.zeros_like), ("aten.ones_like", torch.ones_like)):
    case(op, [rnd((0, 3), f32)], fn, name="empty")
    case(op, [rnd((), i64)], fn, name="rank0")

s.main()
