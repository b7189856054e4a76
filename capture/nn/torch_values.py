"""Writes named torch tensors as a coil.nn_test.NamedValues file (run with /usr/bin/python3).

    from torch_values import Writer
    w = Writer()
    w.module("fc", torch.nn.Linear(4, 3))   # fc.weight, fc.bias (its state_dict)
    w.add("fc/x", x)
    w.add("fc/expected", fc(x))
    w.main()  # writes the file named on the command line
"""
import sys

import torch

from capture.nn import named_values_pb2
from ir.proto import graph_pb2

_DTYPES = {
    torch.float32: graph_pb2.FLOAT32,
    torch.float64: graph_pb2.FLOAT64,
    torch.int64: graph_pb2.INT64,
    torch.int32: graph_pb2.INT32,
    torch.bool: graph_pb2.BOOL,
}


class Writer:
    def __init__(self):
        self.proto = named_values_pb2.NamedValues()
        self._names = set()

    def add(self, name, t):
        """Adds tensor `t` under `name` (names must be unique)."""
        if name in self._names:
            raise ValueError("duplicate name %s" % name)
        self._names.add(name)
        t = t.detach().clone(memory_format=torch.contiguous_format)
        v = self.proto.values.add()
        v.name = name
        v.dtype = _DTYPES[t.dtype]
        v.shape.extend(t.shape)
        v.data = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""

    def module(self, prefix, m):
        """Adds every entry of m.state_dict() as prefix.key (num_batches_tracked skipped)."""
        for key, t in m.state_dict().items():
            if key.endswith("num_batches_tracked"):
                continue
            self.add("%s.%s" % (prefix, key), t)

    def main(self):
        if len(sys.argv) != 2:
            sys.exit("usage: %s OUT.pb" % sys.argv[0])
        with open(sys.argv[1], "wb") as f:
            f.write(self.proto.SerializeToString())
