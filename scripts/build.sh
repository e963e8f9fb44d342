#!/usr/bin/env bash
# Configures and builds Tessel into build/ (ccache-accelerated). Extra args go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# Let ccache hit across checkouts in different folders (CI builds a fresh clone elsewhere).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
# RelWithDebInfo with line tables only (-g1): backtraces keep file:line, and the heavily
# templated kernels compile ~25% faster than with full debug info (measured: 12.9 s -> 9.6 s for
# one cpu kernel file).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${TESSEL_BUILD_TYPE:-RelWithDebInfo}" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "$@" >/dev/null
ninja -C build -j"$(nproc)"
