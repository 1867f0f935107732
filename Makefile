# onyx — one build for the library, the tools and the tests.
#   make               libonyx.a, libonyx.so, onyx-test-runner, onyx (CLI) in build/
#   make test          deps if missing, build, unit tests, conformance, Python tests, quick start
#   make sanitize      the same tests under AddressSanitizer + UBSan (build-asan/)
#   make conformance   the conformance runner over every ONNX test data folder
#                      (FILTER=glob-or-substring, DEVICE=CPU|CUDA|TEST, JOBS=N, EXPECTED=file,
#                      RUNNER_FLAGS="-q --timeout 300 ...")
#   make unit          the cmocka unit tests
#   make tsan          the concurrency test built with ThreadSanitizer (part of make test)
#   make deps          Debian packages + Python test venv (.venv), only what is missing
#   make run-example   deps + build + `onyx run` on the bundled example model
#   make example       regenerate tests/models/example.onnx (needs .venv)
#   make bench         onyx vs onnxruntime on the light models (tools/bench/bench.py)
#   make CUDA=0|1      CUDA kernels out or in; default: in when nvcc is found and kernels_cuda/
#                      has sources

BUILD ?= build
CC ?= cc
OPT ?= -O2 -g
SAN_FLAGS ?=
PYTHON ?= .venv/bin/python
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEVICE ?= CPU
EXPECTED ?= tests/conformance/$(if $(filter CUDA% cuda%,$(DEVICE)),cuda,cpu)_expected_failures.txt
FILTER ?=
RUNNER_FLAGS ?=

# Debian packages that building and testing needs (python3-venv is added by tools/deps.sh when
# python3 lacks venv). Add new ones here.
DEB_PACKAGES := gcc g++ make pkg-config protobuf-c-compiler libprotobuf-c-dev \
                libopenblas-openmp-dev libdnnl-dev libcmocka-dev libre2-dev \
                libjpeg62-turbo-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev libstb-dev

CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) -Wall -Wextra -Werror -fPIC -fvisibility=hidden \
          -fopenmp -I. -Iinclude -I$(BUILD)/gen $(SAN_FLAGS) $(EXTRA_CFLAGS)
CXX ?= c++
# C++ only where a library has no C API (RE2): a thin shim with a C interface.
CXXFLAGS := -std=c++17 $(OPT) -Wall -Wextra -Werror -fPIC -fvisibility=hidden -I. -Iinclude \
            -I$(BUILD)/gen $(SAN_FLAGS) $(EXTRA_CFLAGS)
# Image codecs for ImageDecoder; OpenJPEG's headers live in a versioned folder.
OPENJPEG_CFLAGS := $(shell pkg-config --cflags libopenjp2 2>/dev/null)
CFLAGS += $(OPENJPEG_CFLAGS)
LDLIBS := -lprotobuf-c -ldnnl -lre2 -ljpeg -lpng -ltiff -lwebp -lopenjp2 -lstb \
          -lstdc++ -lm -lpthread -ldl
LDFLAGS := -fopenmp $(SAN_FLAGS)

LIB_SRCS := $(wildcard core/*.c ops/*.c ops/*/*.c kernels_cpu/*.c kernels_cpu/*/*.c backend/*.c)
LIB_CXX_SRCS := $(wildcard kernels_cpu/*/*.cc)
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) $(patsubst %.cc,$(BUILD)/obj/%.cc.o,$(LIB_CXX_SRCS)) \
            $(BUILD)/obj/gen/onnx.pb-c.o

# ---- CUDA: kernels_cuda/*.cu (nvcc) and kernels_cuda/*.c (cc, CUDA headers) make
# libonyx_cuda.so, which libonyx loads at run time (backend/cuda_plugin.c): libonyx itself needs
# no CUDA library. Built when CUDA=1 (default: when nvcc is found).
NVCC ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CUDA_CU_SRCS := $(wildcard kernels_cuda/*.cu)
CUDA_C_SRCS := $(wildcard kernels_cuda/*.c)
CUDA ?= $(if $(and $(NVCC),$(strip $(CUDA_CU_SRCS) $(CUDA_C_SRCS))),1,0)
LIB_CUDA_SO := $(BUILD)/libonyx_cuda.so
ifeq ($(CUDA),1)
  ifeq ($(NVCC),)
    $(error CUDA=1 but nvcc is not found (put it on PATH or set NVCC=/path/to/nvcc))
  endif
  CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(realpath $(NVCC)))
  CUDA_ARCH ?= sm_90
  NVCCFLAGS ?= -arch=$(CUDA_ARCH) -O2 -g -std=c++17 -Xcompiler -fPIC,-fvisibility=hidden,-Wall \
               -I. -Iinclude -I$(BUILD)/gen
  CUDA_CFLAGS := -I$(CUDA_HOME)/include
  CUDA_LDLIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudnn -lcublas -lcudart -lstdc++
  CUDA_OBJS := $(patsubst %.cu,$(BUILD)/obj/%.cu.o,$(CUDA_CU_SRCS)) \
               $(patsubst %.c,$(BUILD)/obj/%.o,$(CUDA_C_SRCS))
  CUDA_TARGETS := $(LIB_CUDA_SO)
endif

LIB_A := $(BUILD)/libonyx.a
LIB_SO := $(BUILD)/libonyx.so
RUNNER := $(BUILD)/onyx-test-runner
CLI := $(BUILD)/onyx
TOOLS := $(RUNNER) $(CLI)
TOOL_COMMON := $(BUILD)/obj/tools/common.o

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

# The ONNX backend test data of the pinned onnx package in .venv. Evaluated when used, so a
# sub-make started after `deps` sees a fresh .venv.
ONNX_DATA = $(firstword $(wildcard .venv/lib/python3*/site-packages/onnx/backend/test/data))
CONFORMANCE_DIRS := node simple pytorch-converted pytorch-operator real
EXAMPLE := tests/models/example.onnx

# Sanitizer settings for what the tests run (empty in plain builds).
ASAN_ENV := $(if $(SAN_FLAGS),env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:$(if $(filter 1,$(CUDA)),protect_shadow_gap=0:)$(ASAN_OPTIONS) \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:$(UBSAN_OPTIONS) \
            LSAN_OPTIONS=suppressions=$(CURDIR)/tests/conformance/lsan.supp:print_suppressions=0:$(LSAN_OPTIONS))

.PHONY: all test unit unit-bins sanitize tsan test-models clean deps conformance conformance-levels runner-selftest python-tests run-example gen-tests \
        example bench
all: $(LIB_A) $(LIB_SO) $(TOOLS) $(CUDA_TARGETS)

# Objects are rebuilt when the flags change (CUDA=0/1, OPT, sanitizers, EXTRA_CFLAGS): the stamp is
# rewritten only when its content differs.
FLAGS_LINE := $(CC) $(CFLAGS) | $(CXX) $(CXXFLAGS) | $(LDFLAGS) $(LDLIBS)
FLAGS_STAMP := $(BUILD)/flags.stamp
ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
  $(shell mkdir -p $(BUILD) && { printf '%s\n' '$(FLAGS_LINE)' | cmp -s - $(FLAGS_STAMP) || printf '%s\n' '$(FLAGS_LINE)' > $(FLAGS_STAMP); })
endif

# One protoc-c run writes both files (a grouped target, so make -j runs it once).
$(BUILD)/gen/onnx.pb-c.c $(BUILD)/gen/onnx.pb-c.h &: onnx.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen onnx.proto

$(BUILD)/obj/gen/onnx.pb-c.o: $(BUILD)/gen/onnx.pb-c.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.c $(BUILD)/gen/onnx.pb-c.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.cc.o: %.cc $(BUILD)/gen/onnx.pb-c.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.cu.o: %.cu $(BUILD)/gen/onnx.pb-c.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

# The archive and shared object list every object; the log shows a count instead.
$(LIB_A): $(LIB_OBJS)
	@rm -f $@
	@echo "ar rcs $@ ($(words $^) objects)"
	@ar rcs $@ $^

$(LIB_SO): $(LIB_OBJS)
	@echo "$(CC) -shared -o $@ ($(words $^) objects) $(LDLIBS)"
	@$(CC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The CUDA part: its own objects only; what it needs of the core comes through kernels_cuda/plugin.h.
$(BUILD)/obj/kernels_cuda/%.o: kernels_cuda/%.c $(BUILD)/gen/onnx.pb-c.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CUDA_CFLAGS) -MMD -MP -c $< -o $@

$(LIB_CUDA_SO): $(CUDA_OBJS)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(CUDA_LDLIBS)

$(RUNNER): $(BUILD)/obj/tools/onyx-test-runner.o $(TOOL_COMMON) $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(CLI): $(BUILD)/obj/tools/onyx.o $(TOOL_COMMON) $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# ---- tests

deps:
	@tools/deps.sh $(DEB_PACKAGES)

unit-bins: $(UNIT_BINS)

unit: $(UNIT_BINS)
	@rc=0; for t in $(UNIT_BINS); do echo "== $$t"; $(ASAN_ENV) $$t || rc=1; done; exit $$rc

conformance: $(RUNNER)
	@data="$(ONNX_DATA)"; \
	if [ -z "$$data" ]; then echo "no onnx test data under .venv: run make deps" >&2; exit 1; fi; \
	echo "== conformance ($(DEVICE), $(JOBS) jobs): $(CONFORMANCE_DIRS)"; \
	$(ASAN_ENV) $(RUNNER) -d $(DEVICE) -j $(JOBS) $(if $(FILTER),-f '$(FILTER)') $(RUNNER_FLAGS) \
	    $(if $(wildcard $(EXPECTED)),-x $(EXPECTED)) --draws tests/conformance/random_draws.txt \
	    --report $(BUILD)/conformance-$(DEVICE).json \
	    $(addprefix $$data/,$(CONFORMANCE_DIRS))

# The model folders again at the lower optimization levels (-O basic: constant folding, no fusion;
# -O none: the graph as written), so that fused and unfused runs are both checked.
conformance-levels: $(RUNNER)
	@data="$(ONNX_DATA)"; \
	if [ -z "$$data" ]; then echo "no onnx test data under .venv: run make deps" >&2; exit 1; fi; \
	for level in basic none; do \
	    echo "== conformance at -O $$level: simple pytorch-converted real"; \
	    $(ASAN_ENV) $(RUNNER) -O $$level -q -j $(JOBS) $(if $(wildcard $(EXPECTED)),-x $(EXPECTED)) \
	        $$data/simple $$data/pytorch-converted $$data/real || exit 1; \
	done

# The runner checked on broken test dirs, so that conformance numbers can be trusted.
runner-selftest: $(RUNNER)
	@data="$(ONNX_DATA)"; \
	if [ -z "$$data" ]; then echo "no onnx test data under .venv: run make deps" >&2; exit 1; fi; \
	echo "== runner self-test"; \
	out=$$($(ASAN_ENV) tests/conformance/runner_selftest.sh $(RUNNER) $$data/node 2>&1); rc=$$?; \
	printf '%s\n' "$$out" | grep -v '^ok '; exit $$rc

# Hook for the Python adapter's tests (backend/python under onnx's BackendTest). Not run under
# sanitizers: an ASan library cannot be loaded into an uninstrumented python.
python-tests: $(LIB_SO)
	@if [ -n "$(SAN_FLAGS)" ]; then echo "== python tests: skipped under sanitizers"; \
	elif [ -d tests/python ]; then echo "== python tests"; \
	    ONYX_LIB=$(CURDIR)/$(LIB_SO) PYTHONPATH=$(CURDIR)/backend/python $(PYTHON) -m pytest -q tests/python; \
	else echo "== python tests: none yet (tests/python)"; fi

# Each step in its own make, in order, so that a sub-make sees what the previous step made. After
# the build, every step runs even when an earlier one fails; the last line names the failures.
test:
	@tools/deps.sh $(DEB_PACKAGES)
	@$(MAKE) --no-print-directory all unit-bins
	@failed=""; \
	$(MAKE) --no-print-directory unit || failed="$$failed unit"; \
	$(MAKE) --no-print-directory runner-selftest || failed="$$failed runner-selftest"; \
	$(MAKE) --no-print-directory conformance || failed="$$failed conformance"; \
	$(MAKE) --no-print-directory conformance DEVICE=TEST || failed="$$failed conformance-TEST"; \
	$(MAKE) --no-print-directory conformance-levels || failed="$$failed conformance-levels"; \
	$(MAKE) --no-print-directory gen-tests || failed="$$failed gen-tests"; \
	$(MAKE) --no-print-directory python-tests || failed="$$failed python-tests"; \
	$(if $(SAN_FLAGS),,$(MAKE) --no-print-directory tsan || failed="$$failed tsan";) \
	echo "== quick start: make run-example"; \
	$(MAKE) --no-print-directory run-example || failed="$$failed run-example"; \
	if [ -n "$$failed" ]; then echo "== make test ($(BUILD)) FAILED:$$failed"; exit 1; fi; \
	echo "== make test ($(BUILD)): all passed"

# Generated op cases (tests/gen) checked against numpy / onnx's reference, and models that must
# be refused with a given status.
gen-tests: $(TOOLS)
	@tests/gen/run.sh $(BUILD)

# Conformance under ASan runs a few times slower; JOBS=2 keeps CI (2 cores) well under its limit.
sanitize:
	@$(MAKE) --no-print-directory BUILD=build-asan OPT="-O1 -g" JOBS=$(if $(filter command line,$(origin JOBS)),$(JOBS),2) \
	    SAN_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" test

# The concurrency test (one rep, many threads, mixed shapes) built with ThreadSanitizer: onyx's
# own code must be free of data races. Part of `make test`.
tsan:
	@$(MAKE) --no-print-directory BUILD=build-tsan OPT="-O1 -g" SAN_FLAGS="-fsanitize=thread" \
	    build-tsan/tests/test_concurrency
	@echo "== ThreadSanitizer: build-tsan/tests/test_concurrency"
	@TSAN_OPTIONS="suppressions=$(CURDIR)/tests/conformance/tsan.supp halt_on_error=1 exitcode=66" \
	    build-tsan/tests/test_concurrency

# The run-time tests' models (tests/models/gen_run_models.py), committed.
test-models:
	$(PYTHON) tests/models/gen_run_models.py tests/models

# ---- examples

run-example:
	@tools/deps.sh $(DEB_PACKAGES)
	@$(MAKE) --no-print-directory -q $(CLI) || $(MAKE) --no-print-directory $(CLI)
	@echo "$(CLI) run $(EXAMPLE)"
	@$(ASAN_ENV) $(CLI) run $(EXAMPLE)

example:
	$(PYTHON) tools/gen_example.py $(EXAMPLE)

# onyx against onnxruntime (PyPI, installed into .venv on first use) on the light models:
# BENCH_FLAGS="--threads 2 --batch 1 --seconds 3 --models resnet50,vgg19".
bench: $(LIB_SO)
	@tools/deps.sh $(DEB_PACKAGES)
	@$(PYTHON) -c 'import onnxruntime' 2>/dev/null || $(PYTHON) -m pip install -q --disable-pip-version-check -r tools/bench/requirements.txt
	ONYX_LIB=$(CURDIR)/$(LIB_SO) $(PYTHON) tools/bench/bench.py $(BENCH_FLAGS)

clean:
	rm -rf build build-asan build-tsan

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ---- micro-benchmark (not a test): Add and ReduceSum over 16M floats against memcpy
.PHONY: microbench
MICROBENCH := $(BUILD)/microbench
$(MICROBENCH): $(BUILD)/obj/tools/microbench.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

microbench: $(MICROBENCH)
	$(MICROBENCH)

# ---- execution-core benchmark (not a test): page faults, allocations, idle and new-shape latency
.PHONY: bench-core
CORE_BENCH := $(BUILD)/core_bench
$(CORE_BENCH): $(BUILD)/obj/tools/bench/core_bench.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
bench-core: $(CORE_BENCH)
	$(CORE_BENCH) $(CORE_BENCH_FLAGS)
