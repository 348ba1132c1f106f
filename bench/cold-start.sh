#!/usr/bin/env bash
# The Worker's cold start beside the baseline's, on the real runtime: for
# each run, launches `wrangler dev` (a fresh workerd), waits until its port
# accepts a connection, and times the first answer, then a second one (warm)
# — ours and bench/baseline-worker (the smallest workers-rs Worker that
# makes one D1 call) alternately, same workerd, same flags, same machine.
#
# Caveat: wrangler's proxy listens before workerd has loaded the Worker, so
# "first" also holds the runtime's own start (about 1 s here, for both).
# Where the first answer's time goes:
#   first - warm     what the first request pays once: the wasm's
#                    instantiation and start (workerd compiles lazily), the
#                    first D1 call's setup
#   GET / vs /posts  ours without and with a D1 call
#
# RUNS=n (default 7) runs per Worker; SKIP_BUILD=1 reuses the builds.
# Prints medians in ms and the ratio of ours to the baseline (goal <= 1.5).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-7}

bash scripts/worker-toolchain.sh >/dev/null
# shellcheck source=scripts/worker-env.sh
. scripts/worker-env.sh
# shellcheck source=scripts/worker-dev.sh
. scripts/worker-dev.sh

OUT="$ROOT/target/cold-start"
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/needhave-cold-start.XXXXXX")
trap 'worker_stop_all; rm -rf "$WORK"' EXIT INT TERM

if [[ -z "${SKIP_BUILD:-}" ]]; then
    echo "building both Workers (--profile worker)" >&2
    worker-build --profile worker --out-dir ../build needhave >"$OUT/needhave.log" 2>&1 ||
        { cat "$OUT/needhave.log" >&2; exit 1; }
    CARGO_TARGET_DIR="$ROOT/target/worker-size/baseline-target" \
        worker-build --profile worker --out-dir "$OUT/baseline" bench/baseline-worker \
        >"$OUT/baseline.log" 2>&1 || { cat "$OUT/baseline.log" >&2; exit 1; }
fi

worker_config "$WORK/ours.toml" "$ROOT/build/index.js" needhave
worker_config "$WORK/baseline.toml" "$OUT/baseline/index.js" baseline
wrangler d1 execute DB --local --config "$WORK/ours.toml" --persist-to "$WORK/ours" \
    --file schema.sql --yes >"$WORK/d1.log" 2>&1 || { cat "$WORK/d1.log" >&2; exit 1; }
mkdir -p "$WORK/baseline"

# once NAME CONFIG STATE PATH: one launch; appends "first warm launch" (ms).
once() {
    local name=$1 config=$2 state=$3 path=$4 first warm now
    worker_start RUN "$config" "$state" "$WORK/$name.log" --var "IP_SALT:cold-start"
    worker_wait_port "$RUN_PGID" "$RUN_PORT"
    first=$(curl -sS -o /dev/null -w '%{time_total}' "$RUN_BASE$path")
    now=$(date +%s%3N)
    warm=$(curl -sS -o /dev/null -w '%{time_total}' "$RUN_BASE$path")
    worker_stop "$RUN_PGID"
    echo "$first $warm $((now - RUN_T0))" | awk '{ printf "%.1f %.1f %d\n", $1 * 1000, $2 * 1000, $3 }' \
        >>"$WORK/$name.times"
}

for ((i = 1; i <= RUNS; i++)); do
    echo "run $i/$RUNS" >&2
    once baseline "$WORK/baseline.toml" "$WORK/baseline" /
    once ours-posts "$WORK/ours.toml" "$WORK/ours" /posts
    once ours-home "$WORK/ours.toml" "$WORK/ours" /
done

median() { # file column
    sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { m = int((NR + 1) / 2); print v[m] }'
}
printf '%-34s %8s %8s %10s %12s\n' "median of $RUNS launches (ms)" first warm first-warm launch->1st
for name in baseline ours-posts ours-home; do
    f=$(median "$WORK/$name.times" 1)
    w=$(median "$WORK/$name.times" 2)
    l=$(median "$WORK/$name.times" 3)
    printf '%-34s %8s %8s %10s %12s\n' "$name" "$f" "$w" "$(awk -v a="$f" -v b="$w" 'BEGIN { printf "%.1f", a - b }')" "$l"
done
bf=$(median "$WORK/baseline.times" 1)
of=$(median "$WORK/ours-posts.times" 1)
echo "first answer, ours (GET /posts) / baseline: $(awk -v a="$of" -v b="$bf" 'BEGIN { printf "%.2f", a / b }') (goal <= 1.50)"
