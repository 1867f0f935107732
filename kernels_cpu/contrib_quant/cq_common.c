/* Parameter checks and lookup tables shared by the contrib_quant CPU kernels (see cq_kernel.h). */
#include "kernels_cpu/contrib_quant/cq_kernel.h"

#include "core/parallel.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

onyx_status cq_need_q8(const kernel_call *c, int i, onyx_dtype t, const char *what) {
    const tensor *x = kernel_input(c, i);
    if (!x) return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) is required", i, what);
    if (x->dtype != ONYX_INT8 && x->dtype != ONYX_UINT8)
        return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has type %s, expected int8 or uint8", i,
                          what, onyx_dtype_name(x->dtype));
    if (t != ONYX_UNDEFINED && x->dtype != t)
        return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has type %s, expected %s", i, what,
                          onyx_dtype_name(x->dtype), onyx_dtype_name(t));
    return ONYX_OK;
}

onyx_status cq_param_get(const kernel_call *c, int si, int zi, onyx_dtype t, const char *what,
                         cq_param *p) {
    const tensor *s = kernel_input(c, si);
    if (!s || s->dtype != ONYX_FLOAT || s->numel != 1)
        return onyx_error(ONYX_ERR_SHAPE, "input %d (%s's scale) must be a float tensor of one "
                          "element (per-tensor quantization)", si, what);
    p->scale = *(const float *)s->data;
    p->zp = 0;
    const tensor *z = zi >= 0 ? kernel_input(c, zi) : NULL;
    if (!z) return ONYX_OK;
    if (z->dtype != t || z->numel != 1)
        return onyx_error(ONYX_ERR_SHAPE, "input %d (%s's zero point) must be a %s tensor of one "
                          "element, got %s with %lld elements", zi, what, onyx_dtype_name(t),
                          onyx_dtype_name(z->dtype), (long long)z->numel);
    p->zp = cq_get(t, z->data, 0);
    return ONYX_OK;
}

void cq_lut_build(uint8_t lut[256], onyx_dtype t, cq_param x, cq_param y, cq_lut_fn fn,
                  const void *ctx) {
    float v[256];
    for (int b = 0; b < 256; b++)
        v[b] = x.scale * (float)(cq_get(t, &(uint8_t){(uint8_t)b}, 0) - x.zp);
    if (fn) fn(v, 256, ctx);
    int32_t lo = cq_lo(t), hi = cq_hi(t);
    for (int b = 0; b < 256; b++) lut[b] = (uint8_t)cq_quantize(v[b], y, lo, hi);
}

typedef struct lut_job {
    const uint8_t *lut, *x;
    uint8_t *y;
} lut_job;

static void lut_range(void *ctx, int64_t b, int64_t e) {
    const lut_job *j = ctx;
    const uint8_t *lut = j->lut, *x = j->x;
    uint8_t *y = j->y;
    for (int64_t i = b; i < e; i++) y[i] = lut[x[i]];
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The same with AVX-512 VBMI: the table in four registers, 64 lookups in two two-table byte
 * permutes (the low seven bits of each index) and a blend on its top bit. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void lut_range_vbmi(void *ctx,
                                                                                 int64_t b,
                                                                                 int64_t e) {
    const lut_job *j = ctx;
    const __m512i t0 = _mm512_loadu_si512(j->lut), t1 = _mm512_loadu_si512(j->lut + 64),
                  t2 = _mm512_loadu_si512(j->lut + 128), t3 = _mm512_loadu_si512(j->lut + 192);
    int64_t i = b;
    for (; i + 64 <= e; i += 64) {
        __m512i x = _mm512_loadu_si512(j->x + i);
        __m512i lo = _mm512_permutex2var_epi8(t0, x, t1), hi = _mm512_permutex2var_epi8(t2, x, t3);
        _mm512_storeu_si512(j->y + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi));
    }
    for (; i < e; i++) j->y[i] = j->lut[j->x[i]];
}
#define HAVE_VBMI_PATH 1
#endif

void cq_lut_apply(const uint8_t lut[256], const uint8_t *x, uint8_t *y, int64_t n) {
    lut_job j = {lut, x, y};
    void (*fn)(void *, int64_t, int64_t) = lut_range;
#ifdef HAVE_VBMI_PATH
    if (__builtin_cpu_supports("avx512vbmi")) fn = lut_range_vbmi;
#endif
    parallel_for(n, 1 << 16, fn, &j);
}
