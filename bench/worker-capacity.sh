#!/usr/bin/env bash
# What each kind of message row costs on D1, measured on a local D1 (the
# SQLite file workerd keeps), for the capacity plan in docs/worker.md: a
# fresh database with schema.sql, then N rows of each kind inserted with
# `wrangler d1 execute --local` in the shapes the handlers write (ids and
# hashes of their real lengths, texts of the longest allowed ASCII: 500
# characters), measuring the file's pages per table and index (SQLite's
# dbstat) after each kind. Prints bytes per row of each kind, and how many
# fit in D1's 10 GB. N=2000 by default. Posts are written only as the
# messages' parents: what a post costs, its index of words included, is the
# disk bound, which tests/limits.rs and `needhave-bench disk` measure on the
# list's own create.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
N=${N:-2000}

bash scripts/worker-toolchain.sh >/dev/null
# shellcheck source=scripts/worker-env.sh
. scripts/worker-env.sh
# shellcheck source=scripts/worker-dev.sh
. scripts/worker-dev.sh

WORK=$(mktemp -d "${TMPDIR:-/tmp}/needhave-capacity.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
worker_config "$WORK/wrangler.toml" "$ROOT/build/index.js" needhave
d1() { wrangler d1 execute DB --local --config "$WORK/wrangler.toml" --persist-to "$WORK/state" --yes "$@" >>"$WORK/d1.log" 2>&1 ||
    { tail -20 "$WORK/d1.log" >&2; exit 1; }; }
d1 --file schema.sql
DB=$(find "$WORK/state" -name '*.sqlite' ! -name 'metadata.sqlite' | head -1)
[[ -n "$DB" ]] || { echo "no local D1 file under $WORK/state" >&2; exit 1; }

# Bytes in use: every page of every table and index, less free space.
used() { sqlite3 "$DB" "SELECT sum(pgsize - unused) FROM dbstat"; }
pages() { sqlite3 "$DB" "SELECT sum(pgsize) FROM dbstat"; }

hex() { echo "lower(hex(randomblob($1)))"; }
seq_cte="WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $N)"
text500="substr(printf('%d ', i) || replace(printf('%.500c', 'x'), 'x', 'note text '), 1, 500)"

declare -A COST
measure() { # kind sql
    local before after
    before=$(used)
    d1 --command "$2"
    after=$(used)
    COST[$1]=$(( (after - before) / N ))
    printf '%-16s %8d rows %12d B %8d B/row\n' "$1" "$N" "$((after - before))" "${COST[$1]}"
}

NOW=$(date +%s%3N)
d1 --command "$seq_cte INSERT INTO posts (id, kind, note, note_key_hash, secret_hash, ip_hash, created_at)
  SELECT $(hex 16), CASE i % 2 WHEN 0 THEN 'need' ELSE 'have' END, $text500, $(hex 32),
  $(hex 32), $(hex 32), $NOW + i FROM n"
measure first "$seq_cte INSERT INTO messages (id, post_id, role, text, secret_hash, ip_hash, created_at)
  SELECT $(hex 16), (SELECT id FROM posts WHERE rowid = i), 'first', $text500, $(hex 32), $(hex 32), $NOW + i FROM n"
measure accept "$seq_cte INSERT INTO messages (id, post_id, role, parent_id, thread_key, thread_key_hash, ip_hash, created_at)
  SELECT $(hex 16), m.post_id, 'accept', m.id, $(hex 32), $(hex 32), $(hex 32), $NOW + i
  FROM n JOIN messages m ON m.rowid = i"
measure later "$seq_cte INSERT INTO messages (id, post_id, role, text, thread_key_hash, ip_hash, created_at)
  SELECT $(hex 16), m.post_id, 'later', $text500, m.thread_key_hash, $(hex 32), $NOW + i
  FROM n JOIN messages m ON m.rowid = $N + i"

echo "file: $(stat -c %s "$DB") B, pages $(pages) B, in use $(used) B ($((4 * N)) rows)"
LIMIT=$((10 * 1000 * 1000 * 1000))
for kind in first accept later; do
    printf 'fit in 10 GB: %-8s %12d\n' "$kind" "$((LIMIT / COST[$kind]))"
done
