#!/usr/bin/env bash
# The manylinux wheel where Debian's runtime packages are absent (make test-manylinux): checks the
# wheel's libraries (check_wheel_libs.py: auditwheel's policy, every DT_NEEDED inside the wheel or
# whitelisted), then pip-installs it into a minimal Debian root (debootstrap --variant=minbase with
# python3 and python3-venv only: no protobuf-c, OpenBLAS, TBB, libgomp, codecs or RE2, checked) and
# runs there the example and the cases of manylinux_cases.py from Python and the `onyx` CLI, with
# results compared to onnxruntime's on this machine (manylinux_run.py).
#   tests/packaging/test_manylinux.sh [BUILD_DIR]   (default build; the wheel in BUILD/wheelhouse)
#   SUITE=trixie (default bookworm): the Debian release of the root
# Needs root (chroot, mount) and, the first time, debootstrap and network: the root is made once in
# BUILD/manylinux-root-SUITE (~3 minutes) and numpy's wheel downloaded once into
# BUILD/manylinux-wheels.
set -euo pipefail

cd "$(dirname "$0")/../.."
build=${1:-build}
wheel_py=.venv-wheel/bin/python
die() { echo "test-manylinux: FAIL: $*" >&2; exit 1; }
t0=$(date +%s%N)
step() {
    awk -v now="$(date +%s%N)" -v t0="$t0" -v what="$1" \
        'BEGIN { printf "  %-52s %5.1f s\n", what, (now - t0) / 1e9 }'
}

wheels=("$build"/wheelhouse/onyx-*manylinux*.whl)
[[ ${#wheels[@]} == 1 && -f ${wheels[0]} ]] ||
    die "no single manylinux wheel in $build/wheelhouse (make wheel-manylinux)"
wheel=${wheels[0]}
[[ $(id -u) == 0 ]] || die "needs root (chroot and mount)"

echo "== manylinux: $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
"$wheel_py" tests/packaging/check_wheel_libs.py "$wheel" ||
    die "the wheel's libraries are not self-contained"
"$wheel_py" -m auditwheel show "$wheel" >"$build/auditwheel-show.txt" 2>&1 ||
    die "auditwheel show failed"
# (auditwheel wraps its lines)
tr -s '\n ' '  ' <"$build/auditwheel-show.txt" |
    grep -E 'following platform tag: "manylinux_[0-9]+_[0-9]+_x86_64"' >/dev/null ||
    die "auditwheel show: $(cat "$build/auditwheel-show.txt")"
step "check_wheel_libs.py + auditwheel show"

# The minimal root: made once (into a temporary name, so that an interrupted debootstrap is not
# taken for a finished one), with the mirror apt uses here.
suite=${SUITE:-bookworm}
root=$(realpath -m "$build/manylinux-root-$suite")
if [[ ! -x $root/usr/bin/python3 ]]; then
    command -v debootstrap >/dev/null ||
        die "debootstrap is not installed (apt-get install debootstrap)"
    # (a missing sources.list is normal: sed's status is not looked at)
    mirror=$(sed -n 's/^URIs: *\([^ ]*debian\)$/\1/p; s/^deb  *\(http[^ ]*debian\) .*/\1/p' \
             /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | head -1) || true
    echo "== debootstrap --variant=minbase $suite from ${mirror:=http://deb.debian.org/debian}"
    rm -rf "$root.tmp"
    debootstrap --variant=minbase --include=python3,python3-venv "$suite" "$root.tmp" "$mirror" \
        >"$build/debootstrap.log" 2>&1 ||
        die "debootstrap failed: $(tail -5 "$build/debootstrap.log")"
    mv "$root.tmp" "$root"
    step "debootstrap"
fi
# None of what the wheel bundles may be there (libstdc++ and libgcc_s are: manylinux assumes them).
present=$(find "$root" -path "$root/tmp" -prune -o -path "$root/proc" -prune -o \
    \( -name 'libprotobuf-c.so*' -o -name 'libdnnl.so*' -o -name 'libtbb*.so*' \
    -o -name 'libopenblas*' -o -name 'libgomp.so*' -o -name 'libgfortran.so*' \
    -o -name 'libjpeg.so*' -o -name 'libpng16.so*' -o -name 'libtiff.so*' \
    -o -name 'libwebp.so*' -o -name 'libopenjp2.so*' -o -name 'libre2.so*' \) -print)
[[ -z $present ]] || die "the minimal root has what the wheel must bring: $present"

# numpy's wheel for the root's Python, from PyPI once.
pyver=$(chroot "$root" /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
glibc=$(chroot "$root" /usr/bin/ldd --version | head -1 | awk '{ print $NF }') || true
echo "== the root: Debian $suite, Python $pyver, glibc $glibc"
numpy_pin=$(grep -E '^numpy==' tests/requirements.txt)
deps=$build/manylinux-wheels
numpy_wheel="numpy-${numpy_pin#numpy==}-cp${pyver/./}-*.whl"
# shellcheck disable=SC2086 # (the glob)
ls "$deps"/$numpy_wheel >/dev/null 2>&1 ||
    "$wheel_py" -m pip download -q --disable-pip-version-check --only-binary=:all: \
        --python-version "$pyver" -d "$deps" "$numpy_pin" || die "cannot download $numpy_pin"

# The cases and their expected outputs (onnxruntime in .venv), the wheels, into the root's /tmp.
stage=$root/tmp/onyx-test
rm -rf "$stage"
mkdir -p "$stage/wheels"
.venv/bin/python tests/packaging/manylinux_cases.py "$stage/cases" tests/models/example.onnx ||
    die "cannot write the cases"
# shellcheck disable=SC2086
cp "$wheel" "$deps"/$numpy_wheel "$stage/wheels/"
cp tests/packaging/manylinux_run.py "$stage/"
step "cases, wheels"

mount -t proc proc "$root/proc"
trap 'umount "$root/proc"; rm -rf "$stage"' EXIT
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
in_root /usr/bin/python3 -m venv /tmp/onyx-test/venv || die "cannot make a venv in the root"
in_root /tmp/onyx-test/venv/bin/python -m pip install -q --disable-pip-version-check --no-index \
    --find-links /tmp/onyx-test/wheels onyx || die "pip install of the wheel in the root failed"
step "venv + pip install onyx (numpy from its wheel)"
in_root /tmp/onyx-test/venv/bin/python /tmp/onyx-test/manylinux_run.py /tmp/onyx-test/cases ||
    die "onyx does not run in the minimal root"
step "cases, CLI, libraries in the root"
echo "== manylinux: passed"
