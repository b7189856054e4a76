#!/usr/bin/env bash
# `coil bench cpu --peers --quick --rounds 2` end to end on this machine's Python (Debian's torch
# 1.13: no torch.compile, no onnxruntime): the peer script exports tiny BERT and GPT-2 models,
# coil's outputs must match torch eager's, the absent peers must be reported absent with no
# time, no ratio and no geomean (never faked), and the cold compile lines must be there. The
# rounds: each row's times are the medians of its two round medians (recomputed here from the
# JSON's round lists), the spreads printed are their max / min, and the stderr log shows the
# peer script and coil taking turns row by row (rows in order in round 1, reversed in round 2).
# --rounds 0 (one pass, peers first) and the peer server's protocol (torch_peers.py --serve).
# Structure and correctness only: no speed is asserted. About 20 s. Then the usage errors.
set -uo pipefail
coil=tools/coil/coil
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fails=0

out=$($coil bench cpu --peers --quick --threads 1 --models bert_base,gpt2_small --min-seconds 0 \
  --rounds 2 --json "$tmp/peers.json" 2>"$tmp/stderr"); status=$?
echo "$out"
if [ "$status" -ne 0 ]; then
  echo "FAIL peers: exit status $status"; tail -40 "$tmp/stderr"; fails=$((fails + 1))
fi
for pattern in '^coil bench cpu --peers: 1 thread on ' '^bert_base +1 ' '^bert_base +8 ' \
    '^gpt2_small +1 ' '^gpt2_small +4 ' '^geomean vs torch eager: [0-9]+\.[0-9]{2}x$' \
    '^geomean vs torch\.compile: (absent \(.+\)|[0-9]+\.[0-9]{2}x)$' \
    '^geomean vs onnxruntime: (absent \(.+\)|[0-9]+\.[0-9]{2}x)$' '^cold compile \(coil' \
    '^targets \(the peers issue' '^rounds: 2 \(per row' \
    '^spread +batch +eager +compile +ORT +coil$' \
    '^bert_base +1 +[0-9]+\.[0-9]{2}x +- +- +[0-9]+\.[0-9]{2}x$' \
    '^gpt2_small +4 +[0-9]+\.[0-9]{2}x +- +- +[0-9]+\.[0-9]{2}x$'; do
  grep -qE -- "$pattern" <<<"$out" && echo "ok   text $pattern" ||
    { echo "FAIL text: no line matching $pattern"; fails=$((fails + 1)); }
done
if grep -qE '^(ERROR|PEER) ' <<<"$out"; then echo "FAIL text: ERROR/PEER lines"; fails=$((fails + 1)); fi

# The JSON: every row matched torch eager; a peer is either absent everywhere (no time, no
# ratio, no geomean) or present with a time, an error within the tolerance and a ratio.
/usr/bin/python3 - "$tmp/peers.json" "$out" <<'PY' || fails=$((fails + 1))
import json, sys
r = json.load(open(sys.argv[1]))
problems = []
rows = {(m["model"], m["batch"]): m for m in r["models"]}
if sorted(rows) != [("bert_base", 1), ("bert_base", 8), ("gpt2_small", 1), ("gpt2_small", 4)]:
    problems.append("rows %s" % sorted(rows))
for m in rows.values():
    if not (m["matches"] and m["max_relative_error"] <= 1e-4 and m["coil_ms"] > 0 and
            m["torch_ms"] > 0 and m["coil_compile_ms"] > 0 and m["speedup"] > 0):
        problems.append("row %s" % m)
for peer, ratio, geomean in (("compiled", "vs_compiled", "geomean_vs_compiled"),
                             ("onnxruntime", "vs_onnxruntime", "geomean_vs_onnxruntime")):
    absent = r[peer + "_absent"]
    for m in rows.values():
        t = m.get(peer)
        if absent and (t or m[ratio] != 0):
            problems.append("%s absent (%s) but row has %s / %s" % (peer, absent, t, m[ratio]))
        if not absent and not (t and t["median_ms"] > 0 and t["max_relative_error"] <= 1e-4
                               and m[ratio] > 0):
            problems.append("%s present but row has %s / %s" % (peer, t, m[ratio]))
    if absent and r[geomean] != 0:
        problems.append("%s absent but %s = %s" % (peer, geomean, r[geomean]))
def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
for m in rows.values():
    t, c = m.get("torch_round_ms", []), m.get("coil_round_ms", [])
    if len(t) != 2 or len(c) != 2 or min(t + c) <= 0:
        problems.append("round lists %s %s" % (t, c))
        continue
    # Medians of the rounds' medians (of 2: their mean); at least 3 timed calls a round.
    if not (abs(m["torch_ms"] - median(t)) < 1e-9 and abs(m["coil_ms"] - median(c)) < 1e-9 and
            abs(m["speedup"] - median(t) / median(c)) < 1e-9 and m["reps"] >= 6 and
            0 < m["coil_min_ms"] <= min(c) and 0 < m["torch_min_ms"] <= min(t)):
        problems.append("rounds summary %s" % m)
    # The spread printed in the text is max / min of the same lists.
    want = "%-19s %5d %12s %12s %12s %12s" % (m["model"], m["batch"], "%.2fx" % (max(t) / min(t)),
                                              "-", "-", "%.2fx" % (max(c) / min(c)))
    if want not in sys.argv[2].splitlines():
        problems.append("no spread line %r" % want)
if r.get("rounds") != 2:
    problems.append("rounds %s" % r.get("rounds"))
if not (r["peers"] and r["quick"] and r["threads"] == 1 and r["failed_rows"] == 0 and
        not r["bandwidth"] and "compile" not in r):
    problems.append("summary %s" % {k: r.get(k) for k in ("peers", "quick", "threads",
                                                           "failed_rows", "compile")})
for p in problems:
    print("FAIL json: " + p)
print("ok   json" if not problems else "")
sys.exit(1 if problems else 0)
PY

# Turns, from the stderr log: the peer script's round line for a row, then coil's for the same
# row, row by row; round 1 in the peer script's row order, round 2 reversed.
/usr/bin/python3 - "$tmp/stderr" <<'PY' || fails=$((fails + 1))
import re, sys
events = []
for line in open(sys.argv[1]):
    p = re.match(r"torch_eager: round (\S+) batch (\d+): eager [0-9.]+ ms$", line)
    c = re.match(r"coil bench: round (\d)/2 (\S+) batch (\d+) \((peers|coil) first\): eager "
                 r"[0-9.]+, compile -, ORT -, coil [0-9.]+ ms$", line)
    if p:
        events.append(("peers", p.group(1), int(p.group(2))))
    elif c:
        events.append(("coil", c.group(2), int(c.group(3)), int(c.group(1)), c.group(4)))
order = [("bert_base", 1), ("bert_base", 8), ("gpt2_small", 1), ("gpt2_small", 4)]
want = []
for r, rows in ((1, order), (2, order[::-1])):
    for m, b in rows:
        want += [("peers", m, b), ("coil", m, b, r, "peers" if r == 1 else "coil")]
if events != want:
    print("FAIL turns: %s" % events)
    sys.exit(1)
print("ok   turns")
PY

# --rounds 0: one pass per system, the peer script's rows before coil's (no round lists).
out0=$($coil bench cpu --peers --quick --threads 1 --models bert_base --min-seconds 0 \
  --rounds 0 --json "$tmp/peers0.json" 2>"$tmp/stderr0"); status=$?
if [ "$status" -ne 0 ] || grep -qE '^(rounds:|spread )' <<<"$out0" ||
    ! grep -qE '^bert_base +8 ' <<<"$out0" ||
    ! /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r.get("rounds", 0) == 0 and all(m["matches"] and not m.get("coil_round_ms")
                                              for m in r["models"]) else 1)' "$tmp/peers0.json"
then
  echo "FAIL rounds_0: status $status"; echo "$out0"; tail -5 "$tmp/stderr0"; fails=$((fails + 1))
else
  echo "ok   rounds_0"
fi

# The peer server's protocol: the first pass as one JSON line, one PeerRound line per request
# (torch eager timed; the absent peers left out), and a bad request ends it with its message.
printf 'time bert_base 1\nhello\n' | /usr/bin/python3 tools/bench/torch_peers.py --out \
  "$tmp/serve" --size quick --models bert_base --batches 1 --min-seconds 0 --serve \
  >"$tmp/serve.out" 2>"$tmp/serve.err"; status=$?
if [ "$status" -ne 1 ] || ! grep -q "bad request 'hello' (want 'time MODEL BATCH')" \
    "$tmp/serve.err" || ! /usr/bin/python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
first, answer = json.loads(lines[0]), json.loads(lines[1])
ok = (len(lines) == 2 and first["models"][0]["runs"][0]["batch"] == 1 and
      first["models"][0]["runs"][0]["reps"] == 1 and set(answer) == {"eager"} and
      answer["eager"]["median_ms"] > 0 and answer["eager"]["reps"] >= 5)
sys.exit(0 if ok else 1)' "$tmp/serve.out"; then
  echo "FAIL serve: status $status"; cat "$tmp/serve.out"; tail -3 "$tmp/serve.err"
  fails=$((fails + 1))
else
  echo "ok   serve"
fi

check() {  # check NAME EXPECTED_STATUS PATTERN -- command...
  local name=$1 want=$2 pattern=$3; shift 4
  local out status
  out=$("$@" 2>&1); status=$?
  if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: status $status (want $want), output:"; echo "$out" | tail -20
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}
check peers_unknown_model 1 "unknown model 'resnet18' \(known with --peers: resnet50, " -- \
  $coil bench cpu --peers --models resnet18
check bad_min_seconds 2 '--min-seconds takes seconds from 0 to 3600' -- \
  $coil bench cpu --peers --min-seconds x
check bad_rounds 2 "--rounds takes an integer from 0 to 100, got 'x'" -- $coil bench cpu --peers --rounds x
check rounds_needs_peers 2 '--rounds needs --peers' -- $coil bench cpu --rounds 2
check bad_copies 2 "--coil-copies takes an integer from 1 to 100, got '0'" -- \
  $coil bench cpu --peers --coil-copies 0
check copies_need_rounds 1 'coil copies 2 at least 1 \(more than 1 only in rounds\)' -- \
  $coil bench cpu --peers --rounds 0 --coil-copies 2
check cuda_no_rounds 2 '--rounds is for coil bench cpu, not cuda' -- $coil bench cuda --rounds 2
check help 0 'torch.compile \(default mode\) and ONNX Runtime' -- $coil bench --help

# `coil bench cuda` without a GPU: its usage errors, and "no CUDA driver" before any peer runs
# (this machine has no libcuda.so.1; where one exists the check says so instead of passing).
check cuda_cpu_only_flag 2 '--threads is for coil bench cpu, not cuda' -- \
  $coil bench cuda --threads 2
check cuda_help 0 'coil bench cuda \[--quick\]' -- $coil bench --help
if /sbin/ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  echo "FAIL cuda_no_driver: this machine has libcuda.so.1; run the GPU job instead"
  fails=$((fails + 1))
else
  check cuda_no_driver 1 '^coil bench: no CUDA driver .*coil bench cuda needs an NVIDIA GPU' -- \
    $coil bench cuda --python /nonexistent/python3
fi
# The peer script's side: --device cuda on a torch without CUDA says so (no fake GPU times),
# and the TensorProto it writes without the onnx package is onnx's byte for byte.
check peers_no_cuda_device 1 'torch_peers.py: --device cuda, but torch .* sees no CUDA device' -- \
  /usr/bin/python3 tools/bench/torch_peers.py --out "$tmp/nocuda" --models bert_base --device cuda \
  --sample-ms 5 --max-passes 64
# --device cuda times by coil's sample rule, which `coil bench cuda` passes: without it, an error.
check peers_cuda_needs_the_sample_rule 2 'torch_peers.py: error: --device cuda needs --sample-ms > 0 and --max-passes >= 1' -- \
  /usr/bin/python3 tools/bench/torch_peers.py --out "$tmp/nocuda" --models bert_base --device cuda
# MODEL_bf16 rows (torch.autocast bf16) are GPU rows; on the CPU the script refuses them.
check peers_bf16_is_cuda_only 1 'torch_peers.py: resnet50_bf16 is a --device cuda row' -- \
  /usr/bin/python3 tools/bench/torch_peers.py --out "$tmp/bf16" --models resnet50_bf16 --size quick
check peers_mlp_bf16_is_a_micro_row 1 'torch_peers.py: mlp_bf16 is a --device cuda row' -- \
  /usr/bin/python3 tools/bench/torch_peers.py --out "$tmp/mlp" --models mlp_bf16 --size quick
check tensor_proto_bytes 0 '^same 4$' -- /usr/bin/python3 -c '
import sys; sys.dont_write_bytecode = True; sys.path.insert(0, "tools/bench")
import torch, torch_eager
from onnx import numpy_helper
ts = [torch.randn(3, 4), torch.randint(0, 50000, (2, 5)), torch.randn(7).double(), torch.zeros(0, 3)]
print("same", sum(torch_eager.tensor_proto_bytes(t) == numpy_helper.from_array(t.numpy()).SerializeToString() for t in ts))'

echo "$fails failed"
[ "$fails" -eq 0 ]
