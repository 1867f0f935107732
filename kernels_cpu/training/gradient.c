/* CPU kernel of Gradient (ai.onnx.preview.training): reverse-mode differentiation of the part of
 * the node's graph that computes `y` from xs and zs. The forward pass is recomputed here in
 * double (the executor may already have reused the buffers of those values), then gradients flow
 * back through a table of derivative rules; ops without a rule are refused by name. Buffers are
 * allocated per run: the subgraph to differentiate is only found from the running frame. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec_run.h"
#include "geometry/broadcast.h"
#include "kernels_cpu/cpu_kernels.h"

/* One value of the recomputed forward pass (dense, double). */
typedef struct dval {
    bool set;
    int rank;
    int64_t dims[ONYX_MAX_RANK];
    int64_t n;
    double *v;
    double *g; /* gradient of y with respect to this value, NULL until one reaches it */
} dval;

/* An elementwise rule: forward f(a, b) and the partial derivatives scaled by the incoming
 * gradient. Unary ops ignore b. To support another elementwise op, add a line to the table. */
typedef struct grad_rule {
    const char *op;
    int arity;
    double (*fwd)(double a, double b);
    void (*bwd)(double a, double b, double g, double *da, double *db);
} grad_rule;

static double f_add(double a, double b) { return a + b; }
static double f_sub(double a, double b) { return a - b; }
static double f_mul(double a, double b) { return a * b; }
static double f_div(double a, double b) { return a / b; }
static double f_neg(double a, double b) {
    (void)b;
    return -a;
}
static double f_id(double a, double b) {
    (void)b;
    return a;
}
static void b_add(double a, double b, double g, double *da, double *db) {
    (void)a, (void)b;
    *da = g, *db = g;
}
static void b_sub(double a, double b, double g, double *da, double *db) {
    (void)a, (void)b;
    *da = g, *db = -g;
}
static void b_mul(double a, double b, double g, double *da, double *db) {
    *da = g * b, *db = g * a;
}
static void b_div(double a, double b, double g, double *da, double *db) {
    *da = g / b, *db = -g * a / (b * b);
}
static void b_neg(double a, double b, double g, double *da, double *db) {
    (void)a, (void)b;
    *da = -g, *db = 0;
}
static void b_id(double a, double b, double g, double *da, double *db) {
    (void)a, (void)b;
    *da = g, *db = 0;
}

static const grad_rule rules[] = {
    {"Add", 2, f_add, b_add}, {"Sub", 2, f_sub, b_sub}, {"Mul", 2, f_mul, b_mul},
    {"Div", 2, f_div, b_div}, {"Neg", 1, f_neg, b_neg}, {"Identity", 1, f_id, b_id},
};

static const grad_rule *find_rule(const graph_node *n) {
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0) return NULL;
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
        if (strcmp(rules[i].op, n->op_type) == 0) return &rules[i];
    return NULL;
}

static onyx_status dval_from_tensor(dval *d, const tensor *t) {
    if (!dtype_in(t->dtype, DT_NUMERIC | DT_BIT(ONYX_BOOL)))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "cannot differentiate through a %s tensor",
                          onyx_dtype_name(t->dtype));
    d->rank = t->rank;
    memcpy(d->dims, t->dims, sizeof d->dims);
    d->n = t->numel;
    d->v = malloc((size_t)(d->n ? d->n : 1) * sizeof(double));
    if (!d->v) return onyx_oom("Gradient value");
    for (int64_t i = 0; i < d->n; i++) d->v[i] = tensor_get_f64(t, i);
    d->set = true;
    return ONYX_OK;
}

/* Flat index into `in` of output element `flat` under numpy broadcasting to out dims. */
static int64_t bcast_index(const dval *in, int out_rank, const int64_t *out_dims, int64_t flat) {
    int64_t idx = 0, stride = 1;
    for (int k = out_rank - 1, j = in->rank - 1; k >= 0; k--, j--) {
        int64_t coord = flat % out_dims[k];
        flat /= out_dims[k];
        if (j >= 0) {
            if (in->dims[j] != 1) idx += coord * stride;
            stride *= in->dims[j];
        }
    }
    return idx;
}

static onyx_status broadcast_dims(const dval *a, const dval *b, int *rank, int64_t *dims) {
    geom_msg m;
    GEOM_TRY(m, geom_broadcast_shapes(a->rank, a->dims, b->rank, b->dims, rank, dims, &m));
    return ONYX_OK;
}

typedef struct gctx {
    const graph *g;
    const struct exec_frame *frame;
    dval *vals;
    unsigned char *need; /* per node: on a path to y */
} gctx;

/* Marks the nodes y depends on, walking the (topologically ordered) node list backwards so that
 * no recursion depth grows with the graph; loads the leaves: constants and bound graph inputs. */
static onyx_status mark(gctx *x, int yv) {
    const graph *g = x->g;
    unsigned char *want = calloc((size_t)g->n_values + 1, 1);
    if (!want) return onyx_oom("Gradient marks");
    onyx_status st = ONYX_OK;
    want[yv] = 1;
    for (int k = g->n_nodes - 1; k >= 0; k--) {
        const graph_node *n = &g->nodes[k];
        bool used = false;
        for (int o = 0; o < n->n_outputs; o++)
            if (n->outputs[o] >= 0 && want[n->outputs[o]] && !x->vals[n->outputs[o]].set)
                used = true;
        if (!used) continue;
        x->need[k] = 1;
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0) want[n->inputs[i]] = 1;
    }
    for (int v = 0; v < g->n_values && st == ONYX_OK; v++) {
        const graph_value *gv = &g->values[v];
        if (!want[v] || x->vals[v].set || (gv->producer >= 0 && !gv->init)) continue;
        /* graph inputs stay bound for the whole run, unlike intermediate buffers */
        const onyx_value *bound = (gv->flags & GV_INPUT) ? exec_frame_value(x->frame, v) : NULL;
        if (gv->init)
            st = dval_from_tensor(&x->vals[v], gv->init);
        else if (bound && bound->kind == ONYX_VALUE_TENSOR)
            st = dval_from_tensor(&x->vals[v], &bound->t);
        else
            st = onyx_error(ONYX_ERR_INVALID_MODEL,
                            "y depends on '%s', which is neither in xs nor zs nor a constant",
                            gv->name);
    }
    free(want);
    return st;
}

static onyx_status forward(gctx *x, const graph_node *n) {
    /* omitted inputs and outputs have index -1; backward relies on these checks too */
    if (n->n_outputs < 1 || n->outputs[0] < 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "node '%s' (%s) has no first output", n->name,
                          n->op_type);
    /* (a node needed for another output: recomputing this one would drop the given value) */
    if (x->vals[n->outputs[0]].set)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "node '%s' (%s) recomputes a value already given",
                          n->name, n->op_type);
    if (strcmp(n->op_type, "Constant") == 0 && attr_tensor(n, "value"))
        return dval_from_tensor(&x->vals[n->outputs[0]], attr_tensor(n, "value"));
    const grad_rule *r = find_rule(n);
    if (!r)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "op %s (node '%s') has no derivative rule",
                          n->op_type, n->name);
    if (n->n_inputs != r->arity)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "node '%s' (%s) has %d inputs, rule expects %d",
                          n->name, n->op_type, n->n_inputs, r->arity);
    for (int i = 0; i < r->arity; i++)
        if (n->inputs[i] < 0 || !x->vals[n->inputs[i]].set)
            return onyx_error(ONYX_ERR_UNSUPPORTED, "node '%s' (%s): input %d has no value to "
                              "differentiate", n->name, n->op_type, i);
    const dval *a = &x->vals[n->inputs[0]], *b = r->arity > 1 ? &x->vals[n->inputs[1]] : a;
    dval *o = &x->vals[n->outputs[0]];
    TRY(broadcast_dims(a, b, &o->rank, o->dims));
    if (!shape_numel(o->rank, o->dims, &o->n))
        return onyx_error(ONYX_ERR_SHAPE, "node '%s' output is too large", n->name);
    o->v = malloc((size_t)(o->n ? o->n : 1) * sizeof(double));
    if (!o->v) return onyx_oom("Gradient value");
    o->set = true;
    for (int64_t e = 0; e < o->n; e++)
        o->v[e] = r->fwd(a->v[bcast_index(a, o->rank, o->dims, e)],
                         b->v[bcast_index(b, o->rank, o->dims, e)]);
    return ONYX_OK;
}

static onyx_status grad_buf(dval *d) {
    if (d->g) return ONYX_OK;
    d->g = calloc((size_t)(d->n ? d->n : 1), sizeof(double));
    return d->g ? ONYX_OK : onyx_oom("Gradient buffer");
}

static onyx_status backward(gctx *x, const graph_node *n) {
    const grad_rule *r = find_rule(n);
    dval *o = &x->vals[n->outputs[0]];
    if (!r || !o->g) return ONYX_OK; /* constants, or not on a path from y */
    dval *a = &x->vals[n->inputs[0]], *b = r->arity > 1 ? &x->vals[n->inputs[1]] : NULL;
    TRY(grad_buf(a));
    if (b) TRY(grad_buf(b));
    for (int64_t e = 0; e < o->n; e++) {
        int64_t ia = bcast_index(a, o->rank, o->dims, e);
        int64_t ib = b ? bcast_index(b, o->rank, o->dims, e) : 0;
        double da, db;
        r->bwd(a->v[ia], b ? b->v[ib] : 0.0, o->g[e], &da, &db);
        /* summing into the broadcast element is the gradient of the broadcast */
        a->g[ia] += da;
        if (b) b->g[ib] += db;
    }
    return ONYX_OK;
}

static void store(tensor *t, int64_t i, double v) {
    switch (t->dtype) {
    case ONYX_FLOAT: ((float *)t->data)[i] = (float)v; break;
    case ONYX_DOUBLE: ((double *)t->data)[i] = v; break;
    case ONYX_FLOAT16: ((uint16_t *)t->data)[i] = float_to_fp16((float)v); break;
    case ONYX_BFLOAT16: ((uint16_t *)t->data)[i] = float_to_bf16((float)v); break;
    default: break;
    }
}

onyx_status cpu_gradient_run(const kernel_call *c) {
    const graph *g = exec_frame_graph(c->frame);
    if (!g) return onyx_error(ONYX_ERR_UNSUPPORTED, "Gradient needs its graph");
    const graph_attr *xs = node_attr(c->node, "xs"), *zs = node_attr(c->node, "zs");
    const char *yname = attr_string(c->node, "y", "");
    onyx_status st = ONYX_OK;
    gctx x = {g, c->frame, calloc((size_t)g->n_values, sizeof(dval)),
              calloc((size_t)g->n_nodes + 1, 1)};
    if (!x.vals || !x.need) {
        st = onyx_oom("Gradient");
        goto done;
    }
    int yv = graph_find_value(g, yname);
    if (yv < 0) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "y '%s' is not a value of this graph", yname);
        goto done;
    }
    size_t nx = xs ? xs->n : 0, nz = zs ? zs->n : 0;
    /* xs and zs are fed by the node's inputs, in that order */
    for (size_t i = 0; i < nx + nz; i++) {
        const char *name = i < nx ? xs->strings[i] : zs->strings[i - nx];
        int v = graph_find_value(g, name);
        const tensor *t = kernel_input(c, (int)i);
        if (v < 0 || !t) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL,
                            "'%s' (input %zu) is not a tensor of this graph", name, i);
            goto done;
        }
        if (!x.vals[v].set) CHECK(dval_from_tensor(&x.vals[v], t));
    }
    CHECK(mark(&x, yv));
    for (int k = 0; k < g->n_nodes; k++)
        if (x.need[k]) CHECK(forward(&x, &g->nodes[k]));
    /* dy/dy = 1 for every element: a non-scalar y gives the gradient of its sum */
    CHECK(grad_buf(&x.vals[yv]));
    for (int64_t e = 0; e < x.vals[yv].n; e++) x.vals[yv].g[e] = 1.0;
    for (int k = g->n_nodes - 1; k >= 0; k--)
        if (x.need[k]) CHECK(backward(&x, &g->nodes[k]));
    for (size_t i = 0; i < nx; i++) {
        tensor *out = kernel_output(c, (int)i);
        if (!out) continue;
        const dval *d = &x.vals[graph_find_value(g, xs->strings[i])];
        if (out->numel != d->n) {
            st = onyx_error(ONYX_ERR_SHAPE, "output %zu has %lld elements, x has %lld", i,
                            (long long)out->numel, (long long)d->n);
            goto done;
        }
        for (int64_t e = 0; e < d->n; e++) store(out, e, d->g ? d->g[e] : 0.0);
    }
done:
    if (x.vals)
        for (int v = 0; v < g->n_values; v++) {
            free(x.vals[v].v);
            free(x.vals[v].g);
        }
    free(x.vals);
    free(x.need);
    return st;
}
