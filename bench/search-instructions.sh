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
# NEEDHAVE_LIVE=0: the statement without its join to the open posts
# (`search-page --live 0`), against which the join's cost is read.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${NEEDHAVE_BENCH:-target/release/needhave-bench}

count() { # file q kind runs limit
    local args=(search-page --db "$1" --q "$2" --runs "$4" --limit "$5" --live "${NEEDHAVE_LIVE:-1}")
    [[ -n "$3" ]] && args+=(--kind "$3")
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BENCH" "${args[@]}" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

# name|words|kind|posts a page (CJK: 40, which both sizes fill; its 5% of
# 1,000 posts is 50)
queries=("q of a rare word (1 post)|x7fq||100" "q of a word in 10% (gpu)|gpu||100"
    "two words (gpu tonight)|gpu tonight||100" "a prefix of one letter (l)|l||100"
    "CJK (自行车, 5%), a page of 40|自行车||40"
    "the long word (commonword, 50%)|commonword||100"
    "the long word and seven letters|commonword b c d f g h j||100"
    "a rare word and the long word|x7fq commonword||100"
    "kind=need, the long word and seven letters|commonword b c d f g h j|need|100"
    "a run of 100 Han letters no note holds|一万与丕东丣个丱丸丿乆乍乔乛乢乩买乷乾亅二亓亚亡亨亯亶亽仄介仒仙仠仧仮仵仼伃伊休优伟伦伭伴伻佂佉佐佗佞佥佬佳佺侁侈侏侖依侤侫侲侹俀俇俎俕俜俣俪俱俸俿倆倍倔倛倢倩倰倷倾偅偌偓做偡偨偯偶偽傄傋傒備傠傧傮債||100")
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
