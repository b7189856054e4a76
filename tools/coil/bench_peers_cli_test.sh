#!/usr/bin/env bash
# `coil bench cpu --peers --quick` end to end on this machine's Python (Debian's torch 1.13: no
# torch.compile, no onnxruntime): the peer script exports tiny BERT and GPT-2 models, coil's
# outputs must match torch eager's, the absent peers must be reported absent with no time, no
# ratio and no geomean (never faked), and the cold compile lines must be there. Structure and
# correctness only: no speed is asserted. About 10 s. Then the peers' usage errors.
set -uo pipefail
coil=tools/coil/coil
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fails=0

out=$($coil bench cpu --peers --quick --threads 1 --models bert_base,gpt2_small --min-seconds 0 \
  --json "$tmp/peers.json" 2>"$tmp/stderr"); status=$?
echo "$out"
if [ "$status" -ne 0 ]; then
  echo "FAIL peers: exit status $status"; tail -40 "$tmp/stderr"; fails=$((fails + 1))
fi
for pattern in '^coil bench cpu --peers: 1 thread on ' '^bert_base +1 ' '^bert_base +8 ' \
    '^gpt2_small +1 ' '^gpt2_small +4 ' '^geomean vs torch eager: [0-9]+\.[0-9]{2}x$' \
    '^geomean vs torch\.compile: (absent \(.+\)|[0-9]+\.[0-9]{2}x)$' \
    '^geomean vs onnxruntime: (absent \(.+\)|[0-9]+\.[0-9]{2}x)$' '^cold compile \(coil' \
    '^targets \(the peers issue'; do
  grep -qE -- "$pattern" <<<"$out" && echo "ok   text $pattern" ||
    { echo "FAIL text: no line matching $pattern"; fails=$((fails + 1)); }
done
if grep -qE '^(ERROR|PEER) ' <<<"$out"; then echo "FAIL text: ERROR/PEER lines"; fails=$((fails + 1)); fi

# The JSON: every row matched torch eager; a peer is either absent everywhere (no time, no
# ratio, no geomean) or present with a time, an error within the tolerance and a ratio.
/usr/bin/python3 - "$tmp/peers.json" <<'PY' || fails=$((fails + 1))
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
if not (r["peers"] and r["quick"] and r["threads"] == 1 and r["failed_rows"] == 0 and
        not r["bandwidth"] and "compile" not in r):
    problems.append("summary %s" % {k: r.get(k) for k in ("peers", "quick", "threads",
                                                           "failed_rows", "compile")})
for p in problems:
    print("FAIL json: " + p)
print("ok   json" if not problems else "")
sys.exit(1 if problems else 0)
PY

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
