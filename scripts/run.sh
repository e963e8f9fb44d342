#!/usr/bin/env bash
# Sets up, builds, and runs the main job on its built-in default: `tessel` with no arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
exec ./build/tessel "$@"
