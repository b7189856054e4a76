"""coil_cc_proto_library: C++ (and optionally Python) code from .proto files via Debian's protoc.

Bazel 4.2.3's native proto rules want a protobuf source repository; coil instead runs the
system `protoc` (protobuf-compiler 3.21) in a genrule and links the system libprotobuf.a.
"""

def coil_cc_proto_library(name, srcs, deps = [], py = False, visibility = None):
    """Generates <name> (cc_library) and <name>_protos (filegroup of the .proto files).

    Args:
      name: the cc_library's name.
      srcs: .proto files in this package.
      deps: other coil_cc_proto_library targets whose protos these import.
      py: also generate <name>_py, a filegroup of *_pb2.py modules.
      visibility: visibility of the generated targets.
    """
    native.filegroup(
        name = name + "_protos",
        srcs = srcs + [d + "_protos" for d in deps],
        visibility = visibility,
    )
    stems = [s[:-len(".proto")] for s in srcs]

    # Imports are written from coil's root ("ir/proto/graph.proto"). Built as a dependency of
    # another workspace, coil's files live under external/<repo>/ (and so do the outputs).
    repo = native.repository_name()
    root = "." if repo == "@" else "external/" + repo[1:]
    out_dir = "$(GENDIR)" if repo == "@" else "$(GENDIR)/" + root
    native.genrule(
        name = name + "_gen",
        srcs = srcs + [d + "_protos" for d in deps],
        outs = [s + ".pb.h" for s in stems] + [s + ".pb.cc" for s in stems],
        cmd = "/usr/bin/protoc -I" + root + " --cpp_out=" + out_dir + " " +
              " ".join(["$(location %s)" % s for s in srcs]),
    )
    native.cc_library(
        name = name,
        srcs = [s + ".pb.cc" for s in stems],
        hdrs = [s + ".pb.h" for s in stems],
        deps = deps + ["//third_party:protobuf"],
        visibility = visibility,
    )
    if py:
        native.genrule(
            name = name + "_py_gen",
            srcs = srcs + [d + "_protos" for d in deps],
            outs = [s + "_pb2.py" for s in stems],
            cmd = "/usr/bin/protoc -I" + root + " --python_out=" + out_dir + " " +
                  " ".join(["$(location %s)" % s for s in srcs]),
        )
        native.filegroup(
            name = name + "_py",
            srcs = [s + "_pb2.py" for s in stems],
            visibility = visibility,
        )
