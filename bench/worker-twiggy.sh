#!/usr/bin/env bash
# Where the Worker's bytes go: builds the Worker exactly as
# bench/worker-size.sh does (`--profile worker`, the same worker-build,
# wasm-bindgen and wasm-opt), but keeping the name section (a `wnames`
# profile that inherits `worker` with `strip = "none"`, defined here through
# Cargo's environment so nothing ships with names), then runs twiggy on it.
# The code and data are those of the shipped .wasm; only the names differ.
#
#   bash bench/worker-twiggy.sh            # top 60, then the biggest monos
#   bash bench/worker-twiggy.sh paths FN   # what keeps FN in
#
# Output: target/worker-twiggy/index_bg.wasm and its twiggy tables
# (top.csv for a diff between two runs). Installs twiggy (pinned) if absent.
set -euo pipefail
cd "$(dirname "$0")/.."

TWIGGY_VERSION=0.8.0

bash scripts/worker-toolchain.sh >/dev/null
# shellcheck source=scripts/worker-env.sh
. scripts/worker-env.sh

if [[ "$(twiggy --version 2>/dev/null || true)" != *"$TWIGGY_VERSION"* ]]; then
    echo "worker-twiggy: installing twiggy $TWIGGY_VERSION (takes minutes)" >&2
    cargo install --locked "twiggy@$TWIGGY_VERSION"
fi

OUT="$PWD/target/worker-twiggy"
mkdir -p "$OUT"
export CARGO_PROFILE_WNAMES_INHERITS=worker CARGO_PROFILE_WNAMES_STRIP=none
worker-build --profile wnames --out-dir "$OUT" needhave >"$OUT/build.log" 2>&1 ||
    { cat "$OUT/build.log" >&2; exit 1; }
wasm="$OUT/index_bg.wasm"
twiggy top -n 5000 -f csv "$wasm" >"$OUT/top.csv"

if [[ "${1:-}" == "paths" ]]; then
    twiggy paths "$wasm" "${2:?a function name}" -d 8
    exit 0
fi
twiggy top -n 60 "$wasm"
echo
twiggy monos -m 20 -n 3 "$wasm"
