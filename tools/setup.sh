#!/usr/bin/env bash
# Installs every Debian package coil needs (idempotent: only what is missing, and says what).
# Usage: tools/setup.sh            (as root, or with sudo available)
set -euo pipefail

PACKAGES=(
  # Build: Debian's Bazel and the rule repositories the offline WORKSPACE points at.
  bazel-bootstrap bazel-rules-java bazel-platforms bazel-skylib
  # The compiler (.bazelrc): clang 16 and its sanitizer runtimes; g++ brings libstdc++'s
  # headers; clang 14 builds the libFuzzer targets (--config=fuzz).
  clang-16 libclang-rt-16-dev g++ clang libclang-rt-14-dev
  # C++ dependencies (linked statically from their archives).
  libprotobuf-dev protobuf-compiler libabsl-dev libgtest-dev libgmock-dev libz3-dev
  # jemalloc: the allocator of the coil command and the compile benchmarks (third_party/BUILD).
  libjemalloc-dev
  # The oracle: Debian's PyTorch 1.13 for /usr/bin/python3, and protobuf for Python.
  python3 python3-torch python3-numpy python3-protobuf
  # ONNX schema and conformance data, models from torchvision (ONNX frontend).
  libonnx-dev libonnx-testdata python3-onnx python3-torchvision
  # CPU code generation (LLVM 16, linked statically).
  llvm-16-dev libzstd-dev
  # CPU runtime externs: oneDNN (the chosen library) and OpenBLAS (measured against it).
  libdnnl-dev libopenblas-dev
  # The browser inspector: emscripten builds its wasm module; dpkg-dev lets `apt-get source`
  # unpack protobuf's sources for it; chromium (headless) runs its browser test.
  emscripten dpkg-dev chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

# node and npm: Debian's, unless a node (e.g. NodeSource's, which bundles npm) is there.
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  missing+=(nodejs npm)
fi

changed=0
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
else
  changed=1
  echo "setup: installing ${#missing[@]} missing packages: ${missing[*]}"
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q "${missing[@]}"
fi

# --- The browser inspector (inspector_web/, docs/inspector.md) -------------------------------
# protobuf's Debian sources, built for wasm by Bazel (WORKSPACE: @protobuf_wasm). Their version
# must be protoc's, since the wasm build compiles protoc's generated code against them.
PROTOBUF_SRC=/opt/coil/src/protobuf-3.21.12
if [ ! -f "$PROTOBUF_SRC/src/google/protobuf/message_lite.cc" ]; then
  changed=1
  version=$(dpkg-query -W -f='${source:Version}' libprotobuf-dev)
  case "$version" in
    3.21.12-*) ;;
    *) echo "setup: libprotobuf-dev is $version; WORKSPACE expects protobuf 3.21.12 sources" >&2
       exit 1 ;;
  esac
  src_list=/etc/apt/sources.list.d/coil-deb-src.sources
  if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
    echo "setup: adding Debian's source repositories ($src_list)"
    $SUDO tee "$src_list" > /dev/null <<'SOURCES'
# Debian source packages, for `apt-get source protobuf` (tools/setup.sh: the inspector's wasm build).
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  fi
  echo "setup: fetching protobuf $version sources into $(dirname "$PROTOBUF_SRC")"
  $SUDO apt-get update -q
  $SUDO mkdir -p "$(dirname "$PROTOBUF_SRC")"
  (cd "$(dirname "$PROTOBUF_SRC")" && $SUDO apt-get source -q "protobuf=$version")
  [ -f "$PROTOBUF_SRC/src/google/protobuf/message_lite.cc" ] ||
    { echo "setup: apt-get source protobuf did not produce $PROTOBUF_SRC" >&2; exit 1; }
fi

# Node packages (Playwright for the browser test, the layout libraries its benchmark
# measures), exactly as inspector_web/package-lock.json pins them; never a downloaded browser.
INSPECTOR_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../inspector_web" && pwd)
if [ ! -f "$INSPECTOR_DIR/node_modules/.package-lock.json" ] ||
   [ "$INSPECTOR_DIR/package-lock.json" -nt "$INSPECTOR_DIR/node_modules/.package-lock.json" ]; then
  changed=1
  echo "setup: npm ci in $INSPECTOR_DIR"
  (cd "$INSPECTOR_DIR" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
fi
# NVRTC (codegen_cuda, dlopen'ed) comes with the CUDA 13 toolkit at /usr/local/cuda, which the
# machine image provides (not a Debian package; ../shared/TOOLCHAIN.md). Without it the CUDA
# code generator's tests fail with "NVRTC not found".
if [ ! -e /usr/local/cuda/lib64/libnvrtc.so.13 ] && ! ldconfig -p 2>/dev/null | grep -q libnvrtc.so.13; then
  echo "setup: warning: libnvrtc.so.13 (CUDA 13 toolkit) not found: codegen_cuda cannot compile" >&2
fi
if [ "$changed" -eq 1 ]; then echo "setup: done"; fi
