#!/usr/bin/env bash
# Builds the ONNX importer's libFuzzer target with clang-14 (ASan + UBSan + coverage on the
# importer's sources; the core library comes from build/, built by scripts/build.sh) and runs it
# for SECONDS (default 60) from the committed seed corpus fuzz/corpus/onnx (copied, so runs do
# not grow the committed one). Further arguments go to libFuzzer (CI passes a fixed -seed and
# -runs so that its run is repeatable). Exit status is the fuzzer's: non-zero on any crash.
#   scripts/fuzz.sh [SECONDS [LIBFUZZER-FLAGS...]]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
out=build/fuzz
mkdir -p "$out"
[ -f build/libtessel.a ] || { echo "fuzz.sh: build/libtessel.a is missing (run scripts/build.sh)"; exit 2; }
CXX=${FUZZ_CXX:-clang++-14}
# -fno-sanitize=vptr: the core library is built without RTTI checks' runtime support.
flags=(-std=c++20 -O1 -g1 -fsanitize=fuzzer,address,undefined -fno-sanitize=vptr
  -fno-sanitize-recover=undefined -DONNX_NAMESPACE=onnx -DONNX_ML=1 -Iinclude -Isrc)
objs=()
for src in src/frontends/onnx/*.cpp fuzz/onnx_model_fuzzer.cpp; do
  obj="$out/$(basename "$src" .cpp).o"
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ src/frontends/onnx/converter.h -nt "$obj" ]; then
    $CXX "${flags[@]}" -c "$src" -o "$obj" &
  fi
  objs+=("$obj")
  while [ "$(jobs -r | wc -l)" -ge "$(nproc)" ]; do wait -n; done
done
wait
$CXX "${flags[@]}" "${objs[@]}" build/libtessel.a -lonnx -lonnx_proto -lprotobuf -lz -lpthread \
  -o "$out/onnx_model_fuzzer"
rm -rf "$out/corpus"
cp -r fuzz/corpus/onnx "$out/corpus"
# -rss_limit_mb / -malloc_limit_mb: an input must not make the importer allocate gigabytes.
"$out/onnx_model_fuzzer" "$out/corpus" -max_total_time="$seconds" -timeout=20 \
  -rss_limit_mb=4096 -malloc_limit_mb=2048 -print_final_stats=1 "$@" 2>&1 | tail -n 25
exit "${PIPESTATUS[0]}"
