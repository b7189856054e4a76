"""Oracle cases of the prims opset (docs/prims.md): every prim except philox_uniform and copy_to
(covered by //runtime:prims_kernels_test), each mapped to the torch expression with identical
semantics. Run by Bazel with Debian's /usr/bin/python3 (PyTorch 1.13); see README.md.

Prims are strict (equal shapes and dtypes, no promotion, dtype kept by reductions), so where
torch widens (integer sum/prod/cumsum give int64) the expected value is converted back with
.to(x.dtype), which wraps exactly as the prim does.
"""
import torch
import torch.nn.functional as F

from oracle import Suite

torch.manual_seed(0)
s = Suite("prims")

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, I32, I8, U8, BOOL = torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool
FLOATS = [F32, F64, F16, BF16]
INTS = [I32, I64]
NAME = {F32: "f32", F64: "f64", F16: "f16", BF16: "bf16", I64: "i64", I32: "i32", I8: "i8",
        U8: "u8", BOOL: "bool"}
TOL = {F32: (1e-5, 1e-6), F64: (1e-12, 1e-12), F16: (2e-3, 1e-3), BF16: (1.6e-2, 1e-2)}


def rand(shape, dt=F32, lo=-100, hi=100):
    if dt == BOOL:
        return torch.randint(0, 2, shape).bool()
    if dt == U8 and lo < 0:
        lo, hi = 0, 256
    if not dt.is_floating_point:
        return torch.randint(lo, hi, shape, dtype=dt)
    return torch.randn(shape, dtype=F64).to(dt)


def half_safe(fn, *xs):
    """fn(*xs); where torch 1.13 lacks a CPU kernel for f16/bf16, computed in f32 and rounded
    back (one rounding of the exact result, as coil's double-precision kernels)."""
    try:
        return fn(*xs)
    except RuntimeError:
        dt = xs[0].dtype
        return fn(*[x.to(F32) if x.dtype in (F16, BF16) else x for x in xs]).to(dt)


def dense(t):
    return t.clone(memory_format=torch.contiguous_format)


def case(op, inputs, expect, attrs=None, name="", dt=None, **kw):
    """One case; tolerances from the output dtype (exact for integers and bools)."""
    rtol, atol = TOL.get(dt or expect.dtype, (0.0, 0.0))
    s.case(op, inputs, dense(expect), attrs=attrs or {}, name=name, rtol=rtol, atol=atol, **kw)


def variants(shape, dt, make=rand):
    """(name, tensor) pairs of `shape`: contiguous, transposed (rank >= 2) and strided."""
    yield NAME[dt], make(shape, dt)
    if len(shape) >= 2:
        yield NAME[dt] + "_transposed", make(tuple(reversed(shape)), dt).permute(
            *reversed(range(len(shape))))
    if len(shape) >= 1:
        big = make(tuple(shape[:-1]) + (shape[-1] * 2,), dt)
        yield NAME[dt] + "_strided", big[..., ::2]


EDGE_SHAPES = [(0, 3), (1, 4), ()]

# ---------------------------------------------------------------------------------------------
# Elementwise unary
FLOAT_UNARY = {
    "exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1, "log": torch.log,
    "log2": torch.log2, "log1p": torch.log1p, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "asin": torch.asin, "acos": torch.acos,
    "atan": torch.atan, "sinh": torch.sinh, "cosh": torch.cosh, "tanh": torch.tanh,
    "asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh, "erf": torch.erf,
    "erfc": torch.erfc, "ceil": torch.ceil, "floor": torch.floor, "round": torch.round,
    "trunc": torch.trunc,
}
POSITIVE = {"log", "log2", "log1p", "sqrt", "rsqrt", "acosh"}
UNIT = {"asin", "acos", "atanh"}


def unary_input(name, shape, dt):
    x = torch.randn(shape, dtype=F64)
    if name in POSITIVE:
        x = x.abs() + (1.0 if name == "acosh" else 0.05)
    elif name in UNIT:
        x = x.clamp(-0.95, 0.95)
    elif name in ("ceil", "floor", "round", "trunc"):
        x = x * 4
    return x.to(dt)


for name, fn in FLOAT_UNARY.items():
    for dt in FLOATS:
        x = unary_input(name, (3, 4), dt)
        case("prims." + name, [x], half_safe(fn, x), name=NAME[dt])
    x = unary_input(name, (4, 3), F32).t()
    case("prims." + name, [x], fn(x), name="transposed")
    for shape in EDGE_SHAPES:
        x = unary_input(name, shape, F32)
        case("prims." + name, [x], fn(x), name="shape_%s" % list(shape))

# round is half to even; the special values propagate.
x = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.49, float("nan"), float("inf"), -0.0])
for dt in FLOATS:
    case("prims.round", [x.to(dt)], half_safe(torch.round, x.to(dt)), name="halves_" + NAME[dt])
for name in ["exp", "log", "sqrt", "tanh", "floor"]:
    x = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0, 0.0, -1.0])
    case("prims." + name, [x], FLOAT_UNARY[name](x), name="special")

INT_FLOAT_UNARY = {"abs": torch.abs, "neg": torch.neg, "sign": torch.sign}
for name, fn in INT_FLOAT_UNARY.items():
    for dt in FLOATS + INTS + [I8]:
        for vname, x in variants((3, 4), dt):
            case("prims." + name, [x], half_safe(fn, x), name=vname)
    for dt, lo in [(I32, -2**31), (I64, -2**63), (I8, -128)]:
        x = torch.tensor([lo, lo + 1, -1, 0, 1, 5], dtype=dt)
        case("prims." + name, [x], fn(x), name="extremes_" + NAME[dt])
    for shape in EDGE_SHAPES:
        x = rand(shape)
        case("prims." + name, [x], fn(x), name="shape_%s" % list(shape))
x = torch.tensor([float("nan"), -0.0, 0.0, float("-inf"), 2.0])
case("prims.sign", [x], torch.sign(x), name="special")
case("prims.abs", [x], torch.abs(x), name="special")
case("prims.neg", [x], torch.neg(x), name="special")

for dt in FLOATS + INTS + [I8]:
    for vname, x in variants((3, 4), dt):
        case("prims.signbit", [x], half_safe(torch.signbit, x), name=vname)
x = torch.tensor([-0.0, 0.0, float("nan"), float("-inf"), float("inf"), -1e-30])
case("prims.signbit", [x], torch.signbit(x), name="special")
x = rand((0, 3))
case("prims.signbit", [x], torch.signbit(x), name="empty")

for dt in INTS + [I8, U8, BOOL]:
    for vname, x in variants((3, 4), dt):
        case("prims.bitwise_not", [x], torch.bitwise_not(x), name=vname)
x = rand((1, 0), I64)
case("prims.bitwise_not", [x], torch.bitwise_not(x), name="empty")

# ---------------------------------------------------------------------------------------------
# Elementwise binary (operands of one shape and dtype)


def binary_inputs(shape, dt, nonzero=False, lo=-100, hi=100):
    a = rand(shape, dt, lo, hi)
    b = rand(shape, dt, lo, hi)
    if nonzero:
        if dt.is_floating_point:
            b = torch.where(b.abs() < 0.1, torch.ones_like(b), b)
        else:
            b = torch.where(b == 0, torch.ones_like(b), b)
    return a, b


def binary_cases(name, fn, dtypes, nonzero=False, lo=-100, hi=100):
    for dt in dtypes:
        a, b = binary_inputs((3, 4), dt, nonzero, lo, hi)
        case("prims." + name, [a, b], half_safe(fn, a, b), name=NAME[dt])
    a, b = binary_inputs((4, 3), dtypes[0], nonzero, lo, hi)
    case("prims." + name, [a.t(), b.t()], fn(a.t(), b.t()), name="transposed")
    for shape in EDGE_SHAPES:
        a, b = binary_inputs(shape, dtypes[0], nonzero, lo, hi)
        case("prims." + name, [a, b], fn(a, b), name="shape_%s" % list(shape))


binary_cases("add", torch.add, FLOATS + INTS + [I8, U8, BOOL])
binary_cases("sub", torch.sub, FLOATS + INTS + [I8, U8])
binary_cases("mul", torch.mul, FLOATS + INTS + [I8, U8, BOOL])
for dt, big in [(I32, 2**31 - 1), (I64, 2**63 - 1)]:
    a = torch.tensor([big, -big - 1, big, 12345678], dtype=dt)
    b = torch.tensor([1, -1, big, 87654321], dtype=dt)
    for name, fn in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul)]:
        case("prims." + name, [a, b], fn(a, b), name="wraps_" + NAME[dt])

binary_cases("div", torch.div, FLOATS, nonzero=True)
binary_cases("div", lambda a, b: torch.div(a, b, rounding_mode="trunc"), INTS + [I8],
             nonzero=True)
binary_cases("remainder", torch.remainder, FLOATS + INTS + [I8], nonzero=True)
binary_cases("fmod", torch.fmod, FLOATS + INTS + [I8], nonzero=True)
signs_a = torch.tensor([7, -7, 7, -7, 0, 6, -6, 5])
signs_b = torch.tensor([2, 2, -2, -2, 3, 3, -3, 7])
for dt in INTS + [I8]:
    a, b = signs_a.to(dt), signs_b.to(dt)
    case("prims.div", [a, b], torch.div(a, b, rounding_mode="trunc"), name="signs_" + NAME[dt])
    case("prims.remainder", [a, b], torch.remainder(a, b), name="signs_" + NAME[dt])
    case("prims.fmod", [a, b], torch.fmod(a, b), name="signs_" + NAME[dt])
for dt in [F32, F64]:
    a = torch.tensor([7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 1.0, float("inf"), 3.0], dtype=dt)
    b = torch.tensor([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, 2.0, float("inf")], dtype=dt)
    case("prims.div", [a, b], torch.div(a, b), name="special_" + NAME[dt])
    case("prims.remainder", [a, b], torch.remainder(a, b), name="signs_" + NAME[dt])
    case("prims.fmod", [a, b], torch.fmod(a, b), name="signs_" + NAME[dt])

for dt in FLOATS:
    a = (torch.rand((3, 4), dtype=F64) * 3 + 0.1).to(dt)
    b = (torch.randn((3, 4), dtype=F64) * 2).to(dt)
    case("prims.pow", [a, b], half_safe(torch.pow, a, b), name=NAME[dt])
a = torch.tensor([-2.0, -2.0, 0.0, 0.0, float("nan"), 1.0])
b = torch.tensor([3.0, 0.5, -1.0, 0.0, 0.0, float("nan")])
case("prims.pow", [a, b], torch.pow(a, b), name="special")
for dt in INTS + [I8]:
    a = rand((3, 4), dt, -5, 6)
    b = rand((3, 4), dt, 0, 5)
    case("prims.pow", [a, b], torch.pow(a, b), name=NAME[dt])
a = torch.tensor([3, -3, 2, 7], dtype=I32)
b = torch.tensor([40, 41, 31, 0], dtype=I32)
case("prims.pow", [a, b], torch.pow(a, b), name="wraps_i32")
case("prims.pow", [a.t(), b.t()], torch.pow(a, b), name="shape_1d")
a, b = rand((0, 3)), rand((0, 3))
case("prims.pow", [a, b], torch.pow(a, b), name="empty")

nan_a = torch.tensor([1.0, float("nan"), 2.0, float("nan"), -0.0, float("inf")])
nan_b = torch.tensor([float("nan"), 1.0, 3.0, float("nan"), 0.0, 1.0])
for name, fn in [("maximum", torch.maximum), ("minimum", torch.minimum)]:
    binary_cases(name, fn, FLOATS + INTS + [I8, U8])
    case("prims." + name, [nan_a, nan_b], fn(nan_a, nan_b), name="nan")
    a, b = rand((3, 4), BOOL), rand((3, 4), BOOL)
    try:
        case("prims." + name, [a, b], fn(a, b), name="bool")
    except RuntimeError:
        pass

for name, fn in [("atan2", torch.atan2), ("hypot", torch.hypot)]:
    for dt in FLOATS:
        a, b = rand((3, 4), dt), rand((3, 4), dt)
        case("prims." + name, [a, b], half_safe(fn, a, b), name=NAME[dt])
    a, b = rand((4, 3)), rand((4, 3))
    case("prims." + name, [a.t(), b.t()], fn(a.t(), b.t()), name="transposed")
    a, b = rand((0, 3)), rand((0, 3))
    case("prims." + name, [a, b], fn(a, b), name="empty")
    z = torch.tensor([0.0, -0.0, 0.0, -0.0, float("inf"), float("nan")])
    w = torch.tensor([0.0, 0.0, -0.0, -0.0, 1.0, 1.0])
    case("prims." + name, [z, w], fn(z, w), name="special")

for name, fn in [("bitwise_and", torch.bitwise_and), ("bitwise_or", torch.bitwise_or),
                 ("bitwise_xor", torch.bitwise_xor)]:
    binary_cases(name, fn, INTS + [I8, U8, BOOL])

COMPARE = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt,
           "ge": torch.ge}
for name, fn in COMPARE.items():
    for dt in FLOATS + INTS + [I8, U8, BOOL]:
        a = rand((3, 4), dt, -3, 3)
        b = rand((3, 4), dt, -3, 3)
        if dt.is_floating_point:
            b[0] = a[0]  # some equal elements
        case("prims." + name, [a, b], half_safe(fn, a, b), name=NAME[dt])
    case("prims." + name, [nan_a, nan_b], fn(nan_a, nan_b), name="nan")
    a, b = rand((4, 3), I64, -2, 2), rand((4, 3), I64, -2, 2)
    case("prims." + name, [a.t(), b.t()], fn(a.t(), b.t()), name="transposed")
    for shape in EDGE_SHAPES:
        a, b = rand(shape), rand(shape)
        case("prims." + name, [a, b], fn(a, b), name="shape_%s" % list(shape))

for dt in FLOATS + INTS + [BOOL]:
    c = rand((3, 4), BOOL)
    for vname, a in variants((3, 4), dt):
        b = rand((3, 4), dt)
        case("prims.where", [c, a, b], half_safe(lambda a, b: torch.where(c, a, b), a, b),
             name=vname)
for shape in EDGE_SHAPES:
    c, a, b = rand(shape, BOOL), rand(shape), rand(shape)
    case("prims.where", [c, a, b], torch.where(c, a, b), name="shape_%s" % list(shape))

# convert_element_type: Tensor.to(dtype).
ALL = [F32, F64, F16, BF16, I64, I32, I8, U8, BOOL]
src_f = torch.tensor([[1.7, -1.7, 0.0, -0.0], [100.5, -100.5, 0.25, 3.0]])
for to in ALL:
    for frm in ALL:
        x = rand((2, 3), frm, -50, 50) if frm != F32 else src_f
        if to == U8 and frm.is_floating_point:
            x = x.abs()  # float -> uint8 of negatives is undefined in C++
        case("prims.convert_element_type", [x], x.to(to), {"dtype": to},
             name="%s_to_%s" % (NAME[frm], NAME[to]))
x = torch.tensor([float("nan"), float("inf"), -0.0, 0.5])
case("prims.convert_element_type", [x], x.to(BOOL), {"dtype": BOOL}, name="special_to_bool")
case("prims.convert_element_type", [x], x.to(F16), {"dtype": F16}, name="special_to_f16")
x = torch.tensor([65520.0, 1e-8, 3.0e38, 1.0 / 3])
case("prims.convert_element_type", [x], x.to(F16), {"dtype": F16}, name="rounding_f16")
case("prims.convert_element_type", [x], x.to(BF16), {"dtype": BF16}, name="rounding_bf16")
x = torch.tensor([2**31 - 1, -2**31, 300, -129], dtype=I64)
for to in [I32, I8, U8]:
    case("prims.convert_element_type", [x], x.to(to), {"dtype": to}, name="wrap_" + NAME[to])
for vname, x in variants((3, 4), F64):
    case("prims.convert_element_type", [x], x.to(F32), {"dtype": F32}, name=vname)
case("prims.convert_element_type", [rand((0, 2))], rand((0, 2)).to(I32), {"dtype": I32},
     name="empty")

# ---------------------------------------------------------------------------------------------
# Reductions and scans: dims removed, dtype kept.


def reduce_expect(fn, x, dims):
    if not dims:
        return x.clone()
    y = x
    for d in reversed(dims):
        y = fn(y, d)
    return y.to(x.dtype)


REDUCE = {
    "sum": lambda y, d: torch.sum(y, d),
    "prod": lambda y, d: torch.prod(y, d),
    "amax": lambda y, d: torch.amax(y, d),
    "amin": lambda y, d: torch.amin(y, d),
}
REDUCE_DIMS = [((3, 4), [0]), ((3, 4), [1]), ((3, 4), [0, 1]), ((2, 3, 4), [0, 2]),
               ((2, 3, 4), []), ((2, 3, 4), [1]), ((1, 4), [0]), ((4,), [0])]
for name, fn in REDUCE.items():
    dtypes = FLOATS + INTS + [I8] + ([BOOL] if name in ("amax", "amin") else [])
    for dt in dtypes:
        for vname, x in variants((3, 4), dt, lambda sh, t: rand(sh, t, -3, 4)):
            if name == "prod" and dt.is_floating_point:
                x = x * 0 + torch.rand(x.shape, dtype=F64).to(dt) + 0.5
            expect = half_safe(lambda y: reduce_expect(fn, y, [1]), x)
            case("prims." + name, [x], expect, {"dims": [1]}, name=vname,
                 dt=dt if dt.is_floating_point else None)
    for shape, dims in REDUCE_DIMS:
        x = rand(shape)
        case("prims." + name, [x], reduce_expect(fn, x, dims), {"dims": dims},
             name="%s_%s" % (list(shape), dims))
    x = torch.tensor([[1.0, float("nan"), 2.0], [float("inf"), -1.0, float("-inf")]])
    case("prims." + name, [x], reduce_expect(fn, x, [1]), {"dims": [1]}, name="special")
for name in ["sum", "prod"]:
    x = rand((0, 3))
    case("prims." + name, [x], reduce_expect(REDUCE[name], x, [0]), {"dims": [0]},
         name="empty_reduced")
for name in REDUCE:
    x = rand((0, 3))
    case("prims." + name, [x], reduce_expect(REDUCE[name], x, [1]), {"dims": [1]},
         name="empty_kept")
x = torch.tensor([[2**31 - 1, 1, 5]], dtype=I32)
case("prims.sum", [x], torch.sum(x, 1).to(I32), {"dims": [1]}, name="wraps_i32")
case("prims.prod", [x], torch.prod(x, 1).to(I32), {"dims": [1]}, name="wraps_i32")

ARG = {"argmax": torch.argmax, "argmin": torch.argmin}
for name, fn in ARG.items():
    for dt in FLOATS + INTS + [I8, U8]:
        for vname, x in variants((3, 4), dt, lambda sh, t: rand(sh, t, 0, 3)):
            for d in [0, 1]:
                case("prims." + name, [x], half_safe(lambda y: fn(y, d), x), {"dim": d},
                     name="%s_dim%d" % (vname, d))
    x = torch.tensor([[1.0, float("nan"), 5.0, float("nan")], [3.0, 3.0, -1.0, -1.0]])
    case("prims." + name, [x], fn(x, 1), {"dim": 1}, name="nan_and_ties")
    x = torch.tensor([[float("-inf"), float("inf"), 0.0]])
    case("prims." + name, [x], fn(x, 1), {"dim": 1}, name="inf")
    x = rand((1, 4))
    case("prims." + name, [x], fn(x, 0), {"dim": 0}, name="size1")
    x = rand((3,))
    case("prims." + name, [x], fn(x, 0), {"dim": 0}, name="rank1")
    x = rand((0, 3))
    case("prims." + name, [x], fn(x, 1), {"dim": 1}, name="empty_kept")

SCAN = {"cumsum": torch.cumsum, "cumprod": torch.cumprod}
for name, fn in SCAN.items():
    for dt in FLOATS + INTS + [I8]:
        for vname, x in variants((3, 4), dt, lambda sh, t: rand(sh, t, -3, 4)):
            if name == "cumprod" and dt.is_floating_point:
                x = x * 0 + torch.rand(x.shape, dtype=F64).to(dt) + 0.5
            for d in [0, 1]:
                expect = half_safe(lambda y: fn(y, d).to(y.dtype), x)
                case("prims." + name, [x], expect, {"dim": d}, name="%s_dim%d" % (vname, d),
                     dt=dt if dt.is_floating_point else None)
    for shape, d in [((0, 3), 0), ((0, 3), 1), ((1, 4), 0), ((5,), 0)]:
        x = rand(shape)
        case("prims." + name, [x], fn(x, d), {"dim": d}, name="%s_%d" % (list(shape), d))
    x = torch.tensor([1.0, float("nan"), 2.0, float("inf")])
    case("prims." + name, [x], fn(x, 0), {"dim": 0}, name="special")

# ---------------------------------------------------------------------------------------------
# Shape and layout (data movement: exact)
SHAPE_DTYPES = [F32, F64, F16, BF16, I32, I64, BOOL]

for shape, target in [((3, 4), [2, 6]), ((3, 4), [12]), ((3, 4), [4, 3, 1]), ((2, 3, 4), [6, 4]),
                      ((0, 3), [3, 0]), ((1,), []), ((), [1, 1]), ((1, 4), [4])]:
    x = rand(shape)
    case("prims.reshape", [x], x.reshape(target), {"shape": target},
         name="%s_to_%s" % (list(shape), target))
for dt in SHAPE_DTYPES:
    for vname, x in variants((3, 4), dt):
        case("prims.reshape", [x], x.reshape(2, 2, 3), {"shape": [2, 2, 3]}, name=vname)

for shape, dims in [((2, 3, 4), [2, 0, 1]), ((2, 3, 4), [0, 1, 2]), ((3, 4), [1, 0]),
                    ((0, 3), [1, 0]), ((1, 4), [1, 0]), ((), []), ((2, 1, 3), [1, 2, 0])]:
    x = rand(shape)
    case("prims.permute", [x], x.permute(dims), {"dims": dims},
         name="%s_%s" % (list(shape), dims))
for dt in SHAPE_DTYPES:
    for vname, x in variants((2, 3, 4), dt):
        case("prims.permute", [x], x.permute(1, 2, 0), {"dims": [1, 2, 0]}, name=vname)


def broadcast_in_dim(x, shape, bdims):
    view = [1] * len(shape)
    for i, d in enumerate(bdims):
        view[d] = x.shape[i]
    return x.reshape(view).expand(*shape)


BROADCASTS = [((3,), [2, 3], [1]), ((3,), [3, 2], [0]), ((3, 1), [3, 4], [0, 1]),
              ((), [2, 2], []), ((1, 3), [2, 4, 3], [0, 2]), ((2, 3), [2, 3], [0, 1]),
              ((1,), [0], [0]), ((3,), [0, 3], [1]), ((1, 1), [5, 1, 2], [1, 2])]
for shape, out, bdims in BROADCASTS:
    x = rand(shape)
    case("prims.broadcast_in_dim", [x], broadcast_in_dim(x, out, bdims),
         {"shape": out, "broadcast_dimensions": bdims}, name="%s_to_%s_%s" % (list(shape), out, bdims))
for dt in SHAPE_DTYPES:
    for vname, x in variants((3, 4), dt):
        case("prims.broadcast_in_dim", [x], broadcast_in_dim(x, [3, 2, 4], [0, 2]),
             {"shape": [3, 2, 4], "broadcast_dimensions": [0, 2]}, name=vname)

SLICES = [((5, 6), [1, 0], [4, 6], [1, 2]), ((5, 6), [0, 1], [5, 6], [3, 2]),
          ((5, 6), [2, 3], [2, 3], [1, 1]), ((5, 6), [0, 0], [5, 6], [1, 1]),
          ((7,), [1], [7], [4]), ((0, 3), [0, 1], [0, 3], [1, 1]), ((1, 4), [0, 1], [1, 3], [1, 1]),
          ((), [], [], [])]
for shape, start, limit, strides in SLICES:
    x = rand(shape)
    idx = tuple(slice(a, b, c) for a, b, c in zip(start, limit, strides))
    case("prims.slice", [x], x[idx],
         {"start_indices": start, "limit_indices": limit, "strides": strides},
         name="%s_%s_%s_%s" % (list(shape), start, limit, strides))
for dt in SHAPE_DTYPES:
    for vname, x in variants((4, 6), dt):
        case("prims.slice", [x], x[1:4, 0:5:2],
             {"start_indices": [1, 0], "limit_indices": [4, 5], "strides": [1, 2]}, name=vname)

for shape, dims in [((3, 1, 4), [1]), ((1, 1), [0, 1]), ((1, 3, 1), [2, 0]), ((3, 4), []),
                    ((0, 1), [1]), ((1,), [0])]:
    x = rand(shape)
    out = [n for i, n in enumerate(shape) if i not in dims]
    case("prims.squeeze", [x], x.reshape(out), {"dims": dims}, name="%s_%s" % (list(shape), dims))
for dt in SHAPE_DTYPES:
    for vname, x in variants((3, 1, 4), dt):
        case("prims.squeeze", [x], x.squeeze(1), {"dims": [1]}, name=vname)

for dt in SHAPE_DTYPES:
    a, b = rand((2, 3), dt), rand((4, 3), dt)
    case("prims.concat", [a, b], torch.cat([a, b], 0), {"dim": 0}, name=NAME[dt] + "_dim0")
    a, b, c = rand((3, 2), dt), rand((3, 4), dt), rand((3, 1), dt)
    case("prims.concat", [a, b, c], torch.cat([a, b, c], 1), {"dim": 1}, name=NAME[dt] + "_dim1")
a, b = rand((3, 2)).t(), rand((4, 3))[::2]
case("prims.concat", [a, b], torch.cat([a, b], 0), {"dim": 0}, name="noncontiguous")
a, b = rand((0, 3)), rand((2, 3))
case("prims.concat", [a, b], torch.cat([a, b], 0), {"dim": 0}, name="empty_member")
a = rand((2, 3))
case("prims.concat", [a], torch.cat([a], 1), {"dim": 1}, name="single")
a, b = rand((1, 3)), rand((1, 3))
case("prims.concat", [a, b], torch.cat([a, b], 1), {"dim": 1}, name="size1")


def pad(x, low, high, value):
    pairs = []
    for lo, hi in reversed(list(zip(low, high))):
        pairs += [lo, hi]
    return F.pad(x, pairs, value=value)


PADS = [((3, 4), [1, 2], [2, 0], 1.5), ((3, 4), [1, -1], [-2, 3], -2.0),
        ((3, 4), [0, 0], [0, 0], 0.0), ((5,), [-2], [-3], 0.0), ((0, 3), [1, 0], [1, 1], 7.0),
        ((1, 4), [2, -4], [0, 1], 3.0), ((2, 3, 4), [0, 1, 0], [1, 0, -1], -1.0)]
for shape, low, high, value in PADS:
    x = rand(shape)
    case("prims.pad", [x], pad(x, low, high, value), {"low": low, "high": high, "value": value},
         name="%s_%s_%s" % (list(shape), low, high))
for dt in [F32, F64, F16, BF16, I32, I64]:
    for vname, x in variants((3, 4), dt):
        case("prims.pad", [x], pad(x, [1, -1], [0, 2], 5.0),
             {"low": [1, -1], "high": [0, 2], "value": 5.0}, name=vname)

for shape, dims in [((3, 4), [0]), ((3, 4), [1]), ((3, 4), [0, 1]), ((2, 3, 4), [2, 0]),
                    ((3, 4), []), ((0, 3), [0]), ((1, 4), [0, 1]), ((), [])]:
    x = rand(shape)
    case("prims.rev", [x], torch.flip(x, dims), {"dims": dims}, name="%s_%s" % (list(shape), dims))
for dt in SHAPE_DTYPES:
    for vname, x in variants((3, 4), dt):
        case("prims.rev", [x], torch.flip(x, [1]), {"dims": [1]}, name=vname)

# ---------------------------------------------------------------------------------------------
# Creation
FULLS = [([2, 3], 1.5, F32), ([2, 3], -2.25, F64), ([4], 0.1, F16), ([4], 0.1, BF16),
         ([2, 2], 7, I64), ([3], -3, I32), ([2], 1, BOOL), ([2], 0.0, BOOL), ([], 2.5, F32),
         ([0, 3], 1.0, F32), ([1, 1], 2**40 + 1, I64), ([2], float("inf"), F32)]
for shape, value, dt in FULLS:
    case("prims.full", [], torch.full(shape, value, dtype=dt),
         {"shape": shape, "value": value, "dtype": dt}, name="%s_%s_%s" % (shape, value, NAME[dt]))

# prims.sym_value: a symbolic integer as data (the torch side is the integer itself; the
# interpreter binds the expression, here a constant, before the kernel runs).
for value, dt in [(7, I64), (0, I32), (-3, I64), (12, F32), (5, F64), (3, BF16), (2**40, I64)]:
    case("prims.sym_value", [], torch.tensor(value, dtype=dt), {"value": value, "dtype": dt},
         name="%d_%s" % (value, NAME[dt]))

IOTAS = [(5, 2, 3, I64), (5, 2, -3, I64), (4, 0, 1, I32), (0, 2, 3, I64), (1, 7, 2, I64),
         (6, -1, 2, F32), (4, 3, 1, F64), (5, 0, 1, F16), (3, 1, 1, BF16)]
for length, start, step, dt in IOTAS:
    case("prims.iota", [], torch.arange(start, start + length * step, step, dtype=dt),
         {"length": length, "start": start, "step": step, "dtype": dt},
         name="%d_%d_%d_%s" % (length, start, step, NAME[dt]))

# ---------------------------------------------------------------------------------------------
# Indexing
for dt in [F32, F64, F16, BF16, I32, I64, BOOL]:
    x = rand((3, 4), dt)
    idx = torch.randint(0, 4, (3, 5))
    case("prims.gather", [x, idx], torch.gather(x, 1, idx), {"dim": 1}, name=NAME[dt] + "_dim1")
    idx = torch.randint(0, 3, (2, 4))
    case("prims.gather", [x, idx], torch.gather(x, 0, idx), {"dim": 0}, name=NAME[dt] + "_dim0")
x = rand((4, 3)).t()
idx = torch.randint(0, 4, (2, 2))
case("prims.gather", [x, idx], torch.gather(x, 1, idx), {"dim": 1}, name="transposed_smaller")
case("prims.gather", [x, idx.to(I32)], torch.gather(x, 1, idx), {"dim": 1}, name="index_i32")
idx = torch.randint(0, 4, (6, 2))[::2]
case("prims.gather", [x, idx], torch.gather(x, 1, idx), {"dim": 1}, name="strided_index")
x = rand((3, 4))
idx = torch.zeros((3, 0), dtype=I64)
case("prims.gather", [x, idx], torch.gather(x, 1, idx), {"dim": 1}, name="empty_index")
x = rand((1, 4))
idx = torch.tensor([[3, 0, 0]])
case("prims.gather", [x, idx], torch.gather(x, 1, idx), {"dim": 1}, name="size1")

for dt in [F32, F64, F16, BF16, I32, I64, BOOL]:
    x = rand((3, 5), dt)
    src = rand((3, 5), dt)
    # A permutation per row: unique targets, so torch's result is deterministic.
    idx = torch.stack([torch.randperm(5) for _ in range(3)])
    case("prims.scatter", [x, idx, src], torch.scatter(x, 1, idx, src),
         {"dim": 1, "reduce": "none"}, name=NAME[dt])
    idx = torch.stack([torch.randperm(3) for _ in range(2)]).t()  # [3, 2] into dim 0
    src = rand((3, 2), dt)
    case("prims.scatter", [x, idx, src], torch.scatter(x, 0, idx, src),
         {"dim": 0, "reduce": "none"}, name=NAME[dt] + "_dim0_smaller")
for dt in [F32, F64, I32, I64]:
    x = rand((3, 4), dt)
    idx = torch.randint(0, 4, (3, 6))  # duplicates add up
    src = rand((3, 6), dt)
    case("prims.scatter", [x, idx, src], torch.scatter_add(x, 1, idx, src),
         {"dim": 1, "reduce": "add"}, name=NAME[dt])
x = rand((4, 3)).t()
idx = torch.tensor([[0, 0, 3], [1, 1, 1], [2, 0, 2]])
src = rand((3, 3))
case("prims.scatter", [x, idx, src], torch.scatter_add(x, 1, idx, src),
     {"dim": 1, "reduce": "add"}, name="transposed_duplicates")
case("prims.scatter", [x, idx.to(I32), src], torch.scatter_add(x, 1, idx, src),
     {"dim": 1, "reduce": "add"}, name="index_i32")
x = rand((3, 4))
idx = torch.zeros((3, 0), dtype=I64)
src = rand((3, 0))
case("prims.scatter", [x, idx, src], x, {"dim": 1, "reduce": "none"}, name="empty_index")

s.main()
