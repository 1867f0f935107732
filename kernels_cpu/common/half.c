/* Bulk float16/bfloat16 <-> float conversions (kernels_cpu/common/half.h). */
#include "kernels_cpu/common/half.h"

#include "kernels_cpu/common/cpu_types.h"

static void f16_to_f32_c(const uint16_t *h, float *f, int64_t n) {
    CPU_SIMD for (int64_t i = 0; i < n; i++) f[i] = cpu_fp16_to_float(h[i]);
}
static void f32_to_f16_c(const float *f, uint16_t *h, int64_t n) {
    CPU_SIMD for (int64_t i = 0; i < n; i++) h[i] = cpu_float_to_fp16(f[i]);
}

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_X86 1

__attribute__((target("avx512f"))) static void f16_to_f32_512(const uint16_t *h, float *f, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(f + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(h + i))));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        uint16_t tmp[16] = {0};
        for (int64_t k = i; k < n; k++) tmp[k - i] = h[k];
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)tmp);
        _mm512_mask_storeu_ps(f + i, m, _mm512_cvtph_ps(v));
    }
}
__attribute__((target("avx512f"))) static void f32_to_f16_512(const float *f, uint16_t *h, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(void *)(h + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        uint16_t tmp[16];
        _mm256_storeu_si256((__m256i *)(void *)tmp,
                            _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, f + i),
                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        for (int64_t k = i; k < n; k++) h[k] = tmp[k - i];
    }
}
__attribute__((target("avx,f16c"))) static void f16_to_f32_256(const uint16_t *h, float *f, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(h + i))));
    f16_to_f32_c(h + i, f + i, n - i);
}
__attribute__((target("avx,f16c"))) static void f32_to_f16_256(const float *f, uint16_t *h, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(h + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    f32_to_f16_c(f + i, h + i, n - i);
}
#endif

typedef void (*h2f_fn)(const uint16_t *, float *, int64_t);
typedef void (*f2h_fn)(const float *, uint16_t *, int64_t);

#ifdef HAVE_X86
/* F16C from cpuid (leaf 1, ECX bit 29): clang 14's __builtin_cpu_supports does not know it. */
static bool has_f16c(void) {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

/* 0: not yet chosen, 1: scalar, 2: AVX2+F16C, 3: AVX-512 (a benign race: every thread picks
 * the same) */
static int pick(void) {
    static int level;
    int l = __atomic_load_n(&level, __ATOMIC_RELAXED);
    if (l) return l;
    l = 1;
#ifdef HAVE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) l = 3;
    else if (__builtin_cpu_supports("avx") && has_f16c()) l = 2;
#endif
    __atomic_store_n(&level, l, __ATOMIC_RELAXED);
    return l;
}

void cpu_fp16_to_float_n(const uint16_t *h, float *f, int64_t n) {
    if (n <= 0) return;
#ifdef HAVE_X86
    switch (pick()) {
    case 3: f16_to_f32_512(h, f, n); return;
    case 2: f16_to_f32_256(h, f, n); return;
    default: break;
    }
#endif
    f16_to_f32_c(h, f, n);
}

void cpu_float_to_fp16_n(const float *f, uint16_t *h, int64_t n) {
    if (n <= 0) return;
#ifdef HAVE_X86
    switch (pick()) {
    case 3: f32_to_f16_512(f, h, n); return;
    case 2: f32_to_f16_256(f, h, n); return;
    default: break;
    }
#endif
    f32_to_f16_c(f, h, n);
}

void cpu_bf16_to_float_n(const uint16_t *h, float *f, int64_t n) {
    CPU_SIMD for (int64_t i = 0; i < n; i++) f[i] = cpu_bf16_to_float(h[i]);
}
void cpu_float_to_bf16_n(const float *f, uint16_t *h, int64_t n) {
    CPU_SIMD for (int64_t i = 0; i < n; i++) h[i] = cpu_float_to_bf16(f[i]);
}

void cpu_half_to_float_n(onyx_dtype d, const uint16_t *h, float *f, int64_t n) {
    if (d == ONYX_FLOAT16) cpu_fp16_to_float_n(h, f, n);
    else cpu_bf16_to_float_n(h, f, n);
}
void cpu_float_to_half_n(onyx_dtype d, const float *f, uint16_t *h, int64_t n) {
    if (d == ONYX_FLOAT16) cpu_float_to_fp16_n(f, h, n);
    else cpu_float_to_bf16_n(f, h, n);
}
