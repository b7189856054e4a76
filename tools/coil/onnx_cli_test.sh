#!/usr/bin/env bash
# End-to-end checks of the ONNX commands of the `coil` CLI: import, run on an .onnx file,
# conformance (suites, one folder, JSON, backends) and their errors.
set -uo pipefail
coil=tools/coil/coil
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
data=/usr/share/libonnx-testdata/data
fails=0
check() {  # check NAME EXPECTED_STATUS PATTERN -- command...
  local name=$1 want=$2 pattern=$3; shift 4
  local out status
  out=$("$@" 2>&1); status=$?
  if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: status $status (want $want), output:"; echo "$out" | head -20
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}

relu=$data/node/test_relu/model.onnx
check import_text 0 'aten\.relu' -- $coil import "$relu" --text
check import_pb 0 '' -- $coil import "$relu" -o "$tmp/relu.pb"
check print_imported 0 'aten\.relu' -- $coil print "$tmp/relu.pb"
check run_onnx 0 'output 0: f32\[3, 4, 5\]' -- $coil run "$relu" --seed 1
check import_usage 2 'usage: coil import' -- $coil import "$relu"
check import_missing 1 "nope.onnx" -- $coil import "$tmp/nope.onnx" --text
# Expected errors (issue 15): a folder as the model, and an output that cannot be written.
mkdir -p "$tmp/dir.onnx"
check import_directory 1 "cannot read '$tmp/dir.onnx': it is a directory, not a file" -- $coil import "$tmp/dir.onnx" --text
check import_to_device 1 "cannot write '/dev/full': it is not a regular file \(a character device\)" -- $coil import "$relu" -o /dev/full
check import_write_error 1 "cannot write '$tmp/full.pb': File too large" -- bash -c "trap '' XFSZ; ulimit -f 0; exec $coil import '$relu' -o '$tmp/full.pb'"
check import_text_to_full 1 'cannot write the standard output: No space left on device' -- sh -c "$coil import '$relu' --text > /dev/full"

# A small suite: two real tests, a broken model (failed) and a sequence model (unsupported).
mkdir -p "$tmp/suite"
cp -r "$data/node/test_relu" "$data/node/test_add" "$data/node/test_identity_sequence" "$tmp/suite/"
mkdir -p "$tmp/suite/test_broken"
printf 'garbage' > "$tmp/suite/test_broken/model.onnx"
check suite_summary 1 '^suite: 2 passed, 1 failed, 1 unsupported$' -- \
  $coil conformance --dir "$tmp/suite" --json "$tmp/suite.json"
grep -q '"name": "test_identity_sequence", "result": "unsupported"' "$tmp/suite.json" &&
  echo "ok   json" || { echo "FAIL json"; cat "$tmp/suite.json"; fails=$((fails + 1)); }
check verbose 1 'suite/test_broken: failed .*not an ONNX ModelProto' -- \
  $coil conformance --dir "$tmp/suite" --verbose
check filter 0 '^suite: 1 passed, 0 failed, 0 unsupported$' -- \
  $coil conformance --dir "$tmp/suite" --filter relu
check one_folder 0 'test_add: passed' -- $coil conformance --dir "$tmp/suite/test_add"
# Progress: on a terminal (forced here) one stderr line per test, rewritten in place and erased;
# not on a terminal (this test's stderr) nothing but the result lines.
err=$(COIL_PROGRESS=always $coil conformance --dir "$tmp/suite" --filter relu 2>&1 >/dev/null)
grep -q $'\r  suite 1/1  [0-9.]* s  test_relu' <<<"$err" && echo "ok   progress_on_terminal" ||
  { echo "FAIL progress_on_terminal: $(cat -A <<<"$err")"; fails=$((fails + 1)); }
err=$($coil conformance --dir "$tmp/suite" --filter relu 2>&1 >/dev/null)
[ -z "$err" ] && echo "ok   no_progress_off_terminal" ||
  { echo "FAIL no_progress_off_terminal: $(cat -A <<<"$err")"; fails=$((fails + 1)); }

check simple_suite 0 '^simple: [0-9]+ passed' -- $coil conformance --suite simple
check backend 1 "backend 'tpu' is not built yet" -- $coil conformance --backend tpu
# No GPU in CI: one clear error instead of every test failing (on a GPU machine this runs).
if ! nvidia-smi >/dev/null 2>&1; then
  check backend_cuda_no_driver 1 "^coil: --backend cuda: (no CUDA driver|the CUDA driver sees no GPU)" -- \
    $coil conformance --backend cuda
fi
check cpu_backend 1 '^suite: 2 passed, 1 failed, 1 unsupported$' -- \
  $coil conformance --dir "$tmp/suite" --backend cpu
check run_cpu 0 'check \(cpu vs float64 reference interpreter\): max relative error' -- \
  $coil run "$data/pytorch-converted/test_Conv2d/model.onnx" --backend cpu --check
check schedule_backend 1 '^suite: 2 passed, 1 failed, 1 unsupported$' -- \
  $coil conformance --dir "$tmp/suite" --backend schedule
# coil schedule on an ONNX model: fused kernels, a memory plan, checked against the interpreter.
check schedule_onnx 0 'max relative error vs the graph interpreter' -- \
  $coil schedule "$data/pytorch-converted/test_Conv2d/model.onnx" --check
# Expected errors (issue 15): options that would pass wrong outputs or never time out, and
# broken data sets (an empty or folder input_0.pb, an extra input_1.pb) fail with exit 1.
check rtol_nan 1 "--rtol expects a finite number >= 0, got 'nan'" -- $coil conformance --dir "$tmp/suite/test_add" --rtol nan
check atol_nan 1 "--atol expects a finite number >= 0, got 'nan'" -- $coil conformance --dir "$tmp/suite/test_add" --atol nan
check atol_inf 1 "--atol expects a finite number >= 0, got 'inf'" -- $coil conformance --dir "$tmp/suite/test_add" --atol inf
check rtol_negative 1 "--rtol expects a finite number >= 0, got '-1'" -- $coil conformance --dir "$tmp/suite/test_add" --rtol -1
check timeout_negative 1 "--timeout expects whole seconds >= 1, got '-1'" -- $coil conformance --dir "$tmp/suite/test_add" --timeout -1
check timeout_zero 1 "--timeout expects whole seconds >= 1, got '0'" -- $coil conformance --dir "$tmp/suite/test_add" --timeout 0
mkdir -p "$tmp/broken"
for t in empty dir extra; do cp -r "$data/node/test_relu" "$tmp/broken/test_relu_$t"; done
: > "$tmp/broken/test_relu_empty/test_data_set_0/input_0.pb"
rm "$tmp/broken/test_relu_dir/test_data_set_0/output_0.pb"; mkdir "$tmp/broken/test_relu_dir/test_data_set_0/output_0.pb"
cp "$tmp/broken/test_relu_extra/test_data_set_0/input_0.pb" "$tmp/broken/test_relu_extra/test_data_set_0/input_1.pb"
check broken_suite 1 '^broken: 0 passed, 3 failed, 0 unsupported$' -- $coil conformance --dir "$tmp/broken"
check broken_empty 1 "test_relu_empty: failed .*'input_0.pb' is empty" -- $coil conformance --dir "$tmp/broken" --verbose
check broken_dir 1 "test_relu_dir: failed .*cannot read 'output_0.pb': it is a directory" -- $coil conformance --dir "$tmp/broken" --verbose
check broken_extra 1 'test_relu_extra: failed .*input_1.pb: the model has 1 input' -- $coil conformance --dir "$tmp/broken" --verbose
check bad_suite 1 '--suite must be' -- $coil conformance --suite nodes
check no_data 1 "no suite folder '$tmp/empty/node'" -- $coil conformance --dir "$tmp/empty" --suite node

echo "$fails failed"
[ "$fails" -eq 0 ]
