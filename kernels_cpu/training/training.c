/* CPU kernels of the ai.onnx.preview.training optimizers (Adagrad, Adam, Momentum): one update of
 * n tensors per node, computed in double and stored in each tensor's own type. */
#include <math.h>
#include <string.h>

#include "kernels_cpu/cpu_kernels.h"

static double ld(const tensor *t, int64_t i) {
    return t->dtype == ONYX_FLOAT ? (double)((const float *)t->data)[i]
                                  : ((const double *)t->data)[i];
}

static void st(tensor *t, int64_t i, double v) {
    if (t->dtype == ONYX_FLOAT)
        ((float *)t->data)[i] = (float)v;
    else
        ((double *)t->data)[i] = v;
}

/* The per-node view: scalars R and T, n tensors per input group (X, G, and the state lists). */
typedef struct opt_args {
    double r;
    int64_t t;
    int n;
} opt_args;

static onyx_status opt_begin(const kernel_call *c, int groups, opt_args *a) {
    const tensor *r = kernel_input(c, 0), *t = kernel_input(c, 1);
    if (!r || !t || r->numel != 1 || t->numel != 1)
        return onyx_error(ONYX_ERR_SHAPE, "R and T must be scalars");
    a->r = tensor_get_f64(r, 0);
    a->t = tensor_get_i64(t, 0);
    a->n = (c->n_in - 2) / groups;
    for (int i = 0; i < a->n; i++) {
        const tensor *x = kernel_input(c, 2 + i);
        for (int g = 1; g < groups; g++) {
            const tensor *o = kernel_input(c, 2 + g * a->n + i);
            if (!x || !o || o->numel != x->numel)
                return onyx_error(ONYX_ERR_SHAPE, "input %d has %lld elements, expected %lld",
                                  2 + g * a->n + i, o ? (long long)o->numel : -1LL,
                                  x ? (long long)x->numel : -1LL);
        }
    }
    return ONYX_OK;
}

#define IN(g, i) kernel_input(c, 2 + (g)*a.n + (i))

onyx_status cpu_adagrad_run(const kernel_call *c) {
    opt_args a;
    TRY(opt_begin(c, 3, &a));
    double norm = attr_float(c->node, "norm_coefficient", 0.0f);
    double decay = attr_float(c->node, "decay_factor", 0.0f);
    double eps = attr_float(c->node, "epsilon", 1e-6f);
    double rate = a.r / (1.0 + (double)a.t * decay);
    for (int i = 0; i < a.n; i++) {
        const tensor *x = IN(0, i), *g = IN(1, i), *h = IN(2, i);
        tensor *xo = kernel_output(c, i), *ho = kernel_output(c, a.n + i);
        for (int64_t e = 0; e < x->numel; e++) {
            double xv = ld(x, e), gr = norm * xv + ld(g, e);
            double hn = ld(h, e) + gr * gr;
            if (ho) st(ho, e, hn);
            if (xo) st(xo, e, xv - rate * gr / (sqrt(hn) + eps));
        }
    }
    return ONYX_OK;
}

onyx_status cpu_adam_run(const kernel_call *c) {
    opt_args a;
    TRY(opt_begin(c, 4, &a));
    double alpha = attr_float(c->node, "alpha", 0.9f), beta = attr_float(c->node, "beta", 0.999f);
    double eps = attr_float(c->node, "epsilon", 1e-6f);
    double norm = attr_float(c->node, "norm_coefficient", 0.0f);
    double post = attr_float(c->node, "norm_coefficient_post", 0.0f);
    /* bias correction of both moments, only once a step has been taken */
    double rate = a.r;
    if (a.t > 0) rate = a.r * sqrt(1.0 - pow(beta, (double)a.t)) / (1.0 - pow(alpha, (double)a.t));
    for (int i = 0; i < a.n; i++) {
        const tensor *x = IN(0, i), *g = IN(1, i), *v = IN(2, i), *h = IN(3, i);
        tensor *xo = kernel_output(c, i), *vo = kernel_output(c, a.n + i), *ho = kernel_output(c, 2 * a.n + i);
        for (int64_t e = 0; e < x->numel; e++) {
            double xv = ld(x, e), gr = norm * xv + ld(g, e);
            double vn = alpha * ld(v, e) + (1.0 - alpha) * gr;
            double hn = beta * ld(h, e) + (1.0 - beta) * gr * gr;
            double xn = xv - rate * (vn / (sqrt(hn) + eps));
            if (vo) st(vo, e, vn);
            if (ho) st(ho, e, hn);
            if (xo) st(xo, e, (1.0 - post) * xn);
        }
    }
    return ONYX_OK;
}

onyx_status cpu_momentum_run(const kernel_call *c) {
    opt_args a;
    TRY(opt_begin(c, 3, &a));
    double alpha = attr_float(c->node, "alpha", 0.0f), beta = attr_float(c->node, "beta", 0.0f);
    double norm = attr_float(c->node, "norm_coefficient", 0.0f);
    bool nesterov = strcmp(attr_string(c->node, "mode", "standard"), "nesterov") == 0;
    /* the gradient's coefficient is 1 on the first step */
    double b = a.t > 0 ? beta : 1.0;
    for (int i = 0; i < a.n; i++) {
        const tensor *x = IN(0, i), *g = IN(1, i), *v = IN(2, i);
        tensor *xo = kernel_output(c, i), *vo = kernel_output(c, a.n + i);
        for (int64_t e = 0; e < x->numel; e++) {
            double xv = ld(x, e), gr = norm * xv + ld(g, e);
            double vn = alpha * ld(v, e) + b * gr;
            if (vo) st(vo, e, vn);
            if (xo) st(xo, e, nesterov ? xv - a.r * (gr + alpha * vn) : xv - a.r * vn);
        }
    }
    return ONYX_OK;
}
