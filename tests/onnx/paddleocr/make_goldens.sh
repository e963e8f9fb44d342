#!/usr/bin/env bash
# Regenerates tests/goldens/onnx/paddleocr_*.npy.gz with ONNX Runtime 1.30 (npm package
# onnxruntime-node, installed without its download step: it ships libonnxruntime.so).
#   tests/onnx/paddleocr/make_goldens.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
./scripts/fetch-models.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm init -y >/dev/null &&
  ONNXRUNTIME_NODE_INSTALL=skip npm install --silent onnxruntime-node@1.30.0 >/dev/null)
NODE_PATH="$tmp/node_modules" node tests/onnx/paddleocr/make_goldens.js models/ocr-models-1.4.2 "$tmp/out"
mkdir -p tests/goldens/onnx
for f in "$tmp"/out/*.npy; do gzip -9 -n -c "$f" > "tests/goldens/onnx/$(basename "$f").gz"; done
ls -l tests/goldens/onnx
