/* CPU kernels of CumSum and CumProd over [outer, n, inner] around the axis: columns of the inner
 * block are carried in a chunk of accumulators (float for half types, wrapping unsigned for
 * integers), so rows are read contiguously whatever the axis. */
#include "core/parallel.h"
#include "ops/shape_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

#define CHUNK 256
#define GRAIN_WORK 16384

typedef struct cum_job {
    bool prod, exclusive, reverse;
    const void *x;
    void *y;
    int64_t n, inner, nchunks;
} cum_job;

#define DEFINE_CUM(N, T, ACC, LD, ST)                                                              \
    static void N##_cum(void *ctx, int64_t b, int64_t e) {                                        \
        const cum_job *p = ctx;                                                                    \
        for (int64_t t = b; t < e; t++) {                                                          \
            int64_t o = t / p->nchunks, j0 = (t % p->nchunks) * CHUNK;                             \
            int64_t len = p->inner - j0 < CHUNK ? p->inner - j0 : CHUNK;                           \
            const T *x = (const T *)p->x + o * p->n * p->inner + j0;                               \
            T *y = (T *)p->y + o * p->n * p->inner + j0;                                           \
            ACC acc[CHUNK];                                                                        \
            for (int64_t j = 0; j < len; j++) acc[j] = p->prod ? 1 : 0;                            \
            for (int64_t s = 0; s < p->n; s++) {                                                   \
                int64_t r = p->reverse ? p->n - 1 - s : s;                                         \
                const T *xr = x + r * p->inner;                                                    \
                T *yr = y + r * p->inner;                                                          \
                for (int64_t j = 0; j < len; j++) {                                                \
                    ACC v = LD(xr[j]);                                                             \
                    if (p->exclusive) yr[j] = ST(acc[j]);                                          \
                    acc[j] = p->prod ? acc[j] * v : acc[j] + v;                                    \
                    if (!p->exclusive) yr[j] = ST(acc[j]);                                         \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_CUM(f32, float, float, cpu_f32_ld, cpu_f32_st)
DEFINE_CUM(f64, double, double, cpu_f64_ld, cpu_f64_st)
DEFINE_CUM(f16, uint16_t, float, cpu_f16_ld, cpu_f16_st)
DEFINE_CUM(bf16, uint16_t, float, cpu_bf16_ld, cpu_bf16_st)
/* integers wrap: accumulate in uint64 (no promotion to int), truncated back */
#define INT_CUM(D, T) DEFINE_CUM(D, T, uint64_t, (uint64_t), (T))
CPU_FOR_INTS(INT_CUM)

static onyx_status cum_run(const kernel_call *c, bool prod) {
    const tensor *x = kernel_input(c, 0), *at = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    void (*fn)(void *, int64_t, int64_t);
    switch (x->dtype) {
    case ONYX_FLOAT: fn = f32_cum; break;
    case ONYX_DOUBLE: fn = f64_cum; break;
    case ONYX_FLOAT16: fn = f16_cum; break;
    case ONYX_BFLOAT16: fn = bf16_cum; break;
#define CASE(D, T) case D: fn = D##_cum; break;
        CPU_FOR_INTS(CASE)
#undef CASE
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a numeric type",
                          onyx_dtype_name(x->dtype));
    }
    if (!at || at->numel != 1 || (at->dtype != ONYX_INT32 && at->dtype != ONYX_INT64))
        return onyx_error(ONYX_ERR_SHAPE, "axis (input 1) must hold one int32 or int64");
    int axis; /* a scalar is a 1-element vector here */
    TRY(ops_axis(tensor_get_i64(at, 0), x->rank == 0 ? 1 : x->rank, "axis", &axis));
    cum_job j = {.prod = prod, .exclusive = attr_int(c->node, "exclusive", 0) != 0,
                 .reverse = attr_int(c->node, "reverse", 0) != 0, .x = x->data, .y = y->data,
                 .n = x->rank == 0 ? 1 : x->dims[axis], .inner = 1};
    int64_t outer = 1;
    for (int i = 0; i < axis && i < x->rank; i++) outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++) j.inner *= x->dims[i];
    if (x->numel == 0) return ONYX_OK;
    j.nchunks = (j.inner + CHUNK - 1) / CHUNK;
    int64_t work = j.n * (j.inner < CHUNK ? j.inner : CHUNK);
    parallel_for(outer * j.nchunks, GRAIN_WORK / work + 1, fn, &j);
    return ONYX_OK;
}

onyx_status cpu_cumsum(const kernel_call *c) { return cum_run(c, false); }
onyx_status cpu_cumprod(const kernel_call *c) { return cum_run(c, true); }
