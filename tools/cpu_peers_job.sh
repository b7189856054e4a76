#!/bin/bash
# `coil bench cpu --peers` on a machine that has only the carried files and a Python with torch
# (the GPU machine's Xeon: torch 2.11, torchvision, onnxruntime; no Bazel, no Debian packages):
# a peers run at the first thread count, `coil run --profile` of each exported model at it (where
# the time goes inside coil), then a peers run at each further thread count with the time left
# of TOTAL_SECONDS. Results go to $OUT (or /tmp/cpu_peers_job): machine.txt, peers_T.txt /
# peers_T.json / peers_T.log per thread count, profiles.txt.
#
#   tools/cpu_peers_job.sh CARRY_DIR TOTAL_SECONDS THREADS...   (e.g. .cpu_peers 540 16 4)
# CARRY_DIR holds zstd and bin.tar.zst (tools/cpu_peers_pack.sh makes it). PROFILE=0 skips the
# profiles, PROFILE_MODELS (default all five, "model:batch ...") picks them; MIN_SECONDS
# (default 0.5) is each side's timing floor per row; PEERS_ARGS is added to each `coil bench
# cpu --peers` (e.g. "--models resnet50,mobilenet_v3_large --batches 1"); COIL_PEERS_SKIP=compiled
# leaves torch.compile out. SWEEP=1 ends with sweep.txt: coil alone on the exported models
# (SWEEP_MODELS, default mobilenet_v3_large resnet50 bert_base) at batch 1 under each of
# SWEEP_VARIANTS (twice, in order then reversed; a variant is VAR=VALUE[,VAR=VALUE...];
# default: libgomp wait settings; runtime/cpu/dnnl_api.cc sets OMP_WAIT_POLICY=passive unless
# the environment sets one, GOMP_SPINCOUNT overrides the policy's spin count; or e.g.
# COIL_GEMV=0,COIL_DNNL_BYTES_PER_THREAD=0: runtime/cpu/internal/gemv.h, dnnl_plans.h), at
# every thread count given (or SWEEP_THREADS), in the last SWEEP_SECONDS of the time. GEMM=1
# adds gemm.txt after the peers runs (which leave it GEMM_SECONDS): GEMM_SHAPES (default
# BERT-base's GEMM shapes and three classifier GEMVs at batch 1, MxKxN) through torch, ONNX
# Runtime and coil (tools/bench/gemm_peers.py) at every thread count given (or GEMM_THREADS).
# ROUNDS (default: the bench's, 3) is each peers run's --rounds. STANDALONE=1 adds
# standalone.txt after the first peers run (which leaves it STANDALONE_SECONDS, default 40):
# `coil run --repeat 20` alone, a fresh process each, of STANDALONE_ROWS (default resnet50:1
# bert_base:8 mobilenet_v3_large:16, "model:batch") of that run's exports at its thread count,
# twice each in alternation: the same program's time outside the bench, in the same call.
set -u
G=$(cd "$1" && pwd)
END=$((SECONDS + $2))
shift 2
SRC=$(cd "$(dirname "$0")/.." && pwd)
R=${OUT:-/tmp/cpu_peers_job}
mkdir -p "$R"
W=/tmp/coil_cpu_peers && rm -rf $W && mkdir -p $W && cd $W
chmod +x "$G/zstd"
"$G/zstd" -dc "$G/bin.tar.zst" | tar x
export LD_LIBRARY_PATH=$W/lib:${LD_LIBRARY_PATH:-}
{
  grep -m1 "model name" /proc/cpuinfo; nproc
  grep -o -m1 -w "amx_tile\|avx512_bf16" /proc/cpuinfo | sort -u
  python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'
  python3 -c 'import onnxruntime as o; print("onnxruntime", o.__version__)'
} > "$R/machine.txt" 2>&1
cat "$R/machine.txt"
cd "$SRC"
peers() {  # peers THREADS SECONDS (at least 1: `timeout 0` would never stop it)
  local limit=$(($2 > 0 ? $2 : 1))
  echo "== coil bench cpu --peers --threads $1 (at most $limit s)"
  PYTHONUNBUFFERED=1 timeout "$limit" $W/coil bench cpu --peers --threads "$1" --python python3 \
    --min-seconds "${MIN_SECONDS:-0.5}" --work-dir /tmp/peers_work_$1 --json "$R/peers_$1.json" \
    ${ROUNDS:+--rounds "$ROUNDS"} ${PEERS_ARGS:-} >"$R/peers_$1.txt" 2>"$R/peers_$1.log"
  echo "exit status $? after $SECONDS s"
  cat "$R/peers_$1.txt"
  grep -v "Warning\|warn(" "$R/peers_$1.log" | tail -4
}
FIRST=$1
shift
REST=("$@")
set -- "$FIRST" "${REST[@]}"
# Time kept back from the peers runs for the phases after them.
STANDALONE_KEEP=0
[ "${STANDALONE:-0}" = 1 ] && STANDALONE_KEEP=${STANDALONE_SECONDS:-40}
KEEP=$((${SWEEP_SECONDS:-0} + ${GEMM_SECONDS:-0} + STANDALONE_KEEP))
peers "$FIRST" $((END - SECONDS - KEEP))
KEEP=$((KEEP - STANDALONE_KEEP))
if [ "${STANDALONE:-0}" = 1 ]; then
  ROWS=(${STANDALONE_ROWS:-resnet50:1 bert_base:8 mobilenet_v3_large:16})
  for pass in 1 2; do
    for m in "${ROWS[@]}"; do
      f=/tmp/peers_work_$FIRST/${m%%:*}/model.onnx
      [ -f "$f" ] && [ $((END - SECONDS - KEEP)) -gt 5 ] || continue
      echo "${m%%:*} batch ${m##*:} threads $FIRST pass $pass: $(timeout $((END - SECONDS - KEEP)) \
        $W/coil run "$f" --backend cpu --repeat 20 --threads "$FIRST" --dim batch="${m##*:}" 2>&1 |
        grep 'run x')"
    done
  done > "$R/standalone.txt"
  cat "$R/standalone.txt"
  echo "standalone done after $SECONDS s"
fi
if [ "${PROFILE:-1}" = 1 ]; then
  for m in ${PROFILE_MODELS:-resnet50:1 mobilenet_v3_large:1 vit_b_16:1 bert_base:8 gpt2_small:1}; do
    f=/tmp/peers_work_$FIRST/${m%%:*}/model.onnx
    [ -f "$f" ] || continue
    echo "== coil run --profile ${m%%:*} batch ${m##*:} threads $FIRST"
    timeout 30 $W/coil run "$f" --backend cpu --repeat 20 --profile --threads "$FIRST" \
      --dim batch="${m##*:}" 2>&1 | head -45
  done > "$R/profiles.txt"
  echo "profiles done after $SECONDS s"
fi
for T in "${REST[@]}"; do
  [ $((END - SECONDS)) -gt 30 ] && peers "$T" $((END - SECONDS - KEEP))
done
if [ "${GEMM:-0}" = 1 ]; then
  SHAPES=${GEMM_SHAPES:-1024x768x3072 1024x3072x768 1024x768x768 128x768x3072 1x960x1280 \
1x1280x1000 1x2048x1000}
  for T in ${GEMM_THREADS:-$FIRST ${REST[@]}}; do
    [ $((END - SECONDS - ${SWEEP_SECONDS:-0})) -gt 10 ] || break
    timeout $((END - SECONDS - ${SWEEP_SECONDS:-0})) python3 tools/bench/gemm_peers.py \
      /tmp/gemm_peers "$T" $SHAPES 2>&1 | grep -v wrote
    for shape in $SHAPES; do
      [ $((END - SECONDS - ${SWEEP_SECONDS:-0})) -gt 3 ] || break 2
      echo "coil                       $shape threads $T: $($W/coil run \
        /tmp/gemm_peers/gemm_$shape.onnx --backend cpu --repeat 30 --threads "$T" 2>&1 |
        grep 'run x')"
    done
  done > "$R/gemm.txt"
  cat "$R/gemm.txt"
  echo "gemm done after $SECONDS s"
fi
if [ "${SWEEP:-0}" = 1 ]; then
  LAST=$FIRST; [ ${#REST[@]} -gt 0 ] && LAST=${REST[-1]}
  for m in ${SWEEP_MODELS:-mobilenet_v3_large resnet50 bert_base}; do
    f=/tmp/peers_work_$LAST/$m/model.onnx
    [ -f "$f" ] || continue
    for T in ${SWEEP_THREADS:-$FIRST ${REST[@]}}; do
      V=(${SWEEP_VARIANTS:-NONE=1 GOMP_SPINCOUNT=3000 GOMP_SPINCOUNT=30000 OMP_WAIT_POLICY=active})
      # Each variant twice, in order and then in reverse, so none always runs first.
      ORDER=("${V[@]}")
      for ((i = ${#V[@]} - 1; i >= 0; --i)); do ORDER+=("${V[i]}"); done
      for v in "${ORDER[@]}"; do
        [ $((END - SECONDS)) -gt 5 ] || break 3
        echo "$m batch 1 threads $T $v: $(env ${v//,/ } timeout 30 $W/coil run "$f" --backend cpu \
          --repeat 30 --threads "$T" --dim batch=1 2>&1 | grep 'run x')"
      done
    done
  done > "$R/sweep.txt"
  cat "$R/sweep.txt"
fi
