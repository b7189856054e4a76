#!/bin/bash
# The CUDA backend's checks on a GPU machine that has only the carried files (no Bazel, no Debian
# packages): the GPU test binaries (cuda_gpu_test; cuda_run_modes_gpu_test; cuda_division_gpu_test; cuda_attention_gpu_test: fused attention;
# training_cuda_test: compiled training steps against torch 1.13's numbers), the ONNX conformance suites through `coil conformance` with the
# cpu and cuda backends (every test that passes on cpu must pass on cuda), and compute-sanitizer
# memcheck over the GPU tests, and the GEMM-heavy models and resnets against torch
# (tools/cuda_gpu_bench.py; COIL_BENCH_ROWS="resnet18 resnet50" picks rows).
# Results go to $OUT (or /tmp/cuda_gpu_job).
#
#   tools/cuda_gpu_job.sh CARRY_DIR [PHASE...]   PHASE: tests bench benchcuda bf16 conformance
#                                                sanitizer profile realmodels gpt2ab
#                                                (default: tests conformance sanitizer)
# benchcuda: `coil bench cuda` (resnet50, bert_base, gpt2_small against torch eager and
# torch.compile of this machine's python3; report in $OUT/bench_cuda.txt, JSON bench_cuda.json).
# bf16: tools/cuda_bf16_bench.py, `coil run --precision bf16` on resnet50, BERT-base and GPT-2
# small against torch.autocast eager and torch.compile (COIL_BF16_MODELS picks models; needs only
# coil in bin.tar.zst; report in $OUT/bf16.txt; COIL_BF16_AB="VAR=VALUE" adds coil bf16 with that
# switch set, in the same run).
# realmodels: tools/cuda_real_models.py, the 13 models of tests/real_models exported by this
# machine's torch and run by `coil run --backend cuda` against torch eager's outputs (1e-4, as
# real_models_test on the CPU; COIL_REAL_MODELS picks models; report in $OUT/real_models.txt).
# profile: an nsys summary of the bench's MLP through coil (needs bench first, and nsys there;
# `coil run --backend cuda --repeat N --profile` gives per-kernel device times without it).
# COIL_BENCH_PROFILE="gpt mlp ...": the bench's rows whose per-kernel times go to profile.txt.
# gpt2ab: GPT-2 small bs8 at 512 tokens through `coil run --profile` (bf16 and f32) under each
# setting of COIL_GPT2_AB (default: "- COIL_CUDA_GEMM_TUNE=8 COIL_CUDA_GEMM_FORWARD=1"; "-" is the
# defaults): device medians and the top kernels, for A/B of the CUDA runtime's switches
# (COIL_GPT2_PRECISIONS="bf16" runs one precision).
# CARRY_DIR holds: zstd (Debian's), bin.tar.zst (coil, cuda_gpu_test and the shared libraries of
# lib/ the test binary needs) and onnxdata.tar.zst (Debian's /usr/share/libonnx-testdata/data).
# tools/cuda_gpu_pack.sh makes it.
set -u
G=$(cd "$1" && pwd)
shift
PHASES=" ${*:-tests conformance sanitizer} "
SRC=$(cd "$(dirname "$0")/.." && pwd)
R=${OUT:-/tmp/cuda_gpu_job}
mkdir -p "$R"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# cuDNN 9 (runtime/cuda/cudnn.h dlopens libcudnn.so.9): the system's, else the one pip installed
# for torch (nvidia-cudnn-*: site-packages/nvidia/cudnn/lib, whose sub-libraries it loads by name).
if ! ldconfig -p 2>/dev/null | grep -q libcudnn.so.9; then
  CUDNN_LIB=$(python3 -c "import os, nvidia.cudnn as m; print(os.path.join(list(m.__path__)[0], 'lib'))" 2>/dev/null)
  [ -n "$CUDNN_LIB" ] && [ -d "$CUDNN_LIB" ] && export LD_LIBRARY_PATH=$CUDNN_LIB:$LD_LIBRARY_PATH
fi
echo "cuDNN: $(ldconfig -p 2>/dev/null | grep -m1 -o '/.*libcudnn.so.9' || echo "${CUDNN_LIB:-not found}")"
W=/tmp/coil_gpu && rm -rf $W && mkdir -p $W/data && cd $W
chmod +x "$G/zstd"
"$G/zstd" -dc "$G/bin.tar.zst" | tar x
export LD_LIBRARY_PATH=$W/lib:$LD_LIBRARY_PATH
if [[ $PHASES == *" conformance "* ]]; then "$G/zstd" -dc "$G/onnxdata.tar.zst" | tar x -C data; fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$R/gpu.txt"

if [[ $PHASES == *" tests "* ]]; then
echo "== GPU tests"
# Every test process at once (the GPU work is small; the references run on the host's cores),
# cuda_gpu_test in shards (gtest's GTEST_TOTAL_SHARDS; COIL_GPU_TEST_SHARDS, default 4): the
# interpreter's references for its GEMM tests take minutes of one core in one process.
N=${COIL_GPU_TEST_SHARDS:-4}
for i in $(seq 0 $((N - 1))); do
  GTEST_TOTAL_SHARDS=$N GTEST_SHARD_INDEX=$i timeout 400 ./cuda_gpu_test > "$R/cuda_gpu_test.$i.log" 2>&1 &
done
timeout 400 ./cuda_attention_gpu_test > "$R/cuda_attention_gpu_test.log" 2>&1 &
timeout 150 ./cuda_run_modes_gpu_test > "$R/cuda_run_modes_gpu_test.log" 2>&1 &
timeout 150 ./cuda_division_gpu_test > "$R/cuda_division_gpu_test.log" 2>&1 &
timeout 400 ./training_cuda_test training_mlp.txt training_optim.txt training_cnn.txt > "$R/training_cuda_test.log" 2>&1 &
start=$SECONDS
wait
echo "(all test processes: $((SECONDS - start)) s wall)"
cat $(seq -f "$R/cuda_gpu_test.%g.log" 0 $((N - 1))) > "$R/cuda_gpu_test.log"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]|Failure|error" "$R/cuda_gpu_test.log" | head -40
echo "== run modes on the GPU (strided inputs, profile, pinned inputs, timed passes)"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]|Failure|error" "$R/cuda_run_modes_gpu_test.log" | head -40
echo "== f32 divisions on the GPU (by constants, by a row's sum) against the host's IEEE division"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]|Failure|error" "$R/cuda_division_gpu_test.log" | head -40
echo "== fused attention on the GPU (against the Schedule interpreter)"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]|Failure|error" "$R/cuda_attention_gpu_test.log" | head -40
echo "== training on the GPU (MLP, CNN, optimizers against torch 1.13's numbers)"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]|Failure|error" "$R/training_cuda_test.log" | head -40
fi

if [[ $PHASES == *" bench "* ]]; then
  echo "== GEMM-heavy models: coil vs torch eager / torch.compile"
  PYTHONUNBUFFERED=1 timeout 500 python3 "$SRC/tools/cuda_gpu_bench.py" "$W/coil" "$R" ${COIL_BENCH_ROWS:-} 2>&1 | tee "$R/bench.log" | grep -v Warning
fi

if [[ $PHASES == *" benchcuda "* ]]; then
  echo "== coil bench cuda"
  PYTHONUNBUFFERED=1 timeout 500 ./coil bench cuda --python python3 \
    --torch-script "$SRC/tools/bench/torch_peers.py" --work-dir /tmp/coil_bench_cuda \
    --json "$R/bench_cuda.json" ${COIL_BENCH_CUDA_ARGS:-} 2> "$R/bench_cuda.log" | tee "$R/bench_cuda.txt"
  echo "exit status ${PIPESTATUS[0]}; log: $(grep -cv Warning "$R/bench_cuda.log") lines"
  grep -E "coil bench:|Error|error" "$R/bench_cuda.log" | grep -v Warning | tail -15
fi

if [[ $PHASES == *" bf16 "* ]]; then
  echo "== --precision bf16: resnet50, bert_base, gpt2_small vs torch.autocast eager / torch.compile"
  PYTHONUNBUFFERED=1 timeout 500 python3 "$SRC/tools/cuda_bf16_bench.py" "$W/coil" "$R" ${COIL_BF16_MODELS:-} 2>&1 | tee "$R/bf16.log" | grep -v Warning
fi

if [[ $PHASES == *" realmodels "* ]]; then
  echo "== the 13 real models (tests/real_models) through cuda against torch eager's outputs"
  PYTHONUNBUFFERED=1 timeout 400 python3 "$SRC/tools/cuda_real_models.py" "$W/coil" "$R" ${COIL_REAL_MODELS:-} 2>&1 |
    tee "$R/real_models.log" | grep -E "^coil |batch [0-9]+:|FAILED|models match torch"
fi

if [[ $PHASES == *" profile "* ]]; then
  NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
  M=${COIL_BENCH_MODELS:-/tmp/coil_bench}
  if [ -n "$NSYS" ] && [ -f "$M/mlp.onnx" ]; then
    echo "== nsys: coil run mlp.onnx --backend cuda --dim batch=1024 --repeat 5"
    timeout 120 "$NSYS" profile -o "$W/mlp" --force-overwrite true ./coil run "$M/mlp.onnx" --backend cuda --dim batch=1024 --repeat 5 >/dev/null 2>&1
    timeout 60 "$NSYS" stats --report cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum "$W/mlp.nsys-rep" 2>&1 | cut -c1-220 | head -80 | tee "$R/profile.txt"
  else
    echo "profile: no nsys or no mlp.onnx"
  fi
fi

if [[ $PHASES == *" gpt2ab "* ]]; then
  # GPT-2 small bs8 at 512 tokens (the bench's export), `coil run --profile` in bf16 and f32 under
  # each setting of COIL_GPT2_AB (space-separated VAR=VALUE[,VAR=VALUE], "-" for the defaults): device
  # median, the LM head's GEMM and the kernels after it, per-kind sums; files in $R/gpt2ab_*.txt.
  echo "== GPT-2 small bs8 seq512: coil run --profile per setting"
  M=/tmp/coil_gpt2ab/gpt2_small/model.onnx
  [ -f $M ] || COIL_PEERS_SKIP=compiled timeout 200 python3 "$SRC/tools/bench/torch_peers.py" --out /tmp/coil_gpt2ab \
    --device cuda --models gpt2_small --batches 8 --max-reps 5 --sample-ms 1 --max-passes 1 \
    > /dev/null 2> "$R/gpt2ab_export.log"  # only the export counts here, not torch's times
  for setting in ${COIL_GPT2_AB:-- COIL_CUDA_GEMM_TUNE=8 COIL_CUDA_GEMM_FORWARD=1}; do
    for p in ${COIL_GPT2_PRECISIONS:-bf16 f32}; do
      f="$R/gpt2ab_${p}_$(echo "$setting" | tr -c 'A-Za-z0-9_\n' _).txt"
      env $([ "$setting" = - ] || echo "$setting" | tr , ' ') COIL_CACHE=off timeout 120 ./coil run $M --backend cuda --dim batch=8 \
        --repeat 20 --profile $([ $p = bf16 ] && echo --precision bf16) > "$f" 2>&1
      echo "$p $setting: $(grep -m1 'device x' "$f" | sed 's/  */ /g')"
      sed -n '/ms per run/,+3p' "$f" | tail -3
      awk '/ms per run/{t=1;next} t&&NF>=4{k=$2; if($0~/aten.mm/)k="mm"; else if($0~/scaled_dot/)k="attention"; s[k]+=$(NF-1)} END{for(k in s) printf "  %s %.3f;", k, s[k]; print ""}' "$f"
    done
  done
fi

if [[ $PHASES == *" conformance "* ]]; then
echo "== conformance (one process per test folder, 14 at a time)"
find data -mindepth 2 -maxdepth 2 -type d | sort > tests.txt
# CONFORMANCE_BACKENDS="cuda" skips the cpu run (then nothing is compared).
for b in ${CONFORMANCE_BACKENDS:-cpu cuda}; do
  mkdir -p res_$b
  start=$SECONDS
  xargs -P 14 -I{} sh -c './coil conformance --backend '$b' --dir {} --timeout 120 --json res_'$b'/$(echo {} | tr / _).json >/dev/null 2>&1' < tests.txt
  echo "$b: $((SECONDS - start)) s wall"
done
python3 - "$R" <<'PY'
import json, glob, sys, os
res = {}
for b in ("cpu", "cuda"):
    res[b] = {}
    for f in glob.glob(f"res_{b}/*.json"):
        for t in json.load(open(f))["tests"]:
            res[b][(t["suite"], t["name"])] = t
out = open(os.path.join(sys.argv[1], "conformance_summary.txt"), "w")
def p(*a):
    print(*a); print(*a, file=out)
for b in ("cpu", "cuda"):
    c = {}
    for t in res[b].values(): c[t["result"]] = c.get(t["result"], 0) + 1
    p(b, len(res[b]), "tests:", c)
if not res["cpu"]:
    p("cpu not run: no comparison")
regress = [k for k, t in res["cpu"].items() if t["result"] == "passed" and res["cuda"].get(k, {}).get("result") != "passed"]
p("passed on cpu, not on cuda:", len(regress))
for k in sorted(regress)[:60]:
    m = res["cuda"].get(k, {}).get("message", "(missing)").replace("\n", " ")[:300]
    p("  ", k[0], k[1], res["cuda"].get(k, {}).get("result"), m)
for k, t in sorted(res["cuda"].items()):
    if t["result"] == "failed":
        p("  cuda failed:", k[0], k[1], t.get("message", "").replace("\n", " ")[:300])
json.dump({b: {f"{k[0]}/{k[1]}": v["result"] for k, v in res[b].items()} for b in res}, open(os.path.join(sys.argv[1], "conformance.json"), "w"))
PY
fi

if [[ $PHASES == *" sanitizer "* ]]; then
echo "== compute-sanitizer memcheck of the GPU tests"
if command -v compute-sanitizer >/dev/null; then
  timeout 200 compute-sanitizer --tool memcheck --print-limit 20 ./cuda_gpu_test --gtest_filter="${SANITIZER_FILTER:-*}" 2>&1 | tee "$R/memcheck.log" | grep -E "ERROR SUMMARY|PASSED|FAILED" | head
  timeout 120 compute-sanitizer --tool racecheck --print-limit 20 ./cuda_gpu_test --gtest_filter='*TestGraphs*:*LongRows*' 2>&1 | tee "$R/racecheck.log" | grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" | head
else
  echo "compute-sanitizer not found"
fi
fi
