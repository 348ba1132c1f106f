#!/usr/bin/env bash
# Callgrind's instructions per page of the queries of `needhave-bench
# search`, on the files it leaves (docs/design/search-costs.md, "A page at
# 1 k and at 1 M posts"): for each query and each file, the first page's
# statement run 11 times less run once, over 10 (a page on a warm page
# cache; the process's start and the file's open cancel out). Wall-clock
# figures of a page move by as much as they measure on a shared machine;
# these do not.
#
#   bench/search-instructions.sh LABEL=FILE ...
#
# NEEDHAVE_BENCH: the bench binary (target/release/needhave-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${NEEDHAVE_BENCH:-target/release/needhave-bench}

count() { # file q kind runs limit
    local args=(search-page --db "$1" --q "$2" --runs "$4" --limit "$5")
    [[ -n "$3" ]] && args+=(--kind "$3")
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BENCH" "${args[@]}" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

# name|words|kind|posts a page (CJK: 40, which both sizes fill; its 5% of
# 1,000 posts is 50)
queries=("q of a rare word (1 post)|x7fq||100" "q of a word in 10% (gpu)|gpu||100"
    "two words (gpu tonight)|gpu tonight||100" "a prefix of one letter (l)|l||100"
    "CJK (自行车, 5%), a page of 40|自行车||40")
header="| query (a page of 100 unless said) |"
rule="|---|"
for col in "$@"; do
    header+=" ${col%%=*} |"
    rule+="---|"
done
echo "$header"
echo "$rule"
for entry in "${queries[@]}"; do
    IFS='|' read -r name q kind limit <<<"$entry"
    line="| $name |"
    for col in "$@"; do
        file=${col#*=}
        one=$(count "$file" "$q" "$kind" 1 "$limit")
        eleven=$(count "$file" "$q" "$kind" 11 "$limit")
        posts=$("$BENCH" search-page --db "$file" --q "$q" --limit "$limit" ${kind:+--kind "$kind"})
        line+=" $(( (eleven - one) / 10 )) ($((posts > limit ? limit : posts))) |"
    done
    echo "$line"
done
