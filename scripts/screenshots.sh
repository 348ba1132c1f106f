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

# shellcheck source=scripts/serve-dev.sh
. scripts/serve-dev.sh

work=$(mktemp -d)
cleanup() {
    serve_stop
    rm -rf "$work"
}
trap cleanup EXIT

if [[ -z "${BASE:-}" ]]; then
    serve_start "$work" screenshots
    BASE=$SERVE_URL
fi

python3 scripts/screenshots.py "$CHROMIUM" "$BASE" "$OUT"
echo "screenshots: written to $OUT"
