#!/usr/bin/env bash
# What the Worker's log line costs its calls: one build of the Worker served
# by four `wrangler dev` instances side by side, each on a fresh local D1,
# differing only in the var LOG_REQUESTS: unset (as shipped: a line only for
# a 5xx, a slow call or one of many D1 rows), `none` (no line at all) twice
# (the second, `none2`, shows the run's noise) and `all` (a line for every
# call). bench/worker-logging.mjs drives the same
# calls at each in turn (GET /posts, GET /posts/:id, POST /posts, POST
# /threads), rounds interleaved so that drift hits all alike, and prints
# calls per second (median of the rounds) and each instance's ratio to
# `none` (the median of each round's ratio; goal: the shipped one within
# 1.05x on every call).
#
#   bash bench/worker-logging.sh        # ROUNDS=15 CALLS=100 CONCURRENCY=4
#
# SKIP_BUILD=1 serves the Worker that build/ already holds. wrangler runs
# at its `log` level, so a line the Worker writes is carried to the
# terminal as in any `wrangler dev`. Minutes, not for CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

bash scripts/worker-toolchain.sh >/dev/null
# shellcheck source=scripts/worker-env.sh
. scripts/worker-env.sh
# shellcheck source=scripts/worker-dev.sh
. scripts/worker-dev.sh

WORK=$(mktemp -d "${TMPDIR:-/tmp}/needhave-worker-logging.XXXXXX")
cleanup() {
    local rc=$?
    worker_stop_all
    if [[ $rc -ne 0 ]]; then
        for log in "$WORK"/*.log; do
            [[ -f "$log" ]] || continue
            echo "== $(basename "$log") (last 30 lines)" >&2
            tail -n 30 "$log" >&2 || true
        done
    fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT INT TERM

if [[ -z "${SKIP_BUILD:-}" ]]; then
    echo "== worker-logging: build the Worker" >&2
    worker-build --profile worker --out-dir ../build needhave >"$WORK/build.log" 2>&1 ||
        { cat "$WORK/build.log" >&2; exit 1; }
fi
worker_config "$WORK/wrangler.toml" "$ROOT/build/index.js" needhave

BASES=()
# `none2` is a second `none`: its ratio to `none` is the run's noise floor.
NAMES=(shipped none none2 all)
for name in "${NAMES[@]}"; do
    wrangler d1 migrations apply DB --local --config "$WORK/wrangler.toml" --persist-to "$WORK/$name" \
        >"$WORK/d1-$name.log" 2>&1 </dev/null || { cat "$WORK/d1-$name.log" >&2; exit 1; }
    vars=(--var IP_SALT:bench)
    [[ $name != shipped ]] && vars+=(--var "LOG_REQUESTS:${name%2}")
    var=${name^^}
    WORKER_LOG_LEVEL=log worker_start "$var" "$WORK/wrangler.toml" "$WORK/$name" "$WORK/$name.log" "${vars[@]}"
done
for name in "${NAMES[@]^^}"; do
    base_var="${name}_BASE" pgid_var="${name}_PGID"
    worker_wait_ready "${!base_var}" "${!pgid_var}"
    BASES+=("${name,,}=${!base_var}")
done
echo "== worker-logging: ${BASES[*]}" >&2
node bench/worker-logging.mjs "${BASES[@]}"
# How many request lines each instance wrote (the shipped one: only for
# calls worth a look, none expected here).
for name in "${NAMES[@]}"; do
    echo "$name: $(grep -c '"rows_read":' "$WORK/$name.log" || true) request lines logged"
done
