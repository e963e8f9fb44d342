#!/usr/bin/env bash
# PaddleOCR v4 det / rec / cls latency: `tessel run` (cpu) against ONNX Runtime 1.30 (npm
# onnxruntime-node) on the same machine, same thread count, same input sizes; median of RUNS
# runs after a warm-up. Prints a markdown table (ratio > 1: Tessel is faster).
#   bench/onnx_vs_ort.sh [THREADS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-$(nproc)}
runs=${2:-10}
./scripts/fetch-models.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm init -y >/dev/null &&
  ONNXRUNTIME_NODE_INSTALL=skip npm install --silent onnxruntime-node@1.30.0 >/dev/null)
m=models/ocr-models-1.4.2
echo "| model | input | tessel cpu (ms) | onnxruntime (ms) | ort / tessel |"
echo "|---|---|---|---|---|"
for spec in "det ch_PP-OCRv4_det_infer.onnx 1,3,640,640" "rec ch_PP-OCRv4_rec_infer.onnx 1,3,48,320" \
            "cls ch_ppocr_mobile_v2.0_cls_infer.onnx 1,3,48,192"; do
  read -r name file dims <<<"$spec"
  IFS=, read -r n c h w <<<"$dims"
  # The models name their dynamic dims p2o.DynamicDimension.<k>; bind all three to the sizes.
  t=$(build/tessel run "$m/$file" --threads "$threads" --repeat "$runs" \
        --dim p2o.DynamicDimension.0="$n" --dim p2o.DynamicDimension.1="$h" \
        --dim p2o.DynamicDimension.2="$w" | sed -n 's/.*median latency \([0-9.]*\) ms.*/\1/p')
  if [ "$name" = rec ]; then
    t=$(build/tessel run "$m/$file" --threads "$threads" --repeat "$runs" \
          --dim p2o.DynamicDimension.0="$n" --dim p2o.DynamicDimension.1="$w" |
        sed -n 's/.*median latency \([0-9.]*\) ms.*/\1/p')
  fi
  o=$(NODE_PATH="$tmp/node_modules" node bench/onnx/ort_latency.js "$m/$file" "$dims" "$threads" "$runs" |
      sed -n 's/median_ms //p')
  ratio=$(awk -v a="$o" -v b="$t" 'BEGIN { printf "%.2f", a / b }')
  echo "| $name | $dims | $t | $o | $ratio |"
done
