#!/usr/bin/env bash
# Installs what building and testing onyx needs, and only what is missing, so that it takes a
# fraction of a second when everything is there: Debian packages (apt-get) and the Python test
# environment .venv (pip, re-run only when tests/requirements.txt changes), and oneDNN built with
# the TBB runtime (.deps/onednn, from PyPI wheels: Debian's oneDNN uses OpenMP, see
# docs/DESIGN-NOTES.md, "Threads").
#   tools/deps.sh [--check] PACKAGE...
#   --check: install nothing; exit 1 and say what is missing.
set -euo pipefail

cd "$(dirname "$0")/.."
check_only=0
if [[ "${1:-}" == "--check" ]]; then
    check_only=1
    shift
fi
packages=("$@")
venv=.venv
requirements=tests/requirements.txt
stamp=$venv/.requirements.stamp

python=${PYTHON3:-python3}
# A pyenv or other non-Debian python3 brings its own venv module; Debian's needs python3-venv.
if ! command -v "$python" >/dev/null 2>&1; then
    packages+=(python3 python3-venv)
elif ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    packages+=(python3-venv)
fi

missing=()
if ((${#packages[@]})); then
    installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null || true)
    for p in "${packages[@]}"; do
        awk -v p="$p" '$1 == p && $2 == "ii" { found = 1 } END { exit !found }' <<<"$installed" ||
            missing+=("$p")
    done
fi

req_hash=$(sha256sum "$requirements" | cut -d' ' -f1)
venv_ok=0
if [[ -x $venv/bin/python && -f $stamp && "$(cat "$stamp")" == "$req_hash" ]]; then
    venv_ok=1
fi

# oneDNN with the TBB runtime, so that oneDNN's primitives and onyx's own loops share one TBB pool
# (core/parallel.cc). PyPI has it only as wheels: the library, its headers, and the two Intel
# compiler runtime libraries it links (libimf, libintlc). Pinned; unpacked into .deps/onednn.
onednn_dir=.deps/onednn
onednn_wheels=(onednn-cpu-tbb==2023.2.0 onednn-devel-cpu-tbb==2023.2.0 intel-cmplr-lib-rt==2026.2.0)
onednn_ok=0
if [[ -f $onednn_dir/.stamp && "$(cat "$onednn_dir/.stamp")" == "${onednn_wheels[*]}" ]]; then
    onednn_ok=1
fi

if ((check_only)); then
    ((${#missing[@]})) && echo "deps: missing Debian packages: ${missing[*]}"
    ((venv_ok)) || echo "deps: $venv is missing or older than $requirements"
    ((onednn_ok)) || echo "deps: $onednn_dir is missing or not ${onednn_wheels[*]}"
    ((${#missing[@]} == 0 && venv_ok && onednn_ok)) && exit 0
    exit 1
fi

if ((${#missing[@]})); then
    echo "deps: installing ${missing[*]}"
    sudo=()
    if [[ $(id -u) != 0 ]]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            echo "deps: need root (or sudo) to install: ${missing[*]}" >&2
            exit 1
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
    # python3-venv may have just been installed; the check above used the old state.
fi

if ((!venv_ok)); then
    if [[ ! -x $venv/bin/python ]]; then
        echo "deps: creating $venv"
        rm -rf "$venv"
        "$python" -m venv "$venv"
    fi
    echo "deps: pip install -r $requirements"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
    echo "$req_hash" >"$stamp"
fi

if ((!onednn_ok)); then
    echo "deps: ${onednn_wheels[*]} -> $onednn_dir"
    wheels=$(mktemp -d)
    trap 'rm -rf "$wheels"' EXIT
    "$venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
        --only-binary=:all: -d "$wheels" "${onednn_wheels[@]}"
    rm -rf "$onednn_dir"
    mkdir -p "$onednn_dir/lib" "$onednn_dir/include"
    for w in "$wheels"/*.whl; do
        "$venv/bin/python" -m zipfile -e "$w" "$wheels/x"
    done
    cp -a "$wheels"/x/*.data/data/include/. "$onednn_dir/include/"
    # Wheels hold copies, not links: keep one copy of each library under its soname.
    lib=$(echo "$wheels"/x/onednn_cpu_tbb-*.data/data/lib)
    cp "$lib/libdnnl.so.3" "$onednn_dir/lib/"
    ln -s libdnnl.so.3 "$onednn_dir/lib/libdnnl.so"
    lib=$(echo "$wheels"/x/intel_cmplr_lib_rt-*.data/data/lib)
    cp "$lib/libimf.so" "$lib/libintlc.so.5" "$onednn_dir/lib/"
    # libdnnl finds the Intel runtime beside itself, wherever it is copied to (the wheel too).
    patchelf --set-rpath '$ORIGIN' "$onednn_dir/lib/libdnnl.so.3"
    cp "$(echo "$wheels"/x/onednn_cpu_tbb-*.data/data/share/doc/onednn/LICENSE)" "$onednn_dir/"
    echo "${onednn_wheels[*]}" >"$onednn_dir/.stamp"
fi
