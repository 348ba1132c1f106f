#!/usr/bin/env bash
# Callgrind's instructions per page of the queries of `needhave-bench
# search`, on the files it leaves (docs/finding.md, "Instructions per
# query"): for each query and each file, the first page's statement run 11
# times less run once, over 10 (a page on a warm page cache; the process's
# start and the file's open cancel out). Wall-clock figures of a page move
# by as much as they measure on a shared machine; these do not.
#
#   bench/search-instructions.sh LABEL=FILE[:falling] ...
#
# `:falling`: the file's index holds row numbers as they are (version 6),
# so the statement of that release runs (`search-page --falling`).
# NEEDHAVE_BENCH: the bench binary (target/release/needhave-bench).
# LIMIT: posts per page (100).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${NEEDHAVE_BENCH:-target/release/needhave-bench}
LIMIT=${LIMIT:-100}

count() { # file falling q kind runs
    local args=(search-page --db "$1" --falling "$2" --q "$3" --runs "$5" --limit "$LIMIT")
    [[ -n "$4" ]] && args+=(--kind "$4")
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BENCH" "${args[@]}" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

queries=("q of a rare word (1 post)|x7fq|" "q of a word in 10% (gpu)|gpu|"
    "two words (gpu tonight)|gpu tonight|" "a prefix of one letter (l)|l|" "CJK (自行车, 5%)|自行车|")
header="| query (a page of $LIMIT) |"
rule="|---|"
for col in "$@"; do
    header+=" ${col%%=*} |"
    rule+="---|"
done
echo "$header"
echo "$rule"
for entry in "${queries[@]}"; do
    IFS='|' read -r name q kind <<<"$entry"
    line="| $name |"
    for col in "$@"; do
        spec=${col#*=}
        file=${spec%:falling}
        falling=0
        [[ "$spec" == *:falling ]] && falling=1
        one=$(count "$file" "$falling" "$q" "$kind" 1)
        eleven=$(count "$file" "$falling" "$q" "$kind" 11)
        posts=$("$BENCH" search-page --db "$file" --falling "$falling" --q "$q" --limit "$LIMIT" ${kind:+--kind "$kind"})
        line+=" $(( (eleven - one) / 10 )) ($((posts > LIMIT ? LIMIT : posts))) |"
    done
    echo "$line"
done
