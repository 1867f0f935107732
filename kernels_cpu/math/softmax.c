/* CPU kernels of Softmax, LogSoftmax and Hardmax over [outer, n, inner] around the axis (v1/v11
 * coerce to 2-D, which is inner = 1). Numerically stable: the row maximum is subtracted before
 * exp. Inner > 1 is processed in chunks of columns so rows stay contiguous reads. */
#include <math.h>

#include "core/parallel.h"
#include "ops/shape_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

typedef enum sm_mode { SM_SOFTMAX, SM_LOG, SM_HARD } sm_mode;

#define CHUNK 256
#define GRAIN_WORK 16384

typedef struct sm_plan {
    sm_mode mode;
    const void *x;
    void *y;
    int64_t n, inner, nchunks;
} sm_plan;

/* N: name, T: storage, F: compute type, LD/ST: conversions between them, EXP/LOG: F's functions.
 * Half types recompute exp in the last pass instead of keeping it in y. */
#define DEFINE_SOFTMAX(N, T, F, LD, ST, EXP, LOG)                                                  \
    /* one contiguous row (inner == 1, the common last-axis case) */                               \
    static void N##_row(sm_mode mode, const T *x, T *y, int64_t n) {                               \
        F mx = LD(x[0]), s = 0;                                                                    \
        int64_t arg = 0;                                                                           \
        for (int64_t r = 1; r < n; r++) {                                                          \
            F v = LD(x[r]);                                                                        \
            if (!isnan(mx) && (v > mx || isnan(v))) mx = v, arg = r;                               \
        }                                                                                          \
        if (mode == SM_HARD) {                                                                     \
            for (int64_t r = 0; r < n; r++) y[r] = ST(r == arg ? 1 : 0);                           \
            return;                                                                                \
        }                                                                                          \
        if (mode == SM_LOG) {                                                                      \
            for (int64_t r = 0; r < n; r++) s += EXP(LD(x[r]) - mx);                               \
            s = mx + LOG(s);                                                                       \
            for (int64_t r = 0; r < n; r++) y[r] = ST(LD(x[r]) - s);                               \
            return;                                                                                \
        }                                                                                          \
        if (sizeof(T) == sizeof(F)) {                                                              \
            for (int64_t r = 0; r < n; r++) {                                                      \
                F ev = EXP(LD(x[r]) - mx);                                                         \
                s += ev;                                                                           \
                y[r] = ST(ev);                                                                     \
            }                                                                                      \
            s = 1 / s;                                                                             \
            for (int64_t r = 0; r < n; r++) y[r] = ST(LD(y[r]) * s);                               \
            return;                                                                                \
        }                                                                                          \
        for (int64_t r = 0; r < n; r++) s += EXP(LD(x[r]) - mx);                                   \
        s = 1 / s;                                                                                 \
        for (int64_t r = 0; r < n; r++) y[r] = ST(EXP(LD(x[r]) - mx) * s);                         \
    }                                                                                              \
    static void N##_task(void *ctx, int64_t b, int64_t e) {                                        \
        const sm_plan *p = ctx;                                                                    \
        const int64_t n = p->n, in = p->inner;                                                     \
        if (in == 1) {                                                                             \
            for (int64_t o = b; o < e; o++)                                                        \
                N##_row(p->mode, (const T *)p->x + o * n, (T *)p->y + o * n, n);                   \
            return;                                                                                \
        }                                                                                          \
        for (int64_t t = b; t < e; t++) {                                                          \
            int64_t o = t / p->nchunks, j0 = (t % p->nchunks) * CHUNK;                             \
            int64_t len = in - j0 < CHUNK ? in - j0 : CHUNK;                                       \
            const T *x = (const T *)p->x + o * n * in + j0;                                        \
            T *y = (T *)p->y + o * n * in + j0;                                                    \
            F mx[CHUNK], s[CHUNK];                                                                 \
            int64_t arg[CHUNK];                                                                    \
            for (int64_t j = 0; j < len; j++) mx[j] = LD(x[j]), s[j] = 0, arg[j] = 0;              \
            for (int64_t r = 1; r < n; r++)                                                        \
                for (int64_t j = 0; j < len; j++) {                                                \
                    F v = LD(x[r * in + j]);                                                       \
                    /* the first maximum wins; NaN counts as the maximum like numpy's argmax */    \
                    if (!isnan(mx[j]) && (v > mx[j] || isnan(v))) mx[j] = v, arg[j] = r;           \
                }                                                                                  \
            if (p->mode == SM_HARD) {                                                              \
                for (int64_t r = 0; r < n; r++)                                                    \
                    for (int64_t j = 0; j < len; j++) y[r * in + j] = ST(arg[j] == r ? 1 : 0);     \
                continue;                                                                          \
            }                                                                                      \
            for (int64_t r = 0; r < n; r++)                                                        \
                for (int64_t j = 0; j < len; j++) {                                                \
                    F ev = EXP(LD(x[r * in + j]) - mx[j]);                                         \
                    s[j] += ev;                                                                    \
                    if (p->mode == SM_SOFTMAX && sizeof(T) == sizeof(F)) y[r * in + j] = ST(ev);   \
                }                                                                                  \
            if (p->mode == SM_LOG) {                                                               \
                for (int64_t j = 0; j < len; j++) s[j] = mx[j] + LOG(s[j]);                        \
                for (int64_t r = 0; r < n; r++)                                                    \
                    for (int64_t j = 0; j < len; j++)                                              \
                        y[r * in + j] = ST(LD(x[r * in + j]) - s[j]);                              \
                continue;                                                                          \
            }                                                                                      \
            for (int64_t j = 0; j < len; j++) s[j] = 1 / s[j];                                     \
            for (int64_t r = 0; r < n; r++)                                                        \
                for (int64_t j = 0; j < len; j++) {                                                \
                    F ev = sizeof(T) == sizeof(F) ? LD(y[r * in + j])                              \
                                                  : EXP(LD(x[r * in + j]) - mx[j]);                \
                    y[r * in + j] = ST(ev * s[j]);                                                 \
                }                                                                                  \
        }                                                                                          \
    }

DEFINE_SOFTMAX(f32, float, float, cpu_f32_ld, cpu_f32_st, expf, logf)
DEFINE_SOFTMAX(f64, double, double, cpu_f64_ld, cpu_f64_st, exp, log)
DEFINE_SOFTMAX(f16, uint16_t, float, cpu_f16_ld, cpu_f16_st, expf, logf)
DEFINE_SOFTMAX(bf16, uint16_t, float, cpu_bf16_ld, cpu_bf16_st, expf, logf)

static onyx_status softmax_run(const kernel_call *c, sm_mode mode) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    void (*fn)(void *, int64_t, int64_t);
    switch (x->dtype) {
    case ONYX_FLOAT: fn = f32_task; break;
    case ONYX_DOUBLE: fn = f64_task; break;
    case ONYX_FLOAT16: fn = f16_task; break;
    case ONYX_BFLOAT16: fn = bf16_task; break;
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a float type",
                          onyx_dtype_name(x->dtype));
    }
    bool coerce = c->node->version < 13;
    int axis;
    TRY(ops_axis(attr_int(c->node, "axis", coerce ? 1 : -1), x->rank, "axis", &axis));
    sm_plan p = {.mode = mode, .x = x->data, .y = y->data, .n = 1, .inner = 1};
    int64_t outer = 1;
    for (int i = 0; i < axis; i++) outer *= x->dims[i];
    for (int i = axis; i < x->rank; i++) {
        if (i == axis || coerce) p.n *= x->dims[i];
        else p.inner *= x->dims[i];
    }
    if (x->numel == 0) return ONYX_OK;
    p.nchunks = (p.inner + CHUNK - 1) / CHUNK;
    int64_t work = p.n * (p.inner < CHUNK ? p.inner : CHUNK);
    parallel_for(outer * p.nchunks, GRAIN_WORK / work + 1, fn, &p);
    return ONYX_OK;
}

onyx_status cpu_softmax(const kernel_call *c) { return softmax_run(c, SM_SOFTMAX); }
onyx_status cpu_logsoftmax(const kernel_call *c) { return softmax_run(c, SM_LOG); }
onyx_status cpu_hardmax(const kernel_call *c) { return softmax_run(c, SM_HARD); }
