#!/usr/bin/env bash
# End-to-end checks of the `coil` CLI: print, verify, run, ops, version, decompose, and errors.
set -uo pipefail
coil=tools/coil/coil
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
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

# A graph written by hand in text IR.
cat > "$tmp/mlp.txt" <<'G'
graph @mlp(%0 "x": f32[batch, 4]) {
  symbol batch min 1 max 0 hint 3
  %1 "w": f32[2, 4] = constant dense "0000803f000000400000404000008040000080bf000000c0000040c0000080c0"
  %2: f32[batch, 2] = aten.linear(%0, %1)
  %3: f32[batch, 2] = aten.relu(%2)
  return %3
}
G
check version 0 '^coil [0-9]+\.[0-9]+' -- $coil version
check help 0 'usage: coil COMMAND' -- $coil help
check ops 0 '^aten\.add\(self, other\) \{alpha' -- $coil ops
check print 0 'aten.relu\(%2\)' -- $coil print "$tmp/mlp.txt"
check verify 0 'ok \(2 nodes, 1 inputs, 1 outputs\)' -- $coil verify "$tmp/mlp.txt"
check run_hint 0 'output 0: f32\[3, 2\] sum=' -- $coil run "$tmp/mlp.txt" --seed 7
check run_dim 0 'output 0: f32\[5, 2\]' -- $coil run "$tmp/mlp.txt" --dim batch=5
check run_f64 0 'output 0: f64\[3, 2\]' -- $coil run "$tmp/mlp.txt" --float64
check run_schedule 0 'check \(schedule vs float64' -- $coil run "$tmp/mlp.txt" --backend schedule --check
check run_cpu 0 'check \(cpu vs float64' -- $coil run "$tmp/mlp.txt" --backend cpu --check --dim batch=5
check run_bad_backend 1 '--backend must be reference, schedule, cpu or cuda; got .tpu.' -- $coil run "$tmp/mlp.txt" --backend tpu
check run_profile 0 'outside kernels' -- $coil run "$tmp/mlp.txt" --backend cpu --repeat 3 --profile --threads 2
check run_profile_ref 1 '--profile needs --backend cpu or cuda' -- $coil run "$tmp/mlp.txt" --profile
check run_threads_ref 1 '--threads needs --backend cpu' -- $coil run "$tmp/mlp.txt" --threads 2
check run_bad_threads 1 '--threads expects an integer' -- $coil run "$tmp/mlp.txt" --backend cpu --threads 0
# Same seed, same checksum: runs are deterministic.
a=$($coil run "$tmp/mlp.txt" --seed 3); b=$($coil run "$tmp/mlp.txt" --seed 3)
if [ "$a" = "$b" ]; then echo "ok   deterministic"; else echo "FAIL deterministic"; fails=$((fails + 1)); fi
# Saved outputs feed back in as inputs (a TensorValue round trip through the CLI): a [3, 4]
# identity-like graph's output becomes the MLP's input.
printf 'graph @g(%%0: f32[3, 4]) {\n  %%1: f32[3, 4] = aten.relu(%%0)\n  return %%1\n}\n' > "$tmp/g34.txt"
$coil run "$tmp/g34.txt" --seed 3 --save "$tmp/x34_" >/dev/null
check run_inputs 0 'output 0: f32\[3, 2\]' -- $coil run "$tmp/mlp.txt" --inputs "$tmp/x34_0.pb"

# coil decompose: only prims and externs remain, and the decomposed graph computes the same.
check decompose_text 0 'prims.maximum' -- $coil decompose "$tmp/mlp.txt" --text
check decompose_summary 0 'decomposed 2 nodes \(2 ops\) into [0-9]+ nodes' -- $coil decompose "$tmp/mlp.txt" -o "$tmp/mlp_prims.pb"
if $coil print "$tmp/mlp_prims.pb" | grep -E '= aten\.' | grep -vqE 'aten\.(mm|bmm|convolution)\('; then
  echo "FAIL decompose_only_prims"; fails=$((fails + 1))
else
  echo "ok   decompose_only_prims"
fi
a=$($coil run "$tmp/mlp.txt" --seed 5 | grep 'output 0'); b=$($coil run "$tmp/mlp_prims.pb" --seed 5 | grep 'output 0')
if [ "$a" = "$b" ]; then echo "ok   decompose_same_numbers"; else echo "FAIL decompose_same_numbers: $a vs $b"; fails=$((fails + 1)); fi
check decompose_keep 0 'aten.linear' -- $coil decompose "$tmp/mlp.txt" --text --keep aten.linear
check decompose_usage 2 'usage: coil decompose' -- $coil decompose "$tmp/mlp.txt"

# coil schedule: kernels, fusion decisions and the memory plan; --check runs both interpreters.
check schedule_summary 0 'schedule mlp: [0-9]+ kernels \(1 extern\) from [0-9]+ unfused' -- $coil schedule "$tmp/mlp.txt"
check schedule_check 0 'output 0: f32\[3, 2\], max relative error vs the graph interpreter' -- $coil schedule "$tmp/mlp.txt" --check
# --check draws integers in [-8, 8]: an integer division meets a zero divisor at some seed, and
# an index_select index out of [0, 4) at most seeds; both interpreters must refuse (exit 0), and
# the seeds that avoid it compare numbers.
cat > "$tmp/intdiv.txt" <<'G'
graph @intdiv(%0 "a": i64[16], %1 "b": i64[16]) {
  %2: i64[16] = prims.div(%0, %1)
  return %2
}
G
check schedule_check_div_by_zero 0 'schedule: INVALID_ARGUMENT: .*integer division by zero' -- $coil schedule "$tmp/intdiv.txt" --check --seed 1
cat > "$tmp/select.txt" <<'G'
graph @select(%0 "x": f32[4, 3], %1 "idx": i64[1]) {
  %2: f32[1, 3] = aten.index_select(%0, %1) {dim = 0}
  return %2
}
G
out=""; for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do out+=$($coil schedule "$tmp/select.txt" --check --seed $seed 2>&1; echo " status $?"); done
if grep -q 'schedule: OUT_OF_RANGE: .*out of range for buffer' <<<"$out" && grep -q 'max relative error vs the graph interpreter 0' <<<"$out" && ! grep -q 'status 1' <<<"$out"; then
  echo "ok   schedule_check_index_range"
else
  echo "FAIL schedule_check_index_range:"; echo "$out" | head -30; fails=$((fails + 1))
fi
check schedule_epilogue 0 'extern aten.mm \+ epilogue' -- $coil schedule "$tmp/mlp.txt" --epilogues aten.mm
check schedule_no_fusion 0 'fusion decisions: 0 accepted' -- $coil schedule "$tmp/mlp.txt" --no-fusion
$coil schedule "$tmp/mlp.txt" -o "$tmp/mlp.schedule.pb" >/dev/null
if [ -s "$tmp/mlp.schedule.pb" ]; then echo "ok   schedule_output"; else echo "FAIL schedule_output"; fails=$((fails + 1)); fi

# Bad input: clear errors, non-zero status, never a crash.
check missing_file 1 "cannot open '$tmp/nope.txt'" -- $coil print "$tmp/nope.txt"
printf 'not a graph at all \x01\x02' > "$tmp/junk.pb"
check junk 1 'neither text IR nor a serialized coil.proto.Graph' -- $coil verify "$tmp/junk.pb"
sed 's/aten.relu(%2)/aten.relu(%9)/' "$tmp/mlp.txt" > "$tmp/undef.txt"
check undefined_value 1 'undefined' -- $coil verify "$tmp/undef.txt"
sed 's/f32\[batch, 2\] = aten.relu/f32[batch, 3] = aten.relu/' "$tmp/mlp.txt" > "$tmp/wrongtype.txt"
check wrong_type 1 'differ from inferred' -- $coil verify "$tmp/wrongtype.txt"
sed 's/aten.relu/aten.frobnicate/' "$tmp/mlp.txt" > "$tmp/unknown.txt"
check unknown_op 1 "unknown op 'aten.frobnicate'" -- $coil verify "$tmp/unknown.txt"
check bad_dim 1 '--dim expects NAME=SIZE' -- $coil run "$tmp/mlp.txt" --dim batch
printf 'graph @g(%%0: f32[3, 2]) {\n  %%1: f32[3, 2] = aten.relu(%%0)\n  return %%1\n}\n' > "$tmp/g32.txt"
$coil run "$tmp/g32.txt" --save "$tmp/x32_" >/dev/null
check wrong_input_shape 1 'dimension 1 is 2, the graph expects 4' -- $coil run "$tmp/mlp.txt" --inputs "$tmp/x32_0.pb"
check unknown_command 2 "unknown command 'frob'" -- $coil frob
check unknown_flag 1 'unknown flag --bogus' -- $coil run "$tmp/mlp.txt" --bogus

# Expected errors, one per hostile input (issue 15): a graph reads only files in its own folder.
printf 'graph @g() {\n  %%0 "w": u8[16] = constant external "/etc/passwd" offset 0 length 16\n  return %%0\n}\n' > "$tmp/abs.txt"
check external_absolute 1 "abs.txt:2:38: external data path '/etc/passwd' must be relative to the model's folder" -- $coil verify "$tmp/abs.txt"
check external_absolute_run 1 "must be relative to the model's folder" -- $coil run "$tmp/abs.txt" --save "$tmp/leak_"
[ ! -e "$tmp/leak_0.pb" ] && echo "ok   external_absolute_nothing_saved" || { echo "FAIL external_absolute_nothing_saved"; fails=$((fails + 1)); }
sed 's|"/etc/passwd"|"../../../../../etc/passwd"|' "$tmp/abs.txt" > "$tmp/dotdot.txt"
check external_dotdot 1 "dotdot.txt:2:38: external data path '../../../../../etc/passwd' must not contain '..' \(it would leave the model's folder\)" -- $coil verify "$tmp/dotdot.txt"
# The same in a binary graph: Graph::FromProto refuses it.
mkdir -p "$tmp/ext"
printf 'graph @g() {\n  %%0 "w": u8[4] = constant external "data_passwd" offset 0 length 4\n  return %%0\n}\n' > "$tmp/ext/g.txt"
printf 'abcd' > "$tmp/ext/data_passwd"
check external_inside 0 'output 0: u8\[4\] sum=394 ' -- $coil run "$tmp/ext/g.txt"
# Every backend reads external data relative to the graph's folder, not the current one.
printf 'graph @h() {\n  %%0 "w": f32[2] = constant external "w.bin" offset 0 length 8\n  %%1: f32[2] = aten.neg(%%0)\n  return %%1\n}\n' > "$tmp/ext/h.txt"
printf '\x00\x00\x80\x3f\x00\x00\x00\x40' > "$tmp/ext/w.bin"
for b in reference schedule cpu; do
  check "external_inside_$b" 0 'output 0: f32\[2\] sum=-3 ' -- $coil run "$tmp/ext/h.txt" --backend "$b"
done
$coil decompose "$tmp/ext/g.txt" -o "$tmp/ext/g.pb" >/dev/null 2>&1
sed 's|data_passwd|/etc/passwd|' "$tmp/ext/g.pb" > "$tmp/ext/abs.pb"
check external_absolute_pb 1 "abs.pb: constant %0: external data path '/etc/passwd' must be relative" -- $coil verify "$tmp/ext/abs.pb"
mkdir -p "$tmp/ext/dir.bin"
sed 's|data_passwd|dir.bin|' "$tmp/ext/g.txt" > "$tmp/ext/dir.txt"
check external_directory 1 "constant %0: cannot read '$tmp/ext/dir.bin': it is a directory, not a file" -- $coil run "$tmp/ext/dir.txt"

# A FIFO as external data, with a writer that never writes: refused at once, never a hang.
rm -f "$tmp/ext/fifo.bin"; mkfifo "$tmp/ext/fifo.bin"
sleep 30 > "$tmp/ext/fifo.bin" & silent_writer=$!
sed 's|data_passwd|fifo.bin|' "$tmp/ext/g.txt" > "$tmp/ext/fifo.txt"
check external_fifo 1 "constant %0: cannot read '$tmp/ext/fifo.bin': it is not a regular file \(a FIFO or pipe\)" -- timeout 10 $coil run "$tmp/ext/fifo.txt"
kill "$silent_writer" 2>/dev/null; wait "$silent_writer" 2>/dev/null

# Input files: regular files, or pipes and devices up to 64 MiB; a folder is an error.
mkdir -p "$tmp/dir.pb"
check input_directory 1 "cannot read '$tmp/dir.pb': it is a directory, not a file" -- $coil verify "$tmp/dir.pb"
check input_endless_device 1 "cannot read '/dev/zero': it is not a regular file and has more than 67108864 bytes" -- $coil print /dev/zero
check input_pipe 0 'aten.relu\(%2\)' -- $coil print <(cat "$tmp/mlp.txt")
: > "$tmp/empty.pb"
check input_empty 1 'empty.pb: the file is empty \(neither text IR nor a serialized coil.proto.Graph\)' -- $coil verify "$tmp/empty.pb"
rm -f "$tmp/fifo.pb"; mkfifo "$tmp/fifo.pb"
check input_fifo_without_writer 1 'fifo.pb: the file is empty' -- timeout 10 $coil verify "$tmp/fifo.pb"

# Outputs: written atomically, every write checked, never through a link or onto a device.
check output_device 1 "cannot write '/dev/full': it is not a regular file \(a character device\)" -- $coil decompose "$tmp/mlp.txt" -o /dev/full
check stdout_full 1 'cannot write the standard output: No space left on device' -- sh -c "$coil print '$tmp/mlp.txt' > /dev/full"
printf 'precious' > "$tmp/victim"; ln -sf "$tmp/victim" "$tmp/link.pb"
check output_symlink 1 "cannot write '$tmp/link.pb': it is a symbolic link \(name its target instead\)" -- $coil decompose "$tmp/mlp.txt" -o "$tmp/link.pb"
[ "$(cat "$tmp/victim")" = precious ] && echo "ok   output_symlink_target_kept" || { echo "FAIL output_symlink_target_kept"; fails=$((fails + 1)); }
printf 'old' > "$tmp/small.pb"
check output_write_error 1 "cannot write '$tmp/small.pb': File too large" -- bash -c "trap '' XFSZ; ulimit -f 0; exec $coil decompose '$tmp/mlp.txt' -o '$tmp/small.pb'"
[ "$(cat "$tmp/small.pb")" = old ] && echo "ok   output_write_error_kept_old" || { echo "FAIL output_write_error_kept_old"; fails=$((fails + 1)); }
check save_write_error 1 "cannot write '$tmp/saved_0.pb': File too large" -- bash -c "trap '' XFSZ; ulimit -f 0; exec $coil run '$tmp/mlp.txt' --save '$tmp/saved_'"

# Sizes from --dim: a size past int64 or past the memory is an error, never a crash (issue 15).
printf 'graph @g(%%0 "x": f32[s, s]) {\n  symbol s min 1 max 0 hint 3\n  %%1: f32[s, s] = aten.relu(%%0)\n  return %%1\n}\n' > "$tmp/square.txt"
check dim_overflow 1 "input 'x' \(%0\): f32\[4294967296, 4294967296\] is too large: its size overflows int64" -- $coil run "$tmp/square.txt" --dim s=4294967296
check dim_out_of_memory 1 "input 'x' \(%0\): cannot allocate f32\[1048576, 1048576\] \(4398046511104 bytes\): out of memory" -- $coil run "$tmp/square.txt" --dim s=1048576
check dim_overflow_cpu 1 'is too large: its size overflows int64' -- $coil run "$tmp/square.txt" --dim s=4294967296 --backend cpu
check dim_two_equals 1 "--dim expects NAME=SIZE with SIZE a non-negative integer, got 's=1=2'" -- $coil run "$tmp/square.txt" --dim s=1=2
check dim_past_int64 1 "--dim expects NAME=SIZE with SIZE a non-negative integer, got 's=99999999999999999999'" -- $coil run "$tmp/square.txt" --dim s=99999999999999999999
check dim_twice 1 '--dim gives s twice' -- $coil run "$tmp/square.txt" --dim s=2,s=3
check dim_out_of_range 1 '--dim s=0: symbol s must be in \[1, inf\]' -- $coil run "$tmp/square.txt" --dim s=0

# Symbols must be declared (`symbol NAME ...`): code generation binds only those (issue 15).
printf 'graph @g(%%0 "x": f32[4]) {\n  %%1: f32[t] = aten.reshape(%%0) {shape = syms[t]}\n  return %%1\n}\n' > "$tmp/undeclared.txt"
check undeclared_symbol 1 "undeclared.txt: node 0 %1 = aten.reshape\(%0\): attribute 'shape' = syms\[t\] uses symbol 't', which the graph does not declare \(the graph declares no symbols\)" -- $coil verify "$tmp/undeclared.txt"
check undeclared_symbol_compile 1 "uses symbol 't', which the graph does not declare" -- $coil compile "$tmp/undeclared.txt"

# Shape arithmetic on numbers from the file: an error naming the node, never a CHECK (issue 15).
printf 'graph @g(%%0: f32[1, 1, 8, 8], %%1: f32[1, 1, 3, 3]) {\n  %%2: f32[1, 1, 6, 6] = aten.conv2d(%%0, %%1) {dilation = [9223372036854775807, 1]}\n  return %%2\n}\n' > "$tmp/dilation.txt"
check conv_dilation_int64_max 1 "node 0 %2 = aten.conv2d\(%0, %1\): aten.conv2d attribute 'dilation' value 9223372036854775807 is out of the supported range" -- $coil verify "$tmp/dilation.txt"
printf 'graph @g(%%0: f32[2, 3]) {\n  %%1: f32[6] = aten.reshape(%%0) {shape = syms[2147483648, 2147483648, 4]}\n  return %%1\n}\n' > "$tmp/reshape2.txt"
check reshape_overflow_meta 1 "node 0 %1 = aten.reshape\(%0\): aten.reshape: int64 overflow in shape arithmetic: \(4611686018427387904\) \* \(4\)" -- $coil verify "$tmp/reshape2.txt"

echo "$fails failed"
[ "$fails" -eq 0 ]
