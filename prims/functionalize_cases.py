"""Eager PyTorch 1.13 results of prims/functionalize_test.cc's mutation cases (run by Bazel with
/usr/bin/python3). Each case mirrors the C++ graph of the same name; inputs are the same
deterministic ramps. Writes one line per tensor: `case out|in index v0 v1 ...`, in row-major
order: the graph's outputs and every input's final contents.
"""
import sys

import torch


def ramp(shape, dt=torch.float32, scale=0.5, shift=-1.0):
    n = 1
    for d in shape:
        n *= d
    return (torch.arange(n, dtype=torch.float64) * scale + shift).to(dt).reshape(shape)


def add_on_input(x, y):
    x.add_(y)
    return [x.relu()]


def add_on_slice(x, y):
    x[:, 1:3].add_(y)
    return [x.clone()]


def two_views(x, y):
    a = x.transpose(0, 1)
    b = x[:, 0:2]
    a.add_(y)
    return [b.clone(), a.clone()]


def read_base_after(x, y):
    before = x.relu()
    v = x.view(6)
    v.add_(y)
    return [before, x.clone(), x.relu()]


def view_of_view(x, y):
    t = x.transpose(0, 1)
    s = t[1:3]
    s.mul_(y)
    return [x.clone(), t.clone()]


def select_fill(x):
    x.select(0, 1).fill_(7.0)
    return [x.clone()]


def copy_broadcast_cast(x, y):
    x.copy_(y)
    return [x.clone()]


def chained(x, y):
    x.add_(y).mul_(y)
    x[0].relu_()
    return [x.clone()]


def intermediate(x, y):
    z = x + y
    z.select(0, 0).sigmoid_()
    return [z]


def diagonal_add(x, y):
    x.diagonal().add_(y)
    return [x.clone()]


def diagonal_offset(x, y):
    # dims given in reverse, an offset, a batch dim in front, a slice of the diagonal
    d = x.diagonal(offset=1, dim1=2, dim2=1)
    d[:, 1:].mul_(y)
    return [x.clone(), d.clone()]


CASES = {
    "add_on_input": (add_on_input, [((2, 3),), ((2, 3), torch.float32, 0.25, 1.0)]),
    "add_on_slice": (add_on_slice, [((2, 3),), ((2, 2), torch.float32, 0.25, 1.0)]),
    "two_views": (two_views, [((2, 3),), ((3, 2), torch.float32, 0.25, 1.0)]),
    "read_base_after": (read_base_after, [((2, 3),), ((6,), torch.float32, 0.25, 1.0)]),
    "view_of_view": (view_of_view, [((2, 3),), ((2, 2), torch.float32, 0.25, 1.0)]),
    "select_fill": (select_fill, [((3, 4),)]),
    "copy_broadcast_cast": (copy_broadcast_cast, [((2, 3), torch.int64, 1, -2),
                                                  ((3,), torch.float32, 0.75, -1.1)]),
    "chained": (chained, [((2, 3),), ((2, 3), torch.float32, 0.25, 1.0)]),
    "intermediate": (intermediate, [((2, 3),), ((2, 3), torch.float32, 0.25, 1.0)]),
    "diagonal_add": (diagonal_add, [((3, 3),), ((3,), torch.float32, 0.25, 1.0)]),
    "diagonal_offset": (diagonal_offset, [((2, 4, 3),), ((2, 2), torch.float32, 0.25, 1.0)]),
}

with open(sys.argv[1], "w") as f:
    for name, (fn, specs) in CASES.items():
        inputs = [ramp(*s) for s in specs]
        outs = fn(*inputs)
        for kind, ts in (("out", outs), ("in", inputs)):
            for i, t in enumerate(ts):
                vals = " ".join(repr(float(v)) for v in t.reshape(-1).tolist())
                f.write("%s %s %d %s\n" % (name, kind, i, vals))
