#!/usr/bin/env bash
# The cpu benchmark suite (issue 7): Tessel's cpu backend against OpenBLAS, numpy, PyTorch and
# ONNX Runtime on this machine, same workloads, same thread count, and the machine's measured
# FMA peak and copy bandwidth. Writes bench/results/cpu.md (or OUT) via bench/cpu/report.py.
#   bench/cpu/run.sh [--threads N] [--reps R] [--rounds K] [--out FILE]
# Installs what it needs that the build does not: libopenblas0-pthread (apt), onnxruntime-node
# (npm, into a temp dir), the PaddleOCR models (scripts/fetch-models.sh). Takes about 8 minutes
# (each round of Tessel against OpenBLAS and the yardsticks about 1.6).
set -euo pipefail
cd "$(dirname "$0")/../.."
threads=$(nproc)
reps=7
rounds=3
out=bench/results/cpu.md
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: bench/cpu/run.sh [--threads N] [--reps R] [--rounds K] [--out FILE]" >&2; exit 2 ;;
  esac
done
command="bench/cpu/run.sh --threads $threads --reps $reps --rounds $rounds"
[ -e /usr/lib/x86_64-linux-gnu/libopenblas.so.0 ] ||
  apt-get install -y --no-install-recommends libopenblas0-pthread >/dev/null
./scripts/build.sh >/dev/null
./scripts/fetch-models.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm init -y >/dev/null &&
  ONNXRUNTIME_NODE_INSTALL=skip npm install --silent onnxruntime-node@1.30.0 >/dev/null)
rec=$tmp/records.jsonl
wl=bench/cpu/workloads.txt
env_core=${OPENBLAS_CORETYPE:-}
env_l2=${OPENBLAS_L2_SIZE:-}
# OpenBLAS 0.3.21 does not recognise the AVX-512 host's CPU model (Zen 5) and falls back to its
# Prescott (SSE3) kernels when OPENBLAS_CORETYPE is unset; SkylakeX (AVX-512) is its fastest
# setting there (measured against Haswell, Zen, Cooperlake, SapphireRapids). On a CPU without
# AVX-512 (SkylakeX would stop on an illegal instruction) Haswell's kernels, which its Zen setting
# also runs. Tessel alternates with that one; the unset and the environment's own settings are
# measured after, on OpenBLAS alone.
tuned=Haswell
grep -qw avx512f /proc/cpuinfo && tuned=SkylakeX
tuned_lc=$(echo "$tuned" | tr '[:upper:]' '[:lower:]')
echo "cpu.sh: Tessel + OpenBLAS ($tuned)" >&2
# The convolutions' weights are graph constants, as in a model Tessel imports (--constant-weights).
env -u OPENBLAS_L2_SIZE OPENBLAS_CORETYPE=$tuned build/bench/cpu_bench --threads "$threads" \
  --reps "$reps" --rounds "$rounds" --openblas-impl "openblas-$tuned_lc" --constant-weights \
  "$wl" >>"$rec"
echo "cpu.sh: OpenBLAS with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset" >&2
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE build/bench/cpu_bench --threads "$threads" \
  --reps 3 --impl openblas --openblas-impl openblas-unset "$wl" >>"$rec"
if [ -n "$env_core$env_l2" ]; then
  echo "cpu.sh: OpenBLAS with the environment's settings" >&2
  build/bench/cpu_bench --threads "$threads" --reps 3 --impl openblas --openblas-impl openblas-env \
    "$wl" >>"$rec"
fi
echo "cpu.sh: numpy and PyTorch" >&2
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS="$threads" \
  OMP_NUM_THREADS="$threads" /usr/bin/python3 bench/cpu/peers.py --threads "$threads" \
  --runs "$reps" "$wl" >>"$rec"
# numpy and torch's BLAS calls go through the same OpenBLAS: once more with $tuned for GEMM.
env -u OPENBLAS_L2_SIZE OPENBLAS_CORETYPE=$tuned OPENBLAS_NUM_THREADS="$threads" \
  OMP_NUM_THREADS="$threads" /usr/bin/python3 bench/cpu/peers.py --threads "$threads" \
  --runs "$reps" --filter gemm_f32 "$wl" | sed "s/\"impl\": \"\([a-z]*\)\"/\"impl\": \"\1-$tuned_lc\"/" >>"$rec"

# ONNX models: Tessel (`tessel run`, median after a warm-up) and ONNX Runtime's cpu provider,
# alternating in 5 rounds of 8 runs (each round a fresh process), so that a slow spell of the
# shared machine falls on both; each records the median of its rounds' medians.
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
onnx_pair() {  # ID MODEL DIMS [tessel run flags...]
  local id=$1 model=$2 dims=$3
  shift 3
  local ts=() os=() round
  for round in 1 2 3 4 5; do
    ts+=("$(build/tessel run "$model" --threads "$threads" --repeat 8 "$@" |
      sed -n 's/.*median latency \([0-9.]*\) ms.*/\1/p')")
    os+=("$(NODE_PATH="$tmp/node_modules" node bench/onnx/ort_latency.js "$model" "$dims" \
      "$threads" 8 | sed -n 's/median_ms //p')")
  done
  echo "{\"workload\": \"$id\", \"impl\": \"tessel\", \"ms\": $(median "${ts[@]}"), \"threads\": $threads, \"note\": \"rounds (ms) ${ts[*]}\"}" >>"$rec"
  echo "{\"workload\": \"$id\", \"impl\": \"onnxruntime\", \"ms\": $(median "${os[@]}"), \"threads\": $threads, \"note\": \"rounds (ms) ${os[*]}\"}" >>"$rec"
}
echo "cpu.sh: encoder layer and PaddleOCR (tessel run, ONNX Runtime)" >&2
/usr/bin/python3 bench/cpu/export_encoder.py "$tmp/encoder.onnx" --check build/tessel >&2
onnx_pair encoder_layer "$tmp/encoder.onnx" 8,128,512
m=models/ocr-models-1.4.2
onnx_pair paddleocr_det "$m/ch_PP-OCRv4_det_infer.onnx" 1,3,640,640 \
  --dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=640 --dim p2o.DynamicDimension.2=640
onnx_pair paddleocr_rec "$m/ch_PP-OCRv4_rec_infer.onnx" 1,3,48,320 \
  --dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=320

# The records stay beside the report, for a later look or a regenerated report.
cp "$rec" "${out%.md}.jsonl"
/usr/bin/python3 bench/cpu/report.py --records "$rec" --workloads "$wl" --command "$command" \
  --openblas-env "OPENBLAS_CORETYPE=${env_core:-unset} OPENBLAS_L2_SIZE=${env_l2:-unset}" \
  --openblas-tuned "$tuned" \
  --analysis bench/cpu/analysis.md >"$out"
echo "cpu.sh: wrote $out" >&2
