#!/usr/bin/env bash
# Checks onyx-test-runner itself on broken and wrong test dirs made from onnx's test_identity
# data: each must be one PASS/FAIL/ERROR line, the summary and exit status must follow
# the expected-failure list, and nothing may crash the runner.
#   tests/conformance/runner_selftest.sh RUNNER NODE_DATA_DIR
set -euo pipefail

runner=$1
node=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=$work/data
mkdir -p "$data"
failures=0

check() { # check DESCRIPTION CONDITION...
    local what=$1
    shift
    if "$@"; then
        echo "ok    $what"
    else
        echo "FAIL  $what"
        failures=$((failures + 1))
    fi
}

make_test() { # make_test NAME: a copy of test_identity
    cp -r "$node/test_identity" "$data/$1"
}

make_test test_ok
# Another float [1,1,2,2] tensor as the expected output: a value mismatch.
make_test test_wrong_values
cp "$node/test_averagepool_2d_ceil/test_data_set_0/output_0.pb" "$data/test_wrong_values/test_data_set_0/output_0.pb"
make_test test_garbage_model
printf 'not a model' >"$data/test_garbage_model/model.onnx"
make_test test_gap
mv "$data/test_gap/test_data_set_0/input_0.pb" "$data/test_gap/test_data_set_0/input_1.pb"
make_test test_no_data
rm -r "$data/test_no_data/test_data_set_0"
make_test test_truncated
head -c 5 "$node/test_identity/test_data_set_0/output_0.pb" >"$data/test_truncated/test_data_set_0/output_0.pb"
mkdir "$data/test_bad_url"
echo '{"model_name": "x", "url": "onnx/backend/test/data/light/light_missing.onnx"}' >"$data/test_bad_url/data.json"
touch "$data/stray_file"

broken="test_wrong_values test_garbage_model test_gap test_no_data test_truncated test_bad_url"
list=$work/expected.txt
{
    echo "# expected failures of the self-test"
    echo
    for t in $broken; do echo "$t  # broken on purpose"; done
} >"$list"

set +e
"$runner" -j 2 --report "$work/report.json" "$data" >"$work/plain.txt" 2>&1
plain=$?
"$runner" -j 2 -x "$list" "$data" >"$work/listed.txt" 2>&1
listed=$?
{ cat "$list"; echo "test_ok  # listed but passes"; } >"$work/xpass.txt"
"$runner" -j 1 -x "$work/xpass.txt" "$data" >"$work/xpass_out.txt" 2>&1
xpass=$?
printf 'test_ok\n' >"$work/bad_list.txt"
"$runner" -x "$work/bad_list.txt" "$data" >/dev/null 2>&1
bad_list=$?
"$runner" -j 2 --write-expected "$work/written.txt" "$data" >/dev/null 2>&1
"$runner" -j 2 -x "$work/written.txt" "$data" >"$work/rewritten.txt" 2>&1
rewritten=$?
"$runner" --no-fork -f 'test_[og]*' "$data" >"$work/nofork.txt" 2>&1
nofork=$?
# Random draws: test_bernoulli_expanded draws 1 with probability 1 - x, so checking it as a plain
# Bernoulli(x) must fail on the frequencies.
draws=$work/draws
mkdir -p "$draws"
cp -r "$node/test_bernoulli" "$node/test_bernoulli_expanded" "$draws/"
printf '%s\n' 'test_bernoulli  bernoulli  # self-test' \
    'test_bernoulli_expanded  bernoulli  # self-test: wrong on purpose' >"$work/draws.txt"
"$runner" -j 1 --draws "$work/draws.txt" "$draws" >"$work/draws_out.txt" 2>&1
set -e

check "without a list: exit 1" test $plain -eq 1
check "without a list: summary" grep -qx '1 passed, 6 failed, 0 skipped' "$work/plain.txt"
check "value mismatch is FAIL naming the output" grep -q "^FAIL  *test_wrong_values .*output 0 .*differ" "$work/plain.txt"
check "garbage model is ERROR with a status" grep -q "^ERROR  *test_garbage_model .*ONYX_ERR_" "$work/plain.txt"
check "missing input file is ERROR" grep -q "^ERROR  *test_gap .*input_0.pb" "$work/plain.txt"
check "no data set is ERROR" grep -q "^ERROR  *test_no_data " "$work/plain.txt"
check "truncated output is ERROR" grep -q "^ERROR  *test_truncated " "$work/plain.txt"
check "missing light model is ERROR" grep -q "^ERROR  *test_bad_url .*not found" "$work/plain.txt"
check "report has every test" test "$(grep -o '"name"' "$work/report.json" | wc -l)" -eq 7
check "with the list: exit 0" test $listed -eq 0
check "with the list: summary" grep -qx '1 passed, 0 failed, 6 skipped' "$work/listed.txt"
check "listed failures are XFAIL" test "$(grep -c '^XFAIL' "$work/listed.txt")" -eq 6
check "a listed pass is XPASS and fails the run" test $xpass -eq 1
check "XPASS summary" grep -qx '0 passed, 1 failed, 6 skipped' "$work/xpass_out.txt"
check "an entry without a reason is refused" test $bad_list -eq 2
check "--write-expected output works as a list" test $rewritten -eq 0
check "--no-fork runs in-process" grep -qx '1 passed, 2 failed, 0 skipped' "$work/nofork.txt"
check "--no-fork exit status" test $nofork -eq 1
check "a Bernoulli draw passes the draw check" grep -q "^PASS  *test_bernoulli " "$work/draws_out.txt"
check "draws at the wrong frequency fail it" grep -q "^FAIL  *test_bernoulli_expanded .*of 400 runs" "$work/draws_out.txt"

if ((failures)); then
    echo "runner self-test: $failures check(s) failed; runner output:"
    cat "$work/plain.txt"
    exit 1
fi
echo "runner self-test: all checks passed"
