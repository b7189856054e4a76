"""coil_fuzz_target: a libFuzzer target plus its corpus regression test.

With `--config=fuzz` (.bazelrc: clang, -fsanitize=fuzzer-no-link,address, --define=fuzz=1)
<name> is a libFuzzer binary; otherwise it is a replayer over files and folders, and
<name>_regression_test replays the seed corpus (and every prefix of each seed) on every
`bazel test`.
"""

load("//tools/build_defs:copts.bzl", "COIL_COPTS")

def coil_fuzz_target(name, lib, corpus, testonly = False, prefixes = True, shard_count = 1):
    """lib: a cc_library (alwayslink) defining LLVMFuzzerTestOneInput; corpus: a folder.

    testonly: for a `lib` that is testonly (e.g. one that compiles through //tools/driver from a
    package below it in the package graph).
    prefixes: whether the regression test also replays every prefix of each seed (off for
    targets where one input costs a compile, e.g. the CPU differential fuzzer).
    shard_count: shards of the regression test (fuzz_main splits the runs among them).
    """
    native.cc_binary(
        name = name,
        testonly = testonly,
        copts = COIL_COPTS,
        linkopts = select({
            "//ir/fuzz:fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = [lib] + select({
            "//ir/fuzz:fuzzing": [],
            "//conditions:default": ["//ir/fuzz:fuzz_main"],
        }),
    )
    native.cc_test(
        name = name + "_regression_test",
        copts = COIL_COPTS,
        args = ([] if prefixes else ["--whole-files"]) + [native.package_name() + "/" + corpus],
        data = native.glob([corpus + "/**"]),
        shard_count = shard_count,
        deps = [lib, "//ir/fuzz:fuzz_main"],
    )
