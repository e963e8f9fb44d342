#!/usr/bin/env bash
# Configures and builds Tessel into build/ (ccache-accelerated). Extra args go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# Let ccache hit across checkouts in different folders (CI builds a fresh clone elsewhere).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${TESSEL_BUILD_TYPE:-RelWithDebInfo}" "$@" >/dev/null
ninja -C build -j"$(nproc)"
