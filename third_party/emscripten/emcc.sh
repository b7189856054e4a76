#!/bin/sh
# Bazel's C++ compiler and linker for the wasm toolchain: Debian's em++ (emscripten 3.1.6).
# Bazel runs actions with a minimal environment; emcc's JS optimizer needs Debian's node
# modules (acorn) on NODE_PATH, and the system python3 (not a pyenv one) runs em++.py.
export NODE_PATH=/usr/share/nodejs
exec /usr/bin/python3 /usr/share/emscripten/em++.py "$@"
