"""Oracle cases of the shape family: reshapes and views, reorderings, cat/stack/split/chunk,
slicing, padding and repetition. Run by Bazel with Debian's /usr/bin/python3 (PyTorch 1.13);
see README.md.

Shape ops only move elements, so every comparison is exact (rtol = atol = 0). coil's views
are functional: the expected value is torch's view, made contiguous by the harness.
Cases whose number of outputs depends on a dimension that the symbolic rerun would make
symbolic (split by size, chunk) are static_only.
"""
import torch
import torch.nn.functional as F

from oracle import Suite

torch.manual_seed(0)
s = Suite("shape")

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, I32, I8, U8, BOOL = torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool
ALL = [F32, F64, F16, BF16, I64, I32, I8, U8, BOOL]
NAME = {F32: "f32", F64: "f64", F16: "f16", BF16: "bf16", I64: "i64", I32: "i32", I8: "i8",
        U8: "u8", BOOL: "bool"}
INT64_MAX = 2**63 - 1


def rand(shape, dt=F32):
    if dt == BOOL:
        return torch.randint(0, 2, shape).bool()
    if dt == U8:
        return torch.randint(0, 256, shape, dtype=dt)
    if not dt.is_floating_point:
        return torch.randint(-100, 100, shape, dtype=dt)
    return torch.randn(shape, dtype=F64).to(dt)


def special(shape, dt=F32):
    """Random floats with nan, inf, -inf, -0.0 mixed in."""
    x = rand(shape, dt).reshape(-1)
    vals = [float("nan"), float("inf"), float("-inf"), -0.0]
    for i, v in enumerate(vals):
        if i < x.numel():
            x[i * 3 % x.numel()] = v
    return x.reshape(shape)


def views(shape, dt=F32):
    """Non-contiguous tensors of `shape`, with names (transposed storage, strided, offset,
    expanded)."""
    r = len(shape)
    out = []
    if r >= 2:
        t = rand(tuple(reversed(shape)), dt).permute(*reversed(range(r)))
        out.append(("transposed", t))
    if r >= 1:
        big = rand(tuple(shape[:-1]) + (shape[-1] * 2 + 1,), dt)
        out.append(("strided", big[..., 1::2]))
        lead = rand((1,) + tuple(shape[1:]), dt)
        out.append(("expanded", lead.expand(*shape)))
    return out


def dense(t):
    """A truly row-major copy (oracle.py's .contiguous() keeps odd strides of size-1 dims)."""
    return t.clone(memory_format=torch.contiguous_format)


def case(op, inputs, expect, attrs=None, name="", **kw):
    expect = [dense(t) for t in expect] if isinstance(expect, (tuple, list)) else dense(expect)
    s.case(op, inputs, expect, attrs=attrs or {}, name=name, rtol=0.0, atol=0.0, **kw)


def each_input(shape, dtypes=ALL):
    """(name, tensor) pairs: every dtype contiguous, plus non-contiguous f32/i64 views and
    special float values."""
    for dt in dtypes:
        yield NAME[dt], rand(shape, dt)
    for vname, v in views(shape, F32):
        yield vname, v
    for vname, v in views(shape, I64)[:1]:
        yield vname + "_i64", v
    yield "special", special(shape)


# ---------------------------------------------------------------------------------------------
# reshape / view / flatten / unflatten / squeeze / unsqueeze / contiguous / clone
RESHAPES = [((2, 3, 4), [6, 4]), ((2, 3, 4), [-1]), ((2, 3, 4), [4, -1, 2]), ((2, 3, 4), [24]),
            ((6,), [1, 6, 1]), ((), [1]), ((1,), []), ((0, 3), [3, 0]), ((0, 3), [-1, 3]),
            ((4, 1, 3), [-1, 3]), ((3, 4), [2, 2, 3])]
for shape, target in RESHAPES:
    for op in ["aten.reshape", "aten.view"]:
        x = rand(shape)
        case(op, [x], x.reshape(target), {"shape": target}, "f32_%s_to_%s" % (list(shape), target))
for name, x in each_input((3, 4)):
    case("aten.reshape", [x], x.reshape(2, -1, 3), {"shape": [2, -1, 3]}, name)
    try:
        viewed = x.view(-1)
    except RuntimeError:
        continue  # PyTorch cannot view this layout (coil refuses it too: shape_kernels_test)
    case("aten.view", [x], viewed, {"shape": [-1]}, name)

FLATTENS = [((2, 3, 4), 0, -1), ((2, 3, 4), 1, 2), ((2, 3, 4), -2, -1), ((2, 3, 4), 1, 1),
            ((), 0, -1), ((5,), 0, 0), ((2, 0, 3), 0, 1), ((2, 3, 4, 5), 1, -2)]
for shape, a, b in FLATTENS:
    x = rand(shape)
    case("aten.flatten", [x], torch.flatten(x, a, b), {"start_dim": a, "end_dim": b},
         "%s_%d_%d" % (list(shape), a, b))
for name, x in each_input((2, 3, 4)):
    case("aten.flatten", [x], torch.flatten(x, 1), {"start_dim": 1}, name)
x = rand((2, 3))
case("aten.flatten", [x], torch.flatten(x), {}, "defaults")

UNFLATTENS = [((2, 12), 1, [3, 4]), ((2, 12), -1, [3, -1]), ((12,), 0, [2, 2, 3]),
              ((2, 0), 1, [0, 5]), ((6, 2), 0, [-1, 1, 2]), ((3, 4), 0, [3])]
for shape, d, sizes in UNFLATTENS:
    x = rand(shape)
    case("aten.unflatten", [x], x.unflatten(d, sizes), {"dim": d, "sizes": sizes},
         "%s_%d_%s" % (list(shape), d, sizes))
for name, x in each_input((4, 6)):
    case("aten.unflatten", [x], x.unflatten(1, (2, 3)), {"dim": 1, "sizes": [2, 3]}, name)


def squeezed(x, dims):
    r = x.dim()
    nd = [d % max(r, 1) for d in dims] if dims else list(range(r))
    return x.reshape([n for i, n in enumerate(x.shape) if not (i in nd and n == 1)])


SQUEEZES = [((1, 3, 1, 4), []), ((1, 3, 1, 4), [0]), ((1, 3, 1, 4), [-2]), ((1, 3, 1, 4), [1]),
            ((1, 3, 1, 4), [0, 2]), ((1, 1), []), ((), []), ((), [0]), ((0, 1), []),
            ((3,), [0])]
for shape, dims in SQUEEZES:
    x = rand(shape)
    case("aten.squeeze", [x], squeezed(x, dims), {"dims": dims}, "%s_%s" % (list(shape), dims))
for name, x in each_input((3, 1, 4)):
    case("aten.squeeze", [x], x.squeeze(1), {"dims": [1]}, name)
x = rand((2, 1))
case("aten.squeeze", [x], x.squeeze(), {}, "default")

for shape, d in [((2, 3), 0), ((2, 3), 2), ((2, 3), -1), ((2, 3), -3), ((), 0), ((), -1),
                 ((0, 4), 1)]:
    x = rand(shape)
    case("aten.unsqueeze", [x], x.unsqueeze(d), {"dim": d}, "%s_%d" % (list(shape), d))
for name, x in each_input((3, 4)):
    case("aten.unsqueeze", [x], x.unsqueeze(1), {"dim": 1}, name)

for op in ["aten.contiguous", "aten.clone"]:
    for name, x in each_input((3, 4)):
        case(op, [x], x.clone(), {}, name)
    for shape in [(), (0, 3), (1,)]:
        x = rand(shape)
        case(op, [x], x.clone(), {}, "shape_%s" % list(shape))

# ---------------------------------------------------------------------------------------------
# permute / transpose / t / movedim / expand
for shape, dims in [((2, 3, 4), [2, 0, 1]), ((2, 3, 4), [-1, -3, 1]), ((2, 3), [0, 1]),
                    ((), []), ((2, 0, 3), [1, 2, 0]), ((1, 4, 1), [2, 1, 0])]:
    x = rand(shape)
    case("aten.permute", [x], x.permute(dims), {"dims": dims}, "%s_%s" % (list(shape), dims))
for name, x in each_input((2, 3, 4)):
    case("aten.permute", [x], x.permute(1, 2, 0), {"dims": [1, 2, 0]}, name)

for shape, a, b in [((2, 3, 4), 0, 2), ((2, 3, 4), -1, 1), ((2, 3), 1, 1), ((), 0, -1),
                    ((0, 3), 0, 1)]:
    x = rand(shape)
    case("aten.transpose", [x], x.transpose(a, b), {"dim0": a, "dim1": b},
         "%s_%d_%d" % (list(shape), a, b))
for name, x in each_input((3, 4)):
    case("aten.transpose", [x], x.transpose(0, 1), {"dim0": 0, "dim1": 1}, name)

for shape in [(3, 4), (5,), (), (0, 2), (1, 3)]:
    x = rand(shape)
    case("aten.t", [x], x.t(), {}, "%s" % list(shape))
for name, x in each_input((3, 4)):
    case("aten.t", [x], x.t(), {}, name)

for shape, src, dst in [((2, 3, 4), [0], [2]), ((2, 3, 4), [-1], [0]), ((2, 3, 4, 5), [0, 1], [-1, -2]),
                        ((2, 3, 4), [0, 1, 2], [2, 0, 1]), ((), [0], [0])]:
    x = rand(shape)
    case("aten.movedim", [x], torch.movedim(x, src, dst), {"source": src, "destination": dst},
         "%s_%s_%s" % (list(shape), src, dst))
for name, x in each_input((2, 3, 4)):
    case("aten.movedim", [x], torch.movedim(x, 0, -1), {"source": [0], "destination": [-1]}, name)

for shape, size in [((3, 1), [3, 4]), ((3, 1), [-1, 5]), ((1,), [2, 3, 4]), ((), [3, 2]),
                    ((2, 1, 3), [4, 2, 0, 3]), ((1, 3), [0, 3]), ((3, 4), [3, 4]),
                    ]:
    x = rand(shape)
    case("aten.expand", [x], x.expand(size), {"size": size}, "%s_%s" % (list(shape), size))
for name, x in each_input((3, 1)):
    case("aten.expand", [x], x.expand(2, 3, 4), {"size": [2, 3, 4]}, name)

# ---------------------------------------------------------------------------------------------
# flip / roll / tril / triu / diagonal
for shape, dims in [((2, 3, 4), [0]), ((2, 3, 4), [-1, 0]), ((2, 3, 4), []), ((), [0]),
                    ((0, 3), [1]), ((5,), [0])]:
    x = rand(shape)
    case("aten.flip", [x], torch.flip(x, dims), {"dims": dims}, "%s_%s" % (list(shape), dims))
for name, x in each_input((3, 4)):
    case("aten.flip", [x], torch.flip(x, [0, 1]), {"dims": [0, 1]}, name)

for shape, shifts, dims in [((2, 3, 4), [1], [0]), ((2, 3, 4), [-2, 5], [-1, 1]), ((3, 4), [5], []),
                            ((3, 4), [-7], []), ((0, 3), [1], [1]), ((5,), [12], [0]),
                            ((3, 4), [1, 2], [0, 0]), ((), [3], [])]:
    x = rand(shape)
    expect = torch.roll(x, shifts, dims) if dims else torch.roll(x, shifts)
    case("aten.roll", [x], expect, {"shifts": shifts, "dims": dims},
         "%s_%s_%s" % (list(shape), shifts, dims))
for name, x in each_input((3, 4)):
    case("aten.roll", [x], torch.roll(x, 2, 1), {"shifts": [2], "dims": [1]}, name)

for op, fn in [("aten.tril", torch.tril), ("aten.triu", torch.triu)]:
    for shape, k in [((4, 5), 0), ((4, 5), 1), ((4, 5), -2), ((2, 3, 4), 0), ((3, 3), 10),
                     ((3, 3), -10), ((0, 3), 0), ((2, 1, 5), 2)]:
        x = rand(shape)
        case(op, [x], fn(x, k), {"diagonal": k}, "%s_%d" % (list(shape), k))
    for name, x in each_input((4, 5)):
        case(op, [x], fn(x, -1), {"diagonal": -1}, name)
    x = rand((3, 3))
    case(op, [x], fn(x), {}, "default")

for shape, off, d1, d2 in [((3, 4), 0, 0, 1), ((3, 4), 1, 0, 1), ((3, 4), -2, 0, 1),
                           ((2, 3, 4), 0, -1, 0), ((2, 3, 4), 2, 1, 2), ((3, 4), 5, 0, 1),
                           ((0, 4), 0, 0, 1), ((2, 3, 4), -1, 2, 1),
                           # offsets below the rows: empty (the decomposition once crashed)
                           ((1, 1, 4), -2, 0, -2), ((3, 4), -5, 0, 1)]:
    x = rand(shape)
    case("aten.diagonal", [x], torch.diagonal(x, off, d1, d2),
         {"offset": off, "dim1": d1, "dim2": d2}, "%s_%d_%d_%d" % (list(shape), off, d1, d2))
for name, x in each_input((4, 4)):
    case("aten.diagonal", [x], torch.diagonal(x), {}, name)

# ---------------------------------------------------------------------------------------------
# cat / stack (with type promotion)
for dt in ALL:
    a, b = rand((2, 3), dt), rand((4, 3), dt)
    case("aten.cat", [a, b], torch.cat([a, b]), {}, NAME[dt])
    case("aten.stack", [a[:2], b[:2]], torch.stack([a[:2], b[:2]]), {}, NAME[dt])
for (da, db) in [(I8, F32), (BOOL, U8), (I32, I64), (F16, BF16), (BOOL, F64), (F16, F32)]:
    a, b = rand((2, 3), da), rand((1, 3), db)
    case("aten.cat", [a, b], torch.cat([a, b]), {}, "promote_%s_%s" % (NAME[da], NAME[db]))
    case("aten.stack", [a, a.to(db)], torch.stack([a, a.to(db)], 1), {"dim": 1},
         "promote_%s_%s" % (NAME[da], NAME[db]))
CATS = [([(2, 3), (2, 5)], 1), ([(2, 3), (2, 5)], -1), ([(2, 3, 4)] * 3, 1), ([(0, 3), (2, 3)], 0),
        ([(2, 0), (2, 0)], 1), ([(1, 3), (1, 3)], 0), ([(5,)], 0), ([(3, 2), (0, 2), (1, 2)], 0)]
for shapes, d in CATS:
    xs = [rand(sh) for sh in shapes]
    case("aten.cat", xs, torch.cat(xs, d), {"dim": d}, "%s_%d" % ([list(sh) for sh in shapes], d))
for name, v in views((3, 4)):
    w = rand((3, 4))
    case("aten.cat", [v, w], torch.cat([v, w], 1), {"dim": 1}, name)
    case("aten.stack", [v, w], torch.stack([v, w], -1), {"dim": -1}, name)
for shape, d, n in [((2, 3), 0, 2), ((2, 3), 2, 3), ((2, 3), -1, 2), ((), 0, 4), ((0, 3), 1, 2),
                    ((4,), -2, 1)]:
    xs = [rand(shape) for _ in range(n)]
    case("aten.stack", xs, torch.stack(xs, d), {"dim": d}, "%s_%d_%d" % (list(shape), d, n))

# ---------------------------------------------------------------------------------------------
# split / chunk
SPLITS = [((5, 4), 2, 0), ((5, 4), 4, 1), ((5, 4), 5, 0), ((5, 4), 10, -2), ((0, 4), 2, 0),
          ((0, 4), 0, 0), ((6, 4), 3, 0), ((2, 7), 3, -1)]
for shape, size, d in SPLITS:
    x = rand(shape)
    case("aten.split", [x], torch.split(x, size, d), {"split_size": size, "dim": d},
         "%s_%d_%d" % (list(shape), size, d), static_only=True)
for shape, sizes, d in [((5, 4), [2, 3], 0), ((5, 4), [1, 0, 3], 1), ((5, 4), [5], 0),
                        ((0, 3), [0, 0], 0), ((2, 6), [1, 2, 3], -1)]:
    x = rand(shape)
    case("aten.split", [x], torch.split(x, sizes, d), {"sizes": sizes, "dim": d},
         "sizes_%s_%s_%d" % (list(shape), sizes, d))
for name, x in each_input((5, 4)):
    case("aten.split", [x], torch.split(x, 2, 0), {"split_size": 2}, name, static_only=True)
    case("aten.split", [x], torch.split(x, [1, 3], 1), {"sizes": [1, 3], "dim": 1}, "sizes_" + name)
# The split dim is 1 (never made symbolic): the symbolic rerun runs.
x = rand((3, 1, 4))
case("aten.split", [x], torch.split(x, 1, 1), {"split_size": 1, "dim": 1}, "size1_dim")

for shape, chunks, d in [((5, 4), 2, 0), ((5, 4), 3, 0), ((5, 4), 4, 1), ((6, 2), 3, 0),
                         ((5, 2), 6, 0), ((0, 2), 3, 0), ((2, 3), 1, -1), ((2, 1), 2, 1)]:
    x = rand(shape)
    case("aten.chunk", [x], torch.chunk(x, chunks, d), {"chunks": chunks, "dim": d},
         "%s_%d_%d" % (list(shape), chunks, d), static_only=True)
for name, x in each_input((6, 4)):
    case("aten.chunk", [x], torch.chunk(x, 3, 0), {"chunks": 3}, name, static_only=True)

# ---------------------------------------------------------------------------------------------
# slice / select / narrow
def sl(x, d, start, end, step):
    idx = [slice(None)] * x.dim()
    idx[d] = slice(start, end, step)
    return x[tuple(idx)]


SLICES = [(0, 1, 3, 1), (1, 0, 4, 2), (1, -3, -1, 1), (0, -10, 10, 1), (1, 2, 1, 1),
          (1, 3, None, 1), (-1, None, 2, 3), (0, 5, None, 1), (1, 1, INT64_MAX, 2),
          (1, -1, None, 1), (0, 0, 0, 1)]
for d, start, end, step in SLICES:
    x = rand((4, 6))
    attrs = {"dim": d, "step": step}
    if start is not None:
        attrs["start"] = start
    if end is not None:
        attrs["end"] = end
    case("aten.slice", [x], sl(x, d, start, end, step), attrs,
         "%d_%s_%s_%d" % (d, start, end, step))
for name, x in each_input((4, 6)):
    case("aten.slice", [x], x[:, 1:5:2], {"dim": 1, "start": 1, "end": 5, "step": 2}, name)
x = rand((0, 3))
case("aten.slice", [x], x[1:], {"start": 1}, "empty")
x = rand((5,))
case("aten.slice", [x], x[:], {}, "defaults")

for shape, d, i in [((3, 4), 0, 1), ((3, 4), 1, -1), ((3, 4), -1, 0), ((5,), 0, 4),
                    ((2, 0), 0, 1), ((2, 3, 4), 1, -3)]:
    x = rand(shape)
    case("aten.select", [x], x.select(d, i), {"dim": d, "index": i}, "%s_%d_%d" % (list(shape), d, i))
for name, x in each_input((3, 4)):
    case("aten.select", [x], x.select(1, 2), {"dim": 1, "index": 2}, name)

for shape, d, start, length in [((5, 4), 0, 1, 3), ((5, 4), 1, -3, 2), ((5, 4), -1, 0, 4),
                                ((5, 4), 0, 5, 0), ((0, 3), 0, 0, 0), ((5, 4), 0, -5, 5)]:
    x = rand(shape)
    case("aten.narrow", [x], x.narrow(d, start, length), {"dim": d, "start": start, "length": length},
         "%s_%d_%d_%d" % (list(shape), d, start, length))
for name, x in each_input((5, 4)):
    case("aten.narrow", [x], x.narrow(0, 2, 2), {"dim": 0, "start": 2, "length": 2}, name)

# ---------------------------------------------------------------------------------------------
# pad
CONST_PADS = [((2, 3), [1, 2]), ((2, 3), [1, 1, 2, 0]), ((2, 3), [-1, 1]), ((2, 3), [0, 0, -1, -1]),
              ((2, 3, 4), [1, 0, 0, 1, 2, 2]), ((0, 3), [1, 1, 1, 1]), ((3,), []), ((2, 3), [-3, 0])]
for shape, pad in CONST_PADS:
    x = rand(shape)
    case("aten.pad", [x], F.pad(x, pad), {"pad": pad}, "%s_%s" % (list(shape), pad))
for dt in ALL:
    x = rand((2, 3), dt)
    value = 1.0 if dt == BOOL else 2.5
    case("aten.pad", [x], F.pad(x, [1, 2, 0, 1], value=value),
         {"pad": [1, 2, 0, 1], "mode": "constant", "value": value}, "value_" + NAME[dt])
for name, x in each_input((2, 3, 4), [F32]):
    case("aten.pad", [x], F.pad(x, [1, 2], value=-1.0), {"pad": [1, 2], "value": -1.0}, name)
x = rand((2, 3), I64)
case("aten.pad", [x], F.pad(x, [1, 1], value=1.7), {"pad": [1, 1], "value": 1.7}, "i64_frac_value")
x = rand((2, 3), F16)
case("aten.pad", [x], F.pad(x, [1, 1], value=1e-3), {"pad": [1, 1], "value": 1e-3}, "f16_round")

MODE_PADS = [("reflect", (1, 2, 5), [2, 3]), ("reflect", (1, 2, 3, 4), [1, 2, 2, 0]),
             ("reflect", (1, 2, 5), [0, 0]), ("reflect", (2, 5), [4, 4]),
             ("reflect", (1, 1, 2, 3, 4), [1, 1, 1, 1, 1, 1]),
             ("replicate", (1, 2, 5), [3, 1]), ("replicate", (1, 2, 3, 4), [2, 2, 1, 3]),
             ("replicate", (1, 1, 2, 2, 2), [1, 0, 0, 1, 2, 2]), ("replicate", (1, 1, 1), [2, 2]),
             ("circular", (1, 2, 5), [2, 3]), ("circular", (1, 2, 3, 4), [1, 2, 3, 0]),
             ("circular", (1, 2, 5), [-1, 2]), ("circular", (1, 2, 3, 4), [2, -1, -1, 1]),
             ("circular", (1, 1, 2, 2, 3), [1, 1, 2, 0, 1, 1])]
for mode, shape, pad in MODE_PADS:
    for dt in [F32, I64]:
        x = rand(shape, dt)
        try:
            expect = F.pad(x, pad, mode=mode)
        except (RuntimeError, NotImplementedError):
            expect = F.pad(x.double(), pad, mode=mode).to(dt)
        case("aten.pad", [x], expect, {"pad": pad, "mode": mode},
             "%s_%s_%s_%s" % (mode, NAME[dt], list(shape), pad))
for mode in ["reflect", "replicate", "circular"]:
    for name, v in views((2, 3, 4)):
        case("aten.pad", [v], F.pad(v, [2, 1], mode=mode), {"pad": [2, 1], "mode": mode},
             mode + "_" + name)
x = special((1, 2, 4))
case("aten.pad", [x], F.pad(x, [1, 2], mode="reflect"), {"pad": [1, 2], "mode": "reflect"},
     "reflect_special")

# ---------------------------------------------------------------------------------------------
# repeat / tile
for shape, reps in [((2, 3), [2, 2]), ((2, 3), [3, 1, 2]), ((3,), [2, 2]), ((), [3]), ((), []),
                    ((2, 3), [0, 1]), ((0, 2), [2, 2]), ((1, 2), [1, 1]), ((2, 1, 3), [1, 4, 1])]:
    x = rand(shape)
    case("aten.repeat", [x], x.repeat(*reps) if reps else x.clone(), {"repeats": reps},
         "%s_%s" % (list(shape), reps))
for name, x in each_input((2, 3)):
    case("aten.repeat", [x], x.repeat(2, 1, 3), {"repeats": [2, 1, 3]}, name)
for shape, dims in [((2, 3), [2]), ((2, 3), [2, 2]), ((2, 3), [2, 1, 2]), ((3,), [0]), ((), [2, 2]),
                    ((2, 3, 4), [])]:
    x = rand(shape)
    case("aten.tile", [x], torch.tile(x, dims), {"dims": dims}, "%s_%s" % (list(shape), dims))
for name, x in each_input((2, 3), [F32, I64, BOOL, F16]):
    case("aten.tile", [x], torch.tile(x, (2, 2)), {"dims": [2, 2]}, name)

s.main()
