#!/usr/bin/env bash
# Sets up, builds, and runs the main job: `tessel train digits` (an MLP on the handwritten digits
# Debian's python3-sklearn ships, on the cpu backend) on its built-in defaults. Arguments replace
# the default command, e.g. `./scripts/run.sh train digits --model cnn` or `./scripts/run.sh demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
if [ $# -eq 0 ]; then set -- train digits; fi
exec ./build/tessel "$@"
