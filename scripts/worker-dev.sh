# Source me (after scripts/worker-env.sh): start and stop `wrangler dev`
# instances of an already built Worker, on 127.0.0.1 and free ports, each in
# its own process group, for .ci/worker-e2e and bench/worker-capacity.sh.
#
# An instance runs from a generated wrangler config with no [build] section,
# so starting one never rebuilds: several instances (with and without the
# IP salt, ours and the baseline) share one build.

# Prints a free TCP port on 127.0.0.1.
worker_free_port() {
    node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# worker_config FILE MAIN NAME: a wrangler config for the built Worker whose
# entry is MAIN (an index.js that worker-build wrote), with a D1 bound as DB
# and the documents as its static assets, bound as ASSETS (as wrangler.toml).
worker_config() {
    local file=$1 main=$2 name=$3
    cat >"$file" <<EOF
name = "$name"
main = "$main"
compatibility_date = "$(awk -F'"' '/^compatibility_date/ { print $2 }' "$WORKER_ROOT/wrangler.toml")"

[assets]
directory = "$WORKER_ROOT/needhave/documents"
binding = "ASSETS"
run_worker_first = true
html_handling = "none"
not_found_handling = "none"

[[d1_databases]]
binding = "DB"
database_name = "$name"
database_id = "00000000-0000-0000-0000-000000000000"
migrations_dir = "$WORKER_ROOT/migrations"
EOF
}

# worker_start VAR CONFIG STATE LOG [wrangler dev args...]: starts wrangler
# dev in its own session and sets VAR_PGID, VAR_PORT, VAR_BASE, VAR_T0 (the
# launch time, in ms). It does not wait: see worker_wait_ready. LOG gets
# wrangler's warnings and the Worker's console.warn and console.error;
# WORKER_LOG_LEVEL=log adds the Worker's console.log (its request lines).
worker_start() {
    local var=$1 config=$2 state=$3 log=$4
    shift 4
    local port inspector
    port=$(worker_free_port)
    inspector=$(worker_free_port)
    # Each port was free when asked, and the system may hand the same one
    # out twice.
    while [[ "$inspector" == "$port" ]]; do inspector=$(worker_free_port); done
    printf -v "${var}_T0" '%s' "$(date +%s%3N)"
    setsid wrangler dev --config "$config" --ip 127.0.0.1 --port "$port" \
        --inspector-port "$inspector" --persist-to "$state" \
        --show-interactive-dev-session=false --log-level "${WORKER_LOG_LEVEL:-warn}" "$@" \
        </dev/null >"$log" 2>&1 &
    printf -v "${var}_PGID" '%s' "$!"
    printf -v "${var}_PORT" '%s' "$port"
    printf -v "${var}_BASE" '%s' "http://127.0.0.1:$port"
    WORKER_PGIDS+=("$!")
}

# worker_wait_ready BASE PGID: waits until GET BASE/openapi.json answers.
worker_wait_ready() {
    local base=$1 pgid=$2 i
    for ((i = 0; i < 600; i++)); do
        if curl -fsS -m 10 -o /dev/null "$base/openapi.json" 2>/dev/null; then
            return 0
        fi
        if ! kill -0 "$pgid" 2>/dev/null; then
            echo "wrangler dev exited before serving" >&2
            return 1
        fi
        sleep 0.5
    done
    echo "wrangler dev not ready after 300 s" >&2
    return 1
}

# worker_start_ready VAR CONFIG STATE LOG [args...]: worker_start, then
# worker_wait_ready; an instance that exits before it serves (wrangler on a
# loaded machine, now and then, with nothing in its log) is started once
# more, saying so with its log.
worker_start_ready() {
    local var=$1 log=$4 pgid base
    worker_start "$@"
    pgid="${var}_PGID" base="${var}_BASE"
    worker_wait_ready "${!base}" "${!pgid}" && return 0
    echo "wrangler dev ($var) exited before serving; its log: $(cat "$log"); starting it once more" >&2
    worker_start "$@"
    worker_wait_ready "${!base}" "${!pgid}"
}

# worker_stop PGID: stops that instance's whole process group.
worker_stop() {
    local pgid=$1 i
    kill -0 -- "-$pgid" 2>/dev/null || return 0
    kill -TERM -- "-$pgid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        kill -0 -- "-$pgid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL -- "-$pgid" 2>/dev/null || true
}

# Stops every instance worker_start started (for an EXIT trap).
worker_stop_all() {
    local pgid
    for pgid in "${WORKER_PGIDS[@]}"; do
        worker_stop "$pgid"
    done
}

WORKER_PGIDS=()
WORKER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
