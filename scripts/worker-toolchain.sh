#!/usr/bin/env bash
# Installs what building and running the Needhave Worker needs, and skips what
# is already there: the wasm32 Rust target, worker-build, the wasm-bindgen CLI
# at exactly the version Cargo.lock pins, and the npm packages that
# package-lock.json pins (wrangler with workerd, binaryen's wasm-opt, esbuild).
# Everything comes from crates.io and the npm registry; nothing else is fetched.
#
# After it, source the environment it prints (or scripts/worker-env.sh) so
# that worker-build uses these tools instead of downloading its own.
set -euo pipefail
cd "$(dirname "$0")/.."

WORKER_BUILD_VERSION=0.8.7

say() { echo "worker-toolchain: $*" >&2; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    say "adding the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown
fi

# worker-build only drives cargo, wasm-bindgen, wasm-opt and esbuild, so it
# is built without optimisation: much less to compile, no slower at its job.
# wasm-bindgen does the work on the .wasm itself, and keeps cargo's release.
if [[ "$(worker-build --version 2>/dev/null || true)" != *"$WORKER_BUILD_VERSION"* ]]; then
    say "installing worker-build $WORKER_BUILD_VERSION (takes minutes)"
    cargo install --debug --locked "worker-build@$WORKER_BUILD_VERSION"
fi

# wasm-bindgen's CLI must match the library exactly. It installs without
# --locked: one of its locked dependencies is not on the registry.
WBG_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
if [[ -z "$WBG_VERSION" ]]; then
    say "no wasm-bindgen in Cargo.lock"
    exit 1
fi
if [[ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WBG_VERSION" ]]; then
    say "installing wasm-bindgen-cli $WBG_VERSION (takes minutes)"
    cargo install --force wasm-bindgen-cli --version "$WBG_VERSION"
fi

if [[ ! -x node_modules/.bin/wrangler || ! -x node_modules/.bin/wasm-opt ||
      package-lock.json -nt node_modules/.package-lock.json ]]; then
    say "npm ci (wrangler, workerd, binaryen, esbuild)"
    npm ci --no-audit --no-fund --loglevel=error
fi

say "ready: $(worker-build --version), $(wasm-bindgen --version), wrangler $(node_modules/.bin/wrangler --version 2>/dev/null | tail -1)"
