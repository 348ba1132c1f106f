#!/usr/bin/env bash
# D1's rows read per `GET /posts` (its `meta.rows_read`, what D1 bills), on
# the Worker under `wrangler dev` on a local D1 of POSTS posts: builds the
# Worker as .ci/worker-e2e does, applies migrations/ to a fresh local D1,
# seeds it with the notes of `needhave-bench search` (a word in 10% of the
# notes, a word of its own in each, Chinese in 5%, a word of ten letters
# and seven short ones in half, both kinds) and their
# words as the create batch writes them (`needhave-bench d1-seed`), serves
# it, and runs bench/d1-rows-read.mjs, which reads each call's rows from the
# Worker's own log line. Prints a Markdown table (docs/finding.md).
#
#   bash bench/d1-rows-read.sh [--posts 100000] [--ended 0.9] [--check] [--keep DIR]
#
# --ended F: that share of the posts end (`d1-seed --ended`: a third by an
# expiry passed, the others by the rows a close and the operator's removal
# write, after their words are in the index), and the Worker's own Cron
# Trigger sweeps them out of the index (its scheduled handler, asked for at
# /__scheduled under `wrangler dev --test-scheduled`, until an event takes
# nothing) before the pages are asked.
#
# --check exits 1 when a rare word or a page of a common word reads 1,000
# rows or more, or any page reads more rows than the posts it fetches
# account for (see bench/d1-rows-read.mjs). SKIP_BUILD=1 serves the Worker
# that build/ already holds (in .ci/run, .ci/worker-e2e's). --keep DIR
# keeps the seeded D1 in DIR and, when DIR already holds one of the same
# size, reuses it instead of seeding again (100 k posts take a few minutes
# to seed on 2 cores). .ci/run runs the short form, `--posts 2000 --check`
# (under a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

POSTS=100000
ENDED=0
CHECK=
KEEP=
while [[ $# -gt 0 ]]; do
    case "$1" in
    --posts) POSTS=$2; shift 2 ;;
    --ended) ENDED=$2; shift 2 ;;
    --check) CHECK=--check; shift ;;
    --keep) KEEP=$2; shift 2 ;;
    *) echo "usage: $0 [--posts N] [--ended F] [--check] [--keep DIR]" >&2; exit 2 ;;
    esac
done

bash scripts/worker-toolchain.sh >/dev/null
# shellcheck source=scripts/worker-env.sh
. scripts/worker-env.sh
# shellcheck source=scripts/worker-dev.sh
. scripts/worker-dev.sh

WORK=$(mktemp -d "${TMPDIR:-/tmp}/needhave-d1-rows.XXXXXX")
cleanup() {
    local rc=$?
    worker_stop_all
    if [[ $rc -ne 0 && -f "$WORK/wrangler.log" ]]; then
        echo "== wrangler.log (last 40 lines)" >&2
        tail -n 40 "$WORK/wrangler.log" >&2 || true
    fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT INT TERM
STATE=${KEEP:-$WORK/state}

echo "== d1-rows-read: build the Worker and needhave-bench" >&2
if [[ -z "${SKIP_BUILD:-}" ]]; then
    worker-build --profile worker --out-dir ../build needhave >"$WORK/build.log" 2>&1 ||
        { cat "$WORK/build.log" >&2; exit 1; }
fi
cargo build -q --bin needhave-bench
BENCH=${CARGO_TARGET_DIR:-$ROOT/target}/debug/needhave-bench
worker_config "$WORK/wrangler.toml" "$ROOT/build/index.js" needhave
d1() { wrangler d1 execute DB --local --config "$WORK/wrangler.toml" --persist-to "$STATE" "$@" </dev/null; }

# The number of posts a kept D1 holds, or nothing.
held() {
    d1 --json --command "SELECT count(*) AS n FROM posts" 2>/dev/null |
        node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s)[0].results[0].n)}catch{}})'
}
if [[ -n "$KEEP" && -d "$KEEP" && "$(held)" == "$POSTS" && "$(cat "$KEEP/ended" 2>/dev/null)" == "$ENDED" ]]; then
    echo "== d1-rows-read: reusing the $POSTS posts in $KEEP" >&2
else
    [[ -n "$KEEP" ]] && rm -rf "$KEEP"
    echo "== d1-rows-read: seed a fresh local D1 with $POSTS posts" >&2
    t0=$(date +%s)
    wrangler d1 migrations apply DB --local --config "$WORK/wrangler.toml" --persist-to "$STATE" \
        </dev/null >"$WORK/d1.log" 2>&1 || { cat "$WORK/d1.log" >&2; exit 1; }
    "$BENCH" d1-seed --posts "$POSTS" --ended "$ENDED" --out "$WORK/seed" >"$WORK/files"
    while read -r file; do
        d1 --file "$file" --yes >"$WORK/d1.log" 2>&1 || { cat "$WORK/d1.log" >&2; exit 1; }
    done <"$WORK/files"
    [[ "$(held)" == "$POSTS" ]] || { echo "d1-rows-read: the D1 holds $(held) posts, not $POSTS" >&2; exit 1; }
    echo "$ENDED" >"$STATE/ended"
    echo "seeded in $(($(date +%s) - t0)) s" >&2
fi

# The Worker's request lines are console.log, wrangler's `log` level; one
# for every call, not only the expensive ones (LOG_REQUESTS).
main_start() {
    WORKER_LOG_LEVEL=log worker_start_ready MAIN "$WORK/wrangler.toml" "$STATE" "$WORK/wrangler.log" \
        --var IP_SALT:bench --var LOG_REQUESTS:all --test-scheduled
}
main_start
# The sweep, by the Worker's own Cron Trigger, one event after another
# until one takes nothing (it writes its log line only when it takes
# something or fails). The lines of an instance restarted are kept in
# earlier.log.
touch "$WORK/earlier.log"
sweeps() { cat "$WORK/earlier.log" "$WORK/wrangler.log" | grep -c '"cron":"sweep"' || true; }
if [[ "$ENDED" != 0 ]]; then
    t0=$(date +%s)
    restarts=0
    for ((i = 0; ; i++)); do
        seen=$(sweeps)
        # An event sweeps for 20 s at most (worker.rs, SWEEP_MS). Now and
        # then a local `wrangler dev` on a loaded machine leaves one
        # unanswered for good, with nothing in its log; the same D1 in a
        # new instance sweeps on (each round is one batch, all or nothing,
        # and the next event starts from the sweep's mark), so the bench
        # restarts it, saying so, three times at most.
        if ! curl -fsS -m 120 -o /dev/null "$MAIN_BASE/__scheduled?cron=*+*+*+*+*"; then
            if ((restarts == 3)); then
                echo "d1-rows-read: a Cron Trigger event went unanswered a fourth time" >&2
                exit 1
            fi
            restarts=$((restarts + 1))
            echo "d1-rows-read: RESTART: event $i of the Cron Trigger did not answer in 120 s;" \
                "wrangler dev restarted on the same D1 (restart $restarts of 3)" >&2
            worker_stop "$MAIN_PGID"
            cat "$WORK/wrangler.log" >>"$WORK/earlier.log"
            main_start
            continue
        fi
        for ((j = 0; j < 30 && $(sweeps) == seen; j++)); do sleep 0.1; done
        [[ $(sweeps) == "$seen" ]] && break
        if grep -q 'sweep: ' "$WORK/earlier.log" "$WORK/wrangler.log" || ((i > 1000)); then
            echo "d1-rows-read: the sweep failed" >&2
            exit 1
        fi
    done
    cat "$WORK/earlier.log" "$WORK/wrangler.log" | grep '"cron":"sweep"' | node -e '
let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
  const lines = s.split("\n").filter((l) => l).map((l) => JSON.parse(l.slice(l.indexOf("{"))));
  const sum = (k) => lines.reduce((a, l) => a + l[k], 0);
  console.error(`swept: ${sum("ends")} ends in ${lines.length} events of the Cron Trigger, ` +
    `${sum("ms")} ms, ${sum("rows_read")} rows read, ${sum("rows_written")} written`);
});'
    echo "swept in $(($(date +%s) - t0)) s" >&2
fi
echo "== d1-rows-read: $POSTS posts ($ENDED ended), wrangler dev on $MAIN_BASE" >&2
node bench/d1-rows-read.mjs "$MAIN_BASE" "$WORK/wrangler.log" "$POSTS" $CHECK --ended "$ENDED"
