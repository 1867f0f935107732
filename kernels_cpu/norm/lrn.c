/* CPU kernel of LRN: y = x / (bias + alpha/size * sum of x^2 over neighbouring channels)^beta.
 * Work is split over (instance, block of spatial positions) so each task reads its channels'
 * blocks contiguously; the window sum is recomputed per channel (size is small, typically 5)
 * rather than slid, which would drift. beta 0.75 and 0.5 avoid pow. */
#include <math.h>
#ifdef __SSE2__
#include <immintrin.h>
#endif

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/norm/common.h"

#define BLOCK 256
#define GRAIN 8192

typedef struct lrn_plan {
    const void *x;
    void *y;
    int64_t ch, inner, nblocks;
    int64_t before, after; /* window: channels [c - before, c + after] */
    double alpha_n, bias, beta;
} lrn_plan;

/* acc[j] <- (bias + an * acc[j])^0.75 (mode 0) or ^0.5 (mode 1). sqrtf must keep errno, so the
 * compiler leaves it scalar, and the square roots would cost most of the kernel: the SSE square
 * root gives the same correctly rounded results four at a time. */
static void lrn_root_f32(float *acc, int64_t len, float an, float bias, int mode) {
    int64_t j = 0;
#ifdef __SSE2__
    const __m128 va = _mm_set1_ps(an), vb = _mm_set1_ps(bias);
    for (; j + 4 <= len; j += 4) {
        __m128 r = _mm_sqrt_ps(_mm_add_ps(vb, _mm_mul_ps(va, _mm_loadu_ps(acc + j))));
        if (mode == 0) r = _mm_mul_ps(r, _mm_sqrt_ps(r));
        _mm_storeu_ps(acc + j, r);
    }
#endif
    for (; j < len; j++) {
        float r = sqrtf(bias + an * acc[j]);
        acc[j] = mode == 0 ? r * sqrtf(r) : r;
    }
}

#define DEFINE_LRN(N, T, F, LD, ST)                                                                \
    static inline F N##_sqrt(F v) {                                                                \
        return sizeof(F) == sizeof(float) ? (F)sqrtf((float)v) : (F)sqrt((double)v);               \
    }                                                                                              \
    static inline F N##_pow(F v, F e) {                                                            \
        return sizeof(F) == sizeof(float) ? (F)powf((float)v, (float)e)                            \
                                          : (F)pow((double)v, (double)e);                          \
    }                                                                                              \
    static void N##_lrn(void *ctx, int64_t b, int64_t e) {                                         \
        const lrn_plan *p = ctx;                                                                   \
        const F an = (F)p->alpha_n, bias = (F)p->bias, beta = (F)p->beta;                          \
        const int mode = p->beta == 0.75 ? 0 : p->beta == 0.5 ? 1 : p->beta == 1 ? 2 : 3;          \
        F acc[BLOCK];                                                                              \
        for (int64_t t = b; t < e; t++) {                                                          \
            int64_t n = t / p->nblocks, j0 = (t % p->nblocks) * BLOCK;                             \
            int64_t len = p->inner - j0 < BLOCK ? p->inner - j0 : BLOCK;                           \
            const T *x = (const T *)p->x + n * p->ch * p->inner + j0;                              \
            T *y = (T *)p->y + n * p->ch * p->inner + j0;                                          \
            for (int64_t c = 0; c < p->ch; c++) {                                                  \
                int64_t lo = c - p->before < 0 ? 0 : c - p->before;                                \
                int64_t hi = c + p->after >= p->ch ? p->ch - 1 : c + p->after;                     \
                for (int64_t j = 0; j < len; j++) acc[j] = 0;                                      \
                for (int64_t k = lo; k <= hi; k++) {                                               \
                    const T *xk = x + k * p->inner;                                                \
                    CPU_SIMD for (int64_t j = 0; j < len; j++) {                                   \
                        F v = LD(xk[j]);                                                           \
                        acc[j] += v * v;                                                           \
                    }                                                                              \
                }                                                                                  \
                const T *xc = x + c * p->inner;                                                    \
                T *yc = y + c * p->inner;                                                          \
                if (sizeof(F) == sizeof(float) && mode <= 1) {                                     \
                    lrn_root_f32((float *)(void *)acc, len, (float)an, (float)bias, mode);         \
                    CPU_SIMD for (int64_t j = 0; j < len; j++) yc[j] = ST(LD(xc[j]) / acc[j]);     \
                } else if (mode == 0) {                                                            \
                    CPU_SIMD for (int64_t j = 0; j < len; j++) {                                   \
                        F d = bias + an * acc[j], r = N##_sqrt(d);                                 \
                        yc[j] = ST(LD(xc[j]) / (r * N##_sqrt(r)));                                 \
                    }                                                                              \
                } else if (mode == 1) {                                                            \
                    CPU_SIMD for (int64_t j = 0; j < len; j++) yc[j] =                             \
                        ST(LD(xc[j]) / N##_sqrt(bias + an * acc[j]));                              \
                } else if (mode == 2) {                                                            \
                    CPU_SIMD for (int64_t j = 0; j < len; j++) yc[j] =                             \
                        ST(LD(xc[j]) / (bias + an * acc[j]));                                      \
                } else {                                                                           \
                    for (int64_t j = 0; j < len; j++)                                              \
                        yc[j] = ST(LD(xc[j]) / N##_pow(bias + an * acc[j], beta));                 \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }
NORM_FOR_FLOATS(DEFINE_LRN)

typedef void (*task_fn)(void *, int64_t, int64_t);
#define FN_LRN(N, T, F, LD, ST) N##_lrn,
static const task_fn lrn_fns[] = {NORM_FOR_FLOATS(FN_LRN)};

onyx_status cpu_lrn(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    int fi = norm_float_index(x->dtype);
    if (fi < 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a float type",
                          onyx_dtype_name(x->dtype));
    if (x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 2", x->rank);
    int64_t size = attr_int(c->node, "size", 0);
    if (size <= 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute size is %lld, expected > 0",
                          (long long)size);
    lrn_plan p = {.x = x->data,
                  .y = y->data,
                  .ch = x->dims[1],
                  .inner = 1,
                  .before = (size - 1) / 2,
                  .after = size / 2,
                  .alpha_n = attr_float(c->node, "alpha", 1e-4f) / (double)size,
                  .bias = attr_float(c->node, "bias", 1.0f),
                  .beta = attr_float(c->node, "beta", 0.75f)};
    for (int d = 2; d < x->rank; d++) p.inner *= x->dims[d];
    if (x->numel == 0) return ONYX_OK;
    p.nblocks = (p.inner + BLOCK - 1) / BLOCK;
    /* the window never spans more than every channel (size is the model's, unbounded) */
    int64_t work = p.ch * (size < p.ch ? size : p.ch) * (p.inner < BLOCK ? p.inner : BLOCK);
    parallel_for(x->dims[0] * p.nblocks, GRAIN / work + 1, lrn_fns[fi], &p);
    return ONYX_OK;
}
