/* CPU kernel of CausalConvWithState: per (batch, channel) a causal depthwise 1-D convolution over
 * [past_state | input], an optional fused SiLU, and the last k-1 positions as the new state.
 * Half types compute in float; the convolution result is rounded to the element type before the
 * activation, as onnx's reference does. */
#include <math.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

typedef struct ccws_job {
    const void *x, *w, *b, *past;
    void *y, *state;
    int64_t ch, len, k;
    bool silu;
} ccws_job;

#define CCWS_TEMPLATE(N, T, LD, ST)                                                                \
    static void ccws_rows_##N(void *ctx, int64_t lo, int64_t hi) {                                 \
        const ccws_job *j = ctx;                                                                   \
        int64_t k = j->k, L = j->len, K1 = k - 1;                                                  \
        for (int64_t r = lo; r < hi; r++) {                                                        \
            int64_t c = r % j->ch;                                                                 \
            const T *x = (const T *)j->x + r * L;                                                  \
            const T *w = (const T *)j->w + c * k;                                                  \
            const T *past = j->past ? (const T *)j->past + r * K1 : NULL;                          \
            float bias = j->b ? LD(((const T *)j->b)[c]) : 0.0f;                                   \
            T *y = (T *)j->y + r * L;                                                              \
            /* padded sequence position t: past (or 0) for t < k-1, then the input */              \
            for (int64_t l = 0; l < L; l++) {                                                      \
                float acc = bias;                                                                  \
                for (int64_t q = 0; q < k; q++) {                                                  \
                    int64_t t = l + q;                                                             \
                    float v = t >= K1 ? LD(x[t - K1]) : past ? LD(past[t]) : 0.0f;                 \
                    acc += LD(w[q]) * v;                                                           \
                }                                                                                  \
                if (j->silu) {                                                                     \
                    float v = LD(ST(acc));                                                         \
                    acc = v / (1.0f + expf(-v));                                                   \
                }                                                                                  \
                y[l] = ST(acc);                                                                    \
            }                                                                                      \
            if (j->state) {                                                                        \
                T *s = (T *)j->state + r * K1;                                                     \
                for (int64_t i = 0; i < K1; i++) {                                                 \
                    int64_t t = L + i; /* the last k-1 of the L + k-1 padded positions */          \
                    s[i] = t >= K1 ? x[t - K1] : past ? past[t] : ST(0.0f);                        \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

CCWS_TEMPLATE(f32, float, cpu_f32_ld, cpu_f32_st)
CCWS_TEMPLATE(f16, uint16_t, cpu_f16_ld, cpu_f16_st)
CCWS_TEMPLATE(bf16, uint16_t, cpu_bf16_ld, cpu_bf16_st)

onyx_status cpu_causal_conv_with_state_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *w = kernel_input(c, 1), *b = kernel_input(c, 2), *past = kernel_input(c, 3);
    tensor *y = kernel_output(c, 0), *st = kernel_output(c, 1);
    if (x->rank != 3 || w->rank != 3 || w->dims[0] != x->dims[1] || w->dims[1] != 1 ||
        w->dims[2] < 1)
        return onyx_error(ONYX_ERR_SHAPE, "expected input (batch, channels, length) and weight "
                          "(channels, 1, k)");
    int64_t k = w->dims[2];
    int64_t sd[3] = {x->dims[0], x->dims[1], k - 1};
    if (b && (b->rank != 1 || b->dims[0] != x->dims[1]))
        return onyx_error(ONYX_ERR_SHAPE, "bias must be (channels)");
    if (past && !shape_equal(past->rank, past->dims, 3, sd))
        return onyx_error(ONYX_ERR_SHAPE, "past_state must be (batch, channels, k-1)");
    if (st && !shape_equal(st->rank, st->dims, 3, sd))
        return onyx_error(ONYX_ERR_SHAPE, "present_state must be (batch, channels, k-1)");
    const char *act = attr_string(c->node, "activation", "none");
    ccws_job j = {x->data, w->data, b ? b->data : NULL, past ? past->data : NULL, y->data,
                  st ? st->data : NULL, x->dims[1], x->dims[2], k,
                  !strcmp(act, "silu") || !strcmp(act, "swish")};
    void (*fn)(void *, int64_t, int64_t);
    switch (x->dtype) {
    case ONYX_FLOAT: fn = ccws_rows_f32; break;
    case ONYX_FLOAT16: fn = ccws_rows_f16; break;
    case ONYX_BFLOAT16: fn = ccws_rows_bf16; break;
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected float, float16 "
                          "or bfloat16", onyx_dtype_name(x->dtype));
    }
    /* (with no channels the weight is empty and k may be any dim: keep the product bounded) */
    int64_t len1 = x->dims[2] + 1, work = len1 > 16384 || k > 16384 ? 16384 : len1 * k;
    parallel_for(x->dims[0] * x->dims[1], 1 + 16384 / work, fn, &j);
    return ONYX_OK;
}
