#!/usr/bin/env bash
# End-to-end checks of `coil compile`: progress lines per stage, --dump's report.pb (read back by
# compile_report_dump, an independent proto reader) and stage files, the compile cache,
# --backend schedule, --check, max-autotune's candidates and choice, --cpu for a CPU this host
# lacks, --aot, and bad input (clear errors, non-zero status).
set -uo pipefail
coil=tools/coil/coil
report_dump=tools/coil/compile_report_dump
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
data=/usr/share/libonnx-testdata/data
export XDG_CACHE_HOME="$tmp/cache"  # a fresh compile cache
unset COIL_CACHE
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
check() {  # check NAME EXPECTED_STATUS PATTERN -- command...
  local name=$1 want=$2 pattern=$3; shift 4
  local status
  out=$("$@" 2>&1); status=$?
  if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    fail "$name" "status $status (want $want), output:"; echo "$out" | head -30
  else
    pass "$name"
  fi
}
# The stage names of the progress lines, in order, comma separated.
progress_stages() { grep -oE '^  (import|prims|autotune|inductor|codegen_cpu|load|check|aot) ' <<<"$1" | tr -d ' ' | paste -sd, -; }
same() {  # same NAME GOT WANT
  if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi
}

cat > "$tmp/mlp.txt" <<'G'
graph @mlp(%0 "x": f32[batch, 4]) {
  symbol batch min 1 max 0 hint 3
  %1 "w": f32[2, 4] = constant dense "0000803f000000400000404000008040000080bf000000c0000040c0000080c0"
  %2: f32[batch, 2] = aten.linear(%0, %1)
  %3: f32[batch, 2] = aten.relu(%2)
  return %3
}
G

# ---- a text IR model, --dump ----
d="$tmp/d1"
check text_compile 0 'cache miss' -- $coil compile "$tmp/mlp.txt" --dump "$d"
same text_progress_order "$(progress_stages "$out")" "import,prims,inductor,codegen_cpu,load"
grep -qE '^  import +[0-9.]+ ms  2 nodes, 1 input, 1 output$' <<<"$out" && pass text_import_line ||
  fail text_import_line "$out"
grep -qE '^wrote .*/report.pb \(4 stages\) and 9 stage files' <<<"$out" && pass text_wrote_line ||
  fail text_wrote_line "$out"
rep=$($report_dump "$d/report.pb"); status=$?
same report_parses "$status" 0
same report_stage_order "$(grep '^stage ' <<<"$rep" | awk '{print $2 ":" $3}' | paste -sd, -)" \
  "import:graph,prims:graph,inductor:schedule,codegen_cpu:kernel_module"
same report_timing_order "$(grep '^timing ' <<<"$rep" | awk '{print $2 ($3 ~ /^(key|lookup|store)$/ ? " " $3 : "")}' | paste -sd, -)" \
  "import,capture,cache key,cache lookup,prims,inductor,codegen_cpu,cache store,load"
same report_positive_times "$(grep -E '^(stage|timing) ' <<<"$rep" |
  awk '{t = $NF; sub(/seconds=/, "", t); if (!(t + 0 > 0)) print "not positive: " $0}')" ""
# Every driver stage reports its CPU time too; codegen (LLVM) costs measurable CPU.
same report_cpu_timing_order "$(grep '^cpu_timing ' <<<"$rep" | awk '{print $2 ($3 ~ /^(key|lookup|store)$/ ? " " $3 : "")}' | paste -sd, -)" \
  "import,capture,cache key,cache lookup,prims,inductor,codegen_cpu,cache store,load"
same report_codegen_cpu_positive "$(grep '^cpu_timing codegen_cpu ' <<<"$rep" | awk '{print ($3 > 0) ? "yes" : "no"}')" "yes"
grep -qE '^  total +[0-9.]+ ms  \(CPU [0-9.]+ ms, every thread\)$' <<<"$out" && pass total_cpu_line ||
  fail total_cpu_line "$out"
grep -qx 'option backend=cpu' <<<"$rep" && grep -qx 'option mode=default' <<<"$rep" &&
  grep -qx 'option compile_cache_result=cache miss' <<<"$rep" && grep -qx "model $tmp/mlp.txt" <<<"$rep" &&
  pass report_options || fail report_options "$rep"
for f in 01_import.pb 01_import.txt 02_prims.pb 02_prims.txt 03_inductor.schedule.pb \
         03_inductor.txt 04_codegen_cpu.module.pb 04_codegen_cpu.kernels.ll 04_codegen_cpu.o; do
  [ -s "$d/$f" ] || fail "stage_file_$f" "missing or empty"
done
pass stage_files_exist
# Each stage file holds the report's artifact (same serialized size).
payload_bytes() { grep "^stage $1 " <<<"$rep" | grep -oE ' bytes=[0-9]+' | cut -d= -f2; }
same import_file_is_artifact "$(stat -c %s "$d/01_import.pb")" "$(payload_bytes import)"
same prims_file_is_artifact "$(stat -c %s "$d/02_prims.pb")" "$(payload_bytes prims)"
same schedule_file_is_artifact "$(stat -c %s "$d/03_inductor.schedule.pb")" "$(payload_bytes inductor)"
same module_file_is_artifact "$(stat -c %s "$d/04_codegen_cpu.module.pb")" "$(payload_bytes codegen_cpu)"
same object_file_is_module_code "$(stat -c %s "$d/04_codegen_cpu.o")" \
  "$(grep '^stage codegen_cpu ' <<<"$rep" | grep -oE 'object_bytes=[0-9]+' | cut -d= -f2)"
same object_is_elf "$(head -c 4 "$d/04_codegen_cpu.o" | od -An -c | tr -d ' ')" '177ELF'
grep -q '^define void @coil_k' "$d/04_codegen_cpu.kernels.ll" && pass kernels_ll ||
  fail kernels_ll "no kernel definitions"
# The text files are the graphs the .pb files hold; the prims graph has only prims and externs.
same import_text_roundtrip "$($coil print "$d/01_import.pb")" "$(cat "$d/01_import.txt")"
same prims_text_roundtrip "$($coil print "$d/02_prims.pb")" "$(cat "$d/02_prims.txt")"
same import_is_model "$(cat "$d/01_import.txt")" "$($coil print "$tmp/mlp.txt")"
if grep -E '= aten\.' "$d/02_prims.txt" | grep -vqE 'aten\.(mm|bmm|convolution)\('; then
  fail prims_only_prims "aten ops left"
else
  pass prims_only_prims
fi
nodes=$(grep '^stage prims ' <<<"$rep" | grep -oE 'nodes=[0-9]+' | cut -d= -f2)
check prims_node_count 0 "ok \\($nodes nodes" -- $coil verify "$d/02_prims.pb"
grep -q 'schedule mlp: ' "$d/03_inductor.txt" && pass schedule_summary || fail schedule_summary "$(cat "$d/03_inductor.txt")"

# ---- the compile cache: hit on the second compile, off with COIL_CACHE=off ----
check cache_hit 0 '^  compile +[0-9.]+ ms  cached module loaded \(cache hit\)$' -- $coil compile "$tmp/mlp.txt"
same cache_hit_skips_stages "$(progress_stages "$out")" "import,load"
check cache_off 0 '^  compile +[0-9.]+ ms  every stage \(cache off\)$' -- env COIL_CACHE=off $coil compile "$tmp/mlp.txt"

# ---- ONNX models, --check against the Schedule interpreter ----
linear=$data/pytorch-converted/test_Linear/model.onnx
check onnx_check 0 'check .*cpu vs Schedule interpreter, seed 3: max relative error' -- \
  $coil compile "$linear" --check --seed 3 --dump "$tmp/d2"
same onnx_progress_order "$(progress_stages "$out")" "import,prims,inductor,codegen_cpu,load,check"
check onnx_softmax 0 'max relative error' -- \
  $coil compile "$data/node/test_softmax_axis_1/model.onnx" --check
# LLVM's remarks ("remark: <unknown>:0:0: loop not vectorized: ...") stay in the kernel
# module's compiler_remarks; nothing of LLVM's reaches the terminal.
for m in pytorch-converted/test_Conv2d pytorch-converted/test_Conv2d_depthwise node/test_maxpool_2d_default; do
  out=$($coil compile "$data/$m/model.onnx" 2>&1)
  grep -qE '^(remark|warning): ' <<<"$out" && fail "no_llvm_remarks $m" "$out" || pass "no_llvm_remarks $m"
done
same onnx_report_stages "$($report_dump "$tmp/d2/report.pb" | grep '^stage ' | awk '{print $2}' | paste -sd, -)" \
  "import,prims,inductor,codegen_cpu"

# ---- --backend schedule: stops after inductor, runs nothing (except --check) ----
check schedule_backend 0 'Schedule interpreter vs graph interpreter, seed 0: max relative error' -- \
  $coil compile "$tmp/mlp.txt" --backend schedule --check --dump "$tmp/d3"
same schedule_progress_order "$(progress_stages "$out")" "import,prims,inductor,check"
same schedule_report_stages "$($report_dump "$tmp/d3/report.pb" | grep '^stage ' | awk '{print $2}' | paste -sd, -)" \
  "import,prims,inductor"
[ ! -e "$tmp/d3/04_codegen_cpu.o" ] && pass schedule_no_codegen_files || fail schedule_no_codegen_files "found"

# ---- max-autotune: candidates timed, the fastest kept and recorded ----
check autotune 0 '^  autotune +[0-9.]+ ms  [0-9]+ candidates; best ' -- \
  $coil compile "$linear" --mode max-autotune --runs 3 --dump "$tmp/d4" --check
same autotune_progress_full "$(progress_stages "$out")" "import,prims,autotune,inductor,codegen_cpu,load,check"
candidates=$(grep -cE '^    fused[a-z+,-]* +[0-9]+ threads? +[0-9.]+ ms' <<<"$out")
[ "$candidates" -ge 2 ] && pass autotune_candidates_printed || fail autotune_candidates_printed "$candidates"
grep -qE '^    fused +[0-9]+ threads? ' <<<"$out" && pass autotune_epilogue_variant ||
  fail autotune_epilogue_variant "the unfused-epilogue variant of a linear layer was not timed"
rep=$($report_dump "$tmp/d4/report.pb")
same autotune_log_lines "$(grep -c '^log autotune .*median' <<<"$rep")" "$candidates"
# The choice is the candidate with the smallest median, and the options name it.
best=$(grep '^log autotune .*(best)$' <<<"$rep" | sed -E 's/.*median ([0-9.]+) ms.*/\1/')
min=$(grep '^log autotune .*median' <<<"$rep" | sed -E 's/.*median ([0-9.]+) ms.*/\1/' | sort -g | head -1)
same autotune_best_is_min "$best" "$min"
choice=$(grep '^log autotune .*(best)$' <<<"$rep" | sed -E 's/^log autotune ([^,]+(,no-reuse)?), ([0-9]+) threads?:.*/\1 \3/')
same autotune_choice_recorded "$(grep -E '^option (autotune_variant|num_threads)=' <<<"$rep" | cut -d= -f2 | paste -sd' ' -)" "$choice"
grep -q '^option mode=max-autotune' <<<"$rep" && grep -q '^timing autotune ' <<<"$rep" &&
  pass autotune_report || fail autotune_report "$rep"

# ---- --cpu: code for a CPU this host lacks is generated, not loaded ----
# knl needs AVX512-ER (Xeon Phi only), bdver4 needs XOP/FMA4/TBM (AMD Bulldozer only): no CPU
# has both, so one of them is foreign on any host.
if grep -qw xop /proc/cpuinfo; then foreign=knl; else foreign=bdver4; fi
check foreign_cpu 0 "^  load +- +skipped, the code does not run on this host: object code for" -- \
  $coil compile "$tmp/mlp.txt" --cpu "$foreign" --dump "$tmp/d5"
grep -q "target .*, cpu $foreign," "$tmp/d5/04_codegen_cpu.kernels.ll" && pass foreign_cpu_module ||
  fail foreign_cpu_module "$(head -3 "$tmp/d5/04_codegen_cpu.kernels.ll")"
check foreign_cpu_check 1 'failed at check: --check runs the compiled code, which was generated for another CPU' -- \
  $coil compile "$tmp/mlp.txt" --cpu "$foreign" --check
check bad_cpu 1 "failed at codegen_cpu: unknown CPU 'bogus'" -- $coil compile "$tmp/mlp.txt" --cpu bogus

# ---- --aot: the AOT package (object + header) ----
check aot 0 "^  aot +[0-9.]+ ms  wrote $tmp/aot/net.o .*, $tmp/aot/net.h" -- \
  $coil compile "$tmp/mlp.txt" --aot "$tmp/aot" --name net
same aot_object_is_elf "$(head -c 4 "$tmp/aot/net.o" | od -An -c | tr -d ' ')" '177ELF'
grep -q 'net' "$tmp/aot/net.h" && pass aot_header || fail aot_header "no header"
cp "$tmp/mlp.txt" "$tmp/my-model.v2.txt"
check aot_default_name 0 "wrote $tmp/aot2/my_model_v2.o" -- \
  $coil compile "$tmp/my-model.v2.txt" --backend schedule --aot "$tmp/aot2" --cpu "$foreign"
cp "$tmp/mlp.txt" "$tmp/class.txt"
check aot_keyword_stem 0 "wrote $tmp/aot2/m_class.o" -- $coil compile "$tmp/class.txt" --aot "$tmp/aot2"

# ---- --train: autograd between import and prims, the backward compiled too ----
# w (64 bytes) is a weight and becomes an input that requires its gradient; b (16 bytes) stays
# a constant; x is a floating input.
cat > "$tmp/train.txt" <<'G'
graph @train(%0 "x": f32[batch, 4]) {
  symbol batch min 1 max 0 hint 3
  %1 "w": f32[4, 4] = constant dense "000080bf000000bf000000000000003f0000803f000080bf000000bf000000000000003f0000803f000080bf000000bf000000000000003f0000803f000080bf"
  %2 "b": f32[4] = constant dense "cdcccc3dcdcc4cbe9a99993e00000000"
  %3: f32[batch, 4] = aten.linear(%0, %1, %2)
  %4: f32[batch, 4] = aten.tanh(%3)
  return %4
}
G
d="$tmp/train"
check train_compile 0 'autograd .* 1 weights lifted to inputs \(64 bytes\)' -- \
  $coil compile "$tmp/train.txt" --train --dump "$d"
same train_progress_order "$(grep -oE '^  (import|autograd|capture|prims|inductor|codegen_cpu|load|backward\.(capture|prims|inductor|codegen_cpu|load)) ' <<<"$out" | tr -d ' ' | paste -sd, -)" \
  "import,capture,prims,inductor,codegen_cpu,load,backward.capture,backward.prims,backward.inductor,backward.codegen_cpu,backward.load,autograd"
rep=$($report_dump "$d/report.pb")
same train_stage_order "$(grep '^stage ' <<<"$rep" | awk '{print $2 ":" $3}' | paste -sd, -)" \
  "import:graph,autograd:autograd,capture:graph,prims:graph,inductor:schedule,codegen_cpu:kernel_module,backward.capture:graph,backward.prims:graph,backward.inductor:schedule,backward.codegen_cpu:kernel_module"
ag=$(grep '^stage autograd ' <<<"$rep")
field() { grep -oE "$1=[0-9]+" <<<"$ag" | cut -d= -f2; }
saved=$(field saved)
# The partition's layout (autograd/partition.h): the forward takes x and the lifted w and
# returns its output, then the saved values; the backward takes the saved values and one
# tangent and returns dx and dw.
same train_forward_inputs "$(field forward_inputs)" 2
same train_forward_outputs "$(field forward_outputs)" $((1 + saved))
same train_backward_inputs "$(field backward_inputs)" $((saved + 1))
same train_backward_outputs "$(field backward_outputs)" 2
[ "$saved" -ge 1 ] && [ "$(field saved_bytes)" -gt 0 ] && [ "$(field joint_nodes)" -gt "$(field forward_nodes)" ] &&
  pass train_saved || fail train_saved "$ag"
same train_timing_has_backward "$(grep -cE '^timing backward\.(prims|inductor|codegen_cpu) ' <<<"$rep")" 3
for f in 02_autograd.autograd.pb 02_autograd.joint.txt 02_autograd.forward.txt 02_autograd.backward.txt \
         09_backward.inductor.schedule.pb; do
  [ -s "$d/$f" ] && pass "train_file_$f" || fail "train_file_$f" "$(ls "$d")"
done
# The forward graph's text names the lifted weight as an input.
grep -qE '^graph @[^(]*\(.*"w": f32\[4, 4\]' "$d/02_autograd.forward.txt" && pass train_weight_input ||
  fail train_weight_input "$(head -3 "$d/02_autograd.forward.txt")"
check train_no_check 1 '--train compiles a forward and a backward graph: it takes no --check' -- \
  $coil compile "$tmp/train.txt" --train --check
check precision_bad_name 1 "--precision: precision 'fp16' is not one of f32, bf16" -- \
  $coil compile "$tmp/mlp.txt" --precision fp16
check precision_not_with_train 1 '--precision bf16 compiles inference graphs checked by coil run --check; it takes no --train' -- \
  $coil compile "$tmp/train.txt" --train --precision bf16
printf 'graph @ints(%%0 "i": i64[3]) {\n  %%1: i64[3] = aten.neg(%%0)\n  return %%1\n}\n' > "$tmp/ints.txt"
check train_nothing_to_differentiate 1 '--train: the model has no floating input and no weight' -- \
  $coil compile "$tmp/ints.txt" --train

# ---- bad input: clear errors, non-zero status ----
check missing_file 1 "failed at import: cannot open '$tmp/nope.txt'" -- $coil compile "$tmp/nope.txt"
check cuda_no_check 1 '--backend cuda takes neither --check nor --cpu' -- $coil compile "$tmp/mlp.txt" --backend cuda --check
check unknown_backend 1 "--backend must be cpu, cuda or schedule; got 'tpu'" -- $coil compile "$tmp/mlp.txt" --backend tpu
check bad_mode 1 "--mode must be default or max-autotune; got 'fast'" -- $coil compile "$tmp/mlp.txt" --mode fast
check usage 2 'usage: coil compile MODEL' -- $coil compile
check bad_name 1 "--name: AOT package name '9lives' is not a C identifier" -- \
  $coil compile "$tmp/mlp.txt" --aot "$tmp/x" --name 9lives
check keyword_name 1 "--name: AOT package name 'int' is a C\\+\\+ keyword" -- \
  $coil compile "$tmp/mlp.txt" --aot "$tmp/x" --name int
check name_without_aot 1 '--name names the AOT package: it needs --aot DIR' -- $coil compile "$tmp/mlp.txt" --name n
check autotune_schedule 1 '--mode max-autotune times compiled code: it needs --backend cpu' -- \
  $coil compile "$tmp/mlp.txt" --mode max-autotune --backend schedule
check bad_runs 1 '--runs expects an integer in \[1, 1000\]' -- $coil compile "$tmp/mlp.txt" --mode max-autotune --runs 0
check runs_without_autotune 1 '--runs only applies to --mode max-autotune' -- $coil compile "$tmp/mlp.txt" --runs 3
check dim_without_inputs 1 '--dim sets the random inputs' -- $coil compile "$tmp/mlp.txt" --dim batch=2
check bad_dim 1 'failed at inputs: --dim expects NAME=SIZE' -- $coil compile "$tmp/mlp.txt" --check --dim batch
check unknown_flag 1 'unknown flag --frob' -- $coil compile "$tmp/mlp.txt" --frob
# A failing stage still writes report.pb, with the stages that finished and the error.
sed 's/aten.relu/aten.frobnicate/' "$tmp/mlp.txt" > "$tmp/unknown.txt"
# The text parses (import), the graph does not verify (capture, the driver's first stage).
check failed_stage 1 "failed at capture: .*unknown op 'aten.frobnicate'" -- \
  $coil compile "$tmp/unknown.txt" --dump "$tmp/d6"
rep=$($report_dump "$tmp/d6/report.pb")
grep -q "^log error capture: .*unknown op 'aten.frobnicate'" <<<"$rep" &&
  [ "$(grep '^stage ' <<<"$rep" | awk '{print $2}' | paste -sd, -)" = "import" ] &&
  pass failed_report || fail failed_report "$rep"
check dump_not_a_dir 1 'cannot create --dump directory' -- $coil compile "$tmp/mlp.txt" --dump "$tmp/mlp.txt/sub"
check report_reader_rejects 1 'is not a coil.proto.CompileReport' -- $report_dump "$tmp/d1/01_import.txt"

echo "$fails failed"
[ "$fails" -eq 0 ]
