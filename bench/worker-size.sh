#!/usr/bin/env bash
# The Worker's size beside its yardstick: builds the Needhave Worker and
# bench/baseline-worker (the smallest workers-rs Worker touching D1 with
# serde_json, sha2, hex and getrandom) with the same worker-build and
# wasm-opt, and prints raw and gzip -9 bytes of each .wasm and the ratio.
# Budget: ours within 1.5x the baseline's gzip size.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/worker-toolchain.sh >/dev/null
# shellcheck source=scripts/worker-env.sh
. scripts/worker-env.sh

OUT="$PWD/target/worker-size"
mkdir -p "$OUT"
worker-build --release --out-dir ../build needhave >"$OUT/needhave.log" 2>&1 ||
    { cat "$OUT/needhave.log" >&2; exit 1; }
CARGO_TARGET_DIR="$OUT/baseline-target" \
    worker-build --release --out-dir "$OUT/baseline" bench/baseline-worker >"$OUT/baseline.log" 2>&1 ||
    { cat "$OUT/baseline.log" >&2; exit 1; }

size() { stat -c %s "$1"; }
gz() { gzip -9 -c "$1" | wc -c; }
ours=build/index_bg.wasm
base="$OUT/baseline/index_bg.wasm"
printf '%-34s %10s %10s\n' "wasm" "raw" "gzip -9"
printf '%-34s %10d %10d\n' "needhave (build/index_bg.wasm)" "$(size "$ours")" "$(gz "$ours")"
printf '%-34s %10d %10d\n' "baseline (bench/baseline-worker)" "$(size "$base")" "$(gz "$base")"
ratio=$(awk -v a="$(gz "$ours")" -v b="$(gz "$base")" 'BEGIN { printf "%.2f", a / b }')
echo "gzip ratio needhave/baseline: $ratio (budget 1.50)"
awk -v r="$ratio" 'BEGIN { exit !(r <= 1.5) }' || { echo "over budget" >&2; exit 1; }
