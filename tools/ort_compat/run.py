"""Runs onnxruntime's own Python API tests (onnxruntime/test/python/onnxruntime_test_python.py and its
helper.py) once under onnxruntime and once with `onnxruntime` resolving to onyx (the shim package
backend/python/ort_shim), and prints both counts and the failing tests.

The test files are onnxruntime's code: they are fetched by hand into DIR/python/ (default
.ort-compat/, ignored by git) and never committed; without them this says so and exits 0 (CI has no
network), or 1 with --require. The models they name are rebuilt into DIR/testdata/ by
make_testdata.py when missing.

    python tools/ort_compat/run.py [--dir .ort-compat] [--engine both|ort|onyx] [--require] [-k EXPR]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
TEST_FILES = ('onnxruntime_test_python.py', 'helper.py')

# Why a test fails where it cannot pass: printed beside it (under either engine).
KNOWN_FAILURES = {
    'test_register_custom_ops_library':
        "needs ./libcustom_op_library.so, built from onnxruntime's C++ test sources and not in its "
        "wheel (fails under onnxruntime too); onyx cannot load such a library at all: its ops are "
        "written against onnxruntime's C API (onyx's register_custom_ops_library says so)",
    'test_session_options_add_free_dimension_override_by_name':
        "onnxruntime's own model abs_free_dimensions.onnx names both free dims 'None', not the "
        "'Dim1'/'Dim2' the test overrides, so no engine can answer [4, 6, 5] (fails under "
        "onnxruntime too; the same overrides by denotation pass)",
}


def missing_files(src):
    return [f for f in TEST_FILES if not os.path.isfile(os.path.join(src, 'python', f))]


def run_engine(engine, src, python, lib, select):
    """{test: (outcome, reason)} of one run; outcome 'passed', 'failed' or 'skipped'."""
    work = tempfile.mkdtemp(prefix=f'ort-compat-{engine}-')
    try:
        for f in TEST_FILES:
            shutil.copy(os.path.join(src, 'python', f), work)
        shutil.copytree(os.path.join(src, 'testdata'), os.path.join(work, 'testdata'))
        env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'ONYX_LIB')}
        if engine == 'onyx':
            env['PYTHONPATH'] = os.pathsep.join([os.path.join(ROOT, 'backend', 'python', 'ort_shim'),
                                                 os.path.join(ROOT, 'backend', 'python')])
            env['ONYX_LIB'] = lib
        report = os.path.join(work, 'report.xml')
        cmd = [python, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', f'--junitxml={report}',
               'onnxruntime_test_python.py'] + (['-k', select] if select else [])
        proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=1200)
        if not os.path.exists(report):
            sys.stdout.write(proc.stdout[-4000:] + proc.stderr[-4000:])
            raise SystemExit(f'ort-compat: the {engine} run produced no report (exit {proc.returncode})')
        results = {}
        for case in ET.parse(report).iter('testcase'):
            name = case.get('name')
            bad = case.find('failure') if case.find('failure') is not None else case.find('error')
            if bad is not None:
                text = (bad.get('message') or bad.text or '').strip().splitlines()
                results[name] = ('failed', text[0][:160] if text else '')
            elif case.find('skipped') is not None:
                results[name] = ('skipped', (case.find('skipped').get('message') or '')[:160])
            else:
                results[name] = ('passed', '')
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


def version(engine, python, lib):
    env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'ONYX_LIB')}
    if engine == 'onyx':
        env['PYTHONPATH'] = os.path.join(ROOT, 'backend', 'python')
        env['ONYX_LIB'] = lib
        code = 'import onyx; print("onyx", onyx.__version__)'
    else:
        code = 'import onnxruntime; print("onnxruntime", onnxruntime.__version__)'
    out = subprocess.run([python, '-c', code], env=env, capture_output=True, text=True)
    return out.stdout.strip() or engine


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--dir', default=os.path.join(ROOT, '.ort-compat'))
    ap.add_argument('--engine', choices=('both', 'ort', 'onyx'), default='both')
    ap.add_argument('--python', default=sys.executable)
    ap.add_argument('--lib', default=os.path.join(ROOT, 'build', 'libonyx.so'))
    ap.add_argument('--require', action='store_true', help='exit 1 when the test files are absent')
    ap.add_argument('-k', dest='select', help="pytest's -k expression")
    args = ap.parse_args()
    src = os.path.abspath(args.dir)
    absent = missing_files(src)
    if absent:
        print(f"ort-compat: SKIPPED: onnxruntime's test files are not here ({', '.join(absent)} in "
              f"{os.path.join(src, 'python')}). They are onnxruntime's code, kept out of git, and this "
              'machine cannot fetch them: copy onnxruntime/test/python/onnxruntime_test_python.py and '
              'helper.py from github.com/microsoft/onnxruntime there and rerun.')
        return 1 if args.require else 0
    if not os.path.isdir(os.path.join(src, 'testdata')):
        subprocess.run([args.python, os.path.join(ROOT, 'tools', 'ort_compat', 'make_testdata.py'), src],
                       check=True)
    engines = ('ort', 'onyx') if args.engine == 'both' else (args.engine,)
    results = {}
    for engine in engines:
        results[engine] = res = run_engine(engine, src, args.python, args.lib, args.select)
        counts = {k: sum(1 for o, _ in res.values() if o == k) for k in ('passed', 'failed', 'skipped')}
        print(f'== {version(engine, args.python, args.lib)}: {counts["passed"]} passed, '
              f'{counts["failed"]} failed, {counts["skipped"]} skipped, of {len(res)}')
        for name, (outcome, reason) in sorted(res.items()):
            if outcome == 'failed':
                print(f'   FAILED {name}: {reason}')
                if name in KNOWN_FAILURES:
                    print(f'      why: {KNOWN_FAILURES[name]}')
    if len(engines) == 2:
        behind = sorted(n for n, (o, _) in results['ort'].items()
                        if o == 'passed' and results['onyx'].get(n, ('failed',))[0] != 'passed')
        print(f'== passing under onnxruntime, not under onyx: {len(behind)}'
              + ''.join(f'\n   {n}' for n in behind))
    return 0


if __name__ == '__main__':
    sys.exit(main())
