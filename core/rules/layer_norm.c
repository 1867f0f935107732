/* LayerNormalization over the last axis, spelled out (exporters before opset 17), to the one op:
 *   d = x - ReduceMean(x); d / Sqrt(ReduceMean(d^2) + eps) * gamma (+ beta) -> LayerNormalization
 * d^2 as Pow(d, 2) or d * d, gamma and beta constant vectors of that axis's length. Tried at the
 * first mean. */
#include <math.h>

#include "core/rules/rules.h"

/* Whether n is a ReduceMean of `x` (when x >= 0) over its last axis alone, keeping it; *c gets
 * the length of that axis where inference knows it (else -1). */
static bool last_axis_mean(const rewriter *r, const graph_node *n, int x, int64_t *c) {
    if (!rw_is_op(n, "ReduceMean") || n->n_outputs != 1 || n->n_inputs < 1 || n->inputs[0] < 0 ||
        (x >= 0 && n->inputs[0] != x) || attr_int(n, "keepdims", 1) != 1)
        return false;
    const type_info *t = r->types ? &r->types[n->inputs[0]] : NULL;
    bool ranked = t && t->kind == ONYX_VALUE_TENSOR && t->rank >= 1 && t->rank <= ONYX_MAX_RANK;
    const int64_t *axes;
    if (rw_reduce_axes(r, n, &axes) != 1) return false;
    if (axes[0] != -1 && !(ranked && axes[0] == t->rank - 1)) return false;
    *c = ranked && t->dims[t->rank - 1] > 0 ? t->dims[t->rank - 1] : -1;
    return true;
}

/* d's two readers: the square (Pow(d, 2) or d * d) and the Div of d; false when anything else
 * reads d. */
static bool square_and_div(const rewriter *r, int d, const graph_node **sq,
                           const graph_node **div) {
    const int *readers;
    int count = rw_readers(r, d, &readers);
    *sq = *div = NULL;
    for (int k = 0; k < count; k++) {
        const graph_node *nd = &r->g->nodes[readers[k]];
        if (!rw_reads_input(nd, d) || r->gone[readers[k]]) continue;
        if (nd->n_inputs != 2) return false;
        if (rw_is_op(nd, "Div") && nd->inputs[0] == d && !*div) *div = nd;
        else if (!*sq && ((rw_is_op(nd, "Pow") && nd->inputs[0] == d &&
                           rw_scalar(r, nd->inputs[1]) == 2.0) ||
                          (rw_is_op(nd, "Mul") && nd->inputs[0] == d && nd->inputs[1] == d)))
            *sq = nd;
        else return false;
    }
    return *sq && *div && r->uses[d] == (rw_is_op(*sq, "Mul") ? 3 : 2);
}

onyx_status rule_layer_norm(rewriter *r, const graph_node *mean1) {
    const graph_node *m[10];
    int nm = 0;
    int64_t c;
    TRY(rw_need_types(r));
    if (!last_axis_mean(r, mean1, -1, &c)) return ONYX_OK;
    int x = mean1->inputs[0];
    m[nm++] = mean1;
    const graph_node *sub = rw_sole_reader(r, mean1->outputs[0]);
    if (!rw_is_op(sub, "Sub") || sub->n_inputs != 2 || sub->inputs[0] != x ||
        sub->inputs[1] != mean1->outputs[0])
        return ONYX_OK;
    m[nm++] = sub;
    const graph_node *sq, *div;
    if (!square_and_div(r, sub->outputs[0], &sq, &div)) return ONYX_OK;
    m[nm++] = sq;
    int64_t c2;
    const graph_node *mean2 = rw_sole_reader(r, sq->outputs[0]);
    if (!mean2 || !last_axis_mean(r, mean2, sq->outputs[0], &c2)) return ONYX_OK;
    m[nm++] = mean2;
    const graph_node *add = rw_sole_reader(r, mean2->outputs[0]);
    double eps = rw_scalar(r, rw_other_input(add, mean2->outputs[0]));
    if (!rw_is_op(add, "Add") || !(eps >= 0) || !isfinite(eps)) return ONYX_OK;
    m[nm++] = add;
    const graph_node *root = rw_sole_reader(r, add->outputs[0]);
    if (!rw_is_op(root, "Sqrt") || rw_sole_reader(r, root->outputs[0]) != div ||
        div->inputs[1] != root->outputs[0])
        return ONYX_OK;
    m[nm++] = root;
    m[nm++] = div;
    const graph_node *scale = rw_sole_reader(r, div->outputs[0]);
    int g_in = rw_other_input(scale, div->outputs[0]);
    const tensor *gamma = rw_float_constant(r, g_in);
    /* gamma spans the axis (where inference lost its length, the Mul says it: only an axis
     * of one element, where the pattern normalizes nothing, could broadcast to gamma) */
    if (!rw_is_op(scale, "Mul") || !gamma || gamma->rank != 1 ||
        gamma->numel != (c >= 0 ? c : gamma->numel) || gamma->numel < (c >= 0 ? 1 : 2))
        return ONYX_OK;
    m[nm++] = scale;
    const graph_node *last = scale, *shift = rw_sole_reader(r, scale->outputs[0]);
    int b_in = rw_other_input(shift, scale->outputs[0]);
    const tensor *beta = rw_is_op(shift, "Add") ? rw_float_constant(r, b_in) : NULL;
    if (beta && beta->rank == 1 && beta->numel == gamma->numel && beta->dtype == gamma->dtype) {
        m[nm++] = shift;
        last = shift;
    } else {
        b_in = -1;
    }
    const type_info *t = &r->types[x];
    if (t->kind != ONYX_VALUE_TENSOR || t->dtype != gamma->dtype) return ONYX_OK;
    int ins[3] = {x, g_in, b_in};
    graph_attr attrs[2] = {{.name = "axis", .type = ATTR_INT, .i = -1},
                           {.name = "epsilon", .type = ATTR_FLOAT, .f = (float)eps}};
    return rw_place(r, last, m, nm, "LayerNormalization", 17, ins, b_in >= 0 ? 3 : 2,
                    last->outputs[0], attrs, 2);
}
