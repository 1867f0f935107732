/* Pre-ops: a conv absorbs what only feeds its X, as steps applied on the way into it: the
 * per-channel steps (BatchNormalization, Mul / Add of per-channel constants) and at most one
 * Relu / LeakyRelu last (pre-activation networks); where there are none, a squeeze-and-excitation
 * scale taken into its weights or the Transpose from channels last that makes X
 * (core/fuse_conv_io.c). The conv's kernel says through its takes_chain query whether it takes
 * them. */
#include "core/fuse_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/plan_prepare.h"

static const tensor *per_channel(const plan *p, int v, const type_info *t) {
    return fuse_per_axis(p, v, t, 1);
}

/* Whether node n, of output type `t`, computing from *x its only non-constant input, can run
 * before a convolution as a pre-op (`relu_ok`: a Relu / LeakyRelu is still allowed, as the last
 * pre-op); fills *op and *x. */
static bool classify_pre(const plan *p, const graph_node *n, const type_info *t, bool relu_ok,
                         int *x, fuse_op *op) {
    memset(op, 0, sizeof *op);
    if (!fuse_only_output0(n) || n->n_inputs < 1 || n->inputs[0] < 0) return false;
    *x = n->inputs[0];
    if ((fuse_is_op(n, "Mul") || fuse_is_op(n, "Add")) && n->version >= 7 && n->n_inputs == 2 &&
        n->inputs[1] >= 0) {
        const tensor *k = per_channel(p, n->inputs[1], t);
        if (!k) {
            k = per_channel(p, n->inputs[0], t);
            *x = n->inputs[1];
        }
        if (!k) return false;
        bool mul = fuse_is_op(n, "Mul");
        op->kind = mul ? FUSE_SCALE : FUSE_SHIFT;
        (mul ? &op->scale : &op->bias)[0] = k;
    } else if (relu_ok && n->n_inputs == 1 &&
               (fuse_is_op(n, "Relu") || fuse_is_op(n, "LeakyRelu"))) {
        op->kind = FUSE_RELU;
        if (fuse_is_op(n, "LeakyRelu")) op->alpha = attr_float(n, "alpha", 0.01f);
    } else if (fuse_is_op(n, "BatchNormalization")) {
        if (!fuse_batchnorm_op(p, n, t->dims[1], op)) return false;
    } else {
        return false;
    }
    return *x >= 0 && fuse_same_type(&p->vals[*x].type, t);
}

/* The fused node of the conv of step s before its X's side is taken: the one its post-ops made,
 * or a copy of its node (X, W, B, the addend; *made: the copy, the caller's to free). NULL when
 * out of memory. */
static graph_node *conv_node(const graph *g, plan_step *ps, bool *made) {
    *made = !ps->fused;
    if (ps->fused) return ps->own_node;
    const graph_node *conv = step_node(g, ps);
    graph_node *fn = calloc(1, sizeof *fn + (FUSED_INPUTS + 1) * sizeof(int));
    if (!fn) return NULL;
    *fn = *conv;
    fn->inputs = (int *)(fn + 1);
    fn->outputs = fn->inputs + FUSED_INPUTS;
    for (int i = 0; i < FUSED_INPUTS; i++)
        fn->inputs[i] = i < conv->n_inputs && i < 4 ? conv->inputs[i] : -1;
    fn->n_inputs = conv->n_inputs < 4 ? conv->n_inputs : 4;
    fn->n_outputs = 1;
    fn->outputs[0] = conv->outputs[0];
    return fn;
}

onyx_status fuse_pre_ops(fuse_pass *f, int s) {
    plan *p = f->p;
    const graph *g = f->g;
    const int *uses = f->uses;
    bool *gone = f->gone;
    plan_step *ps = &p->steps[s];
    if (!fuse_conv_step(g, ps)) return ONYX_OK;
    const graph_node *conv = step_node(g, ps);
    if (conv->n_inputs < 2 || conv->inputs[0] < 0 || conv->inputs[1] < 0) return ONYX_OK;
    const type_info *t = &p->vals[conv->inputs[0]].type;
    if (!fuse_same_type(t, t) || t->dtype != ONYX_FLOAT || t->rank < 3 || t->rank > 5)
        return ONYX_OK;
    int cur = conv->inputs[0], absorbed[FUSE_MAX_OPS];
    fuse_op rev[FUSE_MAX_OPS];
    int np = 0;
    while (np < FUSE_MAX_OPS) {
        if (uses[cur] != 1 || plan_value_is_output(g, cur)) break;
        int tstep = -1;
        for (int r = 0; r < s && tstep < 0; r++) {
            const graph_node *nd = step_node(g, &p->steps[r]);
            if (!gone[r] && nd->n_outputs > 0 && nd->outputs[0] == cur) tstep = r;
        }
        if (tstep < 0 || p->steps[tstep].fused) break;
        const graph_node *nn = step_node(g, &p->steps[tstep]);
        int x;
        if (!classify_pre(p, nn, t, np == 0, &x, &rev[np])) break;
        absorbed[np++] = tstep;
        cur = x;
    }
    /* else a squeeze-and-excitation scale on X, taken into the weights, or a Transpose
     * from channels last that makes X */
    int se = -1, sc = -1, xt = -1;
    if (np == 0 && (se = fuse_se_scale(g, p, uses, gone, s, t, &cur, &sc)) < 0 &&
        (xt = fuse_channels_last_input(g, p, uses, gone, s, &cur)) < 0)
        return ONYX_OK;
    /* the chain and node with X's side taken, as the kernel is asked about them */
    bool made;
    graph_node *fn = conv_node(g, ps, &made);
    if (!fn) return onyx_oom("fused node");
    int old_inputs[FUSED_INPUTS], old_n = fn->n_inputs;
    memcpy(old_inputs, fn->inputs, sizeof old_inputs);
    fuse_chain chain = f->chains[s];
    fn->inputs[0] = cur;
    if (se >= 0) {
        fn->inputs[4] = sc;
        fn->n_inputs = FUSED_INPUTS;
        chain.x_scale = true;
    } else if (xt >= 0) {
        chain.x_channels_last = true;
    } else {
        chain.n_pre = np;
        for (int i = 0; i < np; i++) chain.pre[i] = rev[np - 1 - i];
    }
    if (!ps->k->takes_chain || !plan_kernel_takes_chain(f->sg, p, ps->k, fn, ps->params, &chain)) {
        if (made) {
            free(fn);
        } else { /* the post-ops' node as it was */
            memcpy(fn->inputs, old_inputs, sizeof old_inputs);
            fn->n_inputs = old_n;
        }
        return ONYX_OK;
    }
    if (made) plan_set_fused(ps, fn);
    f->chains[s] = chain;
    if (se >= 0) plan_absorb_steps(p, gone, &se, 1);
    else if (xt >= 0) plan_absorb_steps(p, gone, &xt, 1);
    else plan_absorb_steps(p, gone, absorbed, np);
    return ONYX_OK;
}
