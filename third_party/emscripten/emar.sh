#!/bin/sh
# Bazel's archiver for the wasm toolchain: Debian's emar (llvm-ar for wasm objects).
export NODE_PATH=/usr/share/nodejs
exec /usr/bin/python3 /usr/share/emscripten/emar.py "$@"
