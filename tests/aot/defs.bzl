"""coil_aot_test_package: an AOT package (codegen_cpu/aot.h) generated at build time from a
model file, wrapped as a cc_library that C++ code links without LLVM.

    coil_aot_test_package(name = "mlp", model = "mlp.ir")
    # -> genrule :mlp_gen writing mlp.o + mlp.h, cc_library :mlp (include "tests/aot/mlp.h")

Test-only: it runs the test generator //codegen_cpu:aot_gen. Programs outside tests would run
`coil compile MODEL --aot DIR` the same way (docs/cpu_backend.md, "AOT objects").
"""

def coil_aot_test_package(name, model, cpu = "", foreign_cpu = False):
    """Generates <name>.o and <name>.h from `model` and wraps them as cc_library `name`.

    Args:
      name: the package name (a C identifier) and the cc_library's name.
      model: a text IR (or .onnx) file.
      cpu: the LLVM CPU to compile for ("" = the build machine's CPU).
      foreign_cpu: compile for a CPU with an ISA feature the build machine lacks.
    """
    flags = " --name=%s" % name
    if cpu:
        flags += " --cpu=%s" % cpu
    if foreign_cpu:
        flags += " --foreign_cpu"
    native.genrule(
        name = name + "_gen",
        testonly = True,
        # The generator is a src, not a tool: built in the target configuration, it shares the
        # build with everything else instead of rebuilding LLVM-linked code for the host.
        srcs = [model, "//codegen_cpu:aot_gen"],
        outs = [name + ".o", name + ".h"],
        cmd = "$(location //codegen_cpu:aot_gen) $(location %s) --out_dir=$(@D)%s" % (model, flags),
    )
    native.cc_library(
        name = name,
        testonly = True,
        srcs = [name + ".o"],
        hdrs = [name + ".h"],
        deps = ["//runtime/cpu:aot_runtime"],
    )
