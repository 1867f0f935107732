/* A conv's X and Y through what surrounds them: a squeeze-and-excitation scale on X (x * s, s
 * per channel computed per run) taken into the weights instead, and the Transposes that make X
 * from a channels-last tensor or a channels-last tensor of Y, which become the conv's own
 * reorders (ConvNeXt's blocks). core/fuse_preops.c and core/fuse_postops.c take what these
 * find. */
#include "core/fuse_internal.h"

/* Whether step t is a Transpose of a float tensor that puts its channels last or first again
 * (fuse_channels_perm). */
bool fuse_channels_transpose(const graph *g, const plan *p, int t, bool to_last) {
    const graph_node *n = step_node(g, &p->steps[t]);
    return fuse_channels_perm(p, n, to_last) && fuse_float_value(p, n->inputs[0]) &&
           fuse_float_value(p, n->outputs[0]);
}

/* The Transpose (step) a conv of step s may read X through: X made only for it from a
 * channels-last tensor (its input in *x); -1 if none. */
int fuse_channels_last_input(const graph *g, const plan *p, const int *uses, const bool *gone,
                             int s, int *x) {
    int v = step_node(g, &p->steps[s])->inputs[0];
    if (uses[v] != 1 || plan_value_is_output(g, v)) return -1;
    int t = fuse_producer(g, p, s, v);
    if (t < 0 || gone[t] || p->steps[t].fused || !fuse_channels_transpose(g, p, t, false))
        return -1;
    *x = step_node(g, &p->steps[t])->inputs[0];
    return t;
}

/* The squeeze-and-excitation scale the conv of step s (X of type t) may take into its weights:
 * X made only for it by Mul(x, sc), sc [1, C, 1, ...] computed per run, and the weights at most
 * an eighth of X's size: scaling them per run and oneDNN's reorder into its blocked layout (one
 * thread, about 0.7 ns a weight on a Sapphire Rapids Xeon: 25-32 us for 480 x 80) cost several
 * times the Mul's pass over as many elements of X (EfficientNet-B0's 14x14 projections took 119
 * us so against 52 plus their Mul's; its convolutions' node minima 5.36 -> 5.26 ms, MobileNetV3-
 * Small's 0.97 -> 0.92, at an eighth instead of a half). Returns the Mul's step, with x and sc;
 * -1 if none. */
int fuse_se_scale(const graph *g, const plan *p, const int *uses, const bool *gone, int s,
                  const type_info *t, int *x, int *sc) {
    const graph_node *conv = step_node(g, &p->steps[s]);
    int v = conv->inputs[0];
    const plan_value *w = &p->vals[conv->inputs[1]];
    int64_t wn, xn;
    if (attr_int(conv, "group", 1) != 1 || w->where != ST_CONST || !type_is_static(&w->type) ||
        !shape_numel(w->type.rank, w->type.dims, &wn) || !shape_numel(t->rank, t->dims, &xn) ||
        wn > xn / 8 || uses[v] != 1 || plan_value_is_output(g, v))
        return -1;
    int m = fuse_producer(g, p, s, v);
    if (m < 0 || gone[m] || p->steps[m].fused) return -1;
    const graph_node *mul = step_node(g, &p->steps[m]);
    if (!fuse_is_op(mul, "Mul") || mul->version < 7 || mul->n_inputs != 2 ||
        !fuse_only_output0(mul))
        return -1;
    for (int k = 0; k < 2; k++) {
        int a = mul->inputs[k], b = mul->inputs[1 - k];
        if (a < 0 || b < 0 || a == b) continue;
        const type_info *bt = &p->vals[b].type;
        if (fuse_same_type(&p->vals[a].type, t) && p->vals[b].where != ST_CONST &&
            fuse_float_value_type(bt) && fuse_channel_factor(bt, t) && bt->dims[0] == 1) {
            *x = a;
            *sc = b;
            return m;
        }
    }
    return -1;
}
