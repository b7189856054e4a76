#!/usr/bin/env bash
# `coil bench cpu --quick` end to end: torch 1.13 exports and times the four models, coil
# compiles and runs them, every output must match torch's and every row must be present in the
# text and in --json (one pass: no rounds, which are --peers'). Structure and correctness only:
# no speed is asserted. Then usage errors.
set -uo pipefail
coil=tools/coil/coil
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fails=0
check() {  # check NAME EXPECTED_STATUS PATTERN -- command...
  local name=$1 want=$2 pattern=$3; shift 4
  local out status
  out=$("$@" 2>&1); status=$?
  if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: status $status (want $want), output:"; echo "$out" | tail -40
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}

out=$($coil bench cpu --quick --threads 1 --json "$tmp/bench.json" 2>"$tmp/stderr"); status=$?
echo "$out"
if [ "$status" -ne 0 ]; then
  echo "FAIL quick: exit status $status"; tail -40 "$tmp/stderr"; fails=$((fails + 1))
fi
for pattern in '^geomean vs torch eager: [0-9]+\.[0-9]{2}x$' '^resnet18 +1 ' '^resnet18 +8 ' \
    '^mobilenet_v2 +1 ' '^mobilenet_v2 +8 ' '^transformer_encoder +1 ' '^transformer_encoder +8 ' \
    '^gpt +1 ' '^gpt +8 ' '^copy ' '^pointwise_chain ' '^softmax ' '^compile resnet18 .*cold' \
    '^  onnx import ' '^  codegen \(LLVM' '^  inductor schedule '; do
  grep -qE -- "$pattern" <<<"$out" && echo "ok   text $pattern" ||
    { echo "FAIL text: no line matching $pattern"; fails=$((fails + 1)); }
done
if grep -q '^ERROR' <<<"$out"; then echo "FAIL text: ERROR lines"; fails=$((fails + 1)); fi

# The JSON: every row present, every output matching torch (or the float64 evaluation).
/usr/bin/python3 - "$tmp/bench.json" <<'PY' || fails=$((fails + 1))
import json, sys
r = json.load(open(sys.argv[1]))
problems = []
rows = {(m["model"], m["batch"]): m for m in r["models"]}
for model in ("resnet18", "mobilenet_v2", "transformer_encoder", "gpt"):
    for batch in (1, 8):
        m = rows.get((model, batch))
        if m is None:
            problems.append("no row %s batch %d" % (model, batch))
        elif not (m["matches"] and m["max_relative_error"] <= 1e-4 and m["speedup"] > 0
                  and m["coil_ms"] > 0 and m["torch_ms"] > 0):
            problems.append("row %s" % m)
names = [b["name"] for b in r["bandwidth"]]
if names != ["copy", "pointwise_chain", "softmax"]:
    problems.append("bandwidth rows %s" % names)
for b in r["bandwidth"]:
    if not (b["matches"] and b["gb_per_s"] > 0 and b["fraction_of_copy"] > 0):
        problems.append("bandwidth row %s" % b)
c = r["compile"]
stages = [s["name"] for s in c["cold_stages"]]
if not (c["model"] == "resnet18" and c["warm_cache_hit"] and c["cold_ms"] > 0 and
        "onnx import" in stages and "inductor schedule" in stages and not c["error"]):
    problems.append("compile %s" % c)
# Rounds are --peers' (cpu_bench_rounds.h): without it, one pass and no round lists.
if r.get("rounds", 0) != 0 or any(m.get("torch_round_ms") or m.get("coil_round_ms")
                                  for m in r["models"]):
    problems.append("rounds without --peers: %s" % r.get("rounds"))
if not (r["geomean_speedup"] > 0 and r["failed_rows"] == 0 and r["threads"] == 1 and r["quick"]):
    problems.append("summary %s" % {k: r[k] for k in ("geomean_speedup", "failed_rows", "threads")})
for p in problems:
    print("FAIL json: " + p)
print("ok   json" if not problems else "")
sys.exit(1 if problems else 0)
PY

check no_benchmark 2 'which benchmark' -- $coil bench
check unknown_benchmark 2 "unknown benchmark 'gpu'" -- $coil bench gpu
check bad_threads 2 '--threads takes an integer from 1' -- $coil bench cpu --threads 0
check bad_batches 2 "--batches: 'x' is not an integer" -- $coil bench cpu --batches 1,x
check unknown_flag 2 'usage: coil bench cpu' -- $coil bench cpu --fast
check unknown_model 1 "unknown model 'alexnet'" -- $coil bench cpu --models alexnet
check batch_zero 1 'batch size 0 < 1' -- $coil bench cpu --batches 0
check missing_script 1 'no such file' -- $coil bench cpu --torch-script "$tmp/nope.py"
check rounds_need_peers 2 '--rounds needs --peers' -- $coil bench cpu --quick --rounds 2
check help 0 'geomean vs torch eager' -- $coil bench --help

echo "$fails failed"
[ "$fails" -eq 0 ]
