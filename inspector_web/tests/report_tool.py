"""The browser test's independent view of coil protobufs, read with protoc-generated modules.

usage: report_tool.py expect REPORT.pb OUT.json   what the page must show for each stage
       report_tool.py count KIND FILE.pb          nodes of a single stage file's graph, where
                                                  KIND is graph, schedule or kernel_module
       report_tool.py big NODES OUT.pb [named]    a CompileReport with one NODES-node graph
                                                  (named: nodes carry module paths)
       report_tool.py recompiled OUT.pb          a captured function's report with 2 compiles
                                                  (prints what the compile index must show)
       report_tool.py weights PAGE.html           weight bytes held by an exported page's report
       report_tool.py compare A.pb B.pb OUT.json  what the Compare panel must show for A vs B
       report_tool.py saved REPORT.pb             a training report's autograd stages: node
                                                  counts and, on the forward graph, the nodes
                                                  and inputs defining the saved values
       report_tool.py split IN.pb OUT.pb          IN with its inductor schedule fused otherwise:
                                                  the first 2 fused kernels split in two, the
                                                  first decision dropped (a compile to compare)

`expect` writes {"stages": [{"key", "count", "nodes": [...]}]}: one entry per graph the report
holds, keyed as the inspector keys its stage tabs (inspector_web/core/stages.h): the artifact's
stage name for a Graph, a Schedule or a KernelModule (their graph's nodes); "<stage>.<i>" for the
i-th graph of a CaptureResult (the stage name alone when it has none); "<stage>.joint", ".forward"
and ".backward" for an AutogradResult; characters other than letters, digits and _.- become _,
and a repeated key gets -2, -3, ... Each node records its
op, name, position, first output's value id and output types as the text IR prints them
(`f32[batch, 64]`; "simple" when every dimension is a constant or a symbol, so the text is
unambiguous). Each stage lists its graph inputs' names and symbols; a Schedule's (or a
KernelModule's) stage also its kernels with their nodes, the arena buffers the memory chart
draws, the arena's size at a few symbol values, and its fusion decisions.
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
            "reads": list(n.inputs),
            "defines": [v.id for v in n.outputs],
            "outputs": [o for o in outputs if o is not None],
            "simple": bool(outputs) and None not in outputs,
        })
    return {"key": key, "count": len(graph.nodes), "nodes": nodes,
            "inputs": [v.name for v in graph.inputs],
            "input_ids": [v.id for v in graph.inputs],
            "symbols": [{"name": x.name, "min": x.min, "hint": x.hint} for x in graph.symbols]}


# Constants of at least this many bytes are weights (tools/coil/inspect_weights.h).
WEIGHT_BYTES = 64


def sym_eval(e, env):
    """A SymExpr's value (floordiv and mod as Python's), or None for an unbound symbol."""
    k = e.kind
    if k == graph_pb2.SymExpr.CONST:
        return e.value
    if k == graph_pb2.SymExpr.SYMBOL:
        return env.get(e.name)
    args = [sym_eval(a, env) for a in e.args]
    if None in args:
        return None
    if k == graph_pb2.SymExpr.ADD:
        return sum(args)
    if k == graph_pb2.SymExpr.MUL:
        out = 1
        for a in args:
            out *= a
        return out
    if k == graph_pb2.SymExpr.FLOORDIV:
        return args[0] // args[1]
    if k == graph_pb2.SymExpr.MOD:
        return args[0] % args[1]
    if k == graph_pb2.SymExpr.MIN:
        return min(args)
    if k == graph_pb2.SymExpr.MAX:
        return max(args)
    return None


def schedule_entry(entry, schedule):
    """What the page draws from a Schedule: kernels with their nodes (graph nodes whose output
    a kernel's source_values lists), the arena buffers a kernel touches (one rectangle each in
    the memory chart) and the arena's size at a few symbol values."""
    producer = {}
    for index, n in enumerate(schedule.graph.nodes):
        for v in n.outputs:
            producer[v.id] = index
    entry["kernels"] = [{"name": k.name,
                         "nodes": sorted({producer[v] for v in k.source_values if v in producer})}
                        for k in schedule.kernels]
    touched = set()
    for k in schedule.kernels:
        touched.update(k.reads)
        touched.update(k.writes)
        touched.update(k.extern_inputs)
        if k.extern_output:
            touched.add(k.extern_output)
    entry["arena_buffers"] = sum(
        1 for b in schedule.buffers
        if b.kind == schedule_pb2.Buffer.INTERMEDIATE and b.HasField("arena_offset") and
        b.id in touched)
    names = [x.name for x in schedule.graph.symbols]
    entry["arena_bytes_at"] = {str(v): sym_eval(schedule.memory_plan.arena_bytes,
                                                 {n: v for n in names}) for v in (1, 2, 8)}
    entry["decisions"] = len(schedule.decisions)
    entry["rejected"] = sum(1 for d in schedule.decisions if not d.accepted)
    return entry


def launch_entry(entry, module):
    """A KernelModule's launch configurations (CUDA): per kernel with one, its position in the
    module's schedule, grid, block, dynamic shared bytes and registers."""
    position = {k.id: i for i, k in enumerate(module.schedule.kernels)}
    entry["backend"] = module.backend
    entry["launch"] = [
        {"kernel": position[k.kernel_id], "name": k.name, "grid": list(k.launch.grid),
         "block": list(k.launch.block), "shared": k.launch.shared_bytes,
         "registers": k.launch.registers}
        for k in module.kernels
        if k.kernel_id in position and (k.launch.grid or k.launch.block or k.launch.shared_bytes)]


def raw_constant_bytes(report, at_least=0):
    """Bytes of constants held inline (raw) by every graph of a CompileReport, counting those
    of at least `at_least` bytes."""
    total = 0
    for a in report.stages:
        graphs = []
        payload = a.WhichOneof("payload")
        if payload == "graph":
            graphs = [a.graph]
        elif payload == "schedule":
            graphs = [a.schedule.graph]
        elif payload == "kernel_module":
            graphs = [a.kernel_module.schedule.graph]
        elif payload == "capture":
            graphs = list(a.capture.graphs)
        elif payload == "autograd":
            graphs = [a.autograd.joint, a.autograd.forward, a.autograd.backward]
        for g in graphs:
            total += sum(len(c.raw) for c in g.constants if len(c.raw) >= at_least)
    return total


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
            schedule_entry(stages[-1], a.schedule)
        elif payload == "kernel_module":
            add(base, a.kernel_module.schedule.graph)
            schedule_entry(stages[-1], a.kernel_module.schedule)
            launch_entry(stages[-1], a.kernel_module)
        elif payload == "capture":
            if not a.capture.graphs:
                add(base, graph_pb2.Graph())
            for i, g in enumerate(a.capture.graphs):
                add("%s.%d" % (base, i), g)
        elif payload == "autograd":
            for part in ("joint", "forward", "backward"):
                add("%s.%s" % (base, part), getattr(a.autograd, part))
    timings = [{"stage": t.stage, "seconds": t.seconds, "cpu_seconds": t.cpu_seconds}
               for t in report.timings]
    passes = [{"pipeline": p.pipeline, "pass": getattr(p, "pass"), "seconds": p.seconds}
              for p in report.passes]
    return {"model": report.model, "stages": stages, "dim": report.options.get("dim", ""),
            "timings": timings, "passes": passes,
            "weight_bytes": raw_constant_bytes(report, WEIGHT_BYTES)}


def big_report(count, named=False):
    """A prims graph of `count` nodes: a chain whose nodes also read a node a few steps back,
    so the layout has long edges and many layers, as real graphs do. `named`: the nodes carry
    module paths, /layers.L/attn/opI and /layers.L/mlp/opI for 100-node layers (as an ONNX
    export names them), so the page opens it on its name path groups."""
    g = graph_pb2.Graph(name="big")
    x = g.inputs.add(id=0, name="x")
    x.type.dtype = graph_pb2.FLOAT32
    for size in (64, 64):
        x.type.shape.add(kind=graph_pb2.SymExpr.CONST, value=size)
    ops = ["prims.exp", "prims.add", "prims.mul", "prims.tanh", "prims.neg"]
    for i in range(count):
        op = ops[i % len(ops)]
        name = ("/layers.%d/%s/op%d" % (i // 100, "attn" if i % 100 < 50 else "mlp", i)
                if named else "n%d" % i)
        n = g.nodes.add(op=op, name=name)
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


RECOMPILE_REASON = "x: expected size 2 at dim 0, got 3"


def recompiled_report():
    """A captured function's report keeping both of its compiles, as capture_results() gives
    them: the first at batch 2 (3 nodes), the second after the batch guard failed (batch 3,
    4 nodes, so the two graphs are told apart), which records the failed guard."""
    report = report_pb2.CompileReport(model="synthetic recompiled function", coil_version="test")
    for compile, (batch, count) in enumerate(((2, 3), (3, 4)), start=1):
        capture = report.stages.add(stage="capture", seconds=0.001).capture
        g = capture.graphs.add(name="fn")
        x = g.inputs.add(id=0, name="x")
        x.type.dtype = graph_pb2.FLOAT32
        for size in (batch, 16):
            x.type.shape.add(kind=graph_pb2.SymExpr.CONST, value=size)
        for i in range(count):
            n = g.nodes.add(op="aten.relu" if i % 2 == 0 else "aten.exp", name="fn.layer%d" % i)
            n.inputs.append(i)
            n.outputs.add(id=i + 1).type.CopyFrom(x.type)
        g.outputs.append(count)
        capture.guards.add(reason="x: f32[%d, 16]" % batch)
        if compile == 2:
            capture.recompiles.add(reason=RECOMPILE_REASON, count=2)
    return report


def first_schedule(report):
    for kind in ("schedule", "kernel_module"):
        for a in report.stages:
            if a.WhichOneof("payload") == kind:
                return safe_key(a.stage), (a.schedule if kind == "schedule" else a.kernel_module.schedule)
    return "", None


def kernel_node_sets(schedule):
    """Per kernel, the frozenset of the graph nodes it computes, each named (op, name path,
    occurrence among nodes with both): the same nodes in another compile, whatever its ids."""
    if schedule is None:
        return []
    node_of_value, seen = {}, {}
    for n in schedule.graph.nodes:
        base = (n.op, n.name or "%s:%d:%d" % (n.loc.file, n.loc.line, n.loc.column))
        name = base + (seen.get(base, 0),)
        seen[base] = seen.get(base, 0) + 1
        for v in n.outputs:
            node_of_value[v.id] = name
    return [frozenset(node_of_value[v] for v in k.source_values if v in node_of_value)
            for k in schedule.kernels]


def unmatched(mine, theirs):
    """Indices of `mine`'s sets left after matching each with an equal one of `theirs`."""
    pool = list(theirs)
    left = []
    for i, s in enumerate(mine):
        if s in pool:
            pool.remove(s)
        else:
            left.append(i)
    return left


def paired_rows(rows_a, rows_b):
    """(label, a, b) for rows paired by label and occurrence, a's order then b's extra rows."""
    out, index = [], {}
    for side, rows in ((0, rows_a), (1, rows_b)):
        count = {}
        for label, seconds in rows:
            key = (label, count.get(label, 0))
            count[label] = key[1] + 1
            if key not in index:
                index[key] = len(out)
                out.append([label, None, None])
            out[index[key]][1 + side] = seconds
    return out


def split_kernels(report, count=2):
    """Splits the first `count` kernels of the first Schedule computing more than one node:
    the last node moves to a new kernel right after it (named <name>_split), as a compile
    that fused one node less would have it; drops the first fusion decision."""
    _, sched = first_schedule(report)
    done, i = 0, 0
    while done < count and i < len(sched.kernels):
        k = sched.kernels[i]
        if len(k.source_values) > 1:
            part = schedule_pb2.Kernel()
            part.CopyFrom(k)
            part.name = k.name + "_split"
            part.id = max(x.id for x in sched.kernels) + 1
            del part.source_values[:]
            part.source_values.append(k.source_values[-1])
            del k.source_values[-1]
            sched.kernels.insert(i + 1, part)
            done += 1
            i += 1
        i += 1
    if sched.decisions:
        del sched.decisions[0]
    return report


def saved_marks(report):
    """The forward graph returns its outputs, then the saved values (autograd/partition.h):
    the nodes and inputs defining those last outputs are the ones marked saved."""
    a = next(x.autograd for x in report.stages if x.WhichOneof("payload") == "autograd")
    fw = a.forward
    saved_ids = set(fw.outputs[len(fw.outputs) - len(a.saved_values):])
    nodes = [i for i, n in enumerate(fw.nodes) if any(v.id in saved_ids for v in n.outputs)]
    inputs = [i for i, v in enumerate(fw.inputs) if v.id in saved_ids]
    return {"saved": len(a.saved_values), "forward_nodes": nodes, "forward_inputs": inputs,
            "counts": {"joint": len(a.joint.nodes), "forward": len(fw.nodes),
                       "backward": len(a.backward.nodes)}}


def compare(a, b):
    key_a, sched_a = first_schedule(a)
    key_b, sched_b = first_schedule(b)
    sets_a, sets_b = kernel_node_sets(sched_a), kernel_node_sets(sched_b)
    only_a, only_b = unmatched(sets_a, sets_b), unmatched(sets_b, sets_a)
    decisions = {}
    for side, sched in (("a", sched_a), ("b", sched_b)):
        ds = list(sched.decisions) if sched is not None else []
        decisions[side + "_accepted"] = sum(1 for d in ds if d.accepted)
        decisions[side + "_rejected"] = sum(1 for d in ds if not d.accepted)
    keys = [[(getattr(d, "pass"), d.kind, d.accepted, d.reason,
              tuple(d.kernels)) for d in (sched.decisions if sched is not None else [])]
            for sched in (sched_a, sched_b)]
    decisions["only_a"] = len(unmatched(keys[0], keys[1]))
    decisions["only_b"] = len(unmatched(keys[1], keys[0]))
    return {
        "kernel_stage_a": key_a, "kernel_stage_b": key_b,
        "a_count": len(sets_a), "b_count": len(sets_b), "same": len(sets_a) - len(only_a),
        "only_a": [{"index": i, "name": sched_a.kernels[i].name} for i in only_a],
        "only_b": [{"index": i, "name": sched_b.kernels[i].name} for i in only_b],
        "decisions": decisions,
        "timings": paired_rows([(t.stage, t.seconds) for t in a.timings],
                               [(t.stage, t.seconds) for t in b.timings]),
        "stages_a": [s["key"] for s in expectations(a)["stages"]],
        "stages_b": [s["key"] for s in expectations(b)["stages"]],
        "options": sorted([k, a.options.get(k, "(not set)"), b.options.get(k, "(not set)")]
                          for k in set(a.options) | set(b.options)
                          if a.options.get(k) != b.options.get(k)),
    }


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
    if len(argv) == 3 and argv[1] == "weights":
        # The raw constant bytes of the report embedded in an exported page (base64 in the
        # coil-embedded script element).
        import base64
        import re
        with open(argv[2], encoding="utf-8") as f:
            html = f.read()
        m = re.search(r'<script id="coil-embedded"[^>]*>([^<]*)</script>', html)
        report = report_pb2.CompileReport()
        report.ParseFromString(base64.b64decode(m.group(1)))
        print(raw_constant_bytes(report, WEIGHT_BYTES))
        return 0
    if len(argv) == 3 and argv[1] == "saved":
        r = report_pb2.CompileReport()
        with open(argv[2], "rb") as f:
            r.ParseFromString(f.read())
        print(json.dumps(saved_marks(r)))
        return 0
    if len(argv) == 4 and argv[1] == "split":
        r = report_pb2.CompileReport()
        with open(argv[2], "rb") as f:
            r.ParseFromString(f.read())
        with open(argv[3], "wb") as f:
            f.write(split_kernels(r).SerializeToString())
        return 0
    if len(argv) == 5 and argv[1] == "compare":
        reports = []
        for path in argv[2:4]:
            r = report_pb2.CompileReport()
            with open(path, "rb") as f:
                r.ParseFromString(f.read())
            reports.append(r)
        with open(argv[4], "w") as f:
            json.dump(compare(*reports), f, indent=1)
        return 0
    if len(argv) == 3 and argv[1] == "recompiled":
        report = recompiled_report()
        with open(argv[2], "wb") as f:
            f.write(report.SerializeToString())
        stages = expectations(report)["stages"]
        print(json.dumps({"reason": RECOMPILE_REASON,
                          "stages": [{"key": s["key"], "count": s["count"]} for s in stages]}))
        return 0
    if len(argv) in (4, 5) and argv[1] == "big" and argv[4:] in ([], ["named"]):
        with open(argv[3], "wb") as f:
            f.write(big_report(int(argv[2]), named=argv[4:] == ["named"]).SerializeToString())
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
