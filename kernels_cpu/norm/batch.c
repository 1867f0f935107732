/* CPU kernel of BatchNormalization. Inference folds the parameters into y = x * a[c] + b[c],
 * computed once in prepare when they are constants; training mode first gathers each channel's
 * batch mean and variance (two passes, NORM_SUM's blocked accumulation) and writes the running
 * statistics. */
#include <math.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/norm/common.h"

#define GRAIN 16384

/* The prepared state holds a/b when prepare could compute them from constant parameters (read
 * by concurrent runs); a run that computes its own uses a copy whose arrays are its scratch. */
typedef struct bn_state {
    int64_t cap;        /* channels the buffers hold */
    bool fixed;         /* a/b were computed in prepare from constant parameters */
    double *a, *b;      /* per channel: y = x * a + b */
    float *fa, *fb;     /* the same, rounded once for float computation */
    double *mean, *var; /* training: the batch statistics */
} bn_state;

/* What one run normalizes: x viewed as [outer, nch, inner]. */
typedef struct bn_plan {
    const void *x;
    void *y;
    int64_t outer, nch, inner;
    bn_state *s;
} bn_plan;

#define DEFINE_BN(N, T, F, LD, ST)                                                                 \
    static void N##_apply(void *ctx, int64_t b, int64_t e) {                                       \
        const bn_plan *p = ctx;                                                                    \
        const int64_t in = p->inner;                                                               \
        for (int64_t t = b; t < e; t++) {                                                          \
            int64_t ch = t % p->nch;                                                               \
            F a = sizeof(F) == sizeof(float) ? (F)p->s->fa[ch] : (F)p->s->a[ch];                   \
            F sh = sizeof(F) == sizeof(float) ? (F)p->s->fb[ch] : (F)p->s->b[ch];                  \
            const T *x = (const T *)p->x + t * in;                                                 \
            T *y = (T *)p->y + t * in;                                                             \
            CPU_SIMD for (int64_t j = 0; j < in; j++) y[j] = ST(LD(x[j]) * a + sh);                \
        }                                                                                          \
    }                                                                                              \
    /* rows [b, e) of an x without spatial dims ([N, C]: BatchNorm1d after a Linear), whose       \
     * channels are its contiguous run: the same x * a + b, vectorized across the channels */     \
    static void N##_apply_rows(void *ctx, int64_t b, int64_t e) {                                  \
        const bn_plan *p = ctx;                                                                    \
        const int64_t nch = p->nch;                                                                \
        for (int64_t o = b; o < e; o++) {                                                          \
            const T *x = (const T *)p->x + o * nch;                                                \
            T *y = (T *)p->y + o * nch;                                                            \
            if (sizeof(F) == sizeof(float)) {                                                      \
                const float *a = p->s->fa, *sh = p->s->fb;                                         \
                CPU_SIMD for (int64_t ch = 0; ch < nch; ch++)                                      \
                    y[ch] = ST(LD(x[ch]) * (F)a[ch] + (F)sh[ch]);                                  \
            } else {                                                                               \
                const double *a = p->s->a, *sh = p->s->b;                                          \
                CPU_SIMD for (int64_t ch = 0; ch < nch; ch++)                                      \
                    y[ch] = ST(LD(x[ch]) * (F)a[ch] + (F)sh[ch]);                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    /* mean and (population) variance of channels [b, e) over the batch and spatial dims */        \
    static void N##_stats(void *ctx, int64_t b, int64_t e) {                                       \
        const bn_plan *p = ctx;                                                                    \
        const int64_t in = p->inner;                                                               \
        double cnt = (double)(p->outer * in);                                                      \
        for (int64_t ch = b; ch < e; ch++) {                                                       \
            double s = 0, v = 0, part;                                                             \
            for (int64_t o = 0; o < p->outer; o++) {                                               \
                NORM_SUM(F, LD, (const T *)p->x + (o * p->nch + ch) * in, in, part);               \
                s += part;                                                                         \
            }                                                                                      \
            double m = cnt > 0 ? s / cnt : 0;                                                      \
            for (int64_t o = 0; o < p->outer; o++) {                                               \
                NORM_SUM_SQDIFF(F, LD, (const T *)p->x + (o * p->nch + ch) * in, in, m, part);     \
                v += part;                                                                         \
            }                                                                                      \
            p->s->mean[ch] = m;                                                                    \
            p->s->var[ch] = cnt > 0 ? v / cnt : 0;                                                 \
        }                                                                                          \
    }
NORM_FOR_FLOATS(DEFINE_BN)

typedef void (*task_fn)(void *, int64_t, int64_t);
#define FN_APPLY(N, T, F, LD, ST) N##_apply,
#define FN_STATS(N, T, F, LD, ST) N##_stats,
#define FN_ROWS(N, T, F, LD, ST) N##_apply_rows,
static const task_fn apply_fns[] = {NORM_FOR_FLOATS(FN_APPLY)};
static const task_fn apply_rows_fns[] = {NORM_FOR_FLOATS(FN_ROWS)};
static const task_fn stats_fns[] = {NORM_FOR_FLOATS(FN_STATS)};

/* Training mode: v14+ by attribute; before, when the statistics outputs are requested (v1/v6
 * also need is_test=0). */
static bool bn_training(const graph_node *n) {
    if (n->version >= 14) return attr_int(n, "training_mode", 0) != 0;
    if (n->version < 7 && attr_int(n, "is_test", 0) != 0) return false;
    for (int o = 1; o < n->n_outputs; o++)
        if (n->outputs[o] >= 0) return true;
    return false;
}

static bool bn_spatial(const graph_node *n) {
    return n->version >= 9 || attr_int(n, "spatial", 1) != 0;
}

/* Points s's arrays into buf (nch * 48 bytes). */
static void bn_carve(bn_state *s, double *buf, int64_t nch) {
    s->fixed = false;
    s->a = buf;
    s->b = buf + nch;
    s->mean = buf + 2 * nch;
    s->var = buf + 3 * nch;
    s->fa = (float *)(buf + 4 * nch);
    s->fb = s->fa + nch;
    s->cap = nch;
}

/* a/b from scale, bias and the given mean/variance (NULL tensors: the state's statistics). */
static void bn_fold(bn_state *s, int64_t nch, const tensor *scale, const tensor *bias,
                    const tensor *mean, const tensor *var, double eps) {
    for (int64_t ch = 0; ch < nch; ch++) {
        double m = mean ? norm_get(mean, ch) : s->mean[ch];
        double v = var ? norm_get(var, ch) : s->var[ch];
        double a = norm_get(scale, ch) / sqrt(v + eps);
        s->a[ch] = a;
        s->b[ch] = norm_get(bias, ch) - m * a;
        s->fa[ch] = (float)s->a[ch];
        s->fb[ch] = (float)s->b[ch];
    }
}

static onyx_status check_params(const tensor *const *prm, int64_t nch) {
    for (int i = 0; i < 4; i++) {
        if (norm_float_index(prm[i]->dtype) < 0)
            return onyx_error(ONYX_ERR_UNSUPPORTED, "input %d has type %s, expected a float type",
                              i + 1, onyx_dtype_name(prm[i]->dtype));
        if (prm[i]->numel != nch)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has %lld elements, expected %lld", i + 1,
                              (long long)prm[i]->numel, (long long)nch);
    }
    return ONYX_OK;
}

void cpu_batchnorm_release(void *state) {
    bn_state *s = state;
    if (!s) return;
    free(s->a);
    free(s);
}

onyx_status cpu_batchnorm_prepare(const kernel_prep *p, void **state) {
    bn_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("BatchNormalization state");
    onyx_status st = ONYX_OK;
    const type_info *xt = p->in_type[0];
    int64_t nch = -1;
    if (xt && xt->rank >= 2) {
        nch = 1;
        for (int d = 1; d < (bn_spatial(p->node) ? 2 : xt->rank); d++)
            nch = xt->dims[d] < 0 || nch < 0 ? -1 : nch * xt->dims[d];
    }
    bool consts = p->n_in >= 5;
    for (int i = 1; i < 5 && consts; i++) consts = p->in_value[i] != NULL;
    if (nch >= 0 && consts && !bn_training(p->node)) {
        const tensor *prm[4] = {p->in_value[1], p->in_value[2], p->in_value[3], p->in_value[4]};
        CHECK(check_params(prm, nch));
        if ((uint64_t)nch > SIZE_MAX / 48) {
            st = onyx_oom("BatchNormalization parameters");
            goto done;
        }
        double *buf = malloc((size_t)(nch ? nch : 1) * 48);
        if (!buf) {
            st = onyx_oom("BatchNormalization parameters");
            goto done;
        }
        bn_carve(s, buf, nch);
        bn_fold(s, nch, prm[0], prm[1], prm[2], prm[3], attr_float(p->node, "epsilon", 1e-5f));
        s->fixed = true;
    }
done:
    if (st != ONYX_OK) {
        cpu_batchnorm_release(s);
        return st;
    }
    *state = s;
    return ONYX_OK;
}

onyx_status cpu_batchnorm_run(const kernel_call *c) {
    const bn_state *s = c->state;
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    const graph_node *n = c->node;
    int fi = norm_float_index(x->dtype);
    if (!s) return onyx_error(ONYX_ERR_RUNTIME, "kernel state missing (prepare was not run)");
    if (fi < 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a float type",
                          onyx_dtype_name(x->dtype));
    if (x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 2", x->rank);
    bool spatial = bn_spatial(n), training = bn_training(n);
    bn_state w; /* this run's parameters: the prepared ones, or its own in scratch */
    bn_plan p = {.x = x->data, .y = y->data, .outer = x->dims[0], .nch = 1, .inner = 1, .s = &w};
    for (int d = 1; d < x->rank; d++) {
        if (d == 1 || !spatial)
            p.nch *= x->dims[d];
        else
            p.inner *= x->dims[d];
    }
    const tensor *prm[4];
    for (int i = 0; i < 4; i++) {
        prm[i] = kernel_input(c, i + 1);
        if (!prm[i]) return onyx_error(ONYX_ERR_SHAPE, "input %d is missing", i + 1);
    }
    TRY(check_params(prm, p.nch));
    bool fixed = s->fixed && !training && s->cap == p.nch;
    if (fixed) {
        w = *s; /* only read */
    } else {
        if ((uint64_t)p.nch > SIZE_MAX / 48) return onyx_oom("BatchNormalization parameters");
        void *buf;
        TRY(kernel_scratch(c, (size_t)p.nch * 48 + 1, &buf));
        bn_carve(&w, buf, p.nch);
    }
    double eps = attr_float(n, "epsilon", 1e-5f);
    double mom = attr_float(n, "momentum", 0.9f);
    if (training) {
        parallel_for(p.nch, GRAIN / (p.outer * p.inner + 1) + 1, stats_fns[fi], &p);
        bn_fold(&w, p.nch, prm[0], prm[1], NULL, NULL, eps);
    } else if (!fixed) {
        bn_fold(&w, p.nch, prm[0], prm[1], prm[2], prm[3], eps);
    }
    if (x->numel && p.inner == 1)
        parallel_for(p.outer, GRAIN / p.nch + 1, apply_rows_fns[fi], &p);
    else if (x->numel)
        parallel_for(p.outer * p.nch, GRAIN / (p.inner + 1) + 1, apply_fns[fi], &p);
    /* statistics outputs: running mean/var (1, 2), then before v14 the batch's own (3, 4) */
    for (int o = 1; o < c->n_out && o < 5; o++) {
        tensor *t = kernel_output(c, o);
        if (!t) continue;
        if (t->numel != p.nch || norm_float_index(t->dtype) < 0)
            return onyx_error(ONYX_ERR_SHAPE, "output %d has %lld elements, expected %lld", o,
                              (long long)t->numel, (long long)p.nch);
        const tensor *given = prm[o == 1 || o == 3 ? 2 : 3];
        for (int64_t ch = 0; ch < p.nch; ch++) {
            double g = norm_get(given, ch), v = g;
            if (training) {
                double batch = o == 1 || o == 3 ? w.mean[ch] : w.var[ch];
                v = o <= 2 ? g * mom + batch * (1 - mom) : batch;
            }
            norm_set(t, ch, v);
        }
    }
    return ONYX_OK;
}
