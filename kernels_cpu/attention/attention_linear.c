/* CPU kernel of LinearAttention: the linear / gated / delta / gated-delta recurrences run token
 * by token over one float (d_k x d_v) state per (batch, kv head), in parallel across them; query
 * heads of a group read their kv head's state. Half types compute in float. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

typedef struct la_ctx {
    const void *q, *k, *v, *g, *beta;
    void *y;
    float *state;            /* [B, Hkv, dk, dv] */
    float *tmp;              /* per (b, kv head): dv floats */
    int64_t b, t, hq, hkv, dk, dv;
    int64_t g_last, beta_last; /* last dims of decay (hkv or hkv*dk) and beta (hkv or 1) */
    bool gated, delta;
    float scale;
} la_ctx;

#define DEFINE_LA(N, T, LD, ST)                                                                    \
    static void N##_la(void *vctx, int64_t t0, int64_t t1) {                                       \
        const la_ctx *c = vctx;                                                                    \
        const int64_t dk = c->dk, dv = c->dv, group = c->hq / c->hkv;                              \
        for (int64_t task = t0; task < t1; task++) {                                               \
            int64_t b = task / c->hkv, h = task % c->hkv;                                          \
            float *S = c->state + task * dk * dv, *u = c->tmp + task * dv;                         \
            for (int64_t t = 0; t < c->t; t++) {                                                   \
                int64_t bt = b * c->t + t;                                                         \
                const T *k = (const T *)c->k + bt * c->hkv * dk + h * dk;                          \
                const T *v = (const T *)c->v + bt * c->hkv * dv + h * dv;                          \
                if (c->gated) {                                                                    \
                    const T *g = (const T *)c->g + bt * c->g_last;                                 \
                    for (int64_t i = 0; i < dk; i++) {                                             \
                        float e = expf(LD(c->g_last == c->hkv ? g[h] : g[h * dk + i]));            \
                        CPU_SIMD for (int64_t m = 0; m < dv; m++) S[i * dv + m] *= e;              \
                    }                                                                              \
                }                                                                                  \
                for (int64_t m = 0; m < dv; m++) u[m] = LD(v[m]);                                  \
                if (c->delta) {                                                                    \
                    /* u = beta * (v - S^T k) */                                                   \
                    const T *bp = (const T *)c->beta + bt * c->beta_last;                          \
                    float beta = LD(c->beta_last == 1 ? bp[0] : bp[h]);                            \
                    for (int64_t i = 0; i < dk; i++) {                                             \
                        float ki = LD(k[i]);                                                       \
                        CPU_SIMD for (int64_t m = 0; m < dv; m++) u[m] -= S[i * dv + m] * ki;      \
                    }                                                                              \
                    for (int64_t m = 0; m < dv; m++) u[m] *= beta;                                 \
                }                                                                                  \
                for (int64_t i = 0; i < dk; i++) {                                                 \
                    float ki = LD(k[i]);                                                           \
                    CPU_SIMD for (int64_t m = 0; m < dv; m++) S[i * dv + m] += ki * u[m];          \
                }                                                                                  \
                for (int64_t hq = h * group; hq < (h + 1) * group; hq++) {                         \
                    const T *q = (const T *)c->q + bt * c->hq * dk + hq * dk;                      \
                    T *y = (T *)c->y + bt * c->hq * dv + hq * dv;                                  \
                    float *o = u; /* u is free again: reuse it for the output row */               \
                    for (int64_t m = 0; m < dv; m++) o[m] = 0;                                     \
                    for (int64_t i = 0; i < dk; i++) {                                             \
                        float qi = LD(q[i]);                                                       \
                        CPU_SIMD for (int64_t m = 0; m < dv; m++) o[m] += qi * S[i * dv + m];      \
                    }                                                                              \
                    for (int64_t m = 0; m < dv; m++) y[m] = ST(c->scale * o[m]);                   \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_LA(f32, float, cpu_f32_ld, cpu_f32_st)
DEFINE_LA(f16, uint16_t, cpu_f16_ld, cpu_f16_st)
DEFINE_LA(bf16, uint16_t, cpu_bf16_ld, cpu_bf16_st)

/* n elements between float and float/float16/bfloat16 */
static void to_float(float *d, const void *s, onyx_dtype t, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        d[i] = t == ONYX_FLOAT ? ((const float *)s)[i]
               : t == ONYX_FLOAT16 ? cpu_fp16_to_float(((const uint16_t *)s)[i])
                                   : cpu_bf16_to_float(((const uint16_t *)s)[i]);
}

static void from_float(void *d, onyx_dtype t, const float *s, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (t == ONYX_FLOAT) ((float *)d)[i] = s[i];
        else if (t == ONYX_FLOAT16) ((uint16_t *)d)[i] = cpu_float_to_fp16(s[i]);
        else ((uint16_t *)d)[i] = cpu_float_to_bf16(s[i]);
    }
}

/* floats of scratch: the state unless present_state is float (then it holds it), plus dv per
 * (batch, kv head) */
static bool la_scratch(int64_t b, int64_t hkv, int64_t dk, int64_t dv, bool float_present,
                       size_t *out) {
    int64_t tasks, st, tmp;
    if (__builtin_mul_overflow(b, hkv, &tasks) || __builtin_mul_overflow(tasks, dk, &st) ||
        __builtin_mul_overflow(st, dv, &st) || __builtin_mul_overflow(tasks, dv, &tmp) ||
        tasks < 0 || st < 0 || tmp < 0)
        return false;
    *out = (size_t)(float_present ? 0 : st) + (size_t)tmp;
    return true;
}

onyx_status cpu_linear_attention_run(const kernel_call *c) {
    const graph_node *n = c->node;
    const tensor *Q = kernel_input(c, 0), *K = kernel_input(c, 1), *V = kernel_input(c, 2), *P = kernel_input(c, 3), *G = kernel_input(c, 4),
                 *B = kernel_input(c, 5);
    tensor *Y = kernel_output(c, 0), *PS = kernel_output(c, 1);
    if (!Q || !K || !V)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d (%s) is required but omitted or not a "
                          "tensor", !Q ? 0 : !K ? 1 : 2, !Q ? "query" : !K ? "key" : "value");
    if (!Y) return onyx_error(ONYX_ERR_INVALID_MODEL, "output 0 (output) is required but omitted");
    la_ctx x = {.hq = attr_int(n, "q_num_heads", 0), .hkv = attr_int(n, "kv_num_heads", 0)};
    if (x.hq <= 0 || x.hkv <= 0 || x.hq % x.hkv != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "q_num_heads %lld must be a positive multiple "
                          "of kv_num_heads %lld", (long long)x.hq, (long long)x.hkv);
    if (Q->rank != 3 || K->rank != 3 || V->rank != 3)
        return onyx_error(ONYX_ERR_SHAPE, "query, key and value must have rank 3");
    x.b = Q->dims[0];
    x.t = Q->dims[1];
    for (int a = 0; a < 2; a++)
        if (K->dims[a] != Q->dims[a] || V->dims[a] != Q->dims[a])
            return onyx_error(ONYX_ERR_SHAPE, "query, key and value disagree on dim %d", a);
    if (Q->dims[2] % x.hq || K->dims[2] % x.hkv || V->dims[2] % x.hkv ||
        Q->dims[2] / x.hq != K->dims[2] / x.hkv)
        return onyx_error(ONYX_ERR_SHAPE, "hidden sizes %lld, %lld, %lld do not split into %lld, "
                          "%lld, %lld heads of one key size", (long long)Q->dims[2],
                          (long long)K->dims[2], (long long)V->dims[2], (long long)x.hq,
                          (long long)x.hkv, (long long)x.hkv);
    x.dk = Q->dims[2] / x.hq;
    x.dv = V->dims[2] / x.hkv;
    if (K->dtype != Q->dtype || V->dtype != Q->dtype || (G && G->dtype != Q->dtype) ||
        (B && B->dtype != Q->dtype))
        return onyx_error(ONYX_ERR_SHAPE, "inputs must share query's type %s",
                          onyx_dtype_name(Q->dtype));
    const char *rule = attr_string(n, "update_rule", "gated_delta");
    x.gated = strcmp(rule, "gated") == 0 || strcmp(rule, "gated_delta") == 0;
    x.delta = strcmp(rule, "delta") == 0 || strcmp(rule, "gated_delta") == 0;
    if (x.gated != (G != NULL) || x.delta != (B != NULL))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "update_rule '%s' %s decay and %s beta", rule,
                          x.gated ? "needs" : "forbids", x.delta ? "needs" : "forbids");
    if (G) {
        x.g_last = G->rank == 3 ? G->dims[2] : -1;
        if (G->rank != 3 || G->dims[0] != x.b || G->dims[1] != x.t ||
            (x.g_last != x.hkv && x.g_last != x.hkv * x.dk))
            return onyx_error(ONYX_ERR_SHAPE, "decay must have shape [%lld,%lld,%lld or %lld]",
                              (long long)x.b, (long long)x.t, (long long)x.hkv,
                              (long long)(x.hkv * x.dk));
    }
    if (B) {
        x.beta_last = B->rank == 3 ? B->dims[2] : -1;
        if (B->rank != 3 || B->dims[0] != x.b || B->dims[1] != x.t ||
            (x.beta_last != x.hkv && x.beta_last != 1))
            return onyx_error(ONYX_ERR_SHAPE, "beta must have shape [%lld,%lld,%lld or 1]",
                              (long long)x.b, (long long)x.t, (long long)x.hkv);
    }
    const int64_t sdims[4] = {x.b, x.hkv, x.dk, x.dv};
    if (P && (P->rank != 4 || !shape_equal(4, P->dims, 4, sdims) || !dtype_in(P->dtype,
              DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16))))
        return onyx_error(ONYX_ERR_SHAPE, "past_state must be a float type of shape "
                          "[%lld,%lld,%lld,%lld]", (long long)x.b, (long long)x.hkv,
                          (long long)x.dk, (long long)x.dv);
    bool float_present = PS && PS->dtype == ONYX_FLOAT;
    size_t need;
    if (!la_scratch(x.b, x.hkv, x.dk, x.dv, float_present, &need) || need > SIZE_MAX / sizeof(float))
        return onyx_error(ONYX_ERR_NO_MEMORY, "LinearAttention state size overflows");
    /* the run context's scratch: concurrent runs never share it */
    void *mem;
    TRY(kernel_scratch(c, need ? need * sizeof(float) : 1, &mem));
    float *buf = mem;
    int64_t state_n = x.b * x.hkv * x.dk * x.dv;
    x.state = float_present ? PS->data : buf;
    x.tmp = float_present ? buf : buf + state_n;
    if (P) to_float(x.state, P->data, P->dtype, state_n);
    else memset(x.state, 0, (size_t)state_n * sizeof(float));
    float sc = attr_float(n, "scale", 0);
    x.scale = sc != 0 ? sc : (x.dk > 0 ? 1.0f / sqrtf((float)x.dk) : 1.0f);
    x.q = Q->data;
    x.k = K->data;
    x.v = V->data;
    x.g = G ? G->data : NULL;
    x.beta = B ? B->data : NULL;
    x.y = Y->data;
    void (*fn)(void *, int64_t, int64_t);
    switch (Q->dtype) {
    case ONYX_FLOAT: fn = f32_la; break;
    case ONYX_FLOAT16: fn = f16_la; break;
    case ONYX_BFLOAT16: fn = bf16_la; break;
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "query has type %s, expected float, float16 or "
                          "bfloat16", onyx_dtype_name(Q->dtype));
    }
    parallel_for(x.b * x.hkv, 1, fn, &x);
    if (PS && !float_present) from_float(PS->data, PS->dtype, x.state, state_n);
    return ONYX_OK;
}
