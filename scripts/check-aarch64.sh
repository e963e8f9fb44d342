#!/usr/bin/env bash
# Compiles (syntax and templates, no code generation) the cpu backend for aarch64, where its
# portable kernels become NEON, with Debian's cross compiler. Exits 77 (skipped) without one.
set -euo pipefail
cd "$(dirname "$0")/.."
cxx=aarch64-linux-gnu-g++
if ! command -v "$cxx" >/dev/null; then
  echo "skipped: $cxx not installed (apt package g++-aarch64-linux-gnu)"
  exit 77
fi
failed=0
for f in src/backends/cpu/*.cpp src/backends/cpu/kernels/*.cpp; do
  "$cxx" -std=c++20 -Iinclude -Isrc -Wall -Wextra -Werror=switch -Wno-unused-parameter \
    -Wno-psabi -fsyntax-only "$f" || { echo "aarch64: $f does not compile"; failed=1; }
done
[ "$failed" = 0 ] && echo "aarch64: every cpu backend file compiles"
exit "$failed"
