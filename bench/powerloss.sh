#!/usr/bin/env bash
# The power-loss test of `needhave serve` (docs/design/group-commit.md,
# "Power loss"): on a FUSE
# filesystem that forgets every write not yet fsynced when the power is cut
# (bench/powercut), concurrent creates, the cut, a remount and a restart.
# With the server's synchronous=FULL every post answered 201 must be there;
# with synchronous=NORMAL (a test-only switch) some must be gone, or the
# test could not tell the two apart. Needs /dev/fuse and root (CI has both).
#   bash bench/powerloss.sh [--secs S] [--conns N]
#   bash bench/powerloss.sh --install-only   # fuse3, and nothing else
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v fusermount3 >/dev/null; then
  apt-get update -qq && apt-get install -y -qq fuse3=3.14.0-4
fi
[[ "${1:-}" == --install-only ]] && exit 0
cargo build -q --bin needhave --bin powercut
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
work="$target_dir/powerloss"
"$target_dir/debug/powercut" test --needhave "$target_dir/debug/needhave" --work "$work/full" "$@"
"$target_dir/debug/powercut" test --needhave "$target_dir/debug/needhave" --work "$work/normal" \
  --synchronous NORMAL --expect-loss "$@"
