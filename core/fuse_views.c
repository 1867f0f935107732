/* Strided views (core/fuse.h's view_*): a MatMul of two computed operands reads them through the
 * scalar factors, Transposes, relabellings (Reshape, Squeeze, Unsqueeze, Flatten, Identity) and,
 * in an attention, Gathers of one index that make them, and writes its result through the
 * Transposes that read it, as one strided view per end instead of a copy per step. Here: the
 * links a walk from a MatMul's end passes, the view they compose into, and a product's operand
 * and result views (core/fuse_postops.c asks for them; core/fuse_attention.c walks the same
 * links). */
#include "core/fuse_internal.h"

#include <math.h>
#include <string.h>

/* The one index of Gather node n (a constant of one int64 or int32 element, negatives from the
 * end) along an axis of `dim`; *keep: the index has a rank, so the axis stays as a dim of 1. */
static bool single_index(const plan *p, const graph_node *n, int64_t dim, int64_t *index,
                         bool *keep) {
    const tensor *c = fuse_host_const(p, n, 1);
    if (!c || c->numel != 1 || (c->dtype != ONYX_INT64 && c->dtype != ONYX_INT32)) return false;
    int64_t i = c->dtype == ONYX_INT64 ? *(const int64_t *)c->data : *(const int32_t *)c->data;
    if (i < 0) i += dim;
    *index = i;
    *keep = c->rank > 0;
    return i >= 0 && i < dim;
}

/* Step s as a link a MatMul's view may absorb between `v` and the MatMul: making v (out false:
 * a Transpose, a relabelling Reshape / Squeeze / Unsqueeze / Flatten / Identity, or a scalar
 * factor) or reading v (out: a Transpose or a relabelling), v read by nothing else. `shared` (an
 * attention chain's operands): also a Gather of one constant index making v (a select), and v
 * may have other readers, which the chain must then absorb too. Returns the LINK_ kind, or -1;
 * *x is the link's other end (its input, or its output when out) and *c a factor's value. */
int fuse_link_of(const graph *g, const plan *p, const int *uses, const bool *gone, int s, int v,
                 bool out, bool wide, bool shared, int *x, float *c) {
    if (s < 0 || gone[s] || p->steps[s].fused || uses[v] < 1 || (uses[v] > 1 && !shared) ||
        plan_value_is_output(g, v))
        return -1;
    const graph_node *t = step_node(g, &p->steps[s]);
    if (!fuse_only_output0(t) || t->n_inputs < 1 || t->inputs[0] < 0 || t->outputs[0] < 0)
        return -1;
    if (!out && t->outputs[0] != v) return -1;
    static const char *const relabel[] = {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity"};
    int kind = -1;
    if (fuse_is_op(t, "Transpose") && t->n_inputs == 1) kind = LINK_TRANSPOSE;
    for (size_t i = 0; i < sizeof relabel / sizeof relabel[0]; i++)
        if (fuse_is_op(t, relabel[i])) kind = LINK_RELABEL;
    if (shared && !out && fuse_is_op(t, "Gather") && t->n_inputs == 2 && t->inputs[1] >= 0) {
        const type_info *in = &p->vals[t->inputs[0]].type;
        int64_t axis = attr_int(t, "axis", 0), index;
        bool keep;
        if (axis < 0) axis += in->rank;
        if (axis < 0 || axis >= in->rank || !single_index(p, t, in->dims[axis], &index, &keep))
            return -1;
        *x = t->inputs[0];
        kind = LINK_SELECT;
    } else if (kind >= 0) {
        if (out && t->inputs[0] != v) return -1;
        for (int k = 1; k < t->n_inputs; k++) /* a shape input must be a constant */
            if (t->inputs[k] >= 0 && p->vals[t->inputs[k]].where != ST_CONST) return -1;
        *x = out ? t->outputs[0] : t->inputs[0];
    } else if (!out) {
        *x = -1;
        for (int k = 0; k < t->n_inputs && k < 2 && *x < 0; k++)
            if (t->inputs[k] >= 0 && fuse_scalar_factor(p, t, t->inputs[k], c)) *x = t->inputs[k];
        if (*x < 0) return -1;
        kind = LINK_FACTOR;
    }
    if (kind < 0 || !fuse_any_float_value(p, t->inputs[0], wide) ||
        !fuse_any_float_value(p, t->outputs[0], wide))
        return -1;
    return kind;
}

static bool link_transpose(const graph *g, const plan *p, int step, int rank, int64_t *perm) {
    return node_transpose_perm_ok(step_node(g, &p->steps[step]), rank, perm);
}

/* The links from `v` away from the MatMul of step s: towards its producers (an operand), or
 * where `consumer` is given, towards its readers (a result); `wide`: through 16-bit floats too. */
void fuse_walk_links(const graph *g, const plan *p, const int *uses, const bool *gone,
                     const int *consumer, int s, int v, bool wide, bool shared, walk *w) {
    w->n = 0;
    w->vals[0] = v;
    while (w->n < MAX_WALK) {
        int x, cur = w->vals[w->n];
        int r = consumer ? consumer[cur] : fuse_producer(g, p, s, cur);
        int kind =
            fuse_link_of(g, p, uses, gone, r, cur, consumer != NULL, wide, shared && !consumer, &x,
                    &w->factors[w->n]);
        if (kind < 0) break;
        w->steps[w->n] = r;
        w->kinds[w->n] = kind;
        w->vals[++w->n] = x;
    }
}

/* The view of vals[0] in vals[d] (dense): an operand read through links d-1 .. 0, or (result)
 * a result written through links 0 .. d-1, each undone from the dense end. */
bool fuse_walk_view(const graph *g, const plan *p, const walk *w, int d, bool result,
                    strided_view *v) {
    const type_info *end = &p->vals[w->vals[d]].type;
    view_dense(v, end->rank, end->dims);
    for (int j = d - 1; j >= 0; j--) {
        const type_info *near = &p->vals[w->vals[j]].type; /* the MatMul's side of link j */
        int64_t perm[ONYX_MAX_RANK];
        if (w->kinds[j] == LINK_TRANSPOSE) {
            if (!link_transpose(g, p, w->steps[j], v->rank, perm)) return false;
            (result ? view_untranspose : view_transpose)(v, perm, v);
        } else if (w->kinds[j] == LINK_SELECT) { /* operands only */
            const graph_node *n = step_node(g, &p->steps[w->steps[j]]);
            int64_t axis = attr_int(n, "axis", 0), index;
            bool keep;
            if (axis < 0) axis += v->rank;
            if (result || axis < 0 || axis >= v->rank ||
                !single_index(p, n, v->dims[axis], &index, &keep))
                return false;
            view_select(v, (int)axis, index, keep, v);
        } else if (w->kinds[j] == LINK_RELABEL && !view_reshape(v, near->rank, near->dims, v)) {
            /* a merge of dims the strides keep apart may be split again after a Transpose:
             * the three links move the dims they all keep whole */
            if (result || j < 2 || w->kinds[j - 1] != LINK_TRANSPOSE ||
                w->kinds[j - 2] != LINK_RELABEL ||
                !link_transpose(g, p, w->steps[j - 1], near->rank, perm))
                return false;
            const type_info *c = &p->vals[w->vals[j - 2]].type;
            if (!view_regroup(v, near->rank, near->dims, perm, c->rank, c->dims, v)) return false;
            j -= 2;
        }
    }
    return true;
}

void fuse_set_view(fuse_chain *chain, int i, const strided_view *v) {
    chain->view_rank[i] = v->rank;
    memcpy(chain->view_dims[i], v->dims, sizeof(int64_t) * (size_t)v->rank);
    memcpy(chain->view_strides[i], v->strides, sizeof(int64_t) * (size_t)v->rank);
    chain->view_offset[i] = v->offset;
}

/* A MatMul of two computed operands of the same rank (attention's products) absorbs the scalar
 * factors, Transposes and relabellings that make operand i (where may_view[i]), as far back as
 * they compose into one strided view and end in a factor or a Transpose: in_scale and views 0
 * and 1. src receives the values the fused node reads; the absorbed steps are appended to taken. */
void fuse_operand_views(const graph *g, const plan *p, const int *uses, const bool *gone, int s,
                        const bool *may_view, fuse_chain *chain, int *src, int *taken,
                        int *n_taken) {
    const graph_node *mm = step_node(g, &p->steps[s]);
    float scale = 1.0f;
    for (int i = 0; i < 2; i++) {
        if (i == 1 && mm->inputs[1] == mm->inputs[0]) break;
        if (!may_view[i]) continue;
        walk w;
        fuse_walk_links(g, p, uses, gone, NULL, s, mm->inputs[i], false, false, &w);
        strided_view v;
        int d = w.n;
        for (; d > 0; d--)
            if (w.kinds[d - 1] != LINK_RELABEL && fuse_walk_view(g, p, &w, d, false, &v)) break;
        float f = scale;
        bool moved = false, factored = false;
        for (int j = 0; j < d; j++) {
            if (w.kinds[j] == LINK_FACTOR) f *= w.factors[j];
            factored |= w.kinds[j] == LINK_FACTOR;
            moved |= w.kinds[j] != LINK_FACTOR;
        }
        if (d == 0 || !isfinite(f)) continue;
        scale = f;
        chain->has_in_scale |= factored;
        for (int j = 0; j < d; j++) taken[(*n_taken)++] = w.steps[j];
        if (moved) fuse_set_view(chain, i, &v);
        src[i] = w.vals[d];
    }
    chain->in_scale = scale;
}

/* A MatMul's result no post-op takes, written through the Transposes and relabellings that read
 * it, as far as they compose and end in a Transpose: view 2. Returns the steps absorbed (appended
 * to taken) and sets *cur to the value the fused node makes. */
int fuse_result_views(const graph *g, const plan *p, const int *uses, const bool *gone,
                      const int *consumer, fuse_chain *chain, int *cur, int *taken, int *n_taken) {
    walk w;
    fuse_walk_links(g, p, uses, gone, consumer, -1, *cur, false, false, &w);
    strided_view v;
    int d = w.n;
    for (; d > 0; d--)
        if (w.kinds[d - 1] == LINK_TRANSPOSE && fuse_walk_view(g, p, &w, d, true, &v)) break;
    if (d == 0) return -1;
    fuse_set_view(chain, 2, &v);
    for (int j = 0; j < d; j++) taken[(*n_taken)++] = w.steps[j];
    *cur = w.vals[d];
    return w.steps[d - 1];
}
