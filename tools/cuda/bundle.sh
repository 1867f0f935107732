#!/usr/bin/env bash
# Packs what tools/cuda/check.sh needs on a GPU machine that has CUDA but none of onyx's Debian
# libraries: the host binaries built here (runner, CLI, unit tests), the non-system libraries they
# load, and the ONNX test data, into .gpu/bundle.tar.xz (ignored by git). The CUDA plugin is built
# there from source by check.sh, with that machine's nvcc.
#   tools/cuda/bundle.sh [extra files to carry under models/]
set -euo pipefail
cd "$(dirname "$0")/../.."
tests=$( (ls tests/unit/test_cuda*.c 2>/dev/null || true) | sed 's|tests/unit/\(.*\)\.c|build/tests/\1|')
make -j"$(nproc)" CUDA=1 build/onyx-test-runner build/onyx build/libonyx.so build/libonyx.a \
    $tests >/dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/lib-fallback" "$stage/data" "$stage/models"
cp build/onyx-test-runner build/onyx build/libonyx.so build/libonyx.a $tests "$stage/bin/"
cp -r build/gen "$stage/gen"
strip --strip-debug "$stage"/bin/* 2>/dev/null || true
# every library the binaries load that is not glibc's or CUDA's
for b in "$stage"/bin/*; do ldd "$b" 2>/dev/null || true; done |
    awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so|/libcuda|/usr/local/cuda' |
    while read -r l; do
        # the compiler's runtime libraries: the GPU machine's own are newer, and the plugin built
        # there needs them; ours only where that machine has none
        case $(basename "$l") in
        libstdc++* | libgcc_s* | libgomp* | libz.so*) cp -L "$l" "$stage/lib-fallback/" ;;
        *) cp -L "$l" "$stage/lib/" ;;
        esac
    done
data=$(ls -d .venv/lib/python3*/site-packages/onnx/backend/test/data | head -1)
cp -r "$data"/{simple,pytorch-converted,pytorch-operator,real,light} "$stage/data/"
make --no-print-directory node-data # onnx's node tests, written out by tools/conformance
cp -r build/onnx-data/node "$stage/data/"
for f in "$@"; do cp "$f" "$stage/models/"; done
mkdir -p .gpu
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >>.git/info/exclude
tar -C "$stage" -cf - . | xz -T"$(nproc)" -3 >.gpu/bundle.tar.xz
ls -la .gpu/bundle.tar.xz
