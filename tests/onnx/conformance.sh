#!/usr/bin/env bash
# The ONNX backend tests Debian ships (libonnx-testdata) and Tessel's own extra cases
# (tests/onnx/extra, made by tests/onnx/generate_cases.py), on cpu and reference, against the
# committed docs/onnx-conformance.md: fails when a suite passes fewer cases than committed.
# With --update, rewrites docs/onnx-conformance.md instead.
#   tests/onnx/conformance.sh TESSEL_BINARY [--update]
set -euo pipefail
tessel=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"  # the extra suite is named relative to the repository, so the report names no checkout
data=/usr/share/libonnx-testdata/data
if [ ! -d "$data/node" ]; then
  echo "skipped: $data is missing (apt-get install libonnx-testdata; scripts/setup.sh does)"
  exit 77
fi
suites=("$data/node" "$data/simple" "$data/pytorch-converted" "$data/pytorch-operator"
  tests/onnx/extra)
if [ "${2:-}" = "--update" ]; then
  exec "$tessel" onnx-test --device cpu,reference --markdown "$root/docs/onnx-conformance.md" "${suites[@]}"
fi
exec "$tessel" onnx-test --device cpu,reference --baseline "$root/docs/onnx-conformance.md" \
  --markdown "$(dirname "$tessel")/onnx-conformance.md" "${suites[@]}"
