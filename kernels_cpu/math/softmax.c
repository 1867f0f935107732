/* CPU kernels of Softmax, LogSoftmax and Hardmax over [outer, n, inner] around the axis (v1/v11
 * coerce to 2-D, which is inner = 1). Numerically stable: the row maximum is subtracted before
 * exp. Inner > 1 is processed in chunks of columns so rows stay contiguous reads. Softmax and
 * LogSoftmax of float, float16 and bfloat16 compute on the vector math (float buffers for the
 * half types); double and Hardmax keep the scalar template. */
#include <math.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/vmath.h"

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

/* ---- float compute on the vector math: float, float16, bfloat16 (Softmax, LogSoftmax) */

typedef struct vm_plan {
    sm_plan p;
    onyx_dtype dt;
} vm_plan;

static void ld_chunk(onyx_dtype dt, const void *x, int64_t off, float *buf, int64_t n) {
    if (dt == ONYX_FLOAT) {
        memcpy(buf, (const float *)x + off, (size_t)n * sizeof(float));
    } else if (dt == ONYX_FLOAT16) {
        const uint16_t *h = (const uint16_t *)x + off;
        CPU_SIMD for (int64_t k = 0; k < n; k++) buf[k] = cpu_f16_ld(h[k]);
    } else {
        const uint16_t *h = (const uint16_t *)x + off;
        CPU_SIMD for (int64_t k = 0; k < n; k++) buf[k] = cpu_bf16_ld(h[k]);
    }
}

static void st_chunk(onyx_dtype dt, void *y, int64_t off, const float *buf, int64_t n) {
    if (dt == ONYX_FLOAT) {
        memcpy((float *)y + off, buf, (size_t)n * sizeof(float));
    } else if (dt == ONYX_FLOAT16) {
        uint16_t *h = (uint16_t *)y + off;
        CPU_SIMD for (int64_t k = 0; k < n; k++) h[k] = cpu_f16_st(buf[k]);
    } else {
        uint16_t *h = (uint16_t *)y + off;
        CPU_SIMD for (int64_t k = 0; k < n; k++) h[k] = cpu_bf16_st(buf[k]);
    }
}

/* the first maximum wins; NaN counts as the maximum like numpy's argmax */
static inline float max_nan(float m, float v) { return !isnan(m) && (v > m || isnan(v)) ? v : m; }

/* One contiguous row: float in place on the output, half types a CHUNK at a time (exp is
 * recomputed in the last pass rather than kept). */
static void vm_row(const cpu_vmath *vm, sm_mode mode, onyx_dtype dt, const void *x, void *y,
                   int64_t off, int64_t n) {
    if (dt == ONYX_FLOAT) {
        const float *xf = (const float *)x + off;
        float *yf = (float *)y + off;
        if (mode == SM_SOFTMAX) {
            cpu_vm_softmax_row(vm, xf, yf, n);
        } else {
            float mx = vm->max(xf, n);
            float lse = mx + logf(vm->exp_sum(xf, NULL, n, mx));
            vm->affine(xf, yf, n, 1, -lse);
        }
        return;
    }
    float buf[CHUNK];
    float mx = -INFINITY, s = 0;
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        ld_chunk(dt, x, off + i, buf, m);
        mx = i == 0 ? vm->max(buf, m) : max_nan(mx, vm->max(buf, m));
    }
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        ld_chunk(dt, x, off + i, buf, m);
        s += vm->exp_sum(buf, NULL, m, mx);
    }
    float a = mode == SM_SOFTMAX ? 1 / s : 1, b = mode == SM_SOFTMAX ? 0 : -(mx + logf(s));
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        ld_chunk(dt, x, off + i, buf, m);
        if (mode == SM_SOFTMAX) vm->exp_sum(buf, buf, m, mx);
        vm->affine(buf, buf, m, a, b);
        st_chunk(dt, y, off + i, buf, m);
    }
}

static void vm_task(void *ctx, int64_t b, int64_t e) {
    const vm_plan *vp = ctx;
    const sm_plan *p = &vp->p;
    const cpu_vmath *vm = cpu_vmath_get();
    const int64_t n = p->n, in = p->inner;
    if (in == 1) {
        for (int64_t o = b; o < e; o++) vm_row(vm, p->mode, vp->dt, p->x, p->y, o * n, n);
        return;
    }
    float mx[CHUNK], s[CHUNK], buf[CHUNK];
    for (int64_t t = b; t < e; t++) {
        int64_t o = t / p->nchunks, j0 = (t % p->nchunks) * CHUNK;
        int64_t len = in - j0 < CHUNK ? in - j0 : CHUNK, base = o * n * in + j0;
        ld_chunk(vp->dt, p->x, base, mx, len);
        for (int64_t r = 1; r < n; r++) {
            ld_chunk(vp->dt, p->x, base + r * in, buf, len);
            for (int64_t j = 0; j < len; j++) mx[j] = max_nan(mx[j], buf[j]);
        }
        for (int64_t j = 0; j < len; j++) s[j] = 0;
        bool keep = p->mode == SM_SOFTMAX && vp->dt == ONYX_FLOAT; /* exps stored in y */
        for (int64_t r = 0; r < n; r++) {
            ld_chunk(vp->dt, p->x, base + r * in, buf, len);
            CPU_SIMD for (int64_t j = 0; j < len; j++) buf[j] -= mx[j];
            vm->exp(buf, buf, len);
            CPU_SIMD for (int64_t j = 0; j < len; j++) s[j] += buf[j];
            if (keep) st_chunk(vp->dt, p->y, base + r * in, buf, len);
        }
        if (p->mode == SM_LOG) {
            for (int64_t j = 0; j < len; j++) s[j] = mx[j] + logf(s[j]);
            for (int64_t r = 0; r < n; r++) {
                ld_chunk(vp->dt, p->x, base + r * in, buf, len);
                CPU_SIMD for (int64_t j = 0; j < len; j++) buf[j] -= s[j];
                st_chunk(vp->dt, p->y, base + r * in, buf, len);
            }
            continue;
        }
        for (int64_t j = 0; j < len; j++) s[j] = 1 / s[j];
        for (int64_t r = 0; r < n; r++) {
            if (keep) {
                float *yr = (float *)p->y + base + r * in;
                CPU_SIMD for (int64_t j = 0; j < len; j++) yr[j] *= s[j];
                continue;
            }
            ld_chunk(vp->dt, p->x, base + r * in, buf, len);
            CPU_SIMD for (int64_t j = 0; j < len; j++) buf[j] -= mx[j];
            vm->exp(buf, buf, len);
            CPU_SIMD for (int64_t j = 0; j < len; j++) buf[j] *= s[j];
            st_chunk(vp->dt, p->y, base + r * in, buf, len);
        }
    }
}

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
    TRY(kernel_axis(c->params, x->rank, &axis));
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
    if (mode != SM_HARD && x->dtype != ONYX_DOUBLE) {
        vm_plan vp = {.p = p, .dt = x->dtype};
        parallel_for(outer * p.nchunks, GRAIN_WORK / work + 1, vm_task, &vp);
        return ONYX_OK;
    }
    parallel_for(outer * p.nchunks, GRAIN_WORK / work + 1, fn, &p);
    return ONYX_OK;
}

onyx_status cpu_softmax(const kernel_call *c) { return softmax_run(c, SM_SOFTMAX); }
onyx_status cpu_logsoftmax(const kernel_call *c) { return softmax_run(c, SM_LOG); }
onyx_status cpu_hardmax(const kernel_call *c) { return softmax_run(c, SM_HARD); }
