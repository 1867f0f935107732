# The fuzz build (used by tests/fuzz/run.sh; separate from the main Makefile): the library's
# sources compiled with clang under libFuzzer + ASan + UBSan into build-fuzz/, one binary per target.
FUZZ_BUILD ?= build-fuzz
CLANG ?= clang
SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# clang warns about a few things gcc (the main build's -Werror) does not: warnings only here,
# except for the fuzz targets themselves.
CFLAGS := -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Wno-pass-failed -fopenmp-simd -I. -Iinclude \
          -I$(FUZZ_BUILD)/gen -isystem .deps/onednn/include $(SAN) -fsanitize=fuzzer-no-link $(shell pkg-config --cflags libopenjp2) \
          -DONYX_WITH_CODECS=1 -DONYX_WITH_RE2=1
LDLIBS := -L$(CURDIR)/.deps/onednn/lib -Wl,-rpath,$(CURDIR)/.deps/onednn/lib -lprotobuf-c -lopenblas -ldnnl -ltbb -lre2 -ljpeg -lpng -ltiff -lwebp -lopenjp2 -lstb -lstdc++ -lm -lpthread

LIB_SRCS := $(wildcard core/*.c core/rules/*.c ops/*.c ops/*/*.c kernels_cpu/*.c kernels_cpu/*/*.c backend/*.c geometry/*.c)
LIB_OBJS := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(LIB_SRCS)) $(FUZZ_BUILD)/obj/gen/onnx.pb-c.o $(patsubst %.cc,$(FUZZ_BUILD)/obj/%.cc.o,$(wildcard core/*.cc kernels_cpu/*/*.cc))
TARGETS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(wildcard tests/fuzz/fuzz_*.c))

all: $(TARGETS)

$(FUZZ_BUILD)/gen/onnx.pb-c.c $(FUZZ_BUILD)/gen/onnx.pb-c.h &: onnx.proto
	@mkdir -p $(FUZZ_BUILD)/gen
	protoc-c --c_out=$(FUZZ_BUILD)/gen onnx.proto

$(FUZZ_BUILD)/obj/gen/onnx.pb-c.o: $(FUZZ_BUILD)/gen/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(CLANG) $(CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/obj/%.o: %.c $(FUZZ_BUILD)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CLANG) $(CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/libonyx-fuzz.a: $(LIB_OBJS)
	@rm -f $@
	@ar rcs $@ $^

$(FUZZ_BUILD)/obj/tests/fuzz/%.o: CFLAGS += -Werror

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_BUILD)/libonyx-fuzz.a
	$(CLANG) $(SAN) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

.PHONY: all
-include $(shell find $(FUZZ_BUILD)/obj -name '*.d' 2>/dev/null)
.SECONDARY:

$(FUZZ_BUILD)/obj/%.cc.o: %.cc $(FUZZ_BUILD)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	clang++ -std=c++17 -O1 -g -I. -Iinclude -I$(FUZZ_BUILD)/gen -isystem .deps/onednn/include -fsanitize=address -fsanitize=fuzzer-no-link -c $< -o $@
