"""Oracle cases of the indexing family: gather, scatter, scatter_add, index_select, embedding,
index_tensor and index_put (advanced indexing with one index tensor) and one_hot. Run by Bazel
with Debian's /usr/bin/python3 (PyTorch 1.13); see README.md.

Only scatter_add and accumulating index_put compute (sums): their float16/bfloat16 cases get
loose tolerances, since torch adds in low precision and the reference in double. Everything
else is exact. scatter and non-accumulating index_put cases use indices without duplicates
(torch leaves the winner of duplicate writes unspecified).
"""
import torch
import torch.nn.functional as F

from oracle import Suite

torch.manual_seed(0)
s = Suite("indexing")

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, I32, I8, U8, BOOL = torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool
ALL = [F32, F64, F16, BF16, I64, I32, I8, U8, BOOL]
NAME = {F32: "f32", F64: "f64", F16: "f16", BF16: "bf16", I64: "i64", I32: "i32", I8: "i8",
        U8: "u8", BOOL: "bool"}


def rand(shape, dt=F32):
    if dt == BOOL:
        return torch.randint(0, 2, shape).bool()
    if dt == U8:
        return torch.randint(0, 256, shape, dtype=dt)
    if not dt.is_floating_point:
        return torch.randint(-100, 100, shape, dtype=dt)
    return torch.randn(shape, dtype=F64).to(dt)


def dense(t):
    return t.clone(memory_format=torch.contiguous_format)


def case(op, inputs, expect, attrs=None, name="", rtol=0.0, atol=0.0, **kw):
    expect = [dense(t) for t in expect] if isinstance(expect, (tuple, list)) else dense(expect)
    s.case(op, inputs, expect, attrs=attrs or {}, name=name, rtol=rtol, atol=atol, **kw)


def transposed(t):
    """The same values as `t` in a non-contiguous (transposed storage) layout."""
    return t.t().contiguous().t() if t.dim() == 2 else t


def idx(shape, bound, dt=I64):
    return torch.randint(0, max(bound, 1), shape, dtype=dt) if bound > 0 else torch.zeros(shape, dtype=dt)


def unique_idx(shape, dim, bound):
    """Indices along `dim` with no duplicates in any line (a random permutation prefix)."""
    n = shape[dim]
    assert n <= bound
    perm = torch.rand(tuple(s if d != dim else bound for d, s in enumerate(shape))).argsort(dim)
    return perm.narrow(dim, 0, n).contiguous()


# ---------------------------------------------------------------------------------------------
# gather
for dt in ALL:
    x = rand((3, 5), dt)
    i = idx((3, 4), 5)
    case("aten.gather", [x, i], torch.gather(x, 1, i), {"dim": 1}, NAME[dt])
GATHERS = [((3, 5), (2, 5), 0), ((3, 5), (3, 2), -1), ((2, 3, 4), (2, 3, 6), 2), ((2, 3, 4), (1, 1, 1), 1),
           ((4,), (7,), 0), ((3, 4), (0, 4), 0), ((3, 4), (3, 0), 1), ((), (), 0), ((5,), (), 0),
           ((2, 3), (2, 1), 1)]
for xs, ishape, d in GATHERS:
    x = rand(xs)
    bound = xs[d] if xs else 1
    i = idx(ishape, bound)
    case("aten.gather", [x, i], torch.gather(x, d, i), {"dim": d}, "%s_%s_%d" % (list(xs), list(ishape), d))
x = rand((4, 3))
i = idx((3, 3), 4)
case("aten.gather", [x.t(), i], torch.gather(x.t(), 1, i), {"dim": 1}, "noncontig_self")
case("aten.gather", [x, transposed(i)], torch.gather(x, 0, transposed(i)), {"dim": 0}, "noncontig_index")
x = rand((3, 1)).expand(3, 4)
i = idx((3, 2), 4)
case("aten.gather", [x, i], torch.gather(x, 1, i), {"dim": 1, "sparse_grad": False}, "expanded_self")

# ---------------------------------------------------------------------------------------------
# scatter / scatter_add
for dt in ALL:
    x, src = rand((4, 5), dt), rand((4, 5), dt)
    i = unique_idx((3, 5), 0, 4)
    case("aten.scatter", [x, i, src], torch.scatter(x, 0, i, src), {"dim": 0}, NAME[dt])
SCATTERS = [((4, 5), (4, 3), (4, 4), 1), ((4, 5), (2, 5), (3, 5), -2), ((2, 3, 4), (2, 3, 2), (2, 3, 4), 2),
            ((3, 4), (0, 4), (1, 4), 0), ((5,), (3,), (3,), 0), ((), (), (), 0), ((3, 4), (1, 2), (2, 3), 1)]
for xs, ishape, ss, d in SCATTERS:
    x, src = rand(xs), rand(ss)
    dd = d % max(len(xs), 1)
    i = unique_idx(ishape, dd, xs[dd]) if xs else torch.zeros((), dtype=I64)
    case("aten.scatter", [x, i, src], torch.scatter(x, d, i, src), {"dim": d},
         "%s_%s_%s_%d" % (list(xs), list(ishape), list(ss), d))
x, src = rand((5, 4)), rand((4, 5))
i = unique_idx((4, 3), 0, 5)
case("aten.scatter", [x.t().contiguous().t(), i, src.t()],
     torch.scatter(x, 0, i, src.t()), {"dim": 0}, "noncontig")

TOL = {F16: (1e-2, 1e-2), BF16: (2e-2, 5e-2), F32: (1e-5, 1e-5), F64: (1e-12, 1e-12)}
for dt in ALL:
    x, src = rand((4, 5), dt), rand((6, 5), dt)
    i = idx((6, 5), 4)  # duplicates: several sources add into one element
    rtol, atol = TOL.get(dt, (0.0, 0.0))
    case("aten.scatter_add", [x, i, src], torch.scatter_add(x, 0, i, src), {"dim": 0}, NAME[dt],
         rtol=rtol, atol=atol)
for xs, ishape, ss, d in SCATTERS:
    x, src = rand(xs), rand(ss)
    dd = d % max(len(xs), 1)
    i = idx(ishape, xs[dd] if xs else 1)
    case("aten.scatter_add", [x, i, src], torch.scatter_add(x, d, i, src), {"dim": d},
         "%s_%s_%s_%d" % (list(xs), list(ishape), list(ss), d), rtol=1e-5, atol=1e-5)
x, src = rand((5, 4)), rand((4, 6))
i = idx((4, 6), 5)
case("aten.scatter_add", [x.t(), transposed(i), src], torch.scatter_add(x.t(), 1, i, src), {"dim": 1},
     "noncontig", rtol=1e-5, atol=1e-5)
x = torch.full((3,), 127, dtype=I8)
src = torch.full((4,), 100, dtype=I8)
i = torch.tensor([0, 0, 1, 2])
case("aten.scatter_add", [x, i, src], torch.scatter_add(x, 0, i, src), {"dim": 0}, "i8_wraps")

# ---------------------------------------------------------------------------------------------
# index_select
for dt in ALL:
    x = rand((4, 5), dt)
    i = idx((6,), 4)
    case("aten.index_select", [x, i], torch.index_select(x, 0, i), {"dim": 0}, NAME[dt])
for xs, n, d, idt in [((4, 5), 3, 1, I64), ((4, 5), 3, -1, I32), ((2, 3, 4), 5, 1, I64),
                      ((4, 5), 0, 0, I64), ((0, 5), 3, 1, I64), ((5,), 2, 0, I32)]:
    x = rand(xs)
    i = idx((n,), xs[d])
    i = i.to(idt)
    case("aten.index_select", [x, i], torch.index_select(x, d, i), {"dim": d},
         "%s_%d_%d_%s" % (list(xs), n, d, NAME[idt]))
x = rand((4, 5))
i = torch.tensor(2)
case("aten.index_select", [x, i], torch.index_select(x, 1, i), {"dim": 1}, "scalar_index")
x = torch.tensor(3.5)
i = torch.tensor([0])
case("aten.index_select", [x, i], torch.index_select(x, 0, i), {"dim": 0}, "scalar_self")
x = rand((5, 4))
i = idx((8,), 4)[::2]
case("aten.index_select", [x.t(), i], torch.index_select(x.t(), 0, i), {"dim": 0}, "noncontig")

# ---------------------------------------------------------------------------------------------
# embedding
for dt in [F32, F64, F16, BF16]:
    w = rand((10, 4), dt)
    i = idx((2, 3), 10)
    case("aten.embedding", [w, i], F.embedding(i, w), {}, NAME[dt])
for ishape, idt in [((5,), I64), ((2, 3, 2), I32), ((), I64), ((0, 3), I64), ((4, 1), I64)]:
    w = rand((7, 3))
    i = idx(ishape, 7, idt)
    case("aten.embedding", [w, i], F.embedding(i, w), {}, "%s_%s" % (list(ishape), NAME[idt]))
w = rand((3, 7))
i = idx((4, 4), 7)[:, ::2]
case("aten.embedding", [w.t(), i], F.embedding(i, w.t()), {"padding_idx": 0}, "noncontig_padding_idx")
w = rand((7, 0))
i = idx((3,), 7)
case("aten.embedding", [w, i], F.embedding(i, w), {}, "empty_dim")

# ---------------------------------------------------------------------------------------------
# index_tensor: x[(:,) * dim + (index,)], negative indices wrap
def take(x, d, i):
    return x[(slice(None),) * (d % x.dim()) + (i,)]


for dt in ALL:
    x = rand((4, 5), dt)
    i = torch.randint(-5, 5, (3,))
    case("aten.index_tensor", [x, i], take(x, 1, i), {"dim": 1}, NAME[dt])
for xs, ishape, d, idt in [((4, 5), (2, 3), 0, I64), ((2, 3, 4), (5,), 1, I64), ((2, 3, 4), (2, 2), -1, I64),
                           ((4, 5), (), 1, I64), ((4, 5), (0,), 0, I64), ((0, 5), (3,), 1, I64),
                           ((5,), (2, 2), 0, I64), ((3, 4), (1, 1), 1, I64)]:
    x = rand(xs)
    n = xs[d]
    i = torch.randint(-n, n, ishape, dtype=idt)
    case("aten.index_tensor", [x, i], take(x, d, i), {"dim": d},
         "%s_%s_%d_%s" % (list(xs), list(ishape), d, NAME[idt]))
x = rand((5, 4))
i = torch.randint(-5, 5, (3, 2))
case("aten.index_tensor", [x.t(), transposed(i)], take(x.t(), 1, transposed(i)), {"dim": 1}, "noncontig")
x = rand((4,))
i = torch.tensor([1, 3])
case("aten.index_tensor", [x, i], x[i], {}, "default_dim")

# ---------------------------------------------------------------------------------------------
# index_put: out = self; out[(:,) * dim + (index,)] = values (+= with accumulate)
def index_put(x, d, i, v, acc):
    d = d % x.dim()
    return torch.ops.aten.index_put(x, [None] * d + [i], v, acc)


def unique_signed(n, size):
    """n distinct indices into a dim of `size`, half of them negative."""
    p = torch.randperm(size)[:n]
    return torch.where(torch.rand(n) < 0.5, p - size, p)


for dt in ALL:
    x = rand((4, 5), dt)
    i = unique_signed(3, 5)
    v = rand((4, 3), dt)
    case("aten.index_put", [x, i, v], index_put(x, 1, i, v, False), {"dim": 1}, NAME[dt])
    if dt != BOOL:
        i = torch.randint(-4, 4, (6,))  # duplicates add up
        v = rand((6, 5), dt)
        rtol, atol = TOL.get(dt, (0.0, 0.0))
        case("aten.index_put", [x, i, v], index_put(x, 0, i, v, True), {"accumulate": True},
             "accumulate_" + NAME[dt], rtol=rtol, atol=atol)
for xs, ishape, vs, d in [((4, 5), (2,), (1,), 0), ((4, 5), (2,), (5,), 0), ((2, 3, 4), (1, 3), (2, 1, 3, 1), 1),
                          ((2, 3, 4), (3,), (), -1), ((4, 5), (0,), (1,), 0), ((4,), (2, 2), (2, 1), 0)]:
    x = rand(xs)
    n = xs[d]
    k = 1
    for e in ishape:
        k *= e
    i = unique_signed(k, n).reshape(ishape)
    v = rand(vs)
    case("aten.index_put", [x, i, v], index_put(x, d, i, v, False), {"dim": d},
         "%s_%s_%s_%d" % (list(xs), list(ishape), list(vs), d))
x, v = rand((5, 4)), rand((4, 2))
i = torch.tensor([3, -1])
case("aten.index_put", [x.t(), i, v], index_put(x.t(), 1, i, v, False), {"dim": 1}, "noncontig")

# ---------------------------------------------------------------------------------------------
# one_hot
for ishape, n in [((5,), 4), ((2, 3), 6), ((), 3), ((0,), 2), ((3, 1), 1)]:
    i = idx(ishape, n)
    case("aten.one_hot", [i], F.one_hot(i, n), {"num_classes": n}, "%s_%d" % (list(ishape), n))
i = idx((4, 3), 5)
case("aten.one_hot", [transposed(i)], F.one_hot(transposed(i), 5), {"num_classes": 5}, "noncontig")

s.main()
