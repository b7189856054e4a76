#!/usr/bin/env bash
# Installs every Debian package coil needs (idempotent: only what is missing, and says what).
# Usage: tools/setup.sh            (as root, or with sudo available)
set -euo pipefail

PACKAGES=(
  # Build: Debian's Bazel and the rule repositories the offline WORKSPACE points at.
  bazel-bootstrap bazel-rules-java bazel-platforms bazel-skylib
  g++ clang libclang-rt-14-dev
  # C++ dependencies (linked statically from their archives).
  libprotobuf-dev protobuf-compiler libabsl-dev libgtest-dev libgmock-dev libz3-dev
  # The oracle: Debian's PyTorch 1.13 for /usr/bin/python3, and protobuf for Python.
  python3 python3-torch python3-numpy python3-protobuf
  # ONNX schema and conformance data, models from torchvision (ONNX frontend).
  libonnx-dev libonnx-testdata python3-onnx python3-torchvision
  # CPU code generation (LLVM 16, linked statically).
  llvm-16-dev libzstd-dev
  # CPU runtime externs: oneDNN (the chosen library) and OpenBLAS (measured against it).
  libdnnl-dev libopenblas-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

echo "setup: installing ${#missing[@]} missing packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q "${missing[@]}"
echo "setup: done"
