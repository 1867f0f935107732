"""PEP 517 build backend of the onyx Python package (pyproject.toml points here).

`pip install .` / `pip wheel .` call build_wheel, which runs `make native` in the checkout (libonyx.so,
the CLI linked to it, libonyx_cuda.so when CUDA is built) and writes a wheel holding backend/python/onyx
with those files in onyx/_native/. The wheel links the Debian libraries the library was built
against (README: "Installing"), so its tag is the build machine's platform, not manylinux.

With the config setting manylinux=1 (`pip wheel -C manylinux=1 .`, as `make wheel-manylinux` does)
the wheel is made ready for `auditwheel repair`, which copies in what libonyx links and retags it
manylinux: the CUDA plugin is left out (auditwheel would copy in the CUDA libraries, and the plugin
needs the machine's own CUDA driver anyway), and the system libraries of SYSTEM_STAGED are put in
onyx-deps/ (auditwheel then copies in what they link: libgfortran, libgomp). libimf's runpath
($ORIGIN/../lib, from its PyPI wheel) is set to $ORIGIN (patchelf), so that auditwheel finds
libintlc beside it instead of copying in a second one.

Written by hand, with the standard library only, so that building needs no download (no setuptools,
no wheel package): pyproject.toml's build requirements are empty. Environment:
  ONYX_BUILD_DIR   the make build folder (default build)
  ONYX_MAKE_JOBS   make -j (default: the CPU count)
  ONYX_SKIP_MAKE=1 use what the build folder holds, without running make
"""
import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..'))
PACKAGE_DIR = os.path.join(ROOT, 'backend', 'python', 'onyx')
NATIVE = ('libonyx.so', 'shared/onyx', 'libonyx_cuda.so')  # in the build folder
BUNDLED = {'libonyx.so': 'libonyx.so.0', 'shared/onyx': 'onyx', 'libonyx_cuda.so': 'libonyx_cuda.so'}
# oneDNN (TBB runtime, from PyPI wheels: tools/deps.sh) and the Intel runtime it needs, in
# onyx/_native/onyx-deps/, where libonyx's rpath ($ORIGIN/onyx-deps) finds them.
PRIVATE = ('libdnnl.so.3', 'libimf.so', 'libintlc.so.5')  # in .deps/onednn/lib
# What the manylinux wheel carries in onyx-deps/ from the build machine (soname: Debian package),
# because auditwheel, which copies in what is linked, would miss it or split it: OpenBLAS is
# dlopen()ed (kernels_cpu/common/blas.c), and TBB dlopen()s its allocator libtbbmalloc from the
# folder libtbb is in, so the two go together.
SYSTEM_STAGED = {'libopenblas.so.0': 'libopenblas0-openmp', 'libtbb.so.12': 'libtbb12',
                 'libtbbmalloc.so.2': 'libtbbmalloc2'}


# ---------------------------------------------------------------- metadata (pyproject.toml)

def _project():
    """pyproject.toml's [project] table (tomllib where Python has it, else the simple subset used)."""
    text = open(os.path.join(ROOT, 'pyproject.toml'), encoding='utf-8').read()
    try:
        import tomllib
        return tomllib.loads(text)['project']
    except ImportError:
        pass
    section = re.search(r'^\[project\]\s*$(.*?)(?=^\[|\Z)', text, re.S | re.M).group(1)
    out = {}
    for m in re.finditer(r'^(\w[\w-]*)\s*=\s*(".*?"|\[.*?\])\s*$', section, re.S | re.M):
        value = m.group(2)
        out[m.group(1)] = re.findall(r'"(.*?)"', value) if value.startswith('[') else value[1:-1]
    return out


def _metadata():
    p = _project()
    lines = ['Metadata-Version: 2.1', f'Name: {p["name"]}', f'Version: {p["version"]}',
             f'Summary: {p.get("description", "")}']
    if 'requires-python' in p:
        lines.append(f'Requires-Python: {p["requires-python"]}')
    lines += [f'Requires-Dist: {d}' for d in p.get('dependencies', [])]
    for extra, deps in (p.get('optional-dependencies') or {}).items():
        lines.append(f'Provides-Extra: {extra}')
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    readme = os.path.join(ROOT, 'README.md')
    body = open(readme, encoding='utf-8').read() if os.path.exists(readme) else ''
    lines.append('Description-Content-Type: text/markdown')
    return p, '\n'.join(lines) + '\n\n' + body


def _tag():
    plat = sysconfig.get_platform().replace('-', '_').replace('.', '_')
    return f'py3-none-{plat}'


# ---------------------------------------------------------------- wheel writing

class _Wheel:
    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED)
        self.records = []

    def add(self, arcname, data, mode=0o644):
        info = zipfile.ZipInfo(arcname, date_time=time.gmtime(_epoch())[:6])
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
        self.records.append(f'{arcname},sha256={digest},{len(data)}')

    def close(self, dist_info):
        record = f'{dist_info}/RECORD'
        self.records.append(f'{record},,')
        self.zip.writestr(zipfile.ZipInfo(record, date_time=time.gmtime(_epoch())[:6]),
                          '\n'.join(self.records) + '\n')
        self.zip.close()


def _epoch():
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", "0")), 315532800)  # reproducible; zip needs >= 1980


def _dist_info(wheel, project, metadata, tag):
    name = f'{project["name"]}-{project["version"]}.dist-info'
    wheel.add(f'{name}/METADATA', metadata.encode())
    wheel.add(f'{name}/WHEEL', (f'Wheel-Version: 1.0\nGenerator: onyx_build\n'
                                f'Root-Is-Purelib: false\nTag: {tag}\n').encode())
    scripts = (project.get('scripts') or {})
    if scripts:
        text = '[console_scripts]\n' + ''.join(f'{k} = {v}\n' for k, v in scripts.items())
        wheel.add(f'{name}/entry_points.txt', text.encode())
    return name


def _make(build):
    if os.environ.get('ONYX_SKIP_MAKE') == '1':
        return
    jobs = os.environ.get('ONYX_MAKE_JOBS') or str(os.cpu_count() or 2)
    cmd = ['make', f'-j{jobs}', '--no-print-directory', f'BUILD={build}', 'native']
    print('onyx_build:', ' '.join(cmd), file=sys.stderr)
    # make's output goes to stderr: pip shows it with -v and when the build fails.
    subprocess.check_call(cmd, cwd=ROOT, stdout=sys.stderr)


def _manylinux(config_settings):
    value = (config_settings or {}).get('manylinux', '0')
    if value not in ('0', '1'):
        raise ValueError(f'config setting manylinux={value!r}: expected 0 or 1')
    return value == '1'


def _system_library(soname):
    """The file the dynamic linker loads for soname (ldconfig's cache, its x86-64 entries: the
    manylinux wheel's architecture), or None."""
    for ldconfig in ('ldconfig', '/sbin/ldconfig', '/usr/sbin/ldconfig'):
        try:
            out = subprocess.check_output([ldconfig, '-p'], text=True, stderr=subprocess.DEVNULL)
            break
        except (OSError, subprocess.CalledProcessError):
            continue
    else:
        return None
    for line in out.splitlines():
        m = re.match(r'\s*(\S+) \((.*)\) => (\S+)$', line)
        if m and m.group(1) == soname and 'x86-64' in m.group(2):
            return os.path.realpath(m.group(3))
    return None


def _with_origin_runpath(path):
    """The bytes of the library at path with its runpath set to $ORIGIN (patchelf on a copy)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, os.path.basename(path))
        shutil.copyfile(path, copy)
        try:
            subprocess.check_call(['patchelf', '--set-rpath', '$ORIGIN', copy])
        except OSError as e:
            raise RuntimeError(f'manylinux=1 needs patchelf on PATH (for {path}): {e}') from e
        with open(copy, 'rb') as f:
            return f.read()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ARG001
    build = os.environ.get('ONYX_BUILD_DIR', 'build')
    manylinux = _manylinux(config_settings)
    _make(build)
    project, metadata = _metadata()
    tag = _tag()
    filename = f'{project["name"]}-{project["version"]}-{tag}.whl'
    wheel = _Wheel(os.path.join(wheel_directory, filename))
    for name in sorted(os.listdir(PACKAGE_DIR)):
        if name.endswith('.py') or name == 'py.typed':
            with open(os.path.join(PACKAGE_DIR, name), 'rb') as f:
                wheel.add(f'onyx/{name}', f.read())
    found = []
    for src in NATIVE:
        path = os.path.join(ROOT, build, src)
        if src == 'libonyx_cuda.so' and (manylinux or not os.path.exists(path)):
            continue
        if not os.path.exists(path):
            raise RuntimeError(f'{path} was not built')
        with open(path, 'rb') as f:
            wheel.add(f'onyx/_native/{BUNDLED[src]}', f.read(), 0o755)
        found.append(src)
    for name in PRIVATE:
        path = os.path.join(ROOT, '.deps', 'onednn', 'lib', name)
        if manylinux and name == 'libimf.so':
            data = _with_origin_runpath(path)
        else:
            with open(path, 'rb') as f:
                data = f.read()
        wheel.add(f'onyx/_native/onyx-deps/{name}', data, 0o755)
        found.append(name)
    for soname, package in (SYSTEM_STAGED.items() if manylinux else ()):
        path = _system_library(soname)
        if path is None:
            raise RuntimeError(f'manylinux=1: {soname} is not installed, and the wheel must bundle '
                               f'it (apt-get install {package})')
        with open(path, 'rb') as f:
            wheel.add(f'onyx/_native/onyx-deps/{soname}', f.read(), 0o755)
        found.append(f'{soname} ({path})')
    dist_info = _dist_info(wheel, project, metadata, tag)
    wheel.close(dist_info)
    print(f'onyx_build: {filename} bundles {", ".join(found)}', file=sys.stderr)
    return filename


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ARG001
    """pip install -e: a .pth file puts backend/python on sys.path; the library is the checkout's
    build/libonyx.so (the package finds it there), so the checkout is built first."""
    _make(os.environ.get('ONYX_BUILD_DIR', 'build'))
    project, metadata = _metadata()
    tag = _tag()
    filename = f'{project["name"]}-{project["version"]}-{tag}.whl'
    wheel = _Wheel(os.path.join(wheel_directory, filename))
    wheel.add('onyx_editable.pth', (os.path.join(ROOT, 'backend', 'python') + '\n').encode())
    wheel.close(_dist_info(wheel, project, metadata, tag))
    return filename


def build_sdist(sdist_directory, config_settings=None):  # noqa: ARG001
    """The checkout's tracked files (git ls-files), or its files less build outputs without git."""
    project = _project()
    base = f'{project["name"]}-{project["version"]}'
    try:
        files = subprocess.check_output(['git', 'ls-files', '-z'], cwd=ROOT).decode().split('\0')
        files = [f for f in files if f and os.path.isfile(os.path.join(ROOT, f))]
    except (OSError, subprocess.CalledProcessError):
        skip = re.compile(r'^(build|build-[^/]*|\.venv[^/]*|\.git|zoo)(/|$)|__pycache__')
        files = []
        for d, _, names in os.walk(ROOT):
            for n in names:
                rel = os.path.relpath(os.path.join(d, n), ROOT)
                if not skip.search(rel):
                    files.append(rel)
    filename = f'{base}.tar.gz'
    with tarfile.open(os.path.join(sdist_directory, filename), 'w:gz', format=tarfile.PAX_FORMAT) as tar:
        for f in sorted(files):
            tar.add(os.path.join(ROOT, f), arcname=f'{base}/{f}', recursive=False)
        _, metadata = _metadata()
        data = metadata.encode()
        info = tarfile.TarInfo(f'{base}/PKG-INFO')
        info.size = len(data)
        info.mtime = _epoch()
        tar.addfile(info, io.BytesIO(data))
    return filename


def get_requires_for_build_wheel(config_settings=None):  # noqa: ARG001
    return []


def get_requires_for_build_sdist(config_settings=None):  # noqa: ARG001
    return []


def get_requires_for_build_editable(config_settings=None):  # noqa: ARG001
    return []
