#!/bin/bash
# coil's `--precision bf16` on the GPU machine's CPU against torch.autocast("cpu", bf16) eager
# (tools/bench/cpu_bf16_peers.py) with the carried portable coil (tools/cpu_peers_pack.sh), then
# which oneDNN kernels coil's bf16 products and convolutions ran (DNNL_VERBOSE, one run each).
# Results go to $OUT (or /tmp/cpu_bf16_job): machine.txt, bf16_T.txt / .json / .log,
# dnnl_impls.txt.
#
#   tools/cpu_bf16_job.sh CARRY_DIR TOTAL_SECONDS [THREADS]     (e.g. .gpu/h48 150 16)
# PROFILE="MODEL:BATCH ..." instead: `coil run --profile` of each in bf16 and f32 (profiles.txt,
# with the time per kernel kind summed), no peers.
# MODELS (default "resnet50:1,16 bert_base:1,8"), MIN_SECONDS (default 0.3) and COMPILE=1 (adds
# torch.compile under autocast: Inductor's cold compiles take 10-70 s per row) and SIZE=quick (a
# smoke test) pass through.
set -u
G=$(cd "$1" && pwd)
END=$((SECONDS + $2))
T=${3:-16}
SRC=$(cd "$(dirname "$0")/.." && pwd)
R=${OUT:-/tmp/cpu_bf16_job}
mkdir -p "$R"
W=/tmp/coil_cpu_bf16 && rm -rf $W && mkdir -p $W && cd $W
chmod +x "$G/zstd"
"$G/zstd" -dc "$G/bin.tar.zst" | tar x
export LD_LIBRARY_PATH=$W/lib:${LD_LIBRARY_PATH:-}
{
  grep -m1 "model name" /proc/cpuinfo; nproc
  grep -o -w "amx_bf16\|amx_tile\|avx512_bf16" /proc/cpuinfo | sort -u | tr '\n' ' '; echo
  python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'
} > "$R/machine.txt" 2>&1
cat "$R/machine.txt"
cd "$SRC"
if [ -n "${PROFILE:-}" ]; then
  python3 tools/bench/cpu_bf16_peers.py --coil $W/coil --out /tmp/bf16_work --export-only ${SIZE:+--size $SIZE} \
    --models $(echo $PROFILE | tr ' ' '\n' | sort -u | tr '\n' ' ') 2>/dev/null
  for m in $PROFILE; do
    d=/tmp/bf16_work/${m%%:*}
    for p in bf16 f32; do
      echo "== coil run --profile ${m%%:*} batch ${m##*:} --precision $p --threads $T"
      timeout $((END - SECONDS > 2 ? END - SECONDS : 1)) $W/coil run "$d/model.onnx" \
        --backend cpu --precision $p --inputs "$d/x_${m##*:}.pb" --repeat 20 --profile \
        --threads "$T" > /tmp/prof.txt 2>&1
      grep "run x" /tmp/prof.txt
      awk '{k="outside"} / extern /{k=$3} / pointwise /{k="pointwise"} / reduction /{k="reduction"}
           /ms per run/{on=1; next} on && /^  (k[0-9]|outside)/ {t[k]+=$(NF-1); n[k]++}
           END{for (k in t) printf "  %-28s %3d kernels %9.3f ms\n", k, n[k], t[k]}' /tmp/prof.txt
      grep -A12 "ms per run" /tmp/prof.txt
    done
  done > "$R/profiles.txt"
  cat "$R/profiles.txt"
  exit 0
fi
echo "== cpu_bf16_peers.py --threads $T"
PYTHONUNBUFFERED=1 timeout $((END - SECONDS - 15)) python3 tools/bench/cpu_bf16_peers.py \
  --coil $W/coil --out /tmp/bf16_work --threads "$T" --min-seconds "${MIN_SECONDS:-0.3}" \
  --models ${MODELS:-resnet50:1,16 bert_base:1,8} ${COMPILE:+--compile} ${SIZE:+--size $SIZE} \
  --json "$R/bf16_$T.json" >"$R/bf16_$T.txt" 2>"$R/bf16_$T.log"
echo "exit status $? after $SECONDS s"
cat "$R/bf16_$T.txt"
grep -v "Warning\|warn(" "$R/bf16_$T.log" | tail -4
# The oneDNN implementations coil's bf16 calls ran (one run after the first per model).
for m in resnet50:1 bert_base:1; do
  d=/tmp/bf16_work/${m%%:*}
  [ -f "$d/model.onnx" ] && [ $((END - SECONDS)) -gt 4 ] || continue
  echo "== ${m%%:*} batch ${m##*:}"
  DNNL_VERBOSE=1 timeout $((END - SECONDS - 2)) $W/coil run "$d/model.onnx" --backend cpu \
    --precision bf16 --inputs "$d/x_${m##*:}.pb" --repeat 1 --threads "$T" 2>&1 |
    grep "^onednn_verbose,exec" | awk -F, '{print $4, $5}' | sort | uniq -c | sort -rn
done > "$R/dnnl_impls.txt"
cat "$R/dnnl_impls.txt"
