#!/usr/bin/env bash
# Sets up, builds, and runs every test (ctest). Skipped tests are reported as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
./scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
echo "test.sh: finished in $(( $(date +%s) - start )) s"
