#!/usr/bin/env bash
# The main job: installs what is missing, builds coil, and runs a real network through every
# stage that exists, writing the artifacts (graph, text IR, CompileReport) to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build --config=opt //tools/main_job:main_job //tools/coil:coil
bazel-bin/tools/main_job/main_job --out out
