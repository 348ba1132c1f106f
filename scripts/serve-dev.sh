# Source me: start a fresh `needhave serve` (debug build, in-memory list,
# 127.0.0.1 on a free port) for a CI script, and learn its URL, so that each
# script does not start it and parse its first line its own way.
#
#   serve_start WORK NAME   builds the debug binary if needed, starts the
#                           server with its stdout and stderr in WORK, sets
#                           SERVE_PID and SERVE_URL; fails (naming NAME and
#                           showing the server's stderr) if it does not start.
#   serve_stop              stops it (for the caller's EXIT trap).
#
# The server stops by itself within 600 s (its stdin closes then:
# --exit-with-stdin), so a script killed before its trap runs leaves nothing.

serve_start() {
    local work=$1 name=$2 target_dir i
    cargo build --quiet --bin needhave
    target_dir=$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
    NEEDHAVE_LOG=warn "$target_dir/debug/needhave" serve --addr 127.0.0.1:0 --db :memory: \
        --exit-with-stdin < <(sleep 600 2>/dev/null) >"$work/serve.out" 2>"$work/serve.err" &
    SERVE_PID=$!
    for ((i = 0; i < 100; i++)); do
        grep -q "http://" "$work/serve.out" 2>/dev/null && break
        sleep 0.1
    done
    SERVE_URL=$(grep -o 'http://[^ ]*' "$work/serve.out" | head -1)
    [[ -n "$SERVE_URL" ]] || {
        echo "$name: needhave serve did not start" >&2
        cat "$work/serve.err" >&2
        return 1
    }
}

serve_stop() {
    [[ -n "${SERVE_PID:-}" ]] || return 0
    kill "$SERVE_PID" 2>/dev/null || true
    wait "$SERVE_PID" 2>/dev/null || true
}
