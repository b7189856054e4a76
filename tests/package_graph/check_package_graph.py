#!/usr/bin/python3
"""Checks coil's Bazel package graph against the stage DAG of DESIGN.md ("Layout").

Input (built by the genqueries in tests/package_graph/BUILD, see the header there):
  --graph FILE     `bazel query --output=xml --noimplicit_deps` of whole packages: every rule
                   with its direct inputs (<rule-input>), explicit attributes only.
  --testonly FILE  labels of the testonly targets among them (test rules are testonly too).
A package belongs to the stage named by its top folder (//capture/onnx is capture, //ir/proto
is ir, //:coil is the root). Every direct input of every rule is one edge; edges into other
repositories (@llvm, @bazel_tools, ...) are third-party and always allowed.

Prints each edge the DAG forbids as
  //pkg:target -> //other:target (stage X may not depend on stage Y)
and exits 1 when there is any, or when the input looks wrong (too few edges, a core stage
missing, a folder without a row in the tables below, a referenced package never scanned).

--self_test runs the checker on small synthetic graphs (a back edge must be reported, an
empty query must fail) and needs no input.
"""

import argparse
import sys
import xml.etree.ElementTree as ET

ANY = "*"
LEAF = "third_party"

# The allowed cross-stage edges, (from, to). An entry is a stage (a top folder; "" is the
# root package), a package with its sub-packages ("tools/driver"), one package alone
# ("//runtime"), or ANY: any stage, except that ANY as the source never matches third_party,
# the leaf. A stage may always use itself.
# Every allowed edge is listed, transitive ones included: nothing is inferred.
ALLOWED_EDGES = [
    ("runtime", "ir"),            # interpreters run ir graphs / Schedules (ir/proto)
    ("capture", "ir"),            # tracing builds ir graphs with GraphBuilder
    ("capture", "runtime"),       # eager ops run reference kernels; ReferenceBackend
    ("prims", "ir"),              # decompositions rewrite ir graphs into prims ops
    ("autograd", "ir"),           # derivative rules build ir graphs
    ("autograd", "prims"),        # joint graphs are functionalized/decomposed first
    ("inductor", "ir"),           # lowers prims graphs to proto::Schedule
    ("codegen_cpu", "ir"),        # Schedule / KernelModule protos
    ("codegen_cpu", "inductor"),  # consumes inductor's Schedule
    ("codegen_cpu", "runtime"),   # loads into runtime/cpu (CpuExecutable, kernel ABI);
                                  # runtime never depends on codegen
    ("codegen_cuda", "ir"),       # same as codegen_cpu, for CUDA
    ("codegen_cuda", "inductor"),
    ("codegen_cuda", "runtime"),
    ("inspector_web", "ir"),      # renders any stage's protobuf: ir/proto only
    (ANY, "third_party"),         # Bazel shims for Debian libraries: the leaf everyone uses
    ("", ANY),                    # the root umbrella targets (//:coil) join the stages
    ("tools", ANY),               # the CLI, benchmarks, main job join the stages
    ("tests", ANY),               # cross-stage suites
]

# The stages (top folders; "" is the root package). A new top folder fails the test until it
# is added here with its rows.
STAGES = ["", "ir", "runtime", "capture", "prims", "autograd", "inductor", "codegen_cpu",
          "codegen_cuda", "inspector_web", "tests", "tools", "third_party"]

# Extra edges for testonly targets (test rules and testonly libraries/binaries; Bazel
# guarantees nothing non-testonly depends on them, so they never reach shipped code).
TEST_ALLOWED_EDGES = [
    (ANY, "//runtime"),           # the reference (and Schedule) interpreter of //runtime is
                                  # every stage's oracle; not runtime/cpu
    (ANY, "tools/driver"),        # tests that compile whole models use the compile driver,
                                  # the one place where the stages meet
    ("inductor", "prims"),        # inductor tests lower decomposed (prims) graphs
    ("codegen_cpu", "prims"),     # codegen tests compile decomposed graphs ...
    ("codegen_cpu", "capture/onnx"),  # ... and ONNX models end to end (aot_gen, compile_time)
    ("runtime/cpu", "inductor"),  # CpuExecutable tests schedule prims graphs with inductor
    ("inspector_web", "autograd"),  # the autograd view's test renders a real joint graph and
                                    # min-cut partition (the core itself reads only protos)
]

# Stages whose absence from the query means the query is broken.
CORE_STAGES = ["ir", "runtime", "capture", "prims", "inductor", "codegen_cpu", "inspector_web"]


def package_of(label):
    """'//a/b:c' -> 'a/b'; None for other repositories."""
    if not label.startswith("//"):
        return None
    return label[2:].split(":", 1)[0]


def stage_of(package):
    return package.split("/", 1)[0]


def _stage_name(stage):
    return stage if stage else "root"


def _matches(item, package, source=False):
    """Whether a table entry (stage, package prefix, //package or ANY) covers package."""
    if item.startswith("//"):
        return package == item[2:]
    if item == ANY:
        return not (source and stage_of(package) == LEAF)
    if item == stage_of(package):
        return True
    return "/" in item and (package == item or package.startswith(item + "/"))


def allowed_row(table, src_package, dst_package):
    """The first row of table allowing src_package -> dst_package, or None."""
    for row in table:
        if _matches(row[0], src_package, source=True) and _matches(row[1], dst_package):
            return row
    return None


def parse_graph(xml_text):
    """Returns ({rule label: rule class}, [(rule label, input label)], scanned packages)."""
    root = ET.fromstring(xml_text)
    rules, edges, packages = {}, [], set()
    for elem in root:
        name = elem.get("name", "")
        pkg = package_of(name)
        if pkg is not None:
            packages.add(pkg)
        if elem.tag != "rule":
            continue
        rules[name] = elem.get("class")
        for inp in elem.findall("rule-input"):
            edges.append((name, inp.get("name")))
    return rules, edges, packages


def check(xml_text, testonly_labels, min_edges, blind=()):
    """Returns (errors, notes): each error line fails the test; notes are only printed."""
    errors, notes = [], []
    try:
        rules, edges, scanned = parse_graph(xml_text)
    except ET.ParseError as e:
        return ["query output is not valid XML: %s" % e], notes
    testonly = {label for label in testonly_labels if package_of(label) is not None}
    blind = set(blind)

    internal = [(s, d) for s, d in edges
                if package_of(s) is not None and package_of(d) is not None]
    notes.append("scanned %d packages, %d rules, %d edges between coil targets" %
                 (len(scanned), len(rules), len(internal)))
    if len(internal) < min_edges:
        errors.append("query output has %d edges between coil targets, expected at least %d: "
                      "is the genquery's expression or scope broken?" % (len(internal), min_edges))
    stages_seen = {stage_of(p) for p in scanned}
    for stage in CORE_STAGES:
        if stage not in stages_seen:
            errors.append("no package of stage %s in the query output: is the scope broken?"
                          % stage)
    unknown = sorted({stage_of(package_of(label)) for edge in internal for label in edge} -
                     set(STAGES))
    for stage in unknown:
        errors.append("top folder %s/ is no stage: add it to STAGES and its edges to "
                      "ALLOWED_EDGES in tests/package_graph/check_package_graph.py" % stage)
    stray = sorted(testonly - set(rules))
    if stray:
        errors.append("testonly labels that are not rules of the graph (the two queries "
                      "disagree): %s" % ", ".join(stray[:5]))

    unscanned, test_rows = {}, {}
    for src, dst in internal:
        src_pkg, dst_pkg = package_of(src), package_of(dst)
        if dst_pkg not in scanned and dst_pkg not in blind:
            unscanned.setdefault(dst_pkg, src)
        src_stage, dst_stage = stage_of(src_pkg), stage_of(dst_pkg)
        if src_stage == dst_stage or src_stage in unknown or dst_stage in unknown:
            continue
        if allowed_row(ALLOWED_EDGES, src_pkg, dst_pkg):
            continue
        row = allowed_row(TEST_ALLOWED_EDGES, src_pkg, dst_pkg) if src in testonly else None
        if row:
            test_rows[row] = test_rows.get(row, 0) + 1
            continue
        errors.append("%s -> %s (stage %s may not depend on stage %s)%s" %
                      (src, dst, _stage_name(src_stage), _stage_name(dst_stage),
                       " [testonly]" if src in testonly else ""))
    for pkg in sorted(unscanned):
        errors.append("package //%s is referenced by %s but is not scanned (none of its "
                      "targets is in the closure of ANCHORS), so its own edges are unchecked: "
                      "add a target of it to ANCHORS in tests/package_graph/BUILD, or to "
                      "--blind there if none is visible from tests/package_graph" %
                      (pkg, unscanned[pkg]))
    for pkg in sorted(blind & scanned):
        notes.append("note: --blind lists //%s, which is scanned now: remove it" % pkg)
    for row in TEST_ALLOWED_EDGES:
        notes.append("testonly edges allowed by %s -> %s: %d" %
                     (row[0], row[1], test_rows.get(row, 0)))
    return errors, notes


def _synthetic(rules):
    """rules: [(label, class, [inputs])] -> query XML."""
    out = ['<?xml version="1.1" encoding="UTF-8" standalone="no"?>', '<query version="2">']
    for label, cls, inputs in rules:
        out.append('<rule class="%s" name="%s">' % (cls, label))
        out += ['<rule-input name="%s"/>' % i for i in inputs]
        out.append("</rule>")
    out.append("</query>")
    return "\n".join(out)


def self_test():
    failures = []

    def expect(name, got, want):
        if got != want:
            failures.append("%s:\n  got  %r\n  want %r" % (name, got, want))

    def errors_of(rules, testonly=(), min_edges=8, blind=()):
        return check(_synthetic(rules), list(testonly), min_edges, blind)[0]

    core = [("//%s:lib" % s, "cc_library", ["//ir:graph"]) for s in CORE_STAGES if s != "ir"]
    clean = core + [
        ("//ir:graph", "cc_library", ["//ir/proto:graph_proto", "//third_party:absl",
                                      "//ir/io:read_file", "@llvm//:llvm"]),
        ("//ir/proto:graph_proto", "cc_library", ["@bazel_tools//tools/cpp:x"]),
        ("//ir/io:read_file", "cc_library", ["//third_party:absl"]),
        ("//third_party:absl", "cc_library", []),
        ("//runtime/cpu:executable", "cc_library", ["//ir:graph"]),
        ("//codegen_cpu:jit", "cc_library", ["//runtime/cpu:executable", "//inductor:lib"]),
        ("//inductor:fold_test", "cc_test", ["//runtime:lib", "//prims:lib"]),
        ("//inductor:model_tool", "cc_binary", ["//tools/driver:driver"]),
        ("//tools/driver:driver", "cc_library", ["//codegen_cpu:jit", "//prims:lib"]),
        ("//:coil", "cc_library", ["//capture:lib", "//tools/driver:driver"]),
    ]
    tests = ["//inductor:fold_test", "//inductor:model_tool", "@bazel_tools//x:y_test"]
    expect("clean graph", errors_of(clean, tests), [])

    # Each kind of back edge is reported as one line naming both targets and both stages.
    back = clean + [
        ("//inductor:fold", "cc_library", ["//runtime:interpreter"]),
        ("//runtime/cpu:loader", "cc_library", ["//codegen_cpu:jit"]),
        ("//capture/onnx:onnx", "cc_library", ["//prims:lib"]),
        ("//third_party:x", "cc_library", ["//ir:graph"]),
        ("//third_party:w", "cc_library", ["//ir/io:read_file"]),
        ("//ir:z", "genrule", ["//tools/driver:driver"]),
        ("//inspector_web:page", "genrule", ["//runtime:lib", "//inspector_web/core:core"]),
        ("//inspector_web/core:core", "cc_library", ["//ir/proto:graph_proto"]),
        ("//inductor:t_test", "cc_test", ["//codegen_cpu:jit"]),
        ("//prims:p_test", "cc_test", ["//inductor:lib", "//runtime/cpu:executable"]),
        ("//runtime:interpreter", "cc_library", []),
    ]
    expect("back edges", errors_of(back, tests + ["//inductor:t_test", "//prims:p_test"]), [
        "//inductor:fold -> //runtime:interpreter (stage inductor may not depend on stage "
        "runtime)",
        "//runtime/cpu:loader -> //codegen_cpu:jit (stage runtime may not depend on stage "
        "codegen_cpu)",
        "//capture/onnx:onnx -> //prims:lib (stage capture may not depend on stage prims)",
        "//third_party:x -> //ir:graph (stage third_party may not depend on stage ir)",
        "//third_party:w -> //ir/io:read_file (stage third_party may not depend on stage ir)",
        "//ir:z -> //tools/driver:driver (stage ir may not depend on stage tools)",
        "//inspector_web:page -> //runtime:lib (stage inspector_web may not depend on stage "
        "runtime)",
        "//inductor:t_test -> //codegen_cpu:jit (stage inductor may not depend on stage "
        "codegen_cpu) [testonly]",
        "//prims:p_test -> //inductor:lib (stage prims may not depend on stage inductor) "
        "[testonly]",
        "//prims:p_test -> //runtime/cpu:executable (stage prims may not depend on stage "
        "runtime) [testonly]",
    ])
    # Without the testonly list the oracle edge is a back edge: the exemption is testonly only.
    expect("exemption needs testonly", errors_of(clean, []), [
        "//inductor:fold_test -> //runtime:lib (stage inductor may not depend on stage runtime)",
        "//inductor:fold_test -> //prims:lib (stage inductor may not depend on stage prims)",
        "//inductor:model_tool -> //tools/driver:driver (stage inductor may not depend on "
        "stage tools)",
    ])

    # A broken query must fail, never pass silently.
    empty = errors_of([], min_edges=1)
    expect("empty query fails", len(empty) == 1 + len(CORE_STAGES) and
           "edges between coil targets" in empty[0], True)
    few = errors_of(clean, tests, min_edges=1000)
    expect("too few edges fail", len(few) == 1 and "expected at least 1000" in few[0], True)
    expect("garbage fails", check("", [], 1)[0][0].startswith("query output is not valid XML"),
           True)
    expect("unknown testonly label fails",
           errors_of(clean, tests + ["//ir:gone_test"])[0].startswith("testonly labels"), True)
    # New folders and unscanned packages are reported, not skipped.
    unknown = errors_of(clean + [("//newstage:x", "cc_library", ["//ir:graph"])], tests)
    expect("unknown folder fails", len(unknown) == 1 and "newstage/ is no stage" in unknown[0],
           True)
    unscanned = clean + [("//capture:y", "cc_library", ["//capture/z:z"])]
    got = errors_of(unscanned, tests)
    expect("unscanned package fails",
           len(got) == 1 and got[0].startswith("package //capture/z is referenced by "
                                               "//capture:y"), True)
    expect("blind package is skipped", errors_of(unscanned, tests, blind=["capture/z"]), [])
    got = errors_of(clean + [("//:x", "cc_library", ["//tools/w:w"])], tests)
    expect("root edges count", len(got) == 1 and got[0].startswith(
        "package //tools/w is referenced by //:x"), True)

    # The tables: known stages only, and the allowed edges among stages form a DAG.
    for a, b in ALLOWED_EDGES + TEST_ALLOWED_EDGES:
        for item in (a, b):
            if item != ANY and item.lstrip("/").split("/")[0] not in STAGES:
                failures.append("a table names %r, which is no stage" % item)
    graph = {}
    for a, b in ALLOWED_EDGES:
        if a != ANY and b != ANY:
            graph.setdefault(a, set()).add(b)

    def reaches(a, b, seen):
        for n in graph.get(a, ()):
            if n == b or (n not in seen and (seen.add(n) or reaches(n, b, seen))):
                return True
        return False
    for a, b in ALLOWED_EDGES:
        if a != ANY and b != ANY and reaches(b, a, set()):
            failures.append("ALLOWED_EDGES has a cycle through %s -> %s" % (a, b))
    for (a, b) in [("ir", "runtime"), ("runtime", "codegen_cpu"), ("inductor", "runtime"),
                   ("capture", "prims"), ("prims", "inductor"), ("inspector_web", "runtime"),
                   ("third_party", "ir")]:
        if allowed_row(ALLOWED_EDGES, a, b):
            failures.append("ALLOWED_EDGES allows %s -> %s" % (a, b))

    for f in failures:
        print("SELF-TEST FAILED: " + f)
    if not failures:
        print("self-test passed")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graph", help="genquery --output=xml of the scanned packages")
    parser.add_argument("--testonly", help="genquery of their testonly targets, one a line")
    parser.add_argument("--min_edges", type=int, default=1,
                        help="fewer edges between coil targets means a broken query")
    parser.add_argument("--blind", action="append", default=[],
                        help="a package no query can scan (nothing visible in it); repeatable")
    parser.add_argument("--self_test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    with open(args.graph, encoding="utf-8") as f:
        xml_text = f.read()
    with open(args.testonly, encoding="utf-8") as f:
        testonly = [line.strip() for line in f if line.strip()]
    errors, notes = check(xml_text, testonly, args.min_edges, args.blind)
    for line in notes:
        print(line)
    for line in errors:
        print(line)
    if errors:
        print("FAILED: %d problem(s). The allowed edges are ALLOWED_EDGES (and, for testonly "
              "targets, TEST_ALLOWED_EDGES) in tests/package_graph/check_package_graph.py"
              % len(errors))
        return 1
    print("PASSED: every edge follows the stage DAG")
    return 0


if __name__ == "__main__":
    sys.exit(main())
