#!/usr/bin/env bash
# Packaging test (make test-install): installs onyx into a temporary prefix and builds the README's
# C example (examples/example.c) against it with pkg-config only, linked shared and static; checks
# the soname links, the installed CLI, and that the CUDA plugin (when built) sits beside the
# library; then builds the Python wheel (pip wheel) and installs it into a fresh venv, where
# `import onyx` and `python -m onyx` must work from outside the source tree; then checks the
# manylinux wheel (make wheel-manylinux) and runs it in another venv, loading nothing from the system.
#   tests/packaging/test_install.sh [BUILD_DIR]      (default build)
# SKIP_PIP=1 leaves out the Python part.
# (grep reads all its input in pipes, never -q: an early exit would SIGPIPE the writer under
# pipefail)
set -euo pipefail

cd "$(dirname "$0")/../.."
root=$PWD
build=${1:-build}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/onyx-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
example_model=$root/tests/models/example.onnx
t0=$(date +%s%N)
step() { awk -v now="$(date +%s%N)" -v t0="$t0" -v what="$1" 'BEGIN { printf "  %-52s %5.1f s\n", what, (now - t0) / 1e9 }'; }
die() { echo "test-install: FAIL: $*" >&2; exit 1; }

echo "== packaging: make install PREFIX=$tmp/prefix (DESTDIR staging checked too)"
make --no-print-directory -s BUILD="$build" install PREFIX="$tmp/prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; die "make install failed"; }
make --no-print-directory -s BUILD="$build" install PREFIX=/opt/onyx DESTDIR="$tmp/stage" >>"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; die "make install DESTDIR failed"; }
[[ -f $tmp/stage/opt/onyx/include/onyx.h && -f $tmp/stage/opt/onyx/lib/pkgconfig/onyx.pc ]] ||
    die "DESTDIR install is not under DESTDIR/PREFIX"
grep -qx 'prefix=/opt/onyx' "$tmp/stage/opt/onyx/lib/pkgconfig/onyx.pc" || die "DESTDIR leaked into onyx.pc"
lib=$tmp/prefix/lib
[[ -f $lib/libonyx.so.0.2.0 && $(readlink "$lib/libonyx.so.0") == libonyx.so.0.2.0 &&
   $(readlink "$lib/libonyx.so") == libonyx.so.0 && -f $lib/libonyx.a ]] ||
    die "library files/links missing: $(ls -l "$lib")"
soname=$(objdump -p "$lib/libonyx.so.0.2.0" | awk '$1 == "SONAME" { print $2 }')
[[ $soname == libonyx.so.0 ]] || die "soname is '$soname', expected libonyx.so.0"
if [[ -f $build/libonyx_cuda.so ]]; then
    [[ -f $lib/libonyx_cuda.so ]] || die "libonyx_cuda.so was built but not installed beside libonyx"
fi
# oneDNN from the private folder beside the library, not from the build tree (also in its rpath)
ldd "$lib/libonyx.so.0" | grep "$lib/onyx-deps/libdnnl.so.3" >/dev/null ||
    die "the installed libonyx does not load oneDNN from $lib/onyx-deps: $(ldd "$lib/libonyx.so.0")"
step "install"

export PKG_CONFIG_PATH=$lib/pkgconfig
cp examples/example.c "$tmp/example.c"
cd "$tmp"
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror example.c $(pkg-config --cflags --libs onyx) -o example_shared ||
    die "shared build of the example failed"
LD_LIBRARY_PATH=$lib ./example_shared "$example_model" >out_shared.txt || die "example (shared) failed"
grep -q '^producer: onyx tools/gen_example.py, graph: example_mlp, 6 nodes$' out_shared.txt || die "unexpected metadata: $(cat out_shared.txt)"
grep -q '^probs: float\[1,10\]' out_shared.txt || die "unexpected output: $(cat out_shared.txt)"
[[ $(head -1 out_shared.txt) == "onyx $(pkg-config --modversion onyx)" ]] ||
    die "onyx.pc's version $(pkg-config --modversion onyx) differs from onyx_version(): $(head -1 out_shared.txt)"
LD_LIBRARY_PATH=$lib ldd ./example_shared | grep "$lib/libonyx.so.0" >/dev/null || die "example_shared does not use the installed library"
step "example.c, pkg-config --cflags --libs (shared)"

# Static: only the archive (a folder with libonyx.a and no libonyx.so, and oneDNN's private
# folder, which a static link uses too), and pkg-config --static.
mkdir -p static/pkgconfig
sed "s|^libdir=.*|libdir=$tmp/static|" "$lib/pkgconfig/onyx.pc" >static/pkgconfig/onyx.pc
cp "$lib/libonyx.a" static/
cp -a "$lib/onyx-deps" static/
# shellcheck disable=SC2046
cc example.c $(PKG_CONFIG_PATH=$tmp/static/pkgconfig pkg-config --static --cflags --libs onyx) \
    -o example_static || die "static build of the example failed"
! ldd ./example_static | grep libonyx >/dev/null || die "example_static links libonyx dynamically"
./example_static "$example_model" >out_static.txt || die "example (static) failed"
cmp -s out_shared.txt out_static.txt || die "static and shared outputs differ"
step "example.c, pkg-config --static"

"$tmp/prefix/bin/onyx" info "$example_model" >info.txt || die "installed onyx info failed"
grep -q 'producer: onyx' info.txt && grep -q 'ops: .*MatMul x2' info.txt || die "unexpected info: $(cat info.txt)"
ldd "$tmp/prefix/bin/onyx" | grep "libonyx.so.0 => $tmp/prefix/bin/../lib/libonyx.so.0" >/dev/null ||
    die "installed CLI does not find libonyx in \$ORIGIN/../lib: $(ldd "$tmp/prefix/bin/onyx" | grep onyx)"
if [[ -f $lib/libonyx_cuda.so ]]; then
    # Asking for CUDA loads the plugin from beside the library (dladdr), GPU or not.
    LD_DEBUG=files "$tmp/prefix/bin/onyx" run -d CUDA "$example_model" >/dev/null 2>cuda.txt || true
    grep -q "file=$tmp/prefix/bin/../lib/libonyx_cuda.so .*dynamically loaded" cuda.txt ||
        die "the installed libonyx does not load the libonyx_cuda.so beside it"
fi
step "installed CLI"
cd "$root"

if [[ ${SKIP_PIP:-0} == 1 ]]; then
    echo "== packaging: passed (pip part skipped)"
    exit 0
fi

# The wheel, built by pip with the in-tree backend (pyproject.toml: no build requirements, so no
# download), then installed into a fresh venv. numpy comes from the test venv through a .pth file.
py=${PYTHON3:-python3}
# The venv gets no pip of its own (ensurepip takes seconds): the test venv's pip installs into it.
"$py" -m venv --without-pip "$tmp/venv" || die "cannot create a venv"
pip=(.venv/bin/python -m pip --python "$tmp/venv/bin/python" --disable-pip-version-check)
vpy=$tmp/venv/bin/python
site=$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
dev_site=$(.venv/bin/python -c 'import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))')
printf 'import sys; sys.path.append(%s)\n' "'$dev_site'" >"$site/zz_onyx_test_numpy.pth"
step "fresh venv"
ONYX_BUILD_DIR=$build "${pip[@]}" wheel -q --no-deps -w "$tmp/wheels" "$root" >"$tmp/wheel.log" 2>&1 || { cat "$tmp/wheel.log"; die "pip wheel failed"; }
wheel=$(ls "$tmp"/wheels/onyx-*.whl)
python3 -m zipfile -l "$wheel" >"$tmp/wheel.txt"
grep -q 'onyx/_native/libonyx.so.0' "$tmp/wheel.txt" || die "the wheel does not bundle libonyx: $(cat "$tmp/wheel.txt")"
grep -q 'onyx/_native/onyx-deps/libdnnl.so.3' "$tmp/wheel.txt" || die "the wheel does not bundle oneDNN: $(cat "$tmp/wheel.txt")"
"${pip[@]}" install -q --no-deps --no-index "$wheel" >"$tmp/pip.log" 2>&1 ||
    { cat "$tmp/pip.log"; die "pip install of the wheel failed"; }
step "pip wheel + pip install"
cd "$tmp"
env -u ONYX_LIB -u PYTHONPATH "$vpy" - "$example_model" "$site" <<'EOF' || die "the installed package does not work"
import os, sys
import numpy as np
import onyx
model, site = sys.argv[1], sys.argv[2]
assert onyx.__file__.startswith(site), onyx.__file__
assert onyx.library_path().startswith(os.path.join(site, 'onyx')), onyx.library_path()
sess = onyx.InferenceSession(model, providers=['CPUExecutionProvider'])
(probs,) = sess.run(None, {'x': np.ones((2, 16), np.float32)})
assert probs.shape == (2, 10) and abs(float(probs.sum()) - 2.0) < 1e-4
assert sess.get_modelmeta().graph_name == 'example_mlp'
EOF
env -u ONYX_LIB -u PYTHONPATH "$vpy" -m onyx info "$example_model" | grep 'graph:    example_mlp' >/dev/null ||
    die "python -m onyx info failed"
cd "$root"
step "import onyx + python -m onyx outside the tree"

# The manylinux wheel (make wheel-manylinux, a prerequisite of make test-install): every library it
# links inside it or on the policy's whitelist, then installed into a fresh venv and run with
# LD_LIBRARY_PATH cleared: the system's copies of what it bundles are installed here, and onyx must
# load none of them (manylinux_run.py reads /proc/self/maps). make test-manylinux runs it where the
# Debian runtime packages are absent.
mwheels=("$build"/wheelhouse/onyx-*manylinux*.whl)
[[ ${#mwheels[@]} == 1 && -f ${mwheels[0]} ]] ||
    die "no single manylinux wheel in $build/wheelhouse (make wheel-manylinux)"
.venv-wheel/bin/python tests/packaging/check_wheel_libs.py "${mwheels[0]}" >"$tmp/check.log" ||
    { cat "$tmp/check.log"; die "the manylinux wheel's libraries are not self-contained"; }
"$py" -m venv --without-pip "$tmp/mvenv" || die "cannot create a venv"
msite=$("$tmp/mvenv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf 'import sys; sys.path.append(%s)\n' "'$dev_site'" >"$msite/zz_onyx_test_numpy.pth"
.venv/bin/python -m pip --python "$tmp/mvenv/bin/python" --disable-pip-version-check install -q \
    --no-deps --no-index "${mwheels[0]}" >"$tmp/pip.log" 2>&1 ||
    { cat "$tmp/pip.log"; die "pip install of the manylinux wheel failed"; }
.venv/bin/python tests/packaging/manylinux_cases.py "$tmp/cases" "$example_model" || die "cannot write the cases"
cd "$tmp"
env -u ONYX_LIB -u PYTHONPATH -u LD_LIBRARY_PATH -u LD_PRELOAD "$tmp/mvenv/bin/python" \
    "$root/tests/packaging/manylinux_run.py" "$tmp/cases" || die "the manylinux wheel does not run"
cd "$root"
step "manylinux wheel: libraries, pip install, run"
echo "== packaging: passed"
