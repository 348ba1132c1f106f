#!/usr/bin/env bash
# Callgrind's instructions for the first page of gpu and for its 100th,
# on files as `needhave-bench search-seed` leaves them (as written: the
# state D1 is always in, and a native list's under continuous writes), and
# the ratio the list holds to 1.5× (docs/design/search-index.md, "Leaves,
# and deep pages"). Each
# figure is the page's statement run 11 times less run once, over 10; the
# 100th page's cursor is walked to with the same statement, outside the
# difference.
#
#   target/release/needhave-bench search-seed --db F --posts 1000000 [--pgsz BYTES]
#   bench/deep-page-instructions.sh LABEL=FILE ...
#
# NEEDHAVE_BENCH: the bench binary (target/release/needhave-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${NEEDHAVE_BENCH:-target/release/needhave-bench}

count() { # file pages runs
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$BENCH" search-page --db "$1" --q gpu --pages "$2" --runs "$3" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

echo "| file | first page of gpu | 100th page | 100th / first |"
echo "|---|---|---|---|"
for entry in "$@"; do
    label=${entry%%=*}
    file=${entry#*=}
    first=$((($(count "$file" 1 11) - $(count "$file" 1 1)) / 10))
    deep=$((($(count "$file" 100 11) - $(count "$file" 100 1)) / 10))
    echo "| $label | $first | $deep | $(awk -v a="$deep" -v b="$first" 'BEGIN { printf "%.2f×", a / b }') |"
done
