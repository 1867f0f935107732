"""onnxruntime's Python usage patterns against onyx: each script in ort_scripts/ is written for
onnxruntime (`import onnxruntime as ort`) and leaves what it computed in RESULT. It runs twice in this
process, once with the real onnxruntime (PyPI, tests/requirements.txt) and once with onyx imported
in its place (what `import onyx as onnxruntime` does), and the two RESULTs must agree: arrays to
float tolerance, everything else exactly. Without onnxruntime installed only onyx's run (and the
scripts' own asserts) is checked."""
import glob
import os
import sys
import warnings

import numpy as np
import pytest

import onyx

SCRIPTS = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ort_scripts', '*.py')))
try:
    import onnxruntime as real_ort
except ImportError:
    real_ort = None


def run_script(path, module):
    """Executes the script with `onnxruntime` bound to `module`; returns its RESULT."""
    saved = sys.modules.get('onnxruntime')
    sys.modules['onnxruntime'] = module
    try:
        with open(path, encoding='utf-8') as f:
            code = compile(f.read(), path, 'exec')
        scope = {'__name__': '__ort_script__', '__file__': path}
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')   # the CUDA fallback warns in both
            exec(code, scope)  # noqa: S102
        return scope['RESULT']
    finally:
        if saved is None:
            sys.modules.pop('onnxruntime', None)
        else:
            sys.modules['onnxruntime'] = saved


def assert_same(got, expected, where='RESULT'):
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f'{where}: got {type(got).__name__}, expected an array'
        assert got.dtype == expected.dtype and got.shape == expected.shape, \
            f'{where}: got {got.dtype}{got.shape}, expected {expected.dtype}{expected.shape}'
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=where)
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(expected), f'{where}: keys {sorted(got)} != {sorted(expected)}'
        for k in expected:
            assert_same(got[k], expected[k], f'{where}[{k!r}]')
    elif isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(expected), f'{where}: {got!r} != {expected!r}'
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, f'{where}[{i}]')
    else:
        assert got == expected, f'{where}: onyx gives {got!r}, onnxruntime {expected!r}'


@pytest.mark.parametrize('script', SCRIPTS, ids=[os.path.basename(s)[:-3] for s in SCRIPTS])
def test_onnxruntime_script(script, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # profiles land here
    got = run_script(script, onyx)
    if real_ort is None:
        return
    expected = run_script(script, real_ort)
    assert_same(got, expected)
