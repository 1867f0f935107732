/* CPU kernel of TopK: per row along the axis, a heap of the k best indices (O(n log k)), then
 * heap-sorted best first. Order: larger (or smaller) value first, NaN as the largest value, ties
 * to the lower index, as onnx's reference (a stable lexsort) has it. The heap lives in the row of
 * the indices output (stride `inner`), so a run allocates nothing.
 *
 * Contiguous float rows where k is a large share of n (a detector's 300 best of a few thousand
 * scores) are instead sorted whole by a stable radix sort of order keys, linear in n, where the
 * heap pays a sift of log k comparisons for each of the many elements it keeps. */
#include <math.h>

#include "core/parallel.h"
#include "ops/shape_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/radix.h"

/* Elements scanned per task at least. */
#define GRAIN_WORK 16384

typedef struct topk_job {
    const void *x;
    void *y;
    int64_t *yi;
    int64_t n, k, inner;
    bool largest;
} topk_job;

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
    /* max-heap by output position over h[0], h[s], h[2s], ...: the root is the element that     \
     * would come last */                                                                         \
    static void N##_sift(const T *x, int64_t s, int64_t *h, int64_t n, int64_t i, bool lg) {      \
        for (;;) {                                                                                 \
            int64_t l = 2 * i + 1, r = l + 1, w = i;                                               \
            if (l < n && N##_before(x, s, h[w * s], h[l * s], lg)) w = l;                          \
            if (r < n && N##_before(x, s, h[w * s], h[r * s], lg)) w = r;                          \
            if (w == i) return;                                                                    \
            int64_t t = h[i * s];                                                                  \
            h[i * s] = h[w * s];                                                                   \
            h[w * s] = t;                                                                          \
            i = w;                                                                                 \
        }                                                                                          \
    }                                                                                              \
    static void N##_topk(void *ctx, int64_t b, int64_t e) {                                       \
        const topk_job *p = ctx;                                                                   \
        const int64_t n = p->n, k = p->k, s = p->inner;                                            \
        for (int64_t row = b; row < e; row++) {                                                    \
            int64_t o = row / s, j = row % s;                                                      \
            const T *x = (const T *)p->x + o * n * s + j;                                          \
            int64_t *h = p->yi + o * k * s + j;                                                    \
            for (int64_t i = 0; i < k; i++) h[i * s] = i;                                          \
            for (int64_t i = k / 2 - 1; i >= 0; i--) N##_sift(x, s, h, k, i, p->largest);         \
            for (int64_t i = k; i < n; i++)                                                        \
                if (N##_before(x, s, i, h[0], p->largest)) {                                       \
                    h[0] = i;                                                                      \
                    N##_sift(x, s, h, k, 0, p->largest);                                           \
                }                                                                                  \
            for (int64_t end = k - 1; end > 0; end--) {                                            \
                int64_t t = h[0];                                                                  \
                h[0] = h[end * s];                                                                 \
                h[end * s] = t;                                                                    \
                N##_sift(x, s, h, end, 0, p->largest);                                             \
            }                                                                                      \
            T *y = (T *)p->y + o * k * s + j;                                                      \
            for (int64_t i = 0; i < k; i++) y[i * s] = x[h[i * s] * s];                            \
        }                                                                                          \
    }

DEFINE_TOPK(f32, float, float, cpu_f32_ld, flt_nan)
DEFINE_TOPK(f64, double, double, cpu_f64_ld, flt_nan)
DEFINE_TOPK(f16, uint16_t, float, cpu_f16_ld, flt_nan)
DEFINE_TOPK(bf16, uint16_t, float, cpu_bf16_ld, flt_nan)
#define INT_TOPK(D, T) DEFINE_TOPK(D, T, T, , int_nan)
CPU_FOR_INTS(INT_TOPK)

/* The radix path: rows of at least RADIX_MIN_N elements with k at least n / RADIX_SHARE. */
#define RADIX_MIN_N 256
#define RADIX_SHARE 8

typedef struct radix_job {
    const float *x;
    float *y;
    int64_t *yi;
    int64_t n, k, rows, tasks;
    bool largest;
    uint32_t *mem; /* per task: keys, indices, their temporaries (n each), the counting table */
} radix_job;

static size_t radix_task_words(int64_t n) { return 4 * (size_t)n + CPU_RADIX_COUNTS; }

static void f32_radix_rows(void *ctx, int64_t b, int64_t e) {
    const radix_job *j = ctx;
    const int64_t n = j->n, k = j->k;
    for (int64_t t = b; t < e; t++) {
        uint32_t *key = j->mem + (size_t)t * radix_task_words(n), *idx = key + n, *tk = idx + n,
                 *ti = tk + n, *count = ti + n;
        for (int64_t row = t * j->rows / j->tasks; row < (t + 1) * j->rows / j->tasks; row++) {
            const float *x = j->x + row * n;
            for (int64_t i = 0; i < n; i++)
                key[i] = cpu_f32_order_key(x[i], j->largest, j->largest), idx[i] = (uint32_t)i;
            cpu_radix_sort(key, idx, tk, ti, (size_t)n, count);
            for (int64_t i = 0; i < k; i++) {
                j->y[row * k + i] = x[idx[i]];
                j->yi[row * k + i] = idx[i];
            }
        }
    }
}

onyx_status cpu_topk(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0), *yi = kernel_output(c, 1);
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
    int axis;
    TRY(ops_axis(attr_int(c->node, "axis", -1), x->rank, "axis", &axis));
    topk_job j = {.x = x->data, .y = y ? y->data : NULL, .n = x->dims[axis], .inner = 1,
                  .largest = c->node->version < 11 || attr_int(c->node, "largest", 1) != 0};
    if (c->node->version < 10) {
        j.k = attr_int(c->node, "k", -1);
    } else {
        const tensor *kt = kernel_input(c, 1);
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
    int64_t rows = outer * j.inner;
    if (rows == 0 || j.k == 0) return ONYX_OK;
    j.yi = yi->data;
    if (x->dtype == ONYX_FLOAT && j.inner == 1 && j.n >= RADIX_MIN_N && j.n <= UINT32_MAX &&
        j.k * RADIX_SHARE >= j.n) {
        int64_t threads = parallel_threads();
        radix_job r = {.x = x->data, .y = y->data, .yi = yi->data, .n = j.n, .k = j.k,
                       .rows = rows, .tasks = rows < threads ? rows : threads,
                       .largest = j.largest};
        TRY(kernel_scratch(c, (size_t)r.tasks * radix_task_words(j.n) * sizeof(uint32_t),
                           (void **)&r.mem));
        parallel_for(r.tasks, 1, f32_radix_rows, &r);
        return ONYX_OK;
    }
    parallel_for(rows, GRAIN_WORK / (j.n + 1) + 1, fn, &j);
    return ONYX_OK;
}
