#!/usr/bin/env bash
# The home page in a real browser (headless Chromium, Debian's `chromium`):
# at phone (390 px) and desktop (1280 px) width it must not scroll
# sideways, and the product statement and every link must be laid out
# inside the viewport. Writes home-phone.png and home-desktop.png to OUT
# (default target/screenshots). Serves the page itself with `needhave
# serve` on an ephemeral loopback port unless BASE names a running list.
# The measuring and the screenshots are scripts/screenshots.py, over the
# DevTools protocol. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-target/screenshots}
mkdir -p "$OUT"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[[ -n "$CHROMIUM" ]] || { echo "screenshots: chromium is not installed (apt-get install chromium)" >&2; exit 1; }

work=$(mktemp -d)
pid=""
cleanup() {
    [[ -n "$pid" ]] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
    rm -rf "$work"
}
trap cleanup EXIT

if [[ -z "${BASE:-}" ]]; then
    cargo build --quiet -p needhave
    target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
    NEEDHAVE_LOG=warn "$target_dir/debug/needhave" serve --addr 127.0.0.1:0 --db :memory: \
        --exit-with-stdin < <(sleep 600 2>/dev/null) > "$work/serve.out" 2> "$work/serve.err" &
    pid=$!
    for _ in $(seq 100); do
        grep -q "http://" "$work/serve.out" 2>/dev/null && break
        sleep 0.1
    done
    BASE=$(grep -o 'http://[^ ]*' "$work/serve.out" | head -1)
    [[ -n "$BASE" ]] || { echo "screenshots: needhave serve did not start" >&2; cat "$work/serve.err" >&2; exit 1; }
fi

python3 scripts/screenshots.py "$CHROMIUM" "$BASE" "$OUT"
echo "screenshots: written to $OUT"
