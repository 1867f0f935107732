#!/usr/bin/env python3
# Runs every model of a make_bad_models.py manifest through `onyx run` and checks that onyx refuses
# it: exit status 1, an "onyx: ..." error line with the expected status name and message piece, and
# no sanitizer report. Cases listed in the known-failures file must fail (XFAIL); one that passes
# is an error (XPASS), so the list only shrinks.
#   check_bad.py ONYX_CLI BAD_DIR [-x KNOWN_FAILURES] [-j JOBS]
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

TIMEOUT_S = 120


def load_known(path):
    known = {}
    if not path:
        return known
    with open(path) as f:
        for line in f:
            name, _, reason = line.partition('#')
            name = name.strip()
            if name:
                known[name] = reason.strip()
    return known


def check(cli, root, entry):
    """Returns None when onyx refused the model as expected, else what was wrong."""
    cmd = [cli, 'run', os.path.join(root, entry['model']), '-t', '1']
    for name, path in entry['inputs']:
        cmd += ['--input', f'{name}={os.path.join(root, path)}']
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors='replace',
                           timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f'no answer within {TIMEOUT_S} s'
    out = r.stdout + r.stderr
    last = out.strip().splitlines()[-1] if out.strip() else '(no output)'
    if 'Sanitizer' in out or 'runtime error:' in out:
        return 'sanitizer report:\n' + out
    if r.returncode == 0:
        return f'accepted the model and ran it ({last})'
    if r.returncode != 1:
        return f'exit status {r.returncode}, expected 1 (a refusal, not a crash): {last}'
    errors = [line for line in out.splitlines() if line.startswith('onyx: ')]
    for line in errors:
        if any(f': {s}: ' in line for s in entry['status']) and entry['message'] in line:
            return None
    want = ' or '.join(entry['status'])
    return f'expected {want} with "{entry["message"]}", got: ' + (' | '.join(errors) or last)


def main():
    ap = argparse.ArgumentParser(description='check that onyx refuses the models of a bad-model manifest')
    ap.add_argument('cli')
    ap.add_argument('dir')
    ap.add_argument('-x', dest='known')
    ap.add_argument('-j', dest='jobs', type=int, default=2)
    a = ap.parse_args()
    with open(os.path.join(a.dir, 'manifest.json')) as f:
        entries = json.load(f)
    known = load_known(a.known)
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        results = list(pool.map(lambda e: check(a.cli, a.dir, e), entries))
    passed = failed = xfail = 0
    for e, problem in zip(entries, results):
        name = e['name']
        if name in known:
            if problem is None:
                print(f'XPASS  {name}: refused as expected now; remove it from the known failures')
                failed += 1
            else:
                print(f'XFAIL  {name}: {problem}  # {known[name]}')
                xfail += 1
        elif problem is None:
            passed += 1
        else:
            print(f'FAIL   {name}: {problem}')
            failed += 1
    print(f'-- {len(entries)} bad models in {time.time() - t0:.1f} s: {failed} unexpected results, '
          f'{xfail} expected failures')
    print(f'{passed} passed, {failed} failed, {xfail} skipped')
    return 1 if failed or not entries else 0


if __name__ == '__main__':
    sys.exit(main())
