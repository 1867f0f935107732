/* The node matchers of the fusion passes (core/fuse_match.h; the first three serve
 * core/fuse_device.c too): what op a node is, which constants it reads, what type a value
 * has, which steps take post-ops, and the Transposes that move channels last or first again. Each
 * idea's file asks these; they know nothing of chains. */
#include "core/fuse_match.h"

#include <math.h>
#include <string.h>

#include "geometry/perm.h"

bool fuse_is_op(const graph_node *n, const char *op) {
    return !*n->domain && !strcmp(n->op_type, op);
}

bool fuse_only_output0(const graph_node *n) {
    for (int o = 1; o < n->n_outputs; o++)
        if (n->outputs[o] >= 0) return false;
    return n->n_outputs >= 1 && n->outputs[0] >= 0;
}

/* The host constant behind input i of n (a device's copy of a constant is read through the
 * host's), or NULL. */
const tensor *fuse_host_const(const plan *p, const graph_node *n, int i) {
    if (i >= n->n_inputs || n->inputs[i] < 0) return NULL;
    const plan_value *v = &p->vals[n->inputs[i]];
    if (v->device != DEVICE_CPU) v = &p->vals[v->source];
    return v->where == ST_CONST && v->device == DEVICE_CPU ? v->constant : NULL;
}

/* The constant float value of input i of n, with `numel` values (-1: any), or NULL. */
const tensor *fuse_const_float(const plan *p, const graph_node *n, int i, int64_t numel) {
    const tensor *c = fuse_host_const(p, n, i);
    if (!c || c->dtype != ONYX_FLOAT) return NULL;
    if (numel >= 0 && c->numel != numel) return NULL;
    return c;
}

/* The one value of constant input i of n, of a float type (16-bit ones in a device's float16
 * graph), as a float; false if it is none. */
static bool const_scalar(const plan *p, const graph_node *n, int i, float *out) {
    const tensor *c = fuse_host_const(p, n, i);
    if (!c || c->numel != 1) return false;
    if (c->dtype == ONYX_FLOAT) *out = ((const float *)c->data)[0];
    else if (c->dtype == ONYX_FLOAT16) *out = fp16_to_float(((const uint16_t *)c->data)[0]);
    else if (c->dtype == ONYX_BFLOAT16) *out = bf16_to_float(((const uint16_t *)c->data)[0]);
    else return false;
    return true;
}

bool fuse_same_type(const type_info *a, const type_info *b) {
    return a->kind == ONYX_VALUE_TENSOR && b->kind == ONYX_VALUE_TENSOR && a->dtype == b->dtype &&
           type_is_static(a) && type_is_static(b) &&
           shape_equal(a->rank, a->dims, b->rank, b->dims);
}

bool fuse_rows_at_run(const graph *g, const plan *p, const plan_step *ps) {
    const graph_node *n = step_node(g, ps);
    if (!fuse_matmul_step(g, ps) || !fuse_is_op(n, "MatMul") || n->n_inputs != 2 ||
        n->n_outputs != 1 || n->inputs[1] < 0 || n->outputs[0] < 0)
        return false;
    const type_info *t = &p->vals[n->outputs[0]].type, *b = &p->vals[n->inputs[1]].type;
    return t->kind == ONYX_VALUE_TENSOR && t->dtype == ONYX_FLOAT && t->rank >= 2 &&
           !type_is_static(t) && t->dims[t->rank - 1] > 0 &&
           p->vals[n->inputs[1]].where == ST_CONST && b->rank == 2 && type_is_static(b);
}

/* Value v as a float constant that broadcasts over `t` along axis `axis` only ([M,1,..],
 * [1,M,1,..], a single value for the channel axis 1), or NULL. */
const tensor *fuse_per_axis(const plan *p, int v, const type_info *t, int axis) {
    if (v < 0) return NULL;
    const plan_value *pv = &p->vals[v];
    const tensor *c = pv->constant;
    if (pv->where != ST_CONST || !c || c->dtype != ONYX_FLOAT || c->rank > t->rank) return NULL;
    if (c->numel != 1 && c->numel != t->dims[axis]) return NULL;
    for (int i = 0; i < c->rank; i++)
        if (c->dims[i] != 1 && t->rank - c->rank + i != axis) return NULL;
    return c;
}

/* Whether node n multiplies `cur` by a constant float scalar, or divides it by one: the factor
 * in *c. */
bool fuse_scalar_factor(const plan *p, const graph_node *n, int cur, float *c) {
    bool div = fuse_is_op(n, "Div");
    if ((!div && !fuse_is_op(n, "Mul")) || n->version < 7 || n->n_inputs != 2 ||
        !fuse_only_output0(n))
        return false;
    int k = n->inputs[0] == cur ? 1 : div ? -1 : n->inputs[1] == cur ? 0 : -1;
    if (k < 0 || n->inputs[k] == cur) return false;
    const tensor *t = fuse_host_const(p, n, k);
    float f;
    if (!const_scalar(p, n, k, &f) || t->rank > p->vals[cur].type.rank) return false;
    if (div && f == 0.0f) return false;
    *c = div ? 1.0f / f : f;
    return isfinite(*c);
}

bool fuse_conv_step(const graph *g, const plan_step *ps) {
    return (ps->k->flags & KF_POST_OPS) && fuse_is_op(step_node(g, ps), "Conv");
}

/* A MatMul or Gemm: a product whose channels are its last axis */
bool fuse_matmul_step(const graph *g, const plan_step *ps) {
    const graph_node *n = step_node(g, ps);
    return (ps->k->flags & KF_POST_OPS) && (fuse_is_op(n, "MatMul") || fuse_is_op(n, "Gemm"));
}

int fuse_producer(const graph *g, const plan *p, int n, int v) {
    for (int r = 0; r < n; r++) {
        const graph_node *nd = step_node(g, &p->steps[r]);
        if (nd->n_outputs > 0 && nd->outputs[0] == v) return r;
    }
    return -1;
}

bool fuse_float_value_type(const type_info *t) {
    return fuse_same_type(t, t) && t->dtype == ONYX_FLOAT;
}

bool fuse_float_value(const plan *p, int v) { return fuse_float_value_type(&p->vals[v].type); }

/* fuse_float_value, or where `wide` (a device's attention chain) a float16 or bfloat16 one too. */
bool fuse_any_float_value(const plan *p, int v, bool wide) {
    const type_info *t = &p->vals[v].type;
    return wide ? fuse_same_type(t, t) && (t->dtype == ONYX_FLOAT || t->dtype == ONYX_FLOAT16 ||
                                      t->dtype == ONYX_BFLOAT16)
                : fuse_float_value_type(t);
}

/* Whether node n is a Transpose of a tensor of rank 3 to 5 that puts its channels last
 * (to_last: perm [0, 2, ..., r-1, 1]) or first again ([0, r-1, 1, ..., r-2]). */
bool fuse_channels_perm(const plan *p, const graph_node *n, bool to_last) {
    if (!fuse_is_op(n, "Transpose") || n->n_inputs != 1 || n->inputs[0] < 0 ||
        !fuse_only_output0(n))
        return false;
    int r = p->vals[n->inputs[0]].type.rank;
    int64_t perm[ONYX_MAX_RANK];
    if (r < 3 || r > 5) return false;
    if (!node_transpose_perm_ok(n, r, perm)) return false;
    return geom_perm_moves_channels(perm, r, to_last);
}

/* Whether `f` scales `t` channel by channel: same rank, [t->dims[0] or 1, C, 1, ...]. */
bool fuse_channel_factor(const type_info *f, const type_info *t) {
    if (f->rank != t->rank || f->dims[1] != t->dims[1] ||
        (f->dims[0] != t->dims[0] && f->dims[0] != 1))
        return false;
    for (int i = 2; i < f->rank; i++)
        if (f->dims[i] != 1) return false;
    return true;
}

bool fuse_batchnorm_op(const plan *p, const graph_node *n, int64_t channels, fuse_op *op) {
    if (n->n_inputs != 5) return false;
    if (n->version >= 14 && attr_int(n, "training_mode", 0) != 0) return false;
    if (n->version < 9 && attr_int(n, "spatial", 1) == 0) return false;
    op->kind = FUSE_BATCHNORM;
    op->epsilon = attr_float(n, "epsilon", 1e-5f);
    op->scale = fuse_const_float(p, n, 1, channels);
    op->bias = fuse_const_float(p, n, 2, channels);
    op->mean = fuse_const_float(p, n, 3, channels);
    op->var = fuse_const_float(p, n, 4, channels);
    return op->scale && op->bias && op->mean && op->var;
}
