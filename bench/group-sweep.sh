#!/usr/bin/env bash
# Where a group commit should close (docs/design/group-commit.md, "Where a
# group closes"): the durable create + first-reply flow at 1, 8
# and 64 connections against `needhave serve --group-max N --group-wait-us W`
# for each cap and window, 3 alternating rounds, each round beside a raw
# one-row synchronous=FULL baseline; acknowledged writes/s, p50/p99, fsyncs
# per write (strace -c). About 4 minutes on 2 cores. Flags pass through to
# `needhave-bench group-sweep` (see bench/src/sweep.rs), e.g.
#   bash bench/group-sweep.sh --rounds 5 --secs 3
#   bash bench/group-sweep.sh --conns 256 --caps 16,64,256 --waits 0,500
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v strace >/dev/null; then
  apt-get update -qq && apt-get install -y -qq strace=6.1-0.1
fi
cargo build -q --release -p needhave -p needhave-bench
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
echo "uptime: $(uptime)"
exec "$target_dir/release/needhave-bench" group-sweep \
  --needhave "$target_dir/release/needhave" \
  --work "$target_dir/bench-work" "$@"
