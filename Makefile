# onyx — one build for the library, the tools and the tests.
#   make            libonyx.a, libonyx.so, onyx-test-runner, onyx (CLI) in build/
#   make test       deps if missing, build, all tests
#   make sanitize   the same tests under AddressSanitizer + UBSan (build-asan/)
#   make deps       Debian packages + Python test venv (.venv)

BUILD ?= build
CC ?= cc
OPT ?= -O2 -g
SAN_FLAGS ?=

CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) -Wall -Wextra -Werror -fPIC -fvisibility=hidden \
          -fopenmp -Iinclude -I$(BUILD)/gen $(SAN_FLAGS) $(EXTRA_CFLAGS)
LDLIBS := -lprotobuf-c -lopenblas -ldnnl -lm -lpthread
LDFLAGS := -fopenmp $(SAN_FLAGS)

LIB_SRCS := $(wildcard core/*.c ops/*.c kernels_cpu/*.c backend/*.c)
GEN_SRCS := $(BUILD)/gen/onnx.pb-c.c
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) $(BUILD)/obj/gen/onnx.pb-c.o

LIB_A := $(BUILD)/libonyx.a
LIB_SO := $(BUILD)/libonyx.so
TOOLS := $(BUILD)/onyx-test-runner $(BUILD)/onyx

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: all test unit sanitize clean deps
all: $(LIB_A) $(LIB_SO) $(TOOLS)

$(BUILD)/gen/onnx.pb-c.c $(BUILD)/gen/onnx.pb-c.h: onnx.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen onnx.proto

$(BUILD)/obj/gen/onnx.pb-c.o: $(BUILD)/gen/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.c $(BUILD)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LIB_SO): $(LIB_OBJS)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/onyx-test-runner: $(BUILD)/obj/tools/onyx-test-runner.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/onyx: $(BUILD)/obj/tools/onyx.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

unit: $(UNIT_BINS)
	@for t in $(UNIT_BINS); do echo "== $$t"; $$t || exit 1; done

test: all unit

sanitize:
	$(MAKE) BUILD=build-asan OPT="-O1 -g" SAN_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" test

clean:
	rm -rf build build-asan

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
