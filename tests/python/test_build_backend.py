"""The in-tree build backend's manylinux=1 setting (backend/python/build_backend/onyx_build.py):
what it stages for auditwheel beside the plain wheel, and the values it refuses. Built from a
stand-in build folder (ONYX_SKIP_MAKE), so that no make runs; the staged libraries are the real
ones."""
import os
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'backend', 'python', 'build_backend'))
import onyx_build  # noqa: E402


def test_manylinux_setting_values():
    assert onyx_build._manylinux(None) is False
    assert onyx_build._manylinux({'manylinux': '0'}) is False
    assert onyx_build._manylinux({'manylinux': '1'}) is True
    with pytest.raises(ValueError, match=r"manylinux='yes'.*expected 0 or 1"):
        onyx_build._manylinux({'manylinux': 'yes'})


def test_system_library():
    libc = onyx_build._system_library('libc.so.6')
    assert libc is not None and os.path.isfile(libc)
    assert onyx_build._system_library('libonyx-no-such-library.so.9') is None


@pytest.fixture
def fake_build(tmp_path, monkeypatch):
    build = tmp_path / 'build'
    (build / 'shared').mkdir(parents=True)
    for name in ('libonyx.so', 'shared/onyx', 'libonyx_cuda.so'):
        (build / name).write_bytes(f'stand-in {name}'.encode())
    monkeypatch.setenv('ONYX_BUILD_DIR', str(build))
    monkeypatch.setenv('ONYX_SKIP_MAKE', '1')
    return tmp_path


def _wheel_files(directory, name):
    with zipfile.ZipFile(os.path.join(directory, name)) as z:
        return {n: z.read(n) for n in z.namelist()}


def test_plain_wheel_is_unchanged(fake_build):
    out = fake_build / 'plain'
    out.mkdir()
    files = _wheel_files(out, onyx_build.build_wheel(str(out)))
    assert 'onyx/_native/libonyx_cuda.so' in files
    for soname in onyx_build.SYSTEM_STAGED:
        assert f'onyx/_native/onyx-deps/{soname}' not in files
    with open(os.path.join(ROOT, '.deps', 'onednn', 'lib', 'libimf.so'), 'rb') as f:
        assert files['onyx/_native/onyx-deps/libimf.so'] == f.read()


def test_manylinux_wheel_stages_what_auditwheel_cannot_see(fake_build):
    out = fake_build / 'manylinux'
    out.mkdir()
    files = _wheel_files(out, onyx_build.build_wheel(str(out), {'manylinux': '1'}))
    assert 'onyx/_native/libonyx_cuda.so' not in files  # the CUDA plugin stays out
    assert files['onyx/_native/libonyx.so.0'] == b'stand-in libonyx.so'
    for soname in ('libopenblas.so.0', 'libtbb.so.12', 'libtbbmalloc.so.2'):
        with open(onyx_build._system_library(soname), 'rb') as f:
            assert files[f'onyx/_native/onyx-deps/{soname}'] == f.read(), soname
    # libimf finds libintlc beside it
    imf = out / 'libimf.so'
    imf.write_bytes(files['onyx/_native/onyx-deps/libimf.so'])
    dynamic = subprocess.check_output(['readelf', '-d', str(imf)], text=True)
    assert '[$ORIGIN]' in dynamic and '$ORIGIN/../lib' not in dynamic, dynamic
