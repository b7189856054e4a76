"""WebAssembly builds inside any configuration: a transition to the emscripten toolchain.

`wasm_binary(name, binary)` builds the cc_binary `binary` with //third_party/emscripten (as
`--config=wasm` would) whatever the top-level configuration is, so plain `bazel build //...`,
`--config=asan` and `--config=opt` all produce the same wasm module. Its output is the
binary's single file (emcc `-sSINGLE_FILE=1`: JS loader with the wasm inlined).

`WASM_ONLY` is for `target_compatible_with` on targets that only build for wasm (they use
emscripten headers or the wasm protobuf runtime): native configurations skip them.
"""

WASM_ONLY = select({
    "@coil//third_party/emscripten:is_wasm": [],
    "//conditions:default": ["@platforms//:incompatible"],
})

# Flags from the top-level configuration that mean nothing (or harm) in the wasm build:
# sanitizers (--config=asan) and the fuzzer instrumentation (--config=fuzz), and their
# optimization and debug levels (the module is built -c opt in every configuration, and the
# same module whichever configuration asked for it).
_DROPPED_FLAG_PREFIXES = ["-fsanitize", "-fno-sanitize", "-O", "-g", "-fno-omit-frame-pointer"]

def _keep(flags):
    return [f for f in flags if not [p for p in _DROPPED_FLAG_PREFIXES if f.startswith(p)]]

def _wasm_transition_impl(settings, attr):
    return {
        "//command_line_option:crosstool_top": "//third_party/emscripten:toolchain",
        "//command_line_option:cpu": "wasm",
        # Tools that run during the build (none are C++ today) stay native.
        "//command_line_option:host_crosstool_top": "@bazel_tools//tools/cpp:toolchain",
        # Size matters more than build time: the module ships inside the page.
        "//command_line_option:compilation_mode": "opt",
        "//command_line_option:copt": _keep(settings["//command_line_option:copt"]),
        "//command_line_option:linkopt": _keep(settings["//command_line_option:linkopt"]),
        # Per-file flags (.bazelrc: -O2 for the reference kernels, UBSan on the stages under
        # --config=asan) are for native code only.
        "//command_line_option:per_file_copt": [],
    }

wasm_transition = transition(
    implementation = _wasm_transition_impl,
    inputs = [
        "//command_line_option:copt",
        "//command_line_option:linkopt",
    ],
    outputs = [
        "//command_line_option:crosstool_top",
        "//command_line_option:cpu",
        "//command_line_option:host_crosstool_top",
        "//command_line_option:compilation_mode",
        "//command_line_option:copt",
        "//command_line_option:linkopt",
        "//command_line_option:per_file_copt",
    ],
)

def _wasm_binary_impl(ctx):
    files = ctx.attr.binary[0][DefaultInfo].files.to_list()
    if len(files) != 1:
        fail("wasm_binary: %s must produce exactly one file (link with -sSINGLE_FILE=1), got %s" %
             (ctx.attr.binary[0].label, [f.short_path for f in files]))
    # A copy, not a symlink: the file must stand alone in runfiles and in other rules' inputs.
    out = ctx.actions.declare_file(ctx.label.name + ".js")
    ctx.actions.run_shell(
        inputs = [files[0]],
        outputs = [out],
        command = "cp -f \"$1\" \"$2\"",
        arguments = [files[0].path, out.path],
        mnemonic = "CopyWasmBinary",
        progress_message = "Copying the wasm build of %s" % ctx.attr.binary[0].label,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

wasm_binary = rule(
    implementation = _wasm_binary_impl,
    doc = "The wasm build of a cc_binary (one JS file with the module inlined): <name>.js.",
    attrs = {
        "binary": attr.label(
            cfg = wasm_transition,
            mandatory = True,
            doc = "A cc_binary linked with -sSINGLE_FILE=1.",
        ),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
)
