"""The browser test's independent view of coil protobufs, read with protoc-generated modules.

usage: report_tool.py expect REPORT.pb OUT.json   what the page must show for each stage
       report_tool.py count KIND FILE.pb          nodes of a single stage file's graph, where
                                                  KIND is graph, schedule or kernel_module
       report_tool.py big NODES OUT.pb            a CompileReport with one NODES-node graph

`expect` writes {"stages": [{"key", "count", "nodes": [...]}]}: one entry per graph the report
holds, keyed as the inspector keys its stage tabs (inspector_web/core/stages.h): the artifact's
stage name for a Graph, a Schedule or a KernelModule (their graph's nodes); "<stage>.<i>" for the
i-th graph of a CaptureResult (the stage name alone when it has none); "<stage>.joint", ".forward"
and ".backward" for an AutogradResult; characters other than letters, digits and _.- become _,
and a repeated key gets -2, -3, ... Each node records its
op, name, position, first output's value id and output types as the text IR prints them
(`f32[batch, 64]`; "simple" when every dimension is a constant or a symbol, so the text is
unambiguous).
"""
import json
import sys

from ir.proto import graph_pb2
from ir.proto import kernel_module_pb2
from ir.proto import report_pb2
from ir.proto import schedule_pb2

DTYPES = {graph_pb2.FLOAT32: "f32", graph_pb2.FLOAT64: "f64", graph_pb2.FLOAT16: "f16",
          graph_pb2.BFLOAT16: "bf16", graph_pb2.INT64: "i64", graph_pb2.INT32: "i32",
          graph_pb2.INT8: "i8", graph_pb2.UINT8: "u8", graph_pb2.BOOL: "bool"}


def dim_text(e):
    """A dimension's text, or None when it is a compound expression."""
    if e.kind == graph_pb2.SymExpr.CONST:
        return str(e.value)
    if e.kind == graph_pb2.SymExpr.SYMBOL:
        return e.name
    return None


def type_text(t):
    dims = [dim_text(d) for d in t.shape]
    if None in dims:
        return None
    return "%s[%s]" % (DTYPES.get(t.dtype, "invalid"), ", ".join(dims))


def graph_entry(key, graph):
    nodes = []
    for index, n in enumerate(graph.nodes):
        outputs = [type_text(v.type) for v in n.outputs]
        nodes.append({
            "index": index,
            "op": n.op,
            "name": n.name,
            "first_output": n.outputs[0].id if n.outputs else None,
            "outputs": [o for o in outputs if o is not None],
            "simple": bool(outputs) and None not in outputs,
        })
    return {"key": key, "count": len(graph.nodes), "nodes": nodes}


def safe_key(name):
    key = "".join(c if c.isascii() and (c.isalnum() or c in "_.-") else "_" for c in name)
    return key or "stage"


def expectations(report):
    stages = []
    used = set()

    def add(base, graph):
        key, n = base, 2
        while key in used:  # a repeated key gets -2, -3, ...
            key, n = "%s-%d" % (base, n), n + 1
        used.add(key)
        stages.append(graph_entry(key, graph))

    for a in report.stages:
        base = safe_key(a.stage)
        payload = a.WhichOneof("payload")
        if payload == "graph":
            add(base, a.graph)
        elif payload == "schedule":
            add(base, a.schedule.graph)
        elif payload == "kernel_module":
            add(base, a.kernel_module.schedule.graph)
        elif payload == "capture":
            if not a.capture.graphs:
                add(base, graph_pb2.Graph())
            for i, g in enumerate(a.capture.graphs):
                add("%s.%d" % (base, i), g)
        elif payload == "autograd":
            for part in ("joint", "forward", "backward"):
                add("%s.%s" % (base, part), getattr(a.autograd, part))
    return {"model": report.model, "stages": stages}


def big_report(count):
    """A prims graph of `count` nodes: a chain whose nodes also read a node a few steps back,
    so the layout has long edges and many layers, as real graphs do."""
    g = graph_pb2.Graph(name="big")
    x = g.inputs.add(id=0, name="x")
    x.type.dtype = graph_pb2.FLOAT32
    for size in (64, 64):
        x.type.shape.add(kind=graph_pb2.SymExpr.CONST, value=size)
    ops = ["prims.exp", "prims.add", "prims.mul", "prims.tanh", "prims.neg"]
    for i in range(count):
        op = ops[i % len(ops)]
        n = g.nodes.add(op=op, name="n%d" % i)
        prev = i  # value id of the previous node's output (the input is 0)
        n.inputs.append(prev)
        if op in ("prims.add", "prims.mul"):
            n.inputs.append(max(0, prev - 1 - (i * 7) % 13))
        v = n.outputs.add(id=i + 1)
        v.type.CopyFrom(x.type)
    g.outputs.append(count)
    report = report_pb2.CompileReport(model="synthetic %d-node graph" % count,
                                      coil_version="test")
    stage = report.stages.add(stage="prims")
    stage.graph.CopyFrom(g)
    return report


def main(argv):
    if len(argv) == 4 and argv[1] == "expect":
        report = report_pb2.CompileReport()
        with open(argv[2], "rb") as f:
            report.ParseFromString(f.read())
        with open(argv[3], "w") as f:
            json.dump(expectations(report), f, indent=1)
        return 0
    if len(argv) == 4 and argv[1] == "count":
        kinds = {"graph": (graph_pb2.Graph, lambda m: m),
                 "schedule": (schedule_pb2.Schedule, lambda m: m.graph),
                 "kernel_module": (kernel_module_pb2.KernelModule, lambda m: m.schedule.graph)}
        message_type, graph_of = kinds[argv[2]]
        message = message_type()
        with open(argv[3], "rb") as f:
            message.ParseFromString(f.read())
        print(len(graph_of(message).nodes))
        return 0
    if len(argv) == 4 and argv[1] == "big":
        with open(argv[3], "wb") as f:
            f.write(big_report(int(argv[2])).SerializeToString())
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
