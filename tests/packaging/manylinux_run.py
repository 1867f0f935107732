"""Runs in the minimal Debian root of tests/packaging/test_manylinux.sh, with the venv that
pip-installed the manylinux wheel: each case of manylinux_cases.py through onyx.InferenceSession
against its expected outputs, the `onyx` CLI on the example, then checks in /proc/self/maps that
every library onyx loaded came from the wheel.
    manylinux_run.py CASES_DIR
"""
import glob
import os
import re
import subprocess
import sys

import numpy as np

import onyx

# What libonyx links or dlopen()s, by file name: each must be mapped from inside the venv.
BUNDLED = ('libonyx', 'libdnnl', 'libimf', 'libintlc', 'libtbb.so', 'libtbbmalloc', 'libprotobuf-c',
           'libopenblas', 'libgomp', 'libgfortran', 'libjpeg', 'libpng16', 'libtiff', 'libwebp',
           'libopenjp2', 'libre2')


# The optional features (Makefile: ONYX_WITH_CODECS, ONYX_WITH_RE2): the case that needs each, and
# its libraries. A wheel built without one holds none of them, and the case's op must refuse.
OPTIONAL = {'png': ('libjpeg', 'libpng16', 'libtiff', 'libwebp', 'libopenjp2'),
            'regex': ('libre2',)}


def built_in(case):
    """Whether the installed wheel carries the libraries of case's optional feature."""
    package = os.path.dirname(onyx.__file__)
    folders = [os.path.join(package, '_native', 'onyx-deps'),
               os.path.join(os.path.dirname(package), 'onyx.libs')]
    names = [n for d in folders if os.path.isdir(d) for n in os.listdir(d)]
    return all(any(n.startswith(lib) for n in names) for lib in OPTIONAL.get(case, ()))


def check(name, got, want):
    if want.dtype.kind in 'fc':
        ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        ok = got.shape == want.shape and np.array_equal(got, want)
    if not ok:
        sys.exit(f'FAIL: {name}: got {got!r}, expected {want!r}')


def main():
    cases = sys.argv[1]
    venv = sys.prefix
    assert onyx.library_path().startswith(venv), onyx.library_path()
    for model in sorted(glob.glob(os.path.join(cases, '*.onnx'))):
        name = os.path.basename(model)[:-5]
        data = np.load(model[:-5] + '.npz')
        feeds = {k[3:]: data[k].astype(object) if data[k].dtype.kind == 'U' else data[k]
                 for k in data.files if k.startswith('in_')}
        if not built_in(name):
            try:
                onyx.InferenceSession(model, providers=['CPUExecutionProvider']).run(None, feeds)
            except Exception as e:  # noqa: BLE001 (the message is what is checked)
                if 'onyx was built without' not in str(e):
                    raise
                print(f'  {name}: refused, as a wheel built without its feature must: {e}')
                continue
            sys.exit(f'FAIL: {name} ran, but the wheel holds no libraries for it')
        sess = onyx.InferenceSession(model, providers=['CPUExecutionProvider'])
        outs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        for k in (k for k in data.files if k.startswith('out_')):
            check(f'{name} output {k[4:]}', outs[k[4:]], data[k])
        names = ', '.join(k[4:] for k in data.files if k.startswith('out_'))
        print(f'  {name}: {names} as expected')

    # The CLI (the console script the wheel installs) feeds arange(n)/n, as example_cli.npz has.
    cli = os.path.join(venv, 'bin', 'onyx')
    text = subprocess.run([cli, 'run', os.path.join(cases, 'example_cli.onnx')], check=True,
                          capture_output=True, text=True).stdout
    m = re.search(r'^output probs: float\[1,10\] = \[(.*)\]$', text, re.M)
    if not m:
        sys.exit(f'FAIL: unexpected output of {cli} run:\n{text}')
    got = np.array([float(v) for v in m.group(1).split(',')], np.float32).reshape(1, 10)
    check('onyx run (CLI) probs', got, np.load(os.path.join(cases, 'example_cli.npz'))['out_probs'])
    print(f'  {cli} run example_cli.onnx: probs as expected')

    # Each from the venv; none from the system (a Python package may bring its own copy under
    # another name, as numpy's wheel does with libgfortran).
    mapped = {line.split()[-1] for line in open('/proc/self/maps') if '.so' in line.split()[-1]}
    named = {p for p in mapped if os.path.basename(p).startswith(BUNDLED)}
    system = sorted(p for p in named if f'{os.sep}site-packages{os.sep}' not in p)
    ours = {p for p in named if p.startswith(venv + os.sep)}
    absent = {lib for case, libs in OPTIONAL.items() if not built_in(case) for lib in libs}
    missing = [b for b in BUNDLED
               if b not in absent and not any(os.path.basename(p).startswith(b) for p in ours)]
    if system or missing:
        sys.exit(f'FAIL: loaded from the system: {system}; never loaded from the venv: {missing}')
    print(f'  all {len(ours)} bundled libraries loaded from the wheel, none from the system')


if __name__ == '__main__':
    main()
