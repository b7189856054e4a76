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
# profiles; MIN_SECONDS (default 0.5) is each side's timing floor per row. SWEEP=1 ends with
# sweep.txt: coil alone on the exported models at batch 1 under each of SWEEP_VARIANTS (twice,
# in order then reversed; default: libgomp wait settings; runtime/cpu/dnnl_api.cc sets
# OMP_WAIT_POLICY=passive unless the environment sets one, GOMP_SPINCOUNT overrides the
# policy's spin count; or e.g.
# COIL_DNNL_MIN_PARALLEL_BYTES=N, runtime/cpu/internal/dnnl_plans.h), at every thread count
# given (or SWEEP_THREADS), in the last SWEEP_SECONDS of the time. GEMM=1 starts with
# gemm.txt: BERT-base's GEMM shapes through torch, ONNX Runtime and coil
# (tools/bench/gemm_peers.py) at every thread count given (or GEMM_THREADS).
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
    >"$R/peers_$1.txt" 2>"$R/peers_$1.log"
  echo "exit status $? after $SECONDS s"
  cat "$R/peers_$1.txt"
  grep -v "Warning\|warn(" "$R/peers_$1.log" | tail -4
}
FIRST=$1
shift
REST=("$@")
set -- "$FIRST" "${REST[@]}"
if [ "${GEMM:-0}" = 1 ]; then
  for T in ${GEMM_THREADS:-$@}; do
    for shape in "1024 768 3072" "1024 3072 768" "1024 768 768" "128 768 3072"; do
      set -- $shape
      python3 tools/bench/gemm_peers.py /tmp/gemm_peers "$1" "$2" "$3" "$T" 2>&1 | grep -v wrote
      echo "coil                       ${1}x${2}x${3} threads $T: $($W/coil run \
        /tmp/gemm_peers/gemm_${1}x${2}x${3}.onnx --backend cpu --repeat 30 --threads "$T" 2>&1 |
        grep 'run x')"
    done
  done > "$R/gemm.txt"
  cat "$R/gemm.txt"
  set -- "$FIRST" "${REST[@]}"
fi
peers "$FIRST" $((END - SECONDS - ${SWEEP_SECONDS:-0}))
if [ "${PROFILE:-1}" = 1 ]; then
  for m in resnet50:1 mobilenet_v3_large:1 vit_b_16:1 bert_base:8 gpt2_small:1; do
    f=/tmp/peers_work_$FIRST/${m%%:*}/model.onnx
    [ -f "$f" ] || continue
    echo "== coil run --profile ${m%%:*} batch ${m##*:} threads $FIRST"
    timeout 30 $W/coil run "$f" --backend cpu --repeat 20 --profile --threads "$FIRST" \
      --dim batch="${m##*:}" 2>&1 | head -45
  done > "$R/profiles.txt"
  echo "profiles done after $SECONDS s"
fi
for T in "${REST[@]}"; do
  [ $((END - SECONDS)) -gt 30 ] && peers "$T" $((END - SECONDS - ${SWEEP_SECONDS:-0}))
done
if [ "${SWEEP:-0}" = 1 ]; then
  LAST=$FIRST; [ ${#REST[@]} -gt 0 ] && LAST=${REST[-1]}
  for m in mobilenet_v3_large resnet50 bert_base; do
    f=/tmp/peers_work_$LAST/$m/model.onnx
    [ -f "$f" ] || continue
    for T in ${SWEEP_THREADS:-$FIRST ${REST[@]}}; do
      V=(${SWEEP_VARIANTS:-NONE=1 GOMP_SPINCOUNT=3000 GOMP_SPINCOUNT=30000 OMP_WAIT_POLICY=active})
      # Each variant twice, in order and then in reverse, so none always runs first.
      ORDER=("${V[@]}")
      for ((i = ${#V[@]} - 1; i >= 0; --i)); do ORDER+=("${V[i]}"); done
      for v in "${ORDER[@]}"; do
        [ $((END - SECONDS)) -gt 5 ] || break 3
        echo "$m batch 1 threads $T $v: $(env $v timeout 30 $W/coil run "$f" --backend cpu \
          --repeat 30 --threads "$T" --dim batch=1 2>&1 | grep 'run x')"
      done
    done
  done > "$R/sweep.txt"
  cat "$R/sweep.txt"
fi
