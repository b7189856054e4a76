#!/usr/bin/env bash
# Issue 15 items 1 and 2 through the CLI: `coil run MODEL --inputs ... --backend cpu` on an ONNX
# Gather with indices out of bounds (once 7.38e28 with exit 0, or a segfault) and on an integer
# division by zero (once silent) must fail with the reference interpreter's message, as the
# reference and schedule backends do; in-range negative indices still wrap.
set -uo pipefail
coil=tools/coil/coil
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
export COIL_CACHE=off
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

# coil.proto.TensorValue files: field 1 dtype, 2 packed shape, 3 little-endian data.
# data: f32[5, 4, 3, 2] of zeros (480 bytes).
{ printf '\x08\x01\x12\x04\x05\x04\x03\x02\x1a\xe0\x03'; head -c 480 /dev/zero; } > "$tmp/data.pb"
i64x3() {  # i64x3 FILE A B C (each 0..255 or -1..-255 as a byte pattern)
  local f=$1; shift
  printf '\x08\x05\x12\x01\x03\x1a\x18' > "$f"
  for v in "$@"; do printf "$v" >> "$f"; done
}
le() {  # le N: the 8-byte little-endian two's complement of N as printf escapes
  local n=$1 s="" i
  (( n < 0 )) && n=$(( n + (1 << 63) + (1 << 63) ))
  for i in 0 1 2 3 4 5 6 7; do s+=$(printf '\\x%02x' $(( (n >> (8 * i)) & 255 ))); done
  printf '%s' "$s"
}
i64x3 "$tmp/idx_big.pb" "$(le 1)" "$(le 5)" "$(le 0)"
i64x3 "$tmp/idx_huge.pb" "$(le 1)" "$(le 1000000)" "$(le 0)"
i64x3 "$tmp/idx_neg_ok.pb" "$(le -1)" "$(le -5)" "$(le 0)"
i64x3 "$tmp/idx_neg_bad.pb" "$(le 2)" "$(le -6)" "$(le 0)"

gather=/usr/share/libonnx-testdata/data/node/test_gather_0/model.onnx  # data[indices], axis 0
for backend in reference schedule cpu; do
  check "gather_index_5_$backend" 1 'index \[?5[], ].*out of (bounds|range)' -- \
    $coil run "$gather" --inputs "$tmp/data.pb,$tmp/idx_big.pb" --backend $backend
done
check gather_cpu_message 1 "kernel [0-9]+ '[^']*': index 5 is out of bounds for dimension 0 with size 5" -- \
  $coil run "$gather" --inputs "$tmp/data.pb,$tmp/idx_big.pb" --backend cpu
check gather_huge_index_cpu 1 'index 1000000 is out of bounds for dimension 0 with size 5' -- \
  $coil run "$gather" --inputs "$tmp/data.pb,$tmp/idx_huge.pb" --backend cpu
check gather_negative_in_range_cpu 0 'output 0: f32\[3, 4, 3, 2\]' -- \
  $coil run "$gather" --inputs "$tmp/data.pb,$tmp/idx_neg_ok.pb" --backend cpu --check
check gather_negative_out_of_range_cpu 1 'index -6 is out of bounds for dimension 0 with size 5' -- \
  $coil run "$gather" --inputs "$tmp/data.pb,$tmp/idx_neg_bad.pb" --backend cpu

# Integer division by zero: 7 / 0 (once 7).
cat > "$tmp/div.txt" <<'IR'
graph @div(%0 "a": i32[2], %1 "b": i32[2]) {
  %2: i32[2] = aten.div(%0, %1) {rounding_mode = "trunc"}
  return %2
}
IR
printf '\x08\x06\x12\x01\x02\x1a\x08\x07\x00\x00\x00\x07\x00\x00\x00' > "$tmp/a.pb"  # [7, 7]
printf '\x08\x06\x12\x01\x02\x1a\x08\x02\x00\x00\x00\x00\x00\x00\x00' > "$tmp/b.pb"  # [2, 0]
for backend in reference cpu; do
  check "div_by_zero_$backend" 1 'integer division by zero' -- \
    $coil run "$tmp/div.txt" --inputs "$tmp/a.pb,$tmp/b.pb" --backend $backend
done

# The GPT of tests/real_models (vocabulary 96) fed token 130 (once exit 0 with an output).
export_models=tests/real_models/export_models.py
if [ -f "$export_models" ] && /usr/bin/python3 -c 'import torch, onnx' 2>/dev/null; then
  /usr/bin/python3 "$export_models" gpt "$tmp/gpt" >/dev/null 2>&1
  tokens() {  # tokens FILE T0 T1 ... (16 of them): i64[1, 16]
    local f=$1; shift
    { printf '\x08\x05\x12\x02\x01\x10\x1a\x80\x01'; for t in "$@"; do printf "$(le $t)"; done; } > "$f"
  }
  tokens "$tmp/good_tokens.pb" 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 95
  tokens "$tmp/bad_tokens.pb" 1 2 3 4 5 6 7 8 9 130 11 12 13 14 15 16
  check gpt_in_vocabulary_cpu 0 'output 0: f32\[1, 16, 96\]' -- \
    $coil run "$tmp/gpt/model.onnx" --inputs "$tmp/good_tokens.pb" --backend cpu --check
  check gpt_token_130_cpu 1 'index 130 is out of bounds for dimension 0 with size 96' -- \
    $coil run "$tmp/gpt/model.onnx" --inputs "$tmp/bad_tokens.pb" --backend cpu
  check gpt_token_130_reference 1 'index 130 is out of bounds for dimension 0 with size 96' -- \
    $coil run "$tmp/gpt/model.onnx" --inputs "$tmp/bad_tokens.pb"
else
  echo "skip gpt (no torch/onnx for /usr/bin/python3)"
fi

echo "$fails failed"
[ "$fails" -eq 0 ]
