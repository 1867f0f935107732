#!/usr/bin/env bash
# Runs onyx-test-runner over test folders in shards, each shard one process that runs its tests
# one after the other (--no-fork): one device context per shard instead of one per test, which on
# a GPU costs more than most tests do. The tests that fail (or whose shard died with them) run
# again, each in a process of its own, and their verdict is the one reported. The last line is the
# runner's summary line over all tests.
#   tools/cuda/cases.sh RUNNER DEVICE LOG [runner options...] -- DIR...
set -uo pipefail
if [ $# -lt 5 ]; then
    echo "usage: $0 RUNNER DEVICE LOG [runner options...] -- DIR..." >&2
    exit 2
fi
runner=$1 device=$2 log=$3
shift 3
# shards of a few hundred tests each (by the names' first letters), and a catch-all; a filter of
# the caller's (-f) is one shard of its own
filtered=
shards=('test_[A-Z]*' 'test_a*' 'test_b*' 'test_c[a-n]*' 'test_c[!a-n]*' 'test_d*' 'test_e[a-v]*'
        'test_e[!a-v]*' 'test_[f-h]*' 'test_[i-m]*' 'test_[n-q]*' 'test_r[a-e]*' 'test_r[!a-e]*'
        'test_s[a-h]*' 'test_s[!a-h]*' 'test_[t-z]*' 'test_[!A-Za-z]*' '[!t]*' 'test_?' 't[!e]*'
        'te[!s]*' 'tes[!t]*' 'test[!_]*')
opts=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    if [ "$1" = -f ] && [ $# -gt 1 ]; then
        shards=("$2")
        filtered=1
        shift 2
        continue
    fi
    opts+=("$1")
    shift
done
shift
dirs=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: >"$log"
for i in "${!shards[@]}"; do
    "$runner" -d "$device" --no-fork -q -f "${shards[$i]}" "${opts[@]}" "${dirs[@]}" \
        >"$work/shard-$i.log" 2>&1 &
done
wait
total=0 passed=0 skipped=0
for i in "${!shards[@]}"; do
    f=$work/shard-$i.log
    n=$(sed -n 's/^-- \([0-9]*\) tests\{0,1\} in .*/\1/p' "$f" | tail -1)
    if [ -z "$n" ]; then # the shard died: every test of it runs again below
        echo "shard ${shards[$i]} ended without a summary:" >>"$log"
        tail -5 "$f" >>"$log"
        echo "${shards[$i]}" >>"$work/dead"
        continue
    fi
    total=$((total + n))
    read -r p _ _ _ s _ < <(tail -1 "$f")
    passed=$((passed + p))
    skipped=$((skipped + s))
    awk '$1 ~ /^(FAIL|ERROR|XPASS)$/ {print $2}' "$f" >>"$work/again"
done
cat "$work"/shard-*.log >>"$log"

# again, one process per test: the failures of the shards and every test of a dead shard
again=()
while read -r name; do
    for d in "${dirs[@]}"; do [ -d "$d/$name" ] && again+=("$d/$name"); done
done < <(sort -u "$work/again" 2>/dev/null)
if [ -f "$work/dead" ]; then
    while read -r glob; do
        for d in "${dirs[@]}"; do
            for t in "$d"/$glob; do
                [ -d "$t" ] || continue
                again+=("$t")
                total=$((total + 1)) # not counted by its shard
            done
        done
    done <"$work/dead"
fi
failed=0
if [ ${#again[@]} -gt 0 ]; then
    echo "== again, each test in its own process: ${#again[@]}" >>"$log"
    "$runner" -d "$device" -q "${opts[@]}" "${again[@]}" >"$work/again.log" 2>&1
    cat "$work/again.log" >>"$log"
    read -r p _ f _ s _ < <(tail -1 "$work/again.log")
    passed=$((passed + p))
    skipped=$((skipped + s))
    failed=$f
    grep -E "^(FAIL|ERROR|XPASS) " "$work/again.log"
fi
want=0
for d in "${dirs[@]}"; do
    want=$((want + $(find "$d" -mindepth 1 -maxdepth 1 -type d | wc -l)))
done
missed=0 # tests no shard took: a failure of this script
if [ -z "$filtered" ] && [ "$total" -ne "$want" ]; then
    missed=1
    echo "cases.sh: $total tests run of $want folders" | tee -a "$log"
fi
echo "$passed passed, $failed failed, $skipped skipped" | tee -a "$log"
[ "$failed" -eq 0 ] && [ "$missed" -eq 0 ]
