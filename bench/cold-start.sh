#!/usr/bin/env bash
# The Worker's cold start beside the baseline's (bench/baseline-worker, the
# smallest workers-rs Worker making one D1 call, built with the same
# `worker` profile), on the runtime `wrangler dev` runs: builds both, then
# bench/cold-start.mjs launches workerd afresh through Miniflare for each
# run, alternating ours (GET /posts, GET /), the baseline and two
# JavaScript floors, and splits each launch into the runtime's start
# (spawn -> ready), the Worker's load inside it (the wasm's instantiation
# and glue, timed by a probe module), the first answer after ready and warm
# answers; then times the .wasm's compile and instantiation alone in
# workerd's V8. See the .mjs for what each interval holds.
#
# Not `wrangler dev` itself: its proxy accepts connections before workerd
# has loaded the Worker, so a first answer timed there holds workerd's own
# start (about 1 s here, the same for every Worker) and said nothing about
# ours.
#
# RUNS=n (default 11) launches per row; SKIP_BUILD=1 reuses the builds;
# BEFORE=DIR adds an earlier build of ours beside this one;
# WARM (20) warm answers a launch; ENGINE (30) rounds of the .wasm alone.
# Prints per-run rows on stderr, then medians (min-max) and ratios ours /
# baseline (goal <= 1.5). Minutes, not for CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-11}

bash scripts/worker-toolchain.sh >/dev/null
# shellcheck source=scripts/worker-env.sh
. scripts/worker-env.sh

OUT="$ROOT/target/cold-start"
mkdir -p "$OUT"
if [[ -z "${SKIP_BUILD:-}" ]]; then
    echo "building both Workers (--profile worker)" >&2
    worker-build --profile worker --out-dir ../build needhave >"$OUT/needhave.log" 2>&1 ||
        { cat "$OUT/needhave.log" >&2; exit 1; }
    CARGO_TARGET_DIR="$ROOT/target/worker-size/baseline-target" \
        worker-build --profile worker --out-dir "$OUT/baseline" bench/baseline-worker \
        >"$OUT/baseline.log" 2>&1 || { cat "$OUT/baseline.log" >&2; exit 1; }
fi

echo "ours at $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- needhave needhave-macros || echo ' (+ changes)'), $(date -u +%FT%RZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
# BEFORE=DIR: an earlier worker-build output of ours (index.js and
# index_bg.wasm), measured in the same run beside this one.
node bench/cold-start.mjs "$RUNS" build "$OUT/baseline" ${BEFORE:+"$BEFORE"}
