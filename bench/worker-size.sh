#!/usr/bin/env bash
# The Worker's size beside its yardstick. Builds the Needhave Worker as
# wrangler.toml does (`--profile worker`) and bench/baseline-worker (the
# smallest workers-rs Worker touching D1 with serde_json, sha2, hex and
# getrandom) twice: with worker-build's defaults (`--release`, the yardstick
# of the budget) and with the same `worker` profile as ours. Same
# worker-build, wasm-bindgen and wasm-opt for all. Prints raw and gzip -9
# bytes of each .wasm and the gzip ratios. Budget: 1.75x the yardstick.
#
#   bash bench/worker-size.sh           # the table
#   bash bench/worker-size.sh --check   # the table, then exit 1 if over budget (CI)
#
# SKIP_BUILD=1 measures the Needhave Worker that build/ already holds (in
# .ci/run, .ci/worker-e2e's, built alike), and builds only the baseline.
# YARDSTICK_ONLY=1 leaves out the baseline built alike (its row and ratio),
# which the budget does not read: .ci/run's short form, one wasm32 build of
# workers-rs less.
set -euo pipefail
check=
case "${1:-}" in
--check) check=1 ;;
"") ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."

bash scripts/worker-toolchain.sh >/dev/null
# shellcheck source=scripts/worker-env.sh
. scripts/worker-env.sh

OUT="$PWD/target/worker-size"
mkdir -p "$OUT"
build() { # name crate out-dir worker-build-args...
    local name=$1 crate=$2 out=$3
    shift 3
    worker-build "$@" --out-dir "$out" "$crate" >"$OUT/$name.log" 2>&1 ||
        { cat "$OUT/$name.log" >&2; exit 1; }
}
[[ -n "${SKIP_BUILD:-}" && -f build/index_bg.wasm ]] || build needhave needhave ../build --profile worker
CARGO_TARGET_DIR="$OUT/baseline-target" build baseline-release bench/baseline-worker "$OUT/baseline-release" --release
[[ -n "${YARDSTICK_ONLY:-}" ]] ||
    CARGO_TARGET_DIR="$OUT/baseline-target" build baseline-worker bench/baseline-worker "$OUT/baseline-worker" --profile worker

size() { stat -c %s "$1"; }
gz() { gzip -9 -c "$1" | wc -c; }
row() { printf '%-44s %9d %9d\n' "$1" "$(size "$2")" "$(gz "$2")"; }
ours=build/index_bg.wasm
yard="$OUT/baseline-release/index_bg.wasm"
same="$OUT/baseline-worker/index_bg.wasm"
printf '%-44s %9s %9s\n' ".wasm" "raw" "gzip -9"
row "needhave, --profile worker" "$ours"
row "baseline, --release (the yardstick)" "$yard"
[[ -n "${YARDSTICK_ONLY:-}" ]] || row "baseline, --profile worker" "$same"
ratio() { awk -v a="$(gz "$1")" -v b="$(gz "$2")" 'BEGIN { printf "%.2f", a / b }'; }
echo "gzip ratio to the yardstick: $(ratio "$ours" "$yard") (budget 1.75)"
[[ -n "${YARDSTICK_ONLY:-}" ]] || echo "gzip ratio to the baseline built alike: $(ratio "$ours" "$same")"
if [[ -n "$check" ]]; then
    # Over budget when ours > 1.75 x the yardstick, in whole bytes: 4 x ours > 7 x yardstick.
    ours_gz=$(gz "$ours") yard_gz=$(gz "$yard")
    if (( 4 * ours_gz > 7 * yard_gz )); then
        echo "worker-size: OVER BUDGET: $ours_gz B gzip > 1.75 x $yard_gz B" >&2
        exit 1
    fi
    echo "worker-size: within budget ($ours_gz B gzip <= $(( yard_gz * 7 / 4 )) B)"
fi
