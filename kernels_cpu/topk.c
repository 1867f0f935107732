/* CPU kernel of TopK: per row along the axis, a heap of the k best indices (O(n log k)), then
 * heap-sorted best first. Order: larger (or smaller) value first, NaN as the largest value, ties
 * to the lower index, as onnx's reference (a stable lexsort) has it. */
#include <math.h>
#include <stdlib.h>

#include "../core/parallel.h"
#include "cpu_kernels.h"
#include "cpu_types.h"

typedef struct topk_job {
    const void *x;
    void *y;
    int64_t *yi;
    int64_t n, k, inner, rows, nparts;
    bool largest;
    int64_t *scratch; /* nparts * k */
} topk_job;

static inline float f16_ld(uint16_t v) { return fp16_to_float(v); }
static inline float bf16_ld(uint16_t v) { return bf16_to_float(v); }
static inline float f32_ld(float v) { return v; }
static inline double f64_ld(double v) { return v; }
static inline bool flt_nan(double v) { return isnan(v); }
static inline bool int_nan(double v) { (void)v; return false; }

#define DEFINE_TOPK(N, T, ACC, LD, ISNAN)                                                          \
    /* whether element a comes before element b in the output */                                  \
    static inline bool N##_before(const T *x, int64_t s, int64_t a, int64_t b, bool largest) {     \
        ACC va = LD(x[a * s]), vb = LD(x[b * s]);                                                  \
        bool na = ISNAN(va), nb = ISNAN(vb);                                                       \
        if (na || nb) return na && nb ? a < b : largest ? na : nb;                                 \
        if (va != vb) return largest ? va > vb : va < vb;                                          \
        return a < b;                                                                              \
    }                                                                                              \
    /* max-heap by output position: the root is the element that would come last */              \
    static void N##_sift(const T *x, int64_t s, int64_t *h, int64_t n, int64_t i, bool lg) {      \
        for (;;) {                                                                                 \
            int64_t l = 2 * i + 1, r = l + 1, w = i;                                               \
            if (l < n && N##_before(x, s, h[w], h[l], lg)) w = l;                                  \
            if (r < n && N##_before(x, s, h[w], h[r], lg)) w = r;                                  \
            if (w == i) return;                                                                    \
            int64_t t = h[i];                                                                      \
            h[i] = h[w];                                                                           \
            h[w] = t;                                                                              \
            i = w;                                                                                 \
        }                                                                                          \
    }                                                                                              \
    static void N##_topk(void *ctx, int64_t pb, int64_t pe) {                                     \
        const topk_job *p = ctx;                                                                   \
        const int64_t n = p->n, k = p->k, s = p->inner;                                            \
        for (int64_t part = pb; part < pe; part++) {                                               \
            int64_t *h = p->scratch + part * k;                                                    \
            int64_t r0 = p->rows * part / p->nparts, r1 = p->rows * (part + 1) / p->nparts;        \
            for (int64_t row = r0; row < r1; row++) {                                              \
                int64_t o = row / s, j = row % s;                                                  \
                const T *x = (const T *)p->x + o * n * s + j;                                      \
                for (int64_t i = 0; i < k; i++) h[i] = i;                                          \
                for (int64_t i = k / 2 - 1; i >= 0; i--) N##_sift(x, s, h, k, i, p->largest);     \
                for (int64_t i = k; i < n; i++)                                                    \
                    if (N##_before(x, s, i, h[0], p->largest)) {                                   \
                        h[0] = i;                                                                  \
                        N##_sift(x, s, h, k, 0, p->largest);                                       \
                    }                                                                              \
                for (int64_t end = k - 1; end > 0; end--) {                                        \
                    int64_t t = h[0];                                                              \
                    h[0] = h[end];                                                                 \
                    h[end] = t;                                                                    \
                    N##_sift(x, s, h, end, 0, p->largest);                                         \
                }                                                                                  \
                T *y = (T *)p->y + o * k * s + j;                                                  \
                int64_t *yi = p->yi + o * k * s + j;                                               \
                for (int64_t i = 0; i < k; i++) {                                                  \
                    y[i * s] = x[h[i] * s];                                                        \
                    yi[i * s] = h[i];                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_TOPK(f32, float, float, f32_ld, flt_nan)
DEFINE_TOPK(f64, double, double, f64_ld, flt_nan)
DEFINE_TOPK(f16, uint16_t, float, f16_ld, flt_nan)
DEFINE_TOPK(bf16, uint16_t, float, bf16_ld, flt_nan)
#define INT_TOPK(D, T) DEFINE_TOPK(D, T, T, , int_nan)
CPU_FOR_INTS(INT_TOPK)

onyx_status cpu_topk(const kernel_call *c) {
    const tensor *x = kin(c, 0);
    tensor *y = kout(c, 0), *yi = kout(c, 1);
    void (*fn)(void *, int64_t, int64_t);
    switch (x->dtype) {
    case ONYX_FLOAT: fn = f32_topk; break;
    case ONYX_DOUBLE: fn = f64_topk; break;
    case ONYX_FLOAT16: fn = f16_topk; break;
    case ONYX_BFLOAT16: fn = bf16_topk; break;
#define CASE(D, T) case D: fn = D##_topk; break;
        CPU_FOR_INTS(CASE)
#undef CASE
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a numeric type",
                          onyx_dtype_name(x->dtype));
    }
    int64_t a = attr_int(c->node, "axis", -1);
    if (a < -(int64_t)x->rank || a >= x->rank)
        return onyx_error(ONYX_ERR_SHAPE, "axis %lld is out of range for rank %d", (long long)a,
                          x->rank);
    int axis = (int)(a < 0 ? a + x->rank : a);
    topk_job j = {.x = x->data, .y = y ? y->data : NULL, .n = x->dims[axis], .inner = 1,
                  .largest = c->node->version < 11 || attr_int(c->node, "largest", 1) != 0};
    if (c->node->version < 10) {
        j.k = attr_int(c->node, "k", -1);
    } else {
        const tensor *kt = kin(c, 1);
        if (!kt || kt->numel != 1 || kt->dtype != ONYX_INT64)
            return onyx_error(ONYX_ERR_SHAPE, "K (input 1) must hold one int64");
        j.k = tensor_get_i64(kt, 0);
    }
    if (j.k < 0 || j.k > j.n)
        return onyx_error(ONYX_ERR_SHAPE, "K is %lld, expected 0..%lld (the axis size)",
                          (long long)j.k, (long long)j.n);
    if (!y || !yi || y->dims[axis] != j.k || yi->dims[axis] != j.k)
        return onyx_error(ONYX_ERR_SHAPE, "outputs do not have %lld elements along axis %d",
                          (long long)j.k, axis);
    int64_t outer = 1;
    for (int i = 0; i < axis; i++) outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++) j.inner *= x->dims[i];
    j.rows = outer * j.inner;
    if (j.rows == 0 || j.k == 0) return ONYX_OK;
    j.yi = yi->data;
    /* one heap per part; parts run in parallel */
    j.nparts = parallel_threads();
    if (j.rows * j.n < 16384) j.nparts = 1;
    if (j.nparts > j.rows) j.nparts = j.rows;
    j.scratch = malloc((size_t)(j.nparts * j.k) * sizeof *j.scratch);
    if (!j.scratch) return onyx_oom("TopK heaps");
    parallel_for(j.nparts, 1, fn, &j);
    free(j.scratch);
    return ONYX_OK;
}
