"""emscripten_toolchain_config: a C++ toolchain that compiles to WebAssembly with Debian's emcc.

Selected by `--crosstool_top=//third_party/emscripten:toolchain --cpu=wasm` (`--config=wasm`)
or by the transition in //tools/build_defs:wasm.bzl. Tools are the wrapper scripts beside this
file (they set the environment emcc needs). Compilation mode flags: fastbuild -O1, opt -O2
(the transition always builds opt; -Oz would make the module a third smaller but the core
slower, and the page's budget that binds is time: docs/inspector.md), dbg -O0 -g.
"""

load("@bazel_tools//tools/build_defs/cc:action_names.bzl", "ACTION_NAMES")
load(
    "@bazel_tools//tools/cpp:cc_toolchain_config_lib.bzl",
    "feature",
    "flag_group",
    "flag_set",
    "tool_path",
)

_COMPILE_ACTIONS = [
    ACTION_NAMES.c_compile,
    ACTION_NAMES.cpp_compile,
    ACTION_NAMES.cpp_header_parsing,
    ACTION_NAMES.cpp_module_compile,
]

_LINK_ACTIONS = [
    ACTION_NAMES.cpp_link_executable,
    ACTION_NAMES.cpp_link_dynamic_library,
    ACTION_NAMES.cpp_link_nodeps_dynamic_library,
]

# Where emcc finds headers: its prebuilt sysroot (Debian ships it, FROZEN_CACHE) and clang's
# builtin headers. Bazel checks that every included header lies under one of these.
_BUILTIN_INCLUDES = [
    "/usr/share/emscripten/cache/sysroot/include",
    "/usr/share/emscripten/system/include",
    "/usr/lib/llvm-14/lib/clang/14.0.6/include",
]

def _flags(actions, flags):
    return flag_set(actions = actions, flag_groups = [flag_group(flags = flags)])

def _impl(ctx):
    features = [
        feature(
            name = "default_compile_flags",
            enabled = True,
            flag_sets = [_flags(_COMPILE_ACTIONS, ["-fno-exceptions"])],
        ),
        # Bazel enables exactly one of these per compilation mode.
        feature(name = "fastbuild", flag_sets = [
            _flags(_COMPILE_ACTIONS + _LINK_ACTIONS, ["-O1"]),
        ]),
        feature(name = "opt", flag_sets = [
            _flags(_COMPILE_ACTIONS + _LINK_ACTIONS, ["-O2", "-DNDEBUG"]),
        ]),
        feature(name = "dbg", flag_sets = [
            _flags(_COMPILE_ACTIONS + _LINK_ACTIONS, ["-O0", "-g"]),
        ]),
        feature(name = "supports_pic", enabled = False),
    ]
    tool_paths = [
        tool_path(name = "gcc", path = "emcc.sh"),
        tool_path(name = "ld", path = "emcc.sh"),
        tool_path(name = "ar", path = "emar.sh"),
        tool_path(name = "cpp", path = "/bin/false"),
        tool_path(name = "gcov", path = "/bin/false"),
        tool_path(name = "nm", path = "/bin/false"),
        tool_path(name = "objdump", path = "/bin/false"),
        tool_path(name = "strip", path = "/bin/false"),
    ]
    return cc_common.create_cc_toolchain_config_info(
        ctx = ctx,
        features = features,
        cxx_builtin_include_directories = _BUILTIN_INCLUDES,
        toolchain_identifier = "emscripten-wasm",
        host_system_name = "local",
        target_system_name = "wasm32-unknown-emscripten",
        target_cpu = "wasm",
        target_libc = "musl",
        compiler = "emscripten",
        abi_version = "unknown",
        abi_libc_version = "unknown",
        tool_paths = tool_paths,
    )

emscripten_toolchain_config = rule(
    implementation = _impl,
    attrs = {},
    provides = [CcToolchainConfigInfo],
)
