# Source me (`. scripts/worker-env.sh`) before worker-build or wrangler: the
# tools come from scripts/worker-toolchain.sh, never from a download, and
# wrangler stays offline and keeps its state inside the repository.
_nh_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$HOME/.cargo/bin:$_nh_root/node_modules/.bin:$PATH"
export WASM_BINDGEN_BIN=wasm-bindgen
export WASM_OPT_BIN="$_nh_root/node_modules/.bin/wasm-opt"
export ESBUILD_BIN="$_nh_root/node_modules/.bin/esbuild"
export WRANGLER_SEND_METRICS=false
export WRANGLER_SEND_ERROR_REPORTS=false
export WRANGLER_HIDE_BANNER=true
export CLOUDFLARE_CF_FETCH_ENABLED=false
export XDG_CONFIG_HOME="$_nh_root/.xdg"
unset _nh_root
