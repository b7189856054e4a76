"""Writes coil oracle cases: one op, its inputs and torch's outputs (run with /usr/bin/python3).

    import torch
    from oracle import Suite
    s = Suite("elementwise")
    s.case("aten.add", [x, y], attrs={"alpha": 2.0}, expect=torch.add(x, y, alpha=2.0),
           name="broadcast_f32", rtol=1e-5, atol=1e-6)
    s.main()  # writes the file named on the command line

Attribute values map by Python type: bool -> b, int -> i, float -> f, str -> s,
list/tuple of ints -> ints, list/tuple with a float -> floats, torch.dtype -> dtype.
"""
import sys

import torch

from ir.proto import graph_pb2
from tests.torch_oracle import oracle_pb2

_DTYPES = {
    torch.float32: graph_pb2.FLOAT32,
    torch.float64: graph_pb2.FLOAT64,
    torch.float16: graph_pb2.FLOAT16,
    torch.bfloat16: graph_pb2.BFLOAT16,
    torch.int64: graph_pb2.INT64,
    torch.int32: graph_pb2.INT32,
    torch.int8: graph_pb2.INT8,
    torch.uint8: graph_pb2.UINT8,
    torch.bool: graph_pb2.BOOL,
}


def coil_dtype(dt):
    if dt not in _DTYPES:
        raise ValueError("coil has no dtype for %s" % dt)
    return _DTYPES[dt]


def _bytes(t):
    """Little-endian bytes of a contiguous 1-D tensor."""
    # clone with contiguous_format also normalizes the strides of size-1 dims, which
    # .contiguous() keeps and view(torch.uint8) then rejects.
    t = t.clone(memory_format=torch.contiguous_format).reshape(-1)
    if t.numel() == 0:
        return b""
    return t.view(torch.uint8).numpy().tobytes()


def tensor_value(t):
    t = t.detach().contiguous()
    v = graph_pb2.TensorValue()
    v.dtype = coil_dtype(t.dtype)
    v.shape.extend(t.shape)
    v.data = _bytes(t)
    return v


def strided_tensor(t):
    t = t.detach()
    st = oracle_pb2.StridedTensor()
    n = t.storage().size()
    base = torch.as_strided(t, (n,), (1,), 0) if n > 0 else t.new_empty((0,))
    st.storage.dtype = coil_dtype(t.dtype)
    st.storage.shape.append(n)
    st.storage.data = _bytes(base)
    st.shape.extend(t.shape)
    st.strides.extend(t.stride())
    st.offset = t.storage_offset()
    return st


def attribute(value):
    a = graph_pb2.Attribute()
    if isinstance(value, bool):
        a.b = value
    elif isinstance(value, int):
        a.i = value
    elif isinstance(value, float):
        a.f = value
    elif isinstance(value, str):
        a.s = value
    elif isinstance(value, torch.dtype):
        a.dtype = coil_dtype(value)
    elif isinstance(value, (list, tuple)):
        if any(isinstance(v, float) for v in value):
            a.floats.values.extend(float(v) for v in value)
        else:
            a.ints.values.extend(int(v) for v in value)
            a.ints.SetInParent()
    else:
        raise TypeError("unsupported attribute value %r" % (value,))
    return a


class Suite:
    def __init__(self, name):
        self.proto = oracle_pb2.Suite(name=name)
        self._names = set()

    def case(self, op, inputs, expect, attrs=None, name="", rtol=1e-5, atol=1e-6,
             static_only=False):
        c = self.proto.cases.add()
        base = "%s/%s" % (op, name or "case")
        full, k = base, 1
        while full in self._names:
            k += 1
            full = "%s_%d" % (base, k)
        self._names.add(full)
        c.name = full
        c.op = op
        for key in sorted((attrs or {}).keys()):
            na = c.attrs.add()
            na.name = key
            na.value.CopyFrom(attribute(attrs[key]))
        for t in inputs:
            c.inputs.append(strided_tensor(t))
        outs = expect if isinstance(expect, (tuple, list)) else [expect]
        for t in outs:
            c.expected.append(tensor_value(t))
        c.rtol = rtol
        c.atol = atol
        c.static_only = static_only
        return c

    def main(self):
        if len(sys.argv) != 2:
            sys.exit("usage: %s OUT.pb" % sys.argv[0])
        with open(sys.argv[1], "wb") as f:
            f.write(self.proto.SerializeToString())
