#!/usr/bin/env bash
# The generated op regression suite: writes the cases (tests/gen/make_cases.py) and the models
# that must be refused (tests/gen/make_bad_models.py) into BUILD_DIR/gen-cases, then checks them
# with BUILD_DIR's onyx-test-runner and onyx CLI. Known bugs: tests/gen/known_failures.txt.
#   tests/gen/run.sh BUILD_DIR
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
python=$repo/.venv/bin/python
known=$repo/tests/gen/known_failures.txt
out=$build/gen-cases
if [ ! -x "$python" ]; then
    echo "$python is missing: run make deps" >&2
    exit 2
fi
for tool in onyx-test-runner onyx; do
    if [ ! -x "$build/$tool" ]; then
        echo "$build/$tool is missing: build it first (make BUILD=$1)" >&2
        exit 2
    fi
done

# The sanitizer settings of `make sanitize`, unless the caller has its own; plain builds ignore them.
# CUDA's driver maps memory where ASan keeps its shadow gap.
cuda_gap=""
if grep -q -- -DONYX_WITH_CUDA=1 "$build/flags.stamp" 2>/dev/null; then cuda_gap=:protect_shadow_gap=0; fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0$cuda_gap}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$repo/tests/conformance/lsan.supp:print_suppressions=0}

echo "== generated op cases ($build)"
mkdir -p "$out"
"$python" "$repo/tests/gen/make_cases.py" "$out"
"$python" "$repo/tests/gen/make_bad_models.py" "$out"

# Small cases two at a time (each test then gets one thread); the large ones alone, so that the rep
# uses every core and the kernels' parallel splits are exercised. Under sanitizers a forked test
# costs ~150 ms (LeakSanitizer scans at every exit), so there all run in one process, with every
# core, and LeakSanitizer checks once at its end.
ok_mode=(-j 2)
if grep -q -- -fsanitize "$build/flags.stamp" 2>/dev/null || ldd "$build/onyx-test-runner" 2>/dev/null | grep -q libasan; then
    ok_mode=(--no-fork)
fi
failed=""
"$build/onyx-test-runner" -q "${ok_mode[@]}" -x "$known" "$out/ok" || failed="$failed ok"
"$build/onyx-test-runner" -q -j 1 -x "$known" "$out/par" || failed="$failed par"
# on the TEST device too: placement, copies and the device epilogues (core/fuse_device.c)
"$build/onyx-test-runner" -q "${ok_mode[@]}" -d TEST -x "$known" "$out/ok" || failed="$failed ok-TEST"
echo "== models that must be refused"
"$python" "$repo/tests/gen/check_bad.py" "$build/onyx" "$out/bad" -x "$known" -j 2 || failed="$failed bad"
if [ -n "$failed" ]; then
    echo "== generated op cases FAILED:$failed"
    exit 1
fi
echo "== generated op cases: all passed"
