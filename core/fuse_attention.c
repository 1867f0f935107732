/* Attention spelled out (MatMul, scale, mask, Softmax, MatMul, as every exporter writes the
 * scaled dot product) becomes one step of the Attention kernel of its device, which keeps each
 * block of scores in cache instead of writing them all out: found from its first MatMul, its
 * operands and output read through strided views (core/fuse_views.c), fused where that kernel's
 * takes_chain query (core/kernel.h) says it takes the chain. */
#include "core/fuse_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/op_schema.h"
#include "core/plan_prepare.h"

/* Operand `v` of the MatMul of step s read through the deepest view whose rows are contiguous
 * (the kernel reads them with a leading dimension), or, where cols_ok, whose columns are (K^T,
 * whose columns are K's rows): the view in *out, the factors met on the way multiplied into
 * *scale (NULL: V, whose factors would scale the output, not the scores; a view through one is
 * not taken), the value it reads in *src, the steps absorbed appended to taken. Never fails: the
 * operand itself (dense) is the shallowest such view. */
static void attention_operand(const graph *g, const plan *p, const int *uses, const bool *gone,
                              int s, int v, bool cols_ok, bool wide, bool shared,
                              strided_view *out, float *scale, int *src, int *taken,
                              int *n_taken) {
    walk w;
    fuse_walk_links(g, p, uses, gone, NULL, s, v, wide, shared, &w);
    for (int d = w.n; d >= 0; d--) {
        strided_view view;
        if (d > 0 && (w.kinds[d - 1] == LINK_RELABEL || !fuse_walk_view(g, p, &w, d, false, &view)))
            continue;
        if (d == 0) view_dense(&view, p->vals[v].type.rank, p->vals[v].type.dims);
        int r = view.rank;
        float f = scale ? *scale : 1.0f;
        bool factored = false;
        for (int j = 0; j < d; j++)
            if (w.kinds[j] == LINK_FACTOR) {
                f *= w.factors[j];
                factored = true;
            }
        if (!isfinite(f) || (factored && !scale) ||
            (view.strides[r - 1] != 1 && !(cols_ok && view.strides[r - 2] == 1)))
            continue;
        if (scale) *scale = f;
        *out = view;
        *src = w.vals[d];
        for (int j = 0; j < d; j++) taken[(*n_taken)++] = w.steps[j];
        return;
    }
}

/* Whether what the operand walks' steps (taken[0..n)) make is read by them and the two MatMuls
 * (steps s and s2) alone, and is none of the values the fused step reads (src[0..3): where one
 * walk stopped, another may have gone on), after dropping the steps that several walks took
 * (from taken). */
static bool walks_closed(const graph *g, const plan *p, const int *uses, int s, int s2,
                         const int *src, int *taken, int *n) {
    int m = 0;
    for (int i = 0; i < *n; i++) {
        bool again = false;
        for (int j = 0; j < m; j++) again |= taken[j] == taken[i];
        if (!again) taken[m++] = taken[i];
    }
    *n = m;
    for (int i = 0; i < m; i++) {
        int x = step_node(g, &p->steps[taken[i]])->outputs[0], reads = 0;
        if (x == src[0] || x == src[1] || x == src[2]) return false;
        for (int j = 0; j < m + 2; j++) {
            int r = j < m ? taken[j] : j == m ? s : s2;
            const graph_node *nd = step_node(g, &p->steps[r]);
            for (int k = 0; k < nd->n_inputs; k++) reads += nd->inputs[k] == x;
        }
        if (reads != uses[x]) return false;
    }
    return true;
}

/* Whether mask type m broadcasts to scores of type t (rank <= t's, each dim 1 or t's); `wide`:
 * a 16-bit float mask too. */
static bool mask_broadcasts(const plan *p, int mask, const type_info *t, bool wide) {
    const type_info *m = &p->vals[mask].type;
    if (!fuse_any_float_value(p, mask, wide) || m->rank > t->rank) return false;
    for (int i = 0; i < m->rank; i++) {
        int64_t d = m->dims[i], e = t->dims[t->rank - m->rank + i];
        if (d != 1 && d != e) return false;
    }
    return true;
}

/* The step after s making `v` from `from` alone, as op `op` (and only what it makes), or -1. */
static int maker_of(const graph *g, const plan *p, const bool *gone, int s, int until, int v,
                    int from, const char *op) {
    for (int r = s + 1; r < until; r++) {
        const graph_node *n = step_node(g, &p->steps[r]);
        if (!gone[r] && !p->steps[r].fused && fuse_is_op(n, op) && n->n_inputs == 1 &&
            n->inputs[0] == from && fuse_only_output0(n) && n->outputs[0] == v)
            return r;
    }
    return -1;
}

/* Whether P (the softmax's output, made by step s) goes through Where(IsNaN(P), 0, P) and
 * nothing else: torch's scaled dot product export zeroes the rows a mask left empty so (a
 * float16 model computed in float tests a Cast of P to float16, NaN where P is). Returns the
 * IsNaN's step (the Where is consumer[p_val]) with, in *cast, the Cast's (or -1), or -1. */
static int nan_to_zero(const graph *g, const plan *p, const int *uses, const bool *gone,
                       const int *consumer, int s, int p_val, int *cast) {
    int w = consumer[p_val];
    if (uses[p_val] != 2 || plan_value_is_output(g, p_val) || w <= s || gone[w] ||
        p->steps[w].fused)
        return -1;
    const graph_node *where = step_node(g, &p->steps[w]);
    const tensor *zero = fuse_const_float(p, where, 1, 1);
    if (!fuse_is_op(where, "Where") || where->n_inputs != 3 || where->inputs[2] != p_val || !zero ||
        ((const float *)zero->data)[0] != 0.0f || !fuse_only_output0(where) ||
        !fuse_float_value(p, where->outputs[0]) ||
        !fuse_same_type(&p->vals[where->outputs[0]].type, &p->vals[p_val].type))
        return -1;
    int isnan_val = where->inputs[0];
    if (uses[isnan_val] != 1 || plan_value_is_output(g, isnan_val)) return -1;
    *cast = -1;
    int isnan = maker_of(g, p, gone, s, w, isnan_val, p_val, "IsNaN");
    if (isnan >= 0) return isnan;
    for (int r = s + 1; r < w && isnan < 0; r++) { /* IsNaN(Cast(P)) */
        const graph_node *n = step_node(g, &p->steps[r]);
        if (!fuse_is_op(n, "IsNaN") || n->n_inputs != 1 || n->outputs[0] != isnan_val) continue;
        int half = n->inputs[0];
        if (half < 0 || uses[half] != 1 || plan_value_is_output(g, half) ||
            p->vals[half].type.dtype != ONYX_FLOAT16)
            return -1;
        *cast = maker_of(g, p, gone, s, r, half, p_val, "Cast");
        isnan = *cast >= 0 ? maker_of(g, p, gone, *cast, w, isnan_val, half, "IsNaN") : -1;
    }
    return isnan;
}

/* Attention spelled out, as every exporter writes the scaled dot product, from its first
 * MatMul (step s):
 *   S = MatMul(Q, K^T), [* or / scalars], [+ mask], P = Softmax(S, last axis), O = MatMul(P, V)
 * with Q, K^T, V and O of rank 3 or 4 sharing their leading dims (no broadcast), every value
 * between read by the next step alone. Q, K^T and V are read through the Transposes,
 * relabellings and scalar factors that make them (strided views), and O is written through the
 * Transposes that read it, as the MatMul chains do. Fills `chain` (views 0: Q, 1: K^T, 3: V,
 * 2: O; in_scale: every factor) and src (Q, K^T, V, mask or -1), appends the absorbed steps to
 * taken and sets *cur to the value the fused step makes. Returns the last step absorbed, or -1
 * when the steps from s are no such pattern. */
static int attention_chain(const graph *g, const plan *p, const int *uses, const bool *gone,
                           const int *consumer, int s, fuse_chain *chain, int *src, int *cur,
                           int *taken, int *n_taken) {
    const graph_node *mm = step_node(g, &p->steps[s]);
    /* the CPU's kernel computes in float; a device's takes its 16-bit floats too. Every step of
     * the chain runs on the first MatMul's device: a value from another comes through a copy,
     * which no walk passes. */
    device_kind dev = p->steps[s].k->device;
    bool wide = dev != DEVICE_CPU;
    if (!fuse_is_op(mm, "MatMul") || mm->n_inputs != 2 || mm->inputs[0] == mm->inputs[1]) return -1;
    const type_info *t = &p->vals[mm->outputs[0]].type, *tq = &p->vals[mm->inputs[0]].type,
                    *tk = &p->vals[mm->inputs[1]].type;
    int r = t->rank;
    if ((r != 3 && r != 4) || !fuse_any_float_value(p, mm->inputs[0], wide) ||
        !fuse_any_float_value(p, mm->inputs[1], wide) || tq->dtype != t->dtype ||
        tk->dtype != t->dtype || tq->rank != r || tk->rank != r ||
        p->vals[mm->inputs[0]].where == ST_CONST || p->vals[mm->inputs[1]].where == ST_CONST)
        return -1;
    for (int i = 0; i < r - 2; i++)
        if (tq->dims[i] != t->dims[i] || tk->dims[i] != t->dims[i]) return -1;
    int tk_[ATT_MAX_TAKEN], nt = 0, v = mm->outputs[0], mask = -1, step = -1;
    bool zeroed = false;
    float scale = 1.0f;
    /* the scores' way to the softmax: factors, then at most one Add */
    for (bool softmax = false; !softmax;) {
        step = consumer[v];
        if (nt >= MAX_WALK || uses[v] != 1 || plan_value_is_output(g, v) || step <= s ||
            gone[step] || p->steps[step].fused)
            return -1;
        const graph_node *n = step_node(g, &p->steps[step]);
        if (!fuse_only_output0(n) || !fuse_same_type(&p->vals[n->outputs[0]].type, t)) return -1;
        float f;
        if (mask < 0 && fuse_scalar_factor(p, n, v, &f)) {
            scale *= f;
        } else if (mask < 0 && fuse_is_op(n, "Add") && n->version >= 7 && n->n_inputs == 2 &&
                   (n->inputs[0] == v) != (n->inputs[1] == v)) {
            mask = n->inputs[n->inputs[0] == v ? 1 : 0];
            if (mask < 0 || !mask_broadcasts(p, mask, t, wide)) return -1;
        } else if (fuse_is_op(n, "Softmax") && n->n_inputs == 1) {
            int64_t axis = attr_int(n, "axis", n->version >= 13 ? -1 : 1);
            if (axis != -1 && axis != r - 1) return -1;
            softmax = true;
        } else {
            return -1;
        }
        tk_[nt++] = step;
        v = n->outputs[0];
    }
    /* torch's export zeroes what the softmax made NaN (rows masked out entirely) */
    int cast, zeroing = nan_to_zero(g, p, uses, gone, consumer, step, v, &cast);
    if (zeroing >= 0) {
        if (cast >= 0) tk_[nt++] = cast;
        tk_[nt++] = zeroing;
        step = consumer[v];
        tk_[nt++] = step;
        v = step_node(g, &p->steps[step])->outputs[0];
        zeroed = true;
    }
    /* P times V */
    int s2 = consumer[v];
    if (uses[v] != 1 || plan_value_is_output(g, v) || s2 <= step || gone[s2] ||
        p->steps[s2].fused || p->steps[s2].k->device != dev ||
        (dev == DEVICE_CPU && !fuse_matmul_step(g, &p->steps[s2])))
        return -1;
    const graph_node *pv = step_node(g, &p->steps[s2]);
    if (!fuse_is_op(pv, "MatMul") || pv->n_inputs != 2 || pv->inputs[0] != v ||
        pv->inputs[1] == v ||
        !fuse_any_float_value(p, pv->inputs[1], wide) ||
        !fuse_any_float_value(p, pv->outputs[0], wide) ||
        p->vals[pv->inputs[1]].type.dtype != t->dtype ||
        p->vals[pv->outputs[0]].type.dtype != t->dtype)
        return -1;
    const type_info *tv = &p->vals[pv->inputs[1]].type, *to = &p->vals[pv->outputs[0]].type;
    if (tv->rank != r || to->rank != r || tv->dims[r - 2] != t->dims[r - 1]) return -1;
    for (int i = 0; i < r - 2; i++)
        if (tv->dims[i] != t->dims[i]) return -1;
    tk_[nt++] = s2;

    fuse_chain c = {0};
    strided_view view[4];
    /* Q, K^T and V through their links; first through links they share, as torch's
     * MultiheadAttention makes all three from one projection (Gathers of one index) */
    int wk[3 * MAX_WALK], nw = 0;
    float scores_scale = scale;
    for (int shared = 1; shared >= 0; shared--) {
        nw = 0;
        scale = scores_scale;
        attention_operand(g, p, uses, gone, s, mm->inputs[0], false, wide, shared, &view[0],
                          &scale, &src[0], wk, &nw);
        attention_operand(g, p, uses, gone, s, mm->inputs[1], true, wide, shared, &view[1],
                          &scale, &src[1], wk, &nw);
        attention_operand(g, p, uses, gone, s2, pv->inputs[1], false, wide, shared, &view[3],
                          NULL, &src[2], wk, &nw);
        if (!shared || walks_closed(g, p, uses, s, s2, src, wk, &nw)) break;
    }
    for (int i = 0; i < nw; i++) tk_[nt++] = wk[i];
    int last = s2, end = pv->outputs[0];
    /* O through the Transposes that read it, where its rows stay contiguous */
    walk w;
    fuse_walk_links(g, p, uses, gone, consumer, -1, end, wide, false, &w);
    view_dense(&view[2], to->rank, to->dims);
    for (int d = w.n; d > 0; d--) {
        strided_view o;
        if (w.kinds[d - 1] != LINK_TRANSPOSE || !fuse_walk_view(g, p, &w, d, true, &o) ||
            o.strides[o.rank - 1] != 1)
            continue;
        view[2] = o;
        for (int j = 0; j < d; j++) tk_[nt++] = w.steps[j];
        last = w.steps[d - 1];
        end = w.vals[d];
        break;
    }
    for (int i = 0; i < 4; i++) fuse_set_view(&c, i, &view[i]);
    c.attention = true;
    c.nan_to_zero = zeroed;
    c.has_in_scale = true;
    c.in_scale = scale;
    src[3] = mask;
    *chain = c;
    *cur = end;
    for (int i = 0; i < nt; i++) taken[(*n_taken)++] = tk_[i];
    return last;
}

/* The fused node of an attention chain found at step s: an Attention node of the chain's
 * inputs and output, run by the Attention kernel (*k) of step s's device with the chain
 * prepared, and its geometry (geometry/attention.h's rule for a chain of products) kept by the
 * plan in *params. *node stays NULL (the steps stay as they are) when the views make no attention
 * or that kernel is missing or refuses the chain. */
static onyx_status attention_node(subgraph *sg, plan *p, int s, const fuse_chain *chain,
                                  const int *src, int out, graph_node **node, const kernel **k,
                                  const op_params **params) {
    *node = NULL;
    /* its geometry, which the kernel reads from the step's params: none, no fusion */
    op_params att = {.kind = OP_PARAMS_ATTENTION};
    int rank = chain->view_rank[0];
    for (int i = 1; i < 4; i++)
        if (chain->view_rank[i] != rank) return ONYX_OK;
    geom_msg m;
    if (geom_attention_chain(rank, chain->view_dims[0], chain->view_dims[1], chain->view_dims[3],
                             chain->view_dims[2], &att.u.attention, &m) != ONYX_OK)
        return ONYX_OK;
    const op_schema *schema = sg->env.ops ? sg->env.ops->find("", "Attention", 23) : NULL;
    if (!schema) return ONYX_OK;
    graph_node *fn = calloc(1, sizeof *fn + 5 * sizeof(int));
    if (!fn) return onyx_oom("fused attention");
    *fn = (graph_node){.name = step_node(sg->g, &p->steps[s])->name, .op_type = "Attention",
                       .domain = "", .version = 23, .schema = schema,
                       .n_inputs = src[3] >= 0 ? 4 : 3, .n_outputs = 1};
    fn->inputs = (int *)(fn + 1);
    fn->outputs = fn->inputs + 4;
    memcpy(fn->inputs, src, 4 * sizeof(int));
    fn->outputs[0] = out;
    const type_info *in_types[4];
    for (int i = 0; i < fn->n_inputs; i++) in_types[i] = &p->vals[src[i]].type;
    /* no Attention kernel on that device: no fusion */
    const kernel *cand = sg->env.find_kernel(fn, fn->n_inputs, in_types, p->steps[s].k->device);
    /* the kernel answers; its prepare comes with the others' (one without the query takes no
     * chain) */
    if (cand && (!cand->takes_chain || !plan_kernel_takes_chain(sg, p, cand, fn, &att, chain)))
        cand = NULL;
    onyx_status st = cand ? plan_keep_params(p, &att, params) : ONYX_OK;
    if (!cand || st != ONYX_OK) {
        free(fn);
        return st;
    }
    *node = fn;
    *k = cand;
    return ONYX_OK;
}

onyx_status fuse_attention(fuse_pass *f, int s, bool *fused) {
    plan *p = f->p;
    plan_step *ps = &p->steps[s];
    int att_src[4], att_out, att_taken[ATT_MAX_TAKEN], att_n = 0;
    *fused = false;
    int att_last = attention_chain(f->g, p, f->uses, f->gone, f->consumer, s, &f->chains[s],
                                   att_src, &att_out, att_taken, &att_n);
    if (att_last < 0) return ONYX_OK;
    graph_node *fn;
    const kernel *ak;
    const op_params *params;
    TRY(attention_node(f->sg, p, s, &f->chains[s], att_src, att_out, &fn, &ak, &params));
    if (!fn) {
        memset(&f->chains[s], 0, sizeof f->chains[s]);
        return ONYX_OK;
    }
    if (ps->state && ps->k->release) ps->k->release(ps->state);
    ps->state = NULL;
    ps->k = ak;
    plan_set_fused(ps, fn);
    ps->params = params; /* the Attention's geometry, not its first product's */
    plan_absorb_steps(p, f->gone, att_taken, att_n);
    f->gone[s] = true;
    f->emit[att_last] = s;
    *fused = true;
    return ONYX_OK;
}
