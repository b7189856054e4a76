"""Oracle cases of aten.slice_scatter and aten.select_scatter, the inverses of slicing views
that prims::Functionalize emits. Run by Bazel with Debian's /usr/bin/python3 (PyTorch 1.13);
see README.md. Data movement only, so comparisons are exact.
"""
import torch

from oracle import Suite

torch.manual_seed(0)
s = Suite("view_scatter")

F32, F64, F16, I64, I32, BOOL = (torch.float32, torch.float64, torch.float16, torch.int64,
                                 torch.int32, torch.bool)
INT64_MAX = 2**63 - 1


def rand(shape, dt=F32):
    if dt == BOOL:
        return torch.randint(0, 2, shape).bool()
    if not dt.is_floating_point:
        return torch.randint(-100, 100, shape, dtype=dt)
    return torch.randn(shape, dtype=F64).to(dt)


def sl(x, dim, start, end, step):
    idx = [slice(None)] * x.dim()
    idx[dim] = slice(start, end, step)
    return x[tuple(idx)]


# slice_scatter: (shape, dim, start, end, step)
for shape, dim, start, end, step in [
        ((6,), 0, 1, 4, 1), ((4, 5), 1, 1, 5, 2), ((4, 5), 0, 0, INT64_MAX, 1),
        ((4, 5), -1, -3, -1, 1), ((3, 4, 5), 2, 0, 5, 3), ((3, 4, 5), 1, 2, 100, 1),
        ((4, 5), 0, 3, 1, 1)]:
    for dt in (F32, I64, BOOL, F16):
        x = rand(shape, dt)
        src = rand(tuple(sl(x, dim, start, end, step).shape), dt)
        # torch.ops.aten: 1.13's Python binding of torch.slice_scatter misreads its bounds.
        expect = torch.ops.aten.slice_scatter(x, src, dim, start, end, step)
        s.case("aten.slice_scatter", [x, src], expect,
               {"dim": dim, "start": start, "end": end, "step": step},
               "%s_%d_%d_%d_%d" % ("x".join(map(str, shape)), dim, start, min(end, 999), step),
               rtol=0, atol=0)
# A non-contiguous self and src.
x = rand((5, 4)).t()
src = rand((2, 4)).t()
s.case("aten.slice_scatter", [x, src], torch.ops.aten.slice_scatter(x, src, 1, 1, 3, 1), {"dim": 1,
       "start": 1, "end": 3, "step": 1}, "strided", rtol=0, atol=0)

# select_scatter: (shape, dim, index)
for shape, dim, index in [((6,), 0, 2), ((4, 5), 1, -1), ((4, 5), 0, 3), ((3, 4, 5), 1, 0),
                          ((3, 4, 5), -1, 4)]:
    for dt in (F32, I32, BOOL):
        x = rand(shape, dt)
        src = rand(tuple(x.select(dim, index).shape), dt)
        s.case("aten.select_scatter", [x, src], torch.ops.aten.select_scatter(x, src, dim, index),
               {"dim": dim, "index": index},
               "%s_%d_%d" % ("x".join(map(str, shape)), dim, index), rtol=0, atol=0)

s.main()
