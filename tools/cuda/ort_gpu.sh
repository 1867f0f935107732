#!/usr/bin/env bash
# onnxruntime-gpu and onnxruntime-genai-cuda, the anchors of tools/cuda/bench_gpu.py and of
# `llm_bench.py --device cuda`, carried to the device machine. That machine has CUDA 13 and cuDNN 9
# (PyTorch's nvidia-* wheels) but no package index, and a call carries at most 64 MiB with the
# working tree; onnxruntime-gpu's wheel is ~250 MB. So the packages are packed here into parts
# that fit a call each, and put together there:
#   tools/cuda/ort_gpu.sh pack      here: downloads onnxruntime-gpu $ORT_GPU_VERSION and
#                                   onnxruntime-genai-cuda $ORT_GENAI_VERSION (CUDA 13 builds),
#                                   packs both (without onnxruntime's TensorRT provider) as
#                                   one .tar.xz cut into parts of $ORT_GPU_PART_MIB MiB:
#                                   .gpu/ort/part.00, part.01, ... and .gpu/ort/SHA256SUMS; prints
#                                   what each device call carries
#   tools/cuda/ort_gpu.sh take      there, in every call that carries a part: moves the parts that
#                                   arrived into /tmp/ort-gpu-parts, which stays while the
#                                   machine does (calls in a row, each within its idle time)
#   tools/cuda/ort_gpu.sh unpack    there, once every part is in: checks them and installs the
#                                   packages into /tmp/ort-gpu-site (check.sh puts it on
#                                   PYTHONPATH for its bench and llm steps when it is there)
set -euo pipefail
cd "$(dirname "$0")/../.."
version=${ORT_GPU_VERSION:-1.31.1}
genai_version=${ORT_GENAI_VERSION:-0.18.0}
part_mib=${ORT_GPU_PART_MIB:-50}
parts=/tmp/ort-gpu-parts
site=/tmp/ort-gpu-site

case ${1:-} in
pack)
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 -d "$work" "onnxruntime-gpu==$version" \
        "onnxruntime-genai-cuda==$genai_version"
    mkdir -p "$work/site"
    for w in "$work"/*.whl; do (cd "$work/site" && python3 -m zipfile -e "$w" .); done
    rm -f "$work"/site/onnxruntime/capi/libonnxruntime_providers_tensorrt.so
    mkdir -p .gpu
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >>.git/info/exclude
    rm -rf .gpu/ort && mkdir -p .gpu/ort
    tar -C "$work/site" -cf - . | xz -T"$(nproc)" -6 | split -d -b "${part_mib}M" - .gpu/ort/part.
    (cd .gpu/ort && sha256sum part.* >SHA256SUMS)
    tree_mib=$(git ls-files -z | xargs -0 du -cb | tail -1 | awk '{print int($1 / 1048576) + 1}')
    echo "onnxruntime-gpu $version, onnxruntime-genai-cuda $genai_version: $(ls .gpu/ort/part.* | wc -l) parts of at most $part_mib MiB" \
        "(the tree is ~$tree_mib MiB; a call carries 64 MiB in all). One device call each:"
    for p in .gpu/ort/part.*; do
        echo "  carry [\"$p\", \".gpu/ort/SHA256SUMS\"]: bash tools/cuda/ort_gpu.sh take"
    done
    echo "then, in the call that carries the last part or after it: bash tools/cuda/ort_gpu.sh unpack"
    ;;
take)
    mkdir -p "$parts"
    [[ -f .gpu/ort/SHA256SUMS ]] && cp .gpu/ort/SHA256SUMS "$parts/"
    for p in .gpu/ort/part.*; do
        [[ -f $p ]] && mv "$p" "$parts/"
    done
    echo "parts here: $(cd "$parts" && ls part.* 2>/dev/null | tr '\n' ' ')"
    ;;
unpack)
    "$0" take
    (cd "$parts" && sha256sum --quiet -c SHA256SUMS) || {
        echo "onnxruntime-gpu: parts missing or damaged"
        exit 1
    }
    rm -rf "$site" && mkdir -p "$site"
    cat "$parts"/part.* | xz -d | tar -C "$site" -xf -
    rm -rf "$parts"
    PYTHONPATH=$site python3 -c 'import onnxruntime as o; print("onnxruntime", o.__version__, o.get_available_providers())'
    PYTHONPATH=$site python3 -c 'import onnxruntime_genai as g; print("onnxruntime-genai", g.__version__)'
    ;;
*)
    sed -n '2,/^set -e/p' "$0" | sed '$d'
    exit 2
    ;;
esac
