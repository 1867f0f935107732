/* CPU kernels of the activations: one template for float and double (float16/bfloat16 go
 * through float in chunks), plus the integer forms of Relu (v14) and Shrink. Float's
 * transcendental and clamping activations run on the vector math (kernels_cpu/common/vmath.h).
 * SwiGLU, Swish of a gate times a value input of its shape, rides along with a second input. */
#include <math.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/common/vmath.h"

typedef enum act_op {
    A_RELU, A_LEAKY, A_ELU, A_SELU, A_CELU, A_GELU, A_GELU_TANH, A_HSIG, A_HSWISH, A_MISH,
    A_SOFTPLUS, A_SOFTSIGN, A_SWISH, A_THRELU, A_SHRINK, A_SIGMOID, A_TANH, A_SWIGLU,
} act_op;

#define CHUNK 256
#define GRAIN 8192

typedef struct act_job {
    act_op op;
    float alpha, beta, gamma;
    onyx_dtype dtype;
    const void *x;
    const void *v; /* SwiGLU's value input (B), else NULL */
    void *y;
} act_job;

/* The loops below are marked CPU_SIMD. Selects pick operands rather than results of arithmetic,
 * which the vectorizer may not speculate under trapping math; loops calling libm stay scalar. */

/* N: name, T: type, then its libm functions. */
#define DEFINE_ACT(N, T, EXP, EXPM1, LOG1P, TANH, ERF, SQRT)                                       \
    static inline T N##_softplus(T x) {                                                            \
        T ax = x < 0 ? -x : x;                                                                     \
        return (x > 0 ? x : 0) + LOG1P(EXP(-ax));                                                  \
    }                                                                                              \
    /* e^-x overflowing to inf still gives the right 0 */                                          \
    static inline T N##_sigmoid(T x) { return 1 / (1 + EXP(-x)); }                                 \
    static void N##_act(const act_job *j, const T *x, const T *v, T *y, int64_t n) {               \
        const T a = (T)j->alpha, b = (T)j->beta, g = (T)j->gamma;                                  \
        switch (j->op) {                                                                           \
        case A_RELU:                                                                               \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] < 0 ? 0 : x[i];                            \
            break;                                                                                 \
        case A_LEAKY:                                                                              \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] * (x[i] < 0 ? a : 1);                      \
            break;                                                                                 \
        case A_ELU:                                                                                \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] < 0 ? a * EXPM1(x[i]) : x[i];              \
            break;                                                                                 \
        case A_SELU:                                                                               \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = g * (x[i] <= 0 ? a * EXPM1(x[i]) : x[i]);       \
            break;                                                                                 \
        case A_CELU:                                                                               \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] < 0 ? a * EXPM1(x[i] / a) : x[i];          \
            break;                                                                                 \
        case A_GELU: {                                                                             \
            const T r = (T)0.70710678118654752440;                                                 \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = (T)0.5 * x[i] * (1 + ERF(x[i] * r));            \
            break;                                                                                 \
        }                                                                                          \
        case A_GELU_TANH: {                                                                        \
            /* 0.5 * (1 + tanh(z)) is sigmoid(2z), without the cancellation for negative z */      \
            const T k = 2 * SQRT((T)2 / (T)3.14159265358979323846);                                \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T v = x[i];                                                                        \
                y[i] = v * N##_sigmoid(k * (v + (T)0.044715 * v * v * v));                         \
            }                                                                                      \
            break;                                                                                 \
        }                                                                                          \
        case A_HSIG:                                                                               \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T v = a * x[i] + b;                                                                \
                y[i] = v < 0 ? 0 : v > 1 ? 1 : v;                                                  \
            }                                                                                      \
            break;                                                                                 \
        case A_HSWISH:                                                                             \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T v = x[i] / 6 + (T)0.5;                                                           \
                y[i] = x[i] * (v < 0 ? 0 : v > 1 ? 1 : v);                                         \
            }                                                                                      \
            break;                                                                                 \
        case A_MISH:                                                                               \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] * TANH(N##_softplus(x[i]));                \
            break;                                                                                 \
        case A_SOFTPLUS:                                                                           \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = N##_softplus(x[i]);                             \
            break;                                                                                 \
        case A_SOFTSIGN:                                                                           \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] / (1 + (x[i] < 0 ? -x[i] : x[i]));         \
            break;                                                                                 \
        case A_SWISH:                                                                              \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] * N##_sigmoid(a * x[i]);                   \
            break;                                                                                 \
        case A_SWIGLU:                                                                             \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] * N##_sigmoid(a * x[i]) * v[i];            \
            break;                                                                                 \
        case A_THRELU:                                                                             \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] > a ? x[i] : 0;                            \
            break;                                                                                 \
        case A_SHRINK: /* alpha holds lambd, beta holds bias */                                    \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T t = x[i] + (x[i] < -a ? b : -b);                                                 \
                y[i] = (x[i] < -a) | (x[i] > a) ? t : 0;                                           \
            }                                                                                      \
            break;                                                                                 \
        case A_SIGMOID:                                                                            \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = N##_sigmoid(x[i]);                              \
            break;                                                                                 \
        case A_TANH:                                                                               \
            CPU_SIMD                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = TANH(x[i]);                                     \
            break;                                                                                 \
        }                                                                                          \
    }

DEFINE_ACT(f32, float, expf, expm1f, log1pf, tanhf, erff, sqrtf)
DEFINE_ACT(f64, double, exp, expm1, log1p, tanh, erf, sqrt)

/* Float: the ops with exp/tanh/erf (libm's do not vectorize) and the hard clamps go through the
 * vector math; the plain selects stay in f32_act, which the compiler vectorizes. */
static void f32_run(const act_job *j, const float *x, const float *v, float *y, int64_t n) {
    const cpu_vmath *vm = cpu_vmath_get();
    switch (j->op) {
    case A_ELU: vm->elu(x, y, n, j->alpha, 1, 1); return;
    case A_SELU: vm->elu(x, y, n, j->alpha, j->gamma, 1); return;
    case A_CELU: vm->elu(x, y, n, j->alpha, 1, 1 / j->alpha); return;
    case A_GELU: vm->gelu(x, y, n); return;
    case A_GELU_TANH: vm->gelu_tanh(x, y, n); return;
    case A_HSIG: vm->hard(x, y, n, j->alpha, j->beta, 0); return;
    case A_HSWISH: vm->hard(x, y, n, 1.0f / 6, 0.5f, 1); return;
    case A_MISH: vm->mish(x, y, n); return;
    case A_SOFTPLUS: vm->softplus(x, y, n); return;
    case A_SWISH: vm->swish(x, y, n, j->alpha); return;
    case A_SWIGLU: {
        /* the gate goes through a buffer: y may take either input's bytes (KF_INPLACE) */
        float g[CHUNK];
        for (int64_t i = 0; i < n; i += CHUNK) {
            int64_t m = n - i < CHUNK ? n - i : CHUNK;
            vm->swish(x + i, g, m, j->alpha);
            CPU_SIMD
            for (int64_t k = 0; k < m; k++) y[i + k] = g[k] * v[i + k];
        }
        return;
    }
    case A_SIGMOID: vm->sigmoid(x, y, n); return;
    case A_TANH: vm->tanh(x, y, n); return;
    default: f32_act(j, x, v, y, n); return;
    }
}

/* Integer Relu and Shrink; Shrink's thresholds are floats, so it compares and shifts in double
 * and saturates back. */
#define DEFINE_INT_ACT(D, T)                                                                       \
    static void D##_act(const act_job *j, const T *x, T *y, int64_t n) {                           \
        typedef CPU_UNSIGNED_OF(T) U;                                                              \
        const T tmax = (T)0 < (T)-1 ? (T)-1 : (T)(((U)1 << (sizeof(T) * 8 - 1)) - 1);             \
        const T tmin = (T)0 < (T)-1 ? 0 : (T)(-tmax - 1);                                          \
        if (j->op == A_RELU) {                                                                     \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0;                            \
            return;                                                                                \
        }                                                                                          \
        const double l = j->alpha, b = j->beta;                                                    \
        for (int64_t i = 0; i < n; i++) {                                                          \
            double v = (double)x[i];                                                               \
            v = v < -l ? v + b : v > l ? v - b : 0;                                                \
            /* a NaN bias must not reach the cast, which would be undefined */                     \
            y[i] = v != v ? 0 : v <= (double)tmin ? tmin : v >= (double)tmax ? tmax : (T)v;        \
        }                                                                                          \
    }
CPU_FOR_INTS(DEFINE_INT_ACT)

/* j->v offset like x, or NULL for the one-input activations */
#define AT(T, p, b) ((p) ? (const T *)(p) + (b) : NULL)

static void act_task(void *ctx, int64_t b, int64_t e) {
    const act_job *j = ctx;
    switch (j->dtype) {
    case ONYX_FLOAT:
        f32_run(j, (const float *)j->x + b, AT(float, j->v, b), (float *)j->y + b, e - b);
        return;
    case ONYX_DOUBLE:
        f64_act(j, (const double *)j->x + b, AT(double, j->v, b), (double *)j->y + b, e - b);
        return;
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        const uint16_t *x = j->x, *v = j->v;
        uint16_t *y = j->y;
        bool h = j->dtype == ONYX_FLOAT16;
        float buf[CHUNK], vbuf[CHUNK];
        for (int64_t i = b; i < e; i += CHUNK) {
            int64_t n = e - i < CHUNK ? e - i : CHUNK;
            if (h) cpu_fp16_to_float_n(x + i, buf, n);
            else cpu_bf16_to_float_n(x + i, buf, n);
            if (v && h) cpu_fp16_to_float_n(v + i, vbuf, n);
            else if (v) cpu_bf16_to_float_n(v + i, vbuf, n);
            f32_run(j, buf, v ? vbuf : NULL, buf, n);
            if (h) cpu_float_to_fp16_n(buf, y + i, n);
            else cpu_float_to_bf16_n(buf, y + i, n);
        }
        return;
    }
#define CASE(D, T) case D: D##_act(j, (const T *)j->x + b, (T *)j->y + b, e - b); return;
        CPU_FOR_INTS(CASE)
#undef CASE
    default: return;
    }
}

static onyx_status act_run(const kernel_call *c, act_op op) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    const graph_node *n = c->node;
    act_job j = {.op = op, .dtype = x->dtype, .x = x->data, .y = y->data};
    bool ints_ok = op == A_RELU || op == A_SHRINK;
    if (!dtype_is_float(x->dtype) && !(ints_ok && dtype_is_int(x->dtype)))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, which %s does not take",
                          onyx_dtype_name(x->dtype), n->op_type);
    if (op == A_SWIGLU) {
        const tensor *v = kernel_input(c, 1);
        bool same = v && v->dtype == x->dtype && v->rank == x->rank;
        for (int k = 0; same && k < x->rank; k++) same = v->dims[k] == x->dims[k];
        if (!same) {
            char a[160], b[160];
            return onyx_error(ONYX_ERR_SHAPE, "input 1 is %s %s, expected %s %s like input 0 "
                              "(SwiGLU does not broadcast)",
                              v ? onyx_dtype_name(v->dtype) : "missing",
                              v ? shape_str(v->rank, v->dims, b, sizeof b) : "",
                              onyx_dtype_name(x->dtype), shape_str(x->rank, x->dims, a, sizeof a));
        }
        j.v = v->data;
    }
    switch (op) {
    case A_LEAKY: j.alpha = attr_float(n, "alpha", 0.01f); break;
    case A_ELU: case A_CELU: case A_THRELU: case A_SWISH: case A_SWIGLU:
        j.alpha = attr_float(n, "alpha", 1.0f);
        break;
    case A_SELU: {
        bool v1 = n->version < 6; /* v1's defaults were rounded */
        j.alpha = attr_float(n, "alpha", v1 ? 1.6732f : 1.67326319217681884765625f);
        j.gamma = attr_float(n, "gamma", v1 ? 1.0507f : 1.05070102214813232421875f);
        break;
    }
    case A_HSIG:
        j.alpha = attr_float(n, "alpha", 0.2f);
        j.beta = attr_float(n, "beta", 0.5f);
        break;
    case A_SHRINK:
        j.alpha = attr_float(n, "lambd", 0.5f);
        j.beta = attr_float(n, "bias", 0.0f);
        break;
    case A_GELU:
        if (strcmp(attr_string(n, "approximate", "none"), "tanh") == 0) j.op = A_GELU_TANH;
        break;
    default: break;
    }
    if (op == A_CELU && j.alpha == 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute alpha is 0, expected non-zero");
    parallel_for(x->numel, GRAIN, act_task, &j);
    return ONYX_OK;
}

#define ACT_RUN(fn, op)                                                                            \
    onyx_status fn(const kernel_call *c) { return act_run(c, op); }
ACT_RUN(cpu_relu, A_RELU)
ACT_RUN(cpu_leakyrelu, A_LEAKY)
ACT_RUN(cpu_elu, A_ELU)
ACT_RUN(cpu_selu, A_SELU)
ACT_RUN(cpu_celu, A_CELU)
ACT_RUN(cpu_gelu, A_GELU)
ACT_RUN(cpu_hardsigmoid, A_HSIG)
ACT_RUN(cpu_hardswish, A_HSWISH)
ACT_RUN(cpu_mish, A_MISH)
ACT_RUN(cpu_softplus, A_SOFTPLUS)
ACT_RUN(cpu_softsign, A_SOFTSIGN)
ACT_RUN(cpu_swish, A_SWISH)
ACT_RUN(cpu_swiglu, A_SWIGLU)
ACT_RUN(cpu_thresholdedrelu, A_THRELU)
ACT_RUN(cpu_shrink, A_SHRINK)
ACT_RUN(cpu_sigmoid, A_SIGMOID)
ACT_RUN(cpu_tanh, A_TANH)
