#!/usr/bin/env bash
# Fuzzing (not part of `make test`: it is open-ended). Builds the libFuzzer targets of tests/fuzz/
# with clang + ASan + UBSan into build-fuzz/ (tests/fuzz/fuzz.mk; the main build is untouched),
# makes seed corpora from the ONNX backend test data, and runs each target for SECONDS (default 60).
#   tests/fuzz/run.sh [SECONDS] [TARGET...]   targets: fuzz_load fuzz_run fuzz_pb fuzz_node (default: all)
#   tests/fuzz/run.sh --repro TARGET FILE...  runs saved inputs once (a finding, a regression)
#   FUZZ_KEEP_GOING=1   fork mode: keep fuzzing after a crash/leak/timeout, collect them all
#   FUZZ_ARGS="..."     extra libFuzzer flags
# Findings go to build-fuzz/artifacts/TARGET/ (crash-*, leak-*, timeout-*, oom-*); the grown corpus
# stays in build-fuzz/corpus/TARGET between runs. Needs clang with libFuzzer (Debian: clang,
# libclang-rt-14-dev) and the .venv of `make deps` (for the seeds).
set -euo pipefail
cd "$(dirname "$0")/../.."

REPRO=()
if [ "${1:-}" = --repro ]; then
    [ $# -ge 3 ] || { echo "usage: $0 --repro TARGET FILE..." >&2; exit 2; }
    TARGETS=("$2")
    shift 2
    REPRO=("$@")
    SECONDS_EACH=0
else
    SECONDS_EACH=${1:-60}
    shift || true
    TARGETS=("$@")
fi
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(fuzz_load fuzz_run fuzz_pb fuzz_node)
OUT=build-fuzz
MAX_LEN=65536

make --no-print-directory -f tests/fuzz/fuzz.mk -j"$(nproc)" FUZZ_BUILD=$OUT "${TARGETS[@]/#/$OUT/}"

data=$(ls -d .venv/lib/python3*/site-packages/onnx/backend/test/data 2>/dev/null | head -1 || true)
if [ ! -d $OUT/seeds/load ]; then
    if [ -z "$data" ]; then echo "no ONNX test data under .venv (make deps): no seeds" >&2
    else
        make --no-print-directory node-data # onnx's node tests, written out (build/onnx-data)
        .venv/bin/python tests/fuzz/make_corpus.py "$data" $OUT/seeds $MAX_LEN build/onnx-data
    fi
fi

# Single allocations above the cap fail (NULL) instead of aborting, so that a model asking for a
# huge tensor exercises the library's out-of-memory path; the RSS limit bounds the rest.
# fuzz_node's node reads tensors of at most 27 elements, so an output of tens of MB comes from
# pathological attributes (a Pad by millions): its cap is lower, or filling it element by element
# under ASan and coverage outlasts the timeout without anything being wrong.
asan_options() {
    local cap=256
    [ "$1" = fuzz_node ] && cap=32
    echo "allocator_may_return_null=1:max_allocation_size_mb=$cap:detect_leaks=1:${ASAN_BASE:-}"
}
ASAN_BASE=${ASAN_OPTIONS:-}
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$PWD/tests/conformance/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

if [ ${#REPRO[@]} -gt 0 ]; then
    ASAN_OPTIONS=$(asan_options "${TARGETS[0]}") exec $OUT/${TARGETS[0]} -timeout=20 -rss_limit_mb=2048 "${REPRO[@]}"
fi
[ "$SECONDS_EACH" -gt 0 ] || exit 0
rc=0
for t in "${TARGETS[@]}"; do
    seeds=$OUT/seeds/${t#fuzz_}
    corpus=$OUT/corpus/$t
    art=$OUT/artifacts/$t
    mkdir -p "$corpus" "$art"
    flags=(-max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=2048
           -max_len=$MAX_LEN -artifact_prefix="$art/" -print_final_stats=1)
    [ -z "${FUZZ_KEEP_GOING:-}" ] || flags+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    echo "== $t for ${SECONDS_EACH}s (corpus $corpus, findings $art)"
    # shellcheck disable=SC2086
    ASAN_OPTIONS=$(asan_options "$t") $OUT/$t "${flags[@]}" ${FUZZ_ARGS:-} "$corpus" $( [ -d "$seeds" ] && echo "$seeds" ) || rc=1
done
found=$(find $OUT/artifacts -type f 2>/dev/null | wc -l)
echo "== fuzzing done: $found finding(s) under $OUT/artifacts"
exit $rc
