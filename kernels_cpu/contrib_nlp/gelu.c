/* CPU kernels of the com.microsoft GELU family (Gelu, BiasGelu, FastGelu, QuickGelu): chunks of
 * a row, bias added, through the vector math in float; double through libm; float16/bfloat16
 * through float. */
#include <math.h>

#include "core/parallel.h"
#include "kernels_cpu/common/vmath.h"
#include "kernels_cpu/contrib_nlp/cnlp_cpu.h"
#include "kernels_cpu/cpu_kernels.h"

#define CHUNK 512
#define GRAIN 16384

typedef enum gelu_kind { G_ERF, G_TANH, G_QUICK } gelu_kind;

typedef struct gelu_job {
    gelu_kind kind;
    float alpha;
    onyx_dtype t;
    const void *x, *bias; /* bias NULL: none */
    void *y;
    int64_t cols; /* bias length (the last dim) */
} gelu_job;

static void act_f32(const gelu_job *j, const float *x, float *y, int64_t n) {
    const cpu_vmath *vm = cpu_vmath_get();
    switch (j->kind) {
    case G_ERF: vm->gelu(x, y, n); return;
    case G_TANH: vm->gelu_tanh(x, y, n); return;
    case G_QUICK: vm->swish(x, y, n, j->alpha); return;
    }
}

static double act_f64(const gelu_job *j, double x) {
    switch (j->kind) {
    case G_ERF: return 0.5 * x * (1 + erf(x * M_SQRT1_2));
    case G_TANH: return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case G_QUICK: return x / (1 + exp(-(double)j->alpha * x));
    }
    return 0;
}

/* elements [b, e) */
static void gelu_task(void *ctx, int64_t b, int64_t e) {
    const gelu_job *j = ctx;
    if (j->t == ONYX_DOUBLE) {
        const double *x = j->x, *bias = j->bias;
        double *y = j->y;
        for (int64_t i = b; i < e; i++) y[i] = act_f64(j, x[i] + (bias ? bias[i % j->cols] : 0));
        return;
    }
    float buf[CHUNK], bb[CHUNK];
    for (int64_t i = b; i < e;) {
        /* a chunk never crosses a row, so the bias is one contiguous run */
        int64_t n = e - i < CHUNK ? e - i : CHUNK, col = j->bias ? i % j->cols : 0;
        if (j->bias && n > j->cols - col) n = j->cols - col;
        const float *src;
        if (j->t == ONYX_FLOAT && !j->bias) {
            src = (const float *)j->x + i;
        } else {
            cnlp_load(j->x, j->t, i, buf, n);
            if (j->bias) {
                cnlp_load(j->bias, j->t, col, bb, n);
                CPU_SIMD for (int64_t k = 0; k < n; k++) buf[k] += bb[k];
            }
            src = buf;
        }
        if (j->t == ONYX_FLOAT) {
            act_f32(j, src, (float *)j->y + i, n);
        } else {
            act_f32(j, src, buf, n);
            cnlp_store(j->y, j->t, i, buf, n);
        }
        i += n;
    }
}

static onyx_status gelu_run(const kernel_call *c, gelu_kind kind, bool has_bias) {
    const tensor *x = kernel_input(c, 0), *bias = has_bias ? kernel_input(c, 1) : NULL;
    tensor *y = kernel_output(c, 0);
    if (!dtype_in(x->dtype, DT_FLOATS))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input has type %s, expected a float type",
                          onyx_dtype_name(x->dtype));
    gelu_job j = {.kind = kind, .t = x->dtype, .x = x->data, .y = y->data, .cols = 1};
    if (kind == G_QUICK) j.alpha = attr_float(c->node, "alpha", 1.702f);
    if (bias) {
        int64_t h = x->rank > 0 ? x->dims[x->rank - 1] : 0;
        if (bias->dtype != x->dtype || bias->rank != 1 || bias->dims[0] != h)
            return onyx_error(ONYX_ERR_SHAPE,
                              "bias must be 1-D of the input's type and last dim "
                              "%lld",
                              (long long)h);
        j.bias = bias->data;
        j.cols = h;
    }
    if (x->numel == 0) return ONYX_OK;
    parallel_for(x->numel, GRAIN, gelu_task, &j);
    return ONYX_OK;
}

onyx_status cpu_cnlp_gelu(const kernel_call *c) { return gelu_run(c, G_ERF, false); }
onyx_status cpu_cnlp_bias_gelu(const kernel_call *c) { return gelu_run(c, G_ERF, true); }
onyx_status cpu_cnlp_fast_gelu(const kernel_call *c) { return gelu_run(c, G_TANH, true); }
onyx_status cpu_cnlp_quick_gelu(const kernel_call *c) { return gelu_run(c, G_QUICK, false); }
