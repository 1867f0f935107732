#!/usr/bin/env bash
# Installs what building and testing onyx needs, and only what is missing, so that it takes a
# fraction of a second when everything is there: Debian packages (apt-get) and the Python test
# environment .venv (pip, re-run only when tests/requirements.txt changes).
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

if ((check_only)); then
    ((${#missing[@]})) && echo "deps: missing Debian packages: ${missing[*]}"
    ((venv_ok)) || echo "deps: $venv is missing or older than $requirements"
    ((${#missing[@]} == 0 && venv_ok)) && exit 0
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
