#!/usr/bin/env bash
# The main job end to end: `tessel train digits` (default options) must reach a held-out accuracy
# of at least 0.95 and end with the machine-readable line; a second run with the same seed must
# train bit-identical parameters; and training 2 epochs, then resuming from that checkpoint to 4,
# must end with the same parameters as 4 epochs straight (the same loss curve).
# usage: train_digits.sh TESSEL_BINARY WORK_DIR [extra train options...]
set -euo pipefail
tessel=$1 work=$2
shift 2
mkdir -p "$work"
run() { "$tessel" train digits "$@"; }
fnv() { grep '^params_fnv1a=' "$1" | cut -d= -f2; }

run --checkpoint "$work/a.safetensors" "$@" | tee "$work/a.log"
last=$(tail -n 1 "$work/a.log")
[[ $last =~ ^test_accuracy=([0-9.]+)\ n_test=360\ seed=0\ device=[a-z]+\ train_seconds=[0-9.]+$ ]] ||
  { echo "FAIL: last line is not machine-readable: $last"; exit 1; }
acc=${BASH_REMATCH[1]}
awk -v a="$acc" 'BEGIN { exit !(a >= 0.95) }' || { echo "FAIL: test_accuracy $acc < 0.95"; exit 1; }
grep -q 'predictions identical' "$work/a.log" || { echo "FAIL: no checkpoint round trip"; exit 1; }

run --checkpoint "$work/b.safetensors" "$@" > "$work/b.log"
[ "$(fnv "$work/a.log")" = "$(fnv "$work/b.log")" ] ||
  { echo "FAIL: two runs with seed 0 trained different parameters"; exit 1; }

run --epochs 4 --checkpoint "$work/four.safetensors" "$@" > "$work/four.log"
run --epochs 2 --checkpoint "$work/two.safetensors" "$@" > "$work/two.log"
run --epochs 4 --resume "$work/two.safetensors" --checkpoint "$work/resumed.safetensors" "$@" \
  > "$work/resumed.log"
grep -q 'resumed from' "$work/resumed.log" || { echo "FAIL: did not resume"; exit 1; }
[ "$(fnv "$work/four.log")" = "$(fnv "$work/resumed.log")" ] ||
  { echo "FAIL: resuming after epoch 2 did not reproduce 4 straight epochs"; exit 1; }
echo "PASS: test_accuracy=$acc, deterministic, resume reproduces the run"
