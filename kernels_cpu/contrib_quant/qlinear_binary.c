/* CPU kernels of com.microsoft QLinearAdd and QLinearMul over numpy broadcasting.
 *
 * They compute in float step by step as onnxruntime's MLAS kernels do, so that the roundings
 * match: Add as fma(a, sA/sC, fma(b, sB/sC, zC - fma(sA/sC, zA, sB/sC zB))) (its AVX2 kernel, a
 * broadcast operand folded into the constant first), Mul as (a - zA)(b - zB) * (sA sB / sC) +
 * zC; then rounded half to even and saturated. Tensors the fusion pass keeps opaque (channels
 * last, core/fuse.h; cpu_opaque_prepare's marker as the state) broadcast as they are stored: a
 * per-channel factor [N, C, 1, ...] against [N, spatial..., C]. With AVX-512, runs of two
 * tensors of one shape take 16-element steps written with intrinsics (the same arithmetic). */
#include <math.h>

#include "kernels_cpu/common/broadcast.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/contrib_quant/cq_kernel.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

typedef struct qbin_ctx {
    float ra, rb, fixed;  /* Add: sA/sC, sB/sC, zC - (ra zA + rb zB) */
    int32_t za, zb;       /* Mul */
    float ratio, zc;      /* Mul: sA sB / sC, zC */
    int32_t lo, hi;
} qbin_ctx;

/* The Add loops. fmaf rounds once on every build, so the clones with hardware FMA give the
 * portable build's bits; they only avoid a libm call per element. Contiguous runs get their own
 * simple loops so that they vectorize. */
#define ADD_BODY(T)                                                                                \
    const qbin_ctx *q = ctx;                                                                       \
    T *y = (T *)p[0];                                                                              \
    const T *a = (const T *)p[1], *b = (const T *)p[2];                                            \
    const float ra = q->ra, rb = q->rb, fixed = q->fixed;                                          \
    const int32_t lo = q->lo, hi = q->hi;                                                          \
    if (s[1] == 0 && s[2] == 0) {                                                                  \
        float v = fmaf((float)a[0], ra, fmaf((float)b[0], rb, fixed));                             \
        T r = (T)q8_saturate(v, 0, lo, hi);                                                        \
        for (int64_t i = 0; i < n; i++) y[i] = r;                                                  \
    } else if (s[1] == 0 || s[2] == 0) {                                                           \
        /* the broadcast operand joins the constant first, as onnxruntime's scalar path */        \
        const T *v = s[1] == 0 ? b : a;                                                            \
        float r = s[1] == 0 ? rb : ra;                                                             \
        float f = s[1] == 0 ? fixed + (float)a[0] * ra : fixed + (float)b[0] * rb;                 \
        int64_t sv = s[1] == 0 ? s[2] : s[1];                                                      \
        if (sv == 1) {                                                                             \
            CPU_SIMD for (int64_t i = 0; i < n; i++)                                               \
                y[i] = (T)q8_saturate(fmaf((float)v[i], r, f), 0, lo, hi);                         \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++)                                                        \
                y[i] = (T)q8_saturate(fmaf((float)v[i * sv], r, f), 0, lo, hi);                    \
        }                                                                                          \
    } else if (s[1] == 1 && s[2] == 1) {                                                           \
        CPU_SIMD for (int64_t i = 0; i < n; i++)                                                   \
            y[i] = (T)q8_saturate(fmaf((float)a[i], ra, fmaf((float)b[i], rb, fixed)), 0, lo, hi); \
    } else {                                                                                       \
        for (int64_t i = 0; i < n; i++) {                                                          \
            float v = fmaf((float)a[i * s[1]], ra, fmaf((float)b[i * s[2]], rb, fixed));           \
            y[i] = (T)q8_saturate(v, 0, lo, hi);                                                   \
        }                                                                                          \
    }

#define DEFINE_ADD(NAME, T)                                                                        \
    CPU_CLONES static void NAME(void *ctx, int64_t n, char *const *p, const int64_t *s) { ADD_BODY(T) }
DEFINE_ADD(add_u8, uint8_t)
DEFINE_ADD(add_s8, int8_t)

/* (a - zA)(b - zB) is exact in int32; one product rounding to float, then the scale. */
#define DEFINE_MUL(NAME, T)                                                                        \
    CPU_CLONES static void NAME(void *ctx, int64_t n, char *const *p, const int64_t *s) {          \
        const qbin_ctx *q = ctx;                                                                   \
        T *y = (T *)p[0];                                                                          \
        const T *a = (const T *)p[1], *b = (const T *)p[2];                                        \
        const int32_t za = q->za, zb = q->zb, lo = q->lo, hi = q->hi;                              \
        const float ratio = q->ratio, zc = q->zc;                                                  \
        if (s[1] == 1 && s[2] == 1) {                                                              \
            CPU_SIMD for (int64_t i = 0; i < n; i++) {                                             \
                int32_t prod = ((int32_t)a[i] - za) * ((int32_t)b[i] - zb);                        \
                y[i] = (T)q8_saturate((float)prod * ratio + zc, 0, lo, hi);                        \
            }                                                                                      \
        } else if (s[1] == 1 && s[2] == 0) {                                                       \
            int32_t bv = (int32_t)b[0] - zb;                                                       \
            CPU_SIMD for (int64_t i = 0; i < n; i++)                                               \
                y[i] = (T)q8_saturate((float)(((int32_t)a[i] - za) * bv) * ratio + zc, 0, lo, hi); \
        } else if (s[1] == 0 && s[2] == 1) {                                                       \
            int32_t av = (int32_t)a[0] - za;                                                       \
            CPU_SIMD for (int64_t i = 0; i < n; i++)                                               \
                y[i] = (T)q8_saturate((float)(av * ((int32_t)b[i] - zb)) * ratio + zc, 0, lo, hi); \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                int32_t prod = ((int32_t)a[i * s[1]] - za) * ((int32_t)b[i * s[2]] - zb);          \
                y[i] = (T)q8_saturate((float)prod * ratio + zc, 0, lo, hi);                        \
            }                                                                                      \
        }                                                                                          \
    }
DEFINE_MUL(mul_u8, uint8_t)
DEFINE_MUL(mul_s8, int8_t)

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The contiguous Add of two tensors of one shape (a residual connection's) with AVX-512, which
 * the compiler's loop above widens bytes to floats and back in twice the instructions: 16
 * elements loaded straight into int32 lanes, the same two fused multiply-adds, clamped (max/min
 * take the bound for NaN), rounded half to even by the conversion (the default rounding mode,
 * as q8_round's addition), narrowed by truncation (the values are in range). The other cases
 * take the loops above (8-bit elements: one byte each, read through char pointers), and so do
 * runs under 64 elements (a per-channel factor's runs of a few channels, channels last), where
 * these were measured slower than the compiler's loops (EfficientNet-B0's 32-channel scale by
 * 1.6x). */
#define DEFINE_ADD_AVX512(NAME, S, WIDEN)                                                          \
    __attribute__((target("avx512f,avx512bw"))) static void NAME(void *ctx, int64_t n,             \
                                                                  char *const *p,                  \
                                                                  const int64_t *s) {              \
        if (s[1] != 1 || s[2] != 1 || n < 64) {                                                    \
            add_##S(ctx, n, p, s);                                                                 \
            return;                                                                                \
        }                                                                                          \
        const qbin_ctx *q = ctx;                                                                   \
        char *y = p[0];                                                                            \
        const char *a = p[1], *b = p[2];                                                           \
        const __m512 ra = _mm512_set1_ps(q->ra), rb = _mm512_set1_ps(q->rb),                      \
                     fixed = _mm512_set1_ps(q->fixed), lo = _mm512_set1_ps((float)q->lo),          \
                     hi = _mm512_set1_ps((float)q->hi);                                            \
        int64_t i = 0;                                                                             \
        for (; i + 16 <= n; i += 16) {                                                             \
            __m512 av = _mm512_cvtepi32_ps(WIDEN(_mm_loadu_si128((const __m128i *)(a + i))));      \
            __m512 bv = _mm512_cvtepi32_ps(WIDEN(_mm_loadu_si128((const __m128i *)(b + i))));      \
            __m512 v = _mm512_fmadd_ps(av, ra, _mm512_fmadd_ps(bv, rb, fixed));                    \
            v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);                                           \
            _mm_storeu_si128((__m128i *)(y + i), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v)));     \
        }                                                                                          \
        if (i < n) {                                                                               \
            const int64_t one[3] = {1, 1, 1};                                                      \
            char *const rest[3] = {y + i, (char *)(a + i), (char *)(b + i)};                       \
            add_##S(ctx, n - i, rest, one);                                                        \
        }                                                                                          \
    }
DEFINE_ADD_AVX512(add_u8_avx512, u8, _mm512_cvtepu8_epi32)
DEFINE_ADD_AVX512(add_s8_avx512, s8, _mm512_cvtepi8_epi32)

/* Mul the same way: (a - zA)(b - zB) exact in int32, times the ratio, plus zC, two roundings as
 * the loop above (no contraction). */
#define DEFINE_MUL_AVX512(NAME, S, WIDEN)                                                          \
    __attribute__((target("avx512f,avx512bw"))) static void NAME(void *ctx, int64_t n,             \
                                                                  char *const *p,                  \
                                                                  const int64_t *s) {              \
        if (s[1] != 1 || s[2] != 1 || n < 64) {                                                    \
            mul_##S(ctx, n, p, s);                                                                 \
            return;                                                                                \
        }                                                                                          \
        const qbin_ctx *q = ctx;                                                                   \
        char *y = p[0];                                                                            \
        const char *a = p[1], *b = p[2];                                                           \
        const __m512i za = _mm512_set1_epi32(q->za), zb = _mm512_set1_epi32(q->zb);                \
        const __m512 ratio = _mm512_set1_ps(q->ratio), zc = _mm512_set1_ps(q->zc),                 \
                     lo = _mm512_set1_ps((float)q->lo), hi = _mm512_set1_ps((float)q->hi);         \
        int64_t i = 0;                                                                             \
        for (; i + 16 <= n; i += 16) {                                                             \
            __m512i av = _mm512_sub_epi32(WIDEN(_mm_loadu_si128((const __m128i *)(a + i))), za);   \
            __m512i bv = _mm512_sub_epi32(WIDEN(_mm_loadu_si128((const __m128i *)(b + i))), zb);   \
            __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_mullo_epi32(av, bv)), \
                                                   ratio),                                         \
                                     zc);                                                          \
            v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);                                           \
            _mm_storeu_si128((__m128i *)(y + i), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v)));     \
        }                                                                                          \
        if (i < n) {                                                                               \
            const int64_t one[3] = {1, 1, 1};                                                      \
            char *const rest[3] = {y + i, (char *)(a + i), (char *)(b + i)};                       \
            mul_##S(ctx, n - i, rest, one);                                                        \
        }                                                                                          \
    }
DEFINE_MUL_AVX512(mul_u8_avx512, u8, _mm512_cvtepu8_epi32)
DEFINE_MUL_AVX512(mul_s8_avx512, s8, _mm512_cvtepi8_epi32)
#define HAVE_BINARY_AVX512 1
#endif

static onyx_status qbin_run(const kernel_call *c, bool add) {
    TRY(cq_need_q8(c, 0, ONYX_UNDEFINED, "A"));
    const tensor *a = kernel_input(c, 0), *b = kernel_input(c, 3);
    onyx_dtype t = a->dtype;
    TRY(cq_need_q8(c, 3, t, "B"));
    cq_param pa, pb, pc;
    TRY(cq_param_get(c, 1, 2, t, "A", &pa));
    TRY(cq_param_get(c, 4, 5, t, "B", &pb));
    TRY(cq_param_get(c, 6, 7, t, "C", &pc));
    tensor *y = kernel_output(c, 0);
    qbin_ctx q = {.lo = cq_lo(t), .hi = cq_hi(t)};
    cpu_bcast_fn fn;
    bool s8 = t == ONYX_INT8;
    if (add) {
        q.ra = pa.scale / pc.scale;
        q.rb = pb.scale / pc.scale;
        /* onnxruntime's build contracts its ra * zA + rb * zB into fma(ra, zA, rb * zB) */
        q.fixed = (float)pc.zp - fmaf(q.ra, (float)pa.zp, q.rb * (float)pb.zp);
        fn = s8 ? add_s8 : add_u8;
#ifdef HAVE_BINARY_AVX512
        if (__builtin_cpu_supports("avx512bw")) fn = s8 ? add_s8_avx512 : add_u8_avx512;
#endif
    } else {
        q.za = pa.zp;
        q.zb = pb.zp;
        q.ratio = pa.scale * pb.scale / pc.scale;
        q.zc = (float)pc.zp;
        fn = s8 ? mul_s8 : mul_u8;
#ifdef HAVE_BINARY_AVX512
        if (__builtin_cpu_supports("avx512bw")) fn = s8 ? mul_s8_avx512 : mul_u8_avx512;
#endif
    }
    cpu_bcast_iter it;
    const tensor *ins[2] = {a, b};
    tensor stored[3];
    if (c->state) { /* opaque: broadcast over the dims as stored, channels last */
        const tensor *all[3] = {a, b, y};
        for (int k = 0; k < 3; k++) {
            stored[k] = *all[k];
            for (int d = 1; d < all[k]->rank; d++)
                stored[k].dims[d] = all[k]->dims[d == all[k]->rank - 1 ? 1 : d + 1];
        }
        ins[0] = &stored[0];
        ins[1] = &stored[1];
        y = &stored[2];
    }
    TRY(cpu_bcast_init_tensors(&it, y, 2, ins));
    const void *ptr[2] = {a->data, b->data};
    cpu_bcast_run(&it, y->data, ptr, fn, &q, false);
    return ONYX_OK;
}

onyx_status cpu_qlinearadd_run(const kernel_call *c) { return qbin_run(c, true); }
onyx_status cpu_qlinearmul_run(const kernel_call *c) { return qbin_run(c, false); }
