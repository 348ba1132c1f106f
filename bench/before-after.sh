#!/usr/bin/env bash
# This tree against an earlier commit (default: where this branch left
# main, so that only the branch's own changes are measured) on the durable
# create + first reply flow and GET /posts, in one run, alternating; the
# writes also with this tree's word index made a no-op (a file prepared
# before the server starts), then WAL bytes, pages and fsyncs per write
# under strace (bench/src/before_after.rs):
#   bench/before-after.sh [REV] [--rounds 3] [--secs 5] [--io-secs 5 (0: skip)]
# The earlier commit is built in release mode from `git archive` under
# target/before-after/REV (its own target directory: nothing of this
# tree's build is touched).
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$(git merge-base HEAD main)
if [[ $# -gt 0 && $1 != --* ]]; then rev=$1; shift; fi
if ! command -v wrk >/dev/null || ! command -v strace >/dev/null; then
  apt-get update -qq && apt-get install -y -qq wrk strace
fi
commit=$(git rev-parse --short "$rev")
base=target/before-after/$commit
if [[ ! -x $base/target/release/needhave ]]; then
  mkdir -p "$base"
  git archive "$commit" | tar -x -C "$base"
  (cd "$base" && CARGO_TARGET_DIR="$PWD/target" cargo build -q --release -p needhave --bin needhave)
fi
cargo build -q --release -p needhave -p needhave-bench
echo "uptime: $(uptime)"
exec target/release/needhave-bench before-after --baseline "$base/target/release/needhave" \
  --needhave target/release/needhave --work target/bench-work "$@"
