#!/usr/bin/env bash
# On a GPU machine (the device tool's H100/H200), from the repository root, after
# tools/cuda/bundle.sh made .gpu/bundle.tar.xz here: builds the CUDA plugin with that machine's
# nvcc, then runs the CUDA unit test, the conformance on CUDA (and on the CPU, for comparison),
# and the GPU benchmark; logs go to $OUT (or .gpu/out). The last lines are the summary.
#   tools/cuda/check.sh [unit] [conformance] [gen] [bench] [attention] [ncu] [llm] [FILTER=glob]
#   (default: unit conformance bench)
# gen runs the generated op cases (tests/gen/make_cases.py: its ok/ and par/ folders, packed here
# as .gpu/gc.tar.xz) on CUDA; CONF_DEVICES picks the conformance devices (default "CPU CUDA").
# attention runs the attention cases under each ONYX_CUDA_ATTENTION variant and times the
# variants (tools/cuda/att_bench.py); ncu reads the hardware counters of the attention kernel at
# ViT-B/16's shape (Nsight Compute, clocks left alone). bench times onnxruntime-gpu beside
# PyTorch where tools/cuda/ort_gpu.sh installed it (/tmp/ort-gpu-site) in earlier calls. llm
# exports a Qwen2-0.5B-sized random model with the builder for CUDA (int4) and times its prefill
# and decode on onyx, onnxruntime-gpu and onnxruntime-genai-cuda (tools/bench/llm_bench.py
# --device cuda; LLM_FLAGS adds to its options).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-.gpu/out}
mkdir -p "$out"
steps=${*:-unit conformance bench}
filter=
for s in $steps; do case $s in FILTER=*) filter=${s#FILTER=} ;; esac; done
jobs=$(nproc)

b=/tmp/onyx-bundle
rm -rf "$b" && mkdir -p "$b" && tar -C "$b" -xJf .gpu/bundle.tar.xz || exit 1
export LD_LIBRARY_PATH="$b/lib:${LD_LIBRARY_PATH:-}:$b/lib-fallback"
mkdir -p build && cp -r "$b/gen" build/ && touch build/gen/*
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
t0=$SECONDS
# the plugin's sources (CUDA, kernels_cuda/*.c, geometry/) need none of oneDNN's headers, and this
# machine has no Debian packages to install: mark the host's deps step done
mkdir -p .deps/onednn && touch .deps/onednn/.stamp
if ! make -j"$jobs" CUDA=1 build/libonyx_cuda.so >"$out/build.log" 2>&1; then
    grep -E "error" "$out/build.log" | head -40
    echo "SUMMARY build failed"
    exit 1
fi
echo "plugin built in $((SECONDS - t0)) s"
export ONYX_CUDA_LIB=$PWD/build/libonyx_cuda.so
# the library must find the plugin and the GPU, or every step below quietly runs without CUDA
if ! ONYX_LIB=$b/bin/libonyx.so PYTHONPATH=backend/python python3 -c 'import sys, onyx.ort as o
sys.exit("CUDAExecutionProvider" not in o.get_available_providers())'; then
    ldd -r build/libonyx_cuda.so 2>&1 | grep -i undefined | head
    echo "SUMMARY CUDA is not usable with this plugin"
    exit 1
fi
summary=()

if [[ " $steps " == *" unit "* ]]; then
    "$b/bin/test_cuda" >"$out/unit.log" 2>&1
    rc=$?
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |nodes on CUDA|error|Error" "$out/unit.log" | head -30
    summary+=("unit rc=$rc")
fi

if [[ " $steps " == *" unit "* ]]; then   # device values and epilogues from Python, on CUDA too
    ONYX_LIB=$b/bin/libonyx.so PYTHONPATH=backend/python python3 -m pytest -q \
        tests/python/test_io_binding.py tests/python/test_device_epilogue.py \
        tests/python/test_device_attention.py tests/python/test_patch_embedding.py \
        tests/python/test_cuda_llm_ops.py tests/python/test_device_run_shapes.py \
        >"$out/python.log" 2>&1
    rc=$?
    tail -3 "$out/python.log"
    summary+=("python io binding rc=$rc")
fi

# On CUDA the cases run through tools/cuda/cases.sh (one process per shard of tests: a CUDA
# context per test cost more than the tests; failures run again, each in its own process);
# CASES_FORK=1 runs every test in its own process instead (the slower, older way).
run_cases() { # DEVICE LOG [runner options...] -- DIR...
    local dev=$1 log=$2
    shift 2
    if [[ $dev == CUDA && -z ${CASES_FORK:-} ]]; then
        tools/cuda/cases.sh "$b/bin/onyx-test-runner" "$dev" "$log" "$@" >/dev/null
    else
        local opts=()
        while [[ $1 != -- ]]; do opts+=("$1"); shift; done
        shift
        "$b/bin/onyx-test-runner" -d "$dev" -j "$jobs" -q "${opts[@]}" "$@" >"$log" 2>&1
    fi
}

if [[ " $steps " == *" conformance "* ]]; then
    data="$b/data"
    dirs=("$data/node" "$data/simple" "$data/pytorch-converted" "$data/pytorch-operator" "$data/real")
    for dev in ${CONF_DEVICES:-CPU CUDA}; do
        t0=$SECONDS
        exp=tests/conformance/$([[ $dev == CUDA ]] && echo cuda || echo cpu)_expected_failures.txt
        run_cases "$dev" "$out/conformance-$dev.log" ${filter:+-f "$filter"} \
            $([[ -f $exp ]] && echo "-x $exp") --draws tests/conformance/random_draws.txt \
            -- "${dirs[@]}"
        echo "conformance $dev rc=$? in $((SECONDS - t0)) s: $(tail -1 "$out/conformance-$dev.log")"
        summary+=("conformance-$dev: $(tail -1 "$out/conformance-$dev.log")")
        grep -E "^(FAIL|ERROR|XPASS) " "$out/conformance-$dev.log" | sort -u | head -60
    done
fi

if [[ " $steps " == *" gen "* && -f .gpu/gc.tar.xz ]]; then
    t0=$SECONDS
    rm -rf /tmp/onyx-gc && mkdir -p /tmp/onyx-gc && tar -C /tmp/onyx-gc -xJf .gpu/gc.tar.xz
    run_cases CUDA "$out/gen-CUDA.log" ${filter:+-f "$filter"} -- /tmp/onyx-gc/*/
    echo "generated cases CUDA rc=$? in $((SECONDS - t0)) s: $(tail -1 "$out/gen-CUDA.log")"
    summary+=("gen-CUDA: $(tail -1 "$out/gen-CUDA.log")")
    grep -E "^(FAIL|ERROR|XPASS) " "$out/gen-CUDA.log" | sort -u | head -40
fi

if [[ " $steps " == *" attention "* ]]; then
    if [[ -f .gpu/gc.tar.xz && ! -d /tmp/onyx-gc ]]; then
        mkdir -p /tmp/onyx-gc && tar -C /tmp/onyx-gc -xJf .gpu/gc.tar.xz
    fi
    for var in pipe p16 pipe,p16; do   # the default ran with gen
        [[ -d /tmp/onyx-gc ]] || break
        export ONYX_CUDA_ATTENTION=$var
        run_cases CUDA "$out/gen-attention-$var.log" -f '*att*' -- /tmp/onyx-gc/*/
        unset ONYX_CUDA_ATTENTION
        echo "attention cases ($var): $(tail -1 "$out/gen-attention-$var.log")"
        summary+=("attention-$var: $(tail -1 "$out/gen-attention-$var.log")")
        grep -E "^(FAIL|ERROR) " "$out/gen-attention-$var.log" | sort -u | head -10
    done
    ONYX_LIB=$b/bin/libonyx.so ONYX_CLI=$b/bin/onyx PYTHONPATH=backend/python \
        python3 tools/cuda/att_bench.py 2>&1 | tee "$out/attention.md" | tail -20
    summary+=("attention bench rc=${PIPESTATUS[0]}")
fi

if [[ " $steps " == *" ncu "* ]]; then
    [[ -f /tmp/onyx-att-models/vit.onnx ]] ||
        ONYX_LIB=$b/bin/libonyx.so ONYX_CLI=$b/bin/onyx PYTHONPATH=backend/python \
            python3 tools/cuda/att_bench.py --runs 3 >/dev/null 2>&1
    ncu --clock-control none --kernel-name regex:flash_tc --launch-skip 2 --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section WarpStateStats --section MemoryWorkloadAnalysis \
        "$b/bin/onyx" bench /tmp/onyx-att-models/vit.onnx -d CUDA --device-io -n 3 -w 1 \
        >"$out/ncu-attention.txt" 2>&1
    summary+=("ncu rc=$?")
    grep -E "Duration|Throughput|Achieved Occupancy|Theoretical Occupancy|Registers|Stall|Warp Cycles" \
        "$out/ncu-attention.txt" | head -30
fi

if [[ " $steps " == *" bench "* ]]; then
    [[ -d /tmp/ort-gpu-site/onnxruntime ]] && export PYTHONPATH=/tmp/ort-gpu-site${PYTHONPATH:+:$PYTHONPATH}
    PYTHONUNBUFFERED=1 ONYX_LIB=$b/bin/libonyx.so ONYX_CLI=$b/bin/onyx \
        python3 tools/cuda/bench_gpu.py --out "$out" ${BENCH_MODELS:+--models "$BENCH_MODELS"} \
        ${BENCH_BATCHES:+--batches "$BENCH_BATCHES"} \
        ${BENCH_PRECISIONS:+--precisions "$BENCH_PRECISIONS"} \
        ${BENCH_PROFILE:+--profile} ${BENCH_AB:+--ab} 2>&1 | tee "$out/bench.log" | tail -40
    summary+=("bench rc=${PIPESTATUS[0]}")
fi
if [[ " $steps " == *" llm "* ]]; then
    [[ -d /tmp/ort-gpu-site/onnxruntime_genai ]] && export PYTHONPATH=/tmp/ort-gpu-site${PYTHONPATH:+:$PYTHONPATH}
    # the CUDA libraries of PyTorch's nvidia-* wheels, for onnxruntime-genai's own library
    nv=$(python3 -c 'import glob, os, nvidia; print(":".join(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], "*", "lib")))))' 2>/dev/null)
    [[ -n $nv ]] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$nv
    model=/tmp/onyx-llm/qwen2-0.5b-int4-cuda
    t0=$SECONDS
    [[ -d $model ]] || python3 tools/llm/tiny_model.py "$model" --preset qwen2-0.5b --ep cuda \
        >"$out/llm-export.log" 2>&1 || tail -5 "$out/llm-export.log"
    echo "llm export in $((SECONDS - t0)) s"
    PYTHONUNBUFFERED=1 ONYX_LIB=$b/bin/libonyx.so python3 tools/bench/llm_bench.py "$model" \
        --device cuda --engines onyx-share,ort-share,genai --prefill 128 --decode 64 --rounds 1 \
        ${LLM_FLAGS:-} 2>&1 | tee "$out/llm.log" | tail -12
    summary+=("llm rc=${PIPESTATUS[0]}")
fi
printf 'SUMMARY %s\n' "${summary[@]}"
