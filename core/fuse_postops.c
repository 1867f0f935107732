/* Post-op chains: a Conv (kernel flagged KF_POST_OPS) absorbs the chain of nodes that only it
 * feeds: an inference BatchNormalization with constant parameters and Mul / Add of per-channel
 * constants (folded into its constant weights), Relu / LeakyRelu / Clip / Sigmoid / Tanh /
 * HardSigmoid / Swish / HardSwish / Gelu, and one Add of a same-shaped tensor (or two-input
 * Sum), and may write its Y through the Transpose that puts its channels last. A MatMul or Gemm
 * absorbs the same but for the affine steps: an Add of per-column constants first (its bias),
 * then activations and an Add; a MatMul of two computed operands also reads them and writes its
 * result through strided views (core/fuse_views.c). On a generic plan, a MatMul by constant
 * weights over rows known only at run takes the same chain but an addend. The step's kernel
 * says through its takes_chain query (core/kernel.h) whether it applies the chain; the absorbed
 * steps then leave the plan, and the fused step runs where the chain's last node ran, so every
 * addend is ready. */
#include "core/fuse_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan_prepare.h"

/* Whether n's output is of cur's type t: static and equal, or (`rows`: a product over rows known
 * only at run, fuse_rows_at_run) equal with the same dims unknown, which the steps classify
 * takes there keep (each writes its input's shape: an addend, whose shape could differ at run,
 * is refused by fuse_same_type). */
static bool same_output(const type_info *out, const type_info *t, bool rows) {
    if (!rows) return fuse_same_type(out, t);
    return out->kind == ONYX_VALUE_TENSOR && out->dtype == t->dtype &&
           shape_equal(out->rank, out->dims, t->rank, t->dims);
}

/* Whether node n, reading `cur` (the chain's value so far, of type `t` with M channels), can be
 * absorbed; fills *op. `*addend` receives an Add's other operand. `affine`: the chain so far only
 * has per-channel affine steps that fold into the weights (so may this one, with w_const).
 * `matmul`: the chain of a MatMul, whose channels are its last axis: an Add of per-column
 * constants first (its bias), no other affine step, no BatchNormalization. `rows`: see
 * same_output. */
static bool classify(const plan *p, const graph_node *n, int cur, const type_info *t,
                     bool affine, bool w_const, bool matmul, bool rows, int *addend,
                     fuse_op *op) {
    memset(op, 0, sizeof *op);
    if (!fuse_only_output0(n) || !same_output(&p->vals[n->outputs[0]].type, t, rows))
        return false;
    if (n->n_inputs < 1) return false;
    bool first = n->inputs[0] == cur;
    if ((fuse_is_op(n, "Mul") || fuse_is_op(n, "Add")) && n->version >= 7 && n->n_inputs == 2 &&
        affine && w_const && (first || n->inputs[1] == cur) && !(matmul && fuse_is_op(n, "Mul"))) {
        const tensor *k = fuse_per_axis(p, n->inputs[first ? 1 : 0], t, matmul ? t->rank - 1 : 1);
        if (k) {
            bool mul = fuse_is_op(n, "Mul");
            op->kind = mul ? FUSE_SCALE : FUSE_SHIFT;
            (mul ? &op->scale : &op->bias)[0] = k;
            return true;
        }
    }
    float c;
    if (fuse_scalar_factor(p, n, cur, &c)) {
        op->kind = FUSE_LINEAR;
        op->alpha = c;
        return true;
    }
    if (fuse_is_op(n, "Add") || fuse_is_op(n, "Sum")) { /* a two-input Sum is an Add */
        if (n->n_inputs != 2 || *addend >= 0) return false;
        int other = first ? n->inputs[1] : n->inputs[0];
        if ((!first && n->inputs[1] != cur) || other == cur || other < 0) return false;
        if (!fuse_same_type(&p->vals[other].type, t)) return false;
        if (n->version < 7 && attr_int(n, "broadcast", 0) != 0) return false;
        *addend = other;
        op->kind = FUSE_SUM;
        return true;
    }
    if (!first) return false;
    for (int i = 1; i < n->n_inputs; i++)
        if (n->inputs[i] == cur) return false;
    if (fuse_is_op(n, "Relu")) {
        op->kind = FUSE_RELU;
    } else if (fuse_is_op(n, "LeakyRelu")) {
        op->kind = FUSE_RELU;
        op->alpha = attr_float(n, "alpha", 0.01f);
    } else if (fuse_is_op(n, "Sigmoid")) {
        op->kind = FUSE_SIGMOID;
    } else if (fuse_is_op(n, "Tanh")) {
        op->kind = FUSE_TANH;
    } else if (fuse_is_op(n, "Swish")) {
        op->kind = FUSE_SWISH;
        op->alpha = attr_float(n, "alpha", 1.0f);
    } else if (fuse_is_op(n, "HardSwish")) {
        op->kind = FUSE_HARDSWISH;
    } else if (fuse_is_op(n, "Gelu")) {
        const char *approx = attr_string(n, "approximate", "none");
        if (strcmp(approx, "none") && strcmp(approx, "tanh")) return false;
        op->kind = FUSE_GELU;
        op->alpha = strcmp(approx, "tanh") == 0;
    } else if (fuse_is_op(n, "HardSigmoid")) {
        op->kind = FUSE_HARDSIGMOID;
        op->alpha = attr_float(n, "alpha", 0.2f);
        op->beta = attr_float(n, "beta", 0.5f);
    } else if (fuse_is_op(n, "Clip")) {
        op->kind = FUSE_CLIP;
        if (n->version < 11) {
            op->alpha = attr_float(n, "min", -FLT_MAX);
            op->beta = attr_float(n, "max", FLT_MAX);
        } else {
            op->alpha = -FLT_MAX;
            op->beta = FLT_MAX;
            for (int i = 1; i < n->n_inputs && i < 3; i++) {
                if (n->inputs[i] < 0) continue;
                const tensor *b = fuse_const_float(p, n, i, 1);
                if (!b) return false;
                (i == 1 ? &op->alpha : &op->beta)[0] = ((const float *)b->data)[0];
            }
        }
        if (!(op->alpha <= op->beta)) return false;
    } else if (fuse_is_op(n, "BatchNormalization")) {
        if (!affine || !w_const || matmul) return false;
        return fuse_batchnorm_op(p, n, t->dims[1], op);
    } else {
        return false;
    }
    return true;
}

static bool linear_kind(fuse_kind k) { return k == FUSE_LINEAR || k == FUSE_HARDSIGMOID; }

/* Appends op to the chain, a factor merged into the one before it. oneDNN 2.7 computes a list
 * of post-ops with two linear steps (FUSE_LINEAR, HardSigmoid's) with the first one's
 * parameters for both: one is all a chain takes (false: the chain ends here). */
static bool add_op(fuse_chain *c, const fuse_op *op) {
    fuse_op *prev = c->n > 0 ? &c->ops[c->n - 1] : NULL;
    if (op->kind == FUSE_LINEAR) {
        float *into = prev && prev->kind == FUSE_LINEAR ? &prev->alpha
                      : !prev && c->has_in_scale       ? &c->in_scale
                                                       : NULL;
        if (into) {
            if (!isfinite(*into * op->alpha)) return false;
            *into *= op->alpha;
            return true;
        }
    }
    if (linear_kind(op->kind)) {
        if (c->has_in_scale) return false;
        for (int i = 0; i < c->n; i++)
            if (linear_kind(c->ops[i].kind)) return false;
    }
    c->ops[c->n++] = *op;
    return true;
}

onyx_status fuse_post_ops(fuse_pass *f, int s) {
    subgraph *sg = f->sg;
    plan *p = f->p;
    const graph *g = f->g;
    const int *uses = f->uses, *consumer = f->consumer;
    bool *gone = f->gone;
    plan_step *ps = &p->steps[s];
    const graph_node *conv = step_node(g, ps);
    bool matmul = fuse_matmul_step(g, ps);
    const type_info *t = &p->vals[conv->outputs[0]].type;
    /* a generic plan's product by a constant B runs the same epilogue as a known shape's */
    bool rows = fuse_rows_at_run(g, p, ps);
    if (!(rows || fuse_same_type(t, t)) || t->dtype != ONYX_FLOAT || t->rank < (matmul ? 2 : 3))
        return ONYX_OK;
    bool w_const = matmul || (p->vals[conv->inputs[1]].where == ST_CONST &&
                              (conv->n_inputs < 3 || conv->inputs[2] < 0 ||
                               p->vals[conv->inputs[2]].where == ST_CONST));
    fuse_chain *chain = &f->chains[s];
    int cur = conv->outputs[0], addend = -1, last = s;
    int taken[FUSE_MAX_TAKEN], n_taken = 0, src[2] = {conv->inputs[0], conv->inputs[1]};
    const type_info *ta = &p->vals[conv->inputs[0]].type, *tb = &p->vals[conv->inputs[1]].type;
    bool products = matmul && t->rank >= 3 && ta->rank == t->rank && tb->rank == t->rank &&
                    p->vals[conv->inputs[0]].where != ST_CONST &&
                    p->vals[conv->inputs[1]].where != ST_CONST;
    /* A strided operand or result slows the product a little (measured with oneDNN 2.7
     * on AVX-512: 3-15 %), and a factor moved onto the result applies to more elements
     * than it did on the operand, while the copy or the pass saved costs the operand's
     * bytes: views and factors pay where each element of the operand meets few others,
     * i.e. the product's other dim is short (BERT's and ViT's 128 to 197 positions gain,
     * Whisper's 1500 lose) */
    bool may_view[3] = {false, false, false};
    if (products) {
        int r = t->rank;
        int64_t m = ta->dims[r - 2], k = ta->dims[r - 1], nn = tb->dims[r - 1];
        may_view[0] = nn <= VIEW_MAX_REUSE;
        may_view[1] = m <= VIEW_MAX_REUSE;
        may_view[2] = k <= VIEW_MAX_REUSE;
        fuse_operand_views(g, p, uses, gone, s, may_view, chain, src, taken, &n_taken);
    }
    bool gemm = fuse_is_op(conv, "Gemm"); /* has a bias of its own: no other */
    while (chain->n < FUSE_MAX_OPS && n_taken < FUSE_MAX_TAKEN - MAX_WALK - 1) {
        int tstep = consumer[cur];
        if (uses[cur] != 1 || plan_value_is_output(g, cur) || tstep <= s || gone[tstep])
            break;
        /* a product's post-ops act on its elements in order: a relabelling that keeps the
         * columns (GPT-2's Reshape of a Gemm's rows into [batch, sequence]) lets them on */
        int relabel = -1, x = cur, rx;
        float unused;
        if (matmul && !rows &&
            fuse_link_of(g, p, uses, gone, tstep, cur, true, false, false, &rx, &unused) ==
                LINK_RELABEL &&
            p->vals[rx].type.rank >= 1 &&
            p->vals[rx].type.dims[p->vals[rx].type.rank - 1] == t->dims[t->rank - 1]) {
            relabel = tstep;
            x = rx;
            tstep = consumer[x];
            if (uses[x] != 1 || plan_value_is_output(g, x) || tstep <= s || gone[tstep]) break;
        }
        const type_info *xt = &p->vals[x].type;
        const graph_node *nn = step_node(g, &p->steps[tstep]);
        fuse_op op;
        bool affine = (!matmul || chain->n == 0) && !gemm;
        for (int i = 0; i < chain->n; i++)
            affine &= chain->ops[i].kind == FUSE_BATCHNORM ||
                      chain->ops[i].kind == FUSE_SCALE || chain->ops[i].kind == FUSE_SHIFT;
        if (!classify(p, nn, x, xt, affine, w_const, matmul, rows, &addend, &op)) break;
        if (op.kind == FUSE_SUM) op.input = 3;
        if (!add_op(chain, &op)) break;
        if (relabel >= 0) taken[n_taken++] = relabel;
        taken[n_taken++] = tstep;
        cur = nn->outputs[0];
        last = tstep;
    }
    /* a conv may write its result through the Transpose that puts its channels last (not
     * with an addend, which is read in the conv's own layout, and may share Y's bytes) */
    if (!matmul && addend < 0 && t->rank <= 5 && uses[cur] == 1 &&
        !plan_value_is_output(g, cur)) {
        int ts = consumer[cur];
        if (ts > s && !gone[ts] && !p->steps[ts].fused &&
            fuse_channels_transpose(g, p, ts, true)) {
            chain->y_channels_last = true;
            taken[n_taken++] = ts;
            cur = step_node(g, &p->steps[ts])->outputs[0];
            last = ts;
        }
    }
    /* a result no post-op takes may be written through the Transposes that read it */
    if (products && may_view[2] && chain->n == 0) {
        int end = fuse_result_views(g, p, uses, gone, consumer, chain, &cur, taken, &n_taken);
        if (end >= 0) last = end;
    }
    if (n_taken == 0) return ONYX_OK;

    /* the fused node: the conv's inputs (bias slot kept), the addend, the chain's output */
    graph_node *fn = calloc(1, sizeof *fn + (FUSED_INPUTS + 1) * sizeof(int));
    if (!fn) return onyx_oom("fused node");
    *fn = *conv;
    fn->inputs = (int *)(fn + 1);
    fn->outputs = fn->inputs + FUSED_INPUTS;
    fn->n_inputs = addend >= 0 ? 4 : conv->n_inputs;
    for (int i = 0; i < 3; i++) fn->inputs[i] = i < conv->n_inputs ? conv->inputs[i] : -1;
    fn->inputs[3] = addend;
    fn->n_outputs = 1;
    fn->outputs[0] = cur;
    fn->inputs[0] = src[0];
    fn->inputs[1] = src[1];
    /* the step's kernel says whether it applies the chain (core/kernel.h): a MatMul's where its
     * oneDNN primitive takes the post-ops and views */
    if (!ps->k->takes_chain || !plan_kernel_takes_chain(sg, p, ps->k, fn, ps->params, chain)) {
        free(fn);
        memset(chain, 0, sizeof *chain);
        return ONYX_OK;
    }
    plan_set_fused(ps, fn);
    plan_absorb_steps(p, gone, taken, n_taken);
    gone[s] = last != s; /* moved to the chain's end, or (input views only) kept */
    f->emit[last] = s;
    return ONYX_OK;
}
