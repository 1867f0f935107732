/* X-macro lists of (onyx_dtype, C type) for the byte-aligned numeric types, so that kernel
 * families stamp one template per type instead of copy-pasting. float16/bfloat16 are not here:
 * kernels convert them to float (fp16_to_float / bf16_to_float) around a float computation. */
#ifndef ONYX_KERNELS_CPU_TYPES_H
#define ONYX_KERNELS_CPU_TYPES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/dtype.h"

/* Real IEEE types with a native C type. */
#define CPU_FOR_FLOATS(X) X(ONYX_FLOAT, float) X(ONYX_DOUBLE, double)

#define CPU_FOR_SINTS(X)                                                                           \
    X(ONYX_INT8, int8_t) X(ONYX_INT16, int16_t) X(ONYX_INT32, int32_t) X(ONYX_INT64, int64_t)

#define CPU_FOR_UINTS(X)                                                                           \
    X(ONYX_UINT8, uint8_t)                                                                         \
    X(ONYX_UINT16, uint16_t) X(ONYX_UINT32, uint32_t) X(ONYX_UINT64, uint64_t)

#define CPU_FOR_INTS(X) CPU_FOR_SINTS(X) CPU_FOR_UINTS(X)

/* Every numeric type with a native C type (no float16/bfloat16). */
#define CPU_FOR_NUMERIC(X) CPU_FOR_FLOATS(X) CPU_FOR_INTS(X)

/* Numeric types plus bool (1 byte, 0/1). */
#define CPU_FOR_NUMERIC_BOOL(X) CPU_FOR_NUMERIC(X) X(ONYX_BOOL, bool)

/* Every type stored as plain fixed-size bytes, by storage type: copies, gathers and other
 * data-movement kernels that only move elements around can use it (float16/bfloat16 as
 * uint16_t, float8 as uint8_t). */
#define CPU_FOR_BY_SIZE(X) X(1, uint8_t) X(2, uint16_t) X(4, uint32_t) X(8, uint64_t)

/* Unsigned type of the same width, for wrapping arithmetic without signed-overflow UB. */
#define CPU_UNSIGNED_OF(T)                                                                         \
    __typeof__(_Generic((T)0, int8_t: (uint8_t)0, int16_t: (uint16_t)0, int32_t: (uint32_t)0,      \
                        int64_t: (uint64_t)0, default: (T)0))

/* Loops whose iterations are independent (elementwise, at most in place at the same index):
 * forces vectorization, which -O2's cheap cost model skips when pointers might alias. */
#define CPU_SIMD _Pragma("omp simd")

/* A CPU_SIMD loop that sums into the scalar v: the clause says so (without it a loop-carried sum
 * breaks omp simd's contract, and what the compiler makes of it is its guess). */
#define CPU_PRAGMA(x) _Pragma(#x)
#define CPU_SIMD_SUM(v) CPU_PRAGMA(omp simd reduction(+ : v))

/* Row kernels whose loops are all CPU_SIMD: built also for AVX2+FMA and AVX-512, one chosen at
 * load time. The library's baseline is x86-64 (SSE2): LayerNormalization's rows ran 2.1x faster
 * built for AVX-512 (1024 x 768: 213 -> 100 us). GCC only; others build the baseline alone, and
 * so do the sanitizer builds: the choice runs while the program is being relocated, before the
 * sanitizer's runtime is (an instrumented resolver crashed every ThreadSanitizer test). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&                          \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CPU_CLONES
#endif

/* Streaming stores for outputs far larger than the caches: a plain store first reads the line it
 * writes (the read-for-ownership), so a kernel writing a huge output moves a third more bytes than
 * it needs; non-temporal stores write around the caches. Used only above CPU_STREAM_MIN_BYTES per
 * call, where the output could not stay cached for its next reader anyway. */
#define CPU_STREAM_MIN_BYTES ((size_t)8 << 20)
#define CPU_STREAM_BLOCK_BYTES 4096
#if defined(__SSE2__)
#include <emmintrin.h>
static inline void cpu_stream_copy(void *dst, const void *src, size_t bytes) {
    char *d = dst;
    const char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > bytes) head = bytes;
    memcpy(d, s, head);
    d += head, s += head, bytes -= head;
    for (; bytes >= 16; d += 16, s += 16, bytes -= 16)
        _mm_stream_si128((__m128i *)(void *)d, _mm_loadu_si128((const __m128i *)(const void *)s));
    memcpy(d, s, bytes);
}
static inline void cpu_stream_fence(void) { _mm_sfence(); }
#else
static inline void cpu_stream_copy(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }
static inline void cpu_stream_fence(void) {}
#endif

/* Inline, branch-free half/bfloat16 conversions (bit-exact with fp16_to_float & co in
 * core/dtype.c) so that loops over them vectorize instead of calling out per element. */
static inline float cpu_bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline uint32_t cpu_float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* all-ones when c, else 0: selects written as masks stay branch-free, so loops vectorize */
static inline uint32_t cpu_mask(bool c) { return 0u - (uint32_t)c; }
static inline uint32_t cpu_select(uint32_t m, uint32_t a, uint32_t b) { return (a & m) | (b & ~m); }

static inline float cpu_fp16_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu;
    uint32_t normal = (em << 13) + 0x38000000u;          /* rebias exponent 15 -> 127 */
    uint32_t special = normal + 0x38000000u;             /* exponent 31 -> 255: Inf/NaN */
    /* subnormal: em * 2^-24, exactly, via the magic 2^-14 offset */
    float sub = cpu_bits_float((em << 13) + 0x38800000u) - 6.103515625e-05f;
    uint32_t r = cpu_select(cpu_mask(em >= 0x7c00u), special, normal);
    r = cpu_select(cpu_mask(em < 0x0400u), cpu_float_bits(sub), r);
    return cpu_bits_float(r | sign);
}

static inline uint16_t cpu_float_to_fp16(float f) {
    uint32_t u = cpu_float_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    /* Inf stays Inf, NaN keeps its top payload bits and is made quiet */
    uint32_t inf_nan = 0x7c00u | (cpu_mask(a > 0x7f800000u) & (0x200u | ((a >> 13) & 0x3ffu)));
    /* subnormal results: adding 0.5 lines the half's mantissa up with float's, which rounds
     * to nearest even in hardware */
    uint32_t sub = cpu_float_bits(cpu_bits_float(a) + 0.5f) - 0x3f000000u;
    /* normal results: rebias and round to nearest even on the 13 dropped bits */
    uint32_t norm = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
    uint32_t r = cpu_select(cpu_mask(a < 0x38800000u), sub, norm);
    r = cpu_select(cpu_mask(a >= 0x477ff000u), 0x7c00u, r); /* rounds to >= 65520: Inf */
    r = cpu_select(cpu_mask(a >= 0x7f800000u), inf_nan, r);
    return (uint16_t)(r | sign);
}

static inline float cpu_bf16_to_float(uint16_t b) { return cpu_bits_float((uint32_t)b << 16); }

static inline uint16_t cpu_float_to_bf16(float f) {
    uint32_t u = cpu_float_bits(f);
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t nan = (u >> 16) | 0x40u;
    return (uint16_t)cpu_select(cpu_mask((u & 0x7fffffffu) > 0x7f800000u), nan, rounded);
}

/* Loads and stores by short type name, for templates that stamp one body per float type and
 * reach them as cpu_##N##_ld / cpu_##N##_st: half types compute in float. */
static inline float cpu_f32_ld(float v) { return v; }
static inline float cpu_f32_st(float v) { return v; }
static inline double cpu_f64_ld(double v) { return v; }
static inline double cpu_f64_st(double v) { return v; }
static inline float cpu_f16_ld(uint16_t v) { return cpu_fp16_to_float(v); }
static inline uint16_t cpu_f16_st(float v) { return cpu_float_to_fp16(v); }
static inline float cpu_bf16_ld(uint16_t v) { return cpu_bf16_to_float(v); }
static inline uint16_t cpu_bf16_st(float v) { return cpu_float_to_bf16(v); }

#endif
