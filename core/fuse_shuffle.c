/* ShuffleNet's channel shuffle, spelled Reshape -> Transpose -> Reshape,
 *   X [N, C, spatial...] -> [N, g, C / g, spatial...] -> perm [0, 2, 1, 3, ...] -> [N, C, ...]
 * into one step of ai.onyx ChannelShuffle (ops/shape/channelshuffle.c), a kernel that also takes
 * the opaque layout (core/fuse_blocked.c): the shuffle between ShuffleNet's channels-last
 * convolutions then reorders nothing, where it cost a reorder out of channels last and one back
 * in, 2 of every 3 of its reorders and a fifth of its run. Only a shuffle from one conv into
 * another, and steps on the CPU only: another device keeps its three. */
#include "core/fuse_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/op_schema.h"
#include "core/plan_prepare.h"

/* Whether t's perm swaps axes 1 and 2 of rank r and keeps the others. */
static bool swaps_1_2(const graph_node *t, int r) {
    const int64_t *perm;
    if (attr_ints(t, "perm", &perm) != (size_t)r) return false;
    for (int i = 0; i < r; i++)
        if (perm[i] != (i == 1 ? 2 : i == 2 ? 1 : i)) return false;
    return true;
}

/* The shuffle's group count where values x (the first Reshape's input), v (the Transpose's
 * input), w (its output) and y (the last Reshape's output) are one (static, one type), else 0. */
static int64_t shuffle_groups(const plan *p, int x, int v, int w, int y) {
    const type_info *tx = &p->vals[x].type, *tv = &p->vals[v].type, *tw = &p->vals[w].type,
                    *ty = &p->vals[y].type;
    if (!fuse_same_type(tx, ty) || !fuse_same_type(tv, tv) || !fuse_same_type(tw, tw) ||
        tx->rank < 3 || tx->rank > 5 || tv->rank != tx->rank + 1 || tw->rank != tv->rank ||
        tv->dtype != tx->dtype || tw->dtype != tx->dtype)
        return 0;
    int64_t g = tv->dims[1], c = tx->dims[1];
    if (g < 1 || c % g != 0 || tv->dims[0] != tx->dims[0] || tv->dims[2] != c / g ||
        tw->dims[0] != tx->dims[0] || tw->dims[1] != c / g || tw->dims[2] != g)
        return 0;
    for (int i = 2; i < tx->rank; i++)
        if (tv->dims[i + 1] != tx->dims[i] || tw->dims[i + 1] != tx->dims[i]) return 0;
    return g;
}

onyx_status fuse_channel_shuffle(fuse_pass *f, int s) {
    plan *p = f->p;
    const graph *g = f->g;
    if (f->gone[s] || p->steps[s].k->device != DEVICE_CPU || p->steps[s].fused) return ONYX_OK;
    const graph_node *t = step_node(g, &p->steps[s]);
    if (!fuse_is_op(t, "Transpose") || t->n_inputs != 1 || !fuse_only_output0(t) ||
        t->inputs[0] < 0)
        return ONYX_OK;
    int v = t->inputs[0], w = t->outputs[0];
    if (f->uses[v] != 1 || f->uses[w] != 1 || plan_value_is_output(g, v) ||
        plan_value_is_output(g, w))
        return ONYX_OK;
    int r1 = fuse_producer(g, p, p->n_steps, v), r2 = f->consumer[w];
    if (r1 < 0 || r2 < 0 || f->gone[r1] || f->gone[r2]) return ONYX_OK;
    plan_step *last = &p->steps[r2];
    const graph_node *n1 = step_node(g, &p->steps[r1]), *n2 = step_node(g, last);
    if (!fuse_is_op(n1, "Reshape") || !fuse_is_op(n2, "Reshape") || !fuse_only_output0(n1) ||
        !fuse_only_output0(n2) || n1->inputs[0] < 0 || n2->inputs[0] != w ||
        p->steps[r1].k->device != DEVICE_CPU || last->k->device != DEVICE_CPU || last->fused)
        return ONYX_OK;
    int x = n1->inputs[0], y = n2->outputs[0];
    /* between convolutions, where the opaque layout can pass through it: elsewhere the three
     * steps cost one copy too (the Transpose, a view that a Split after it reads through) */
    int from = fuse_producer(g, p, p->n_steps, x), to = f->consumer[y];
    /* (a conv whose post-ops it absorbed is marked gone here: it moves to its chain's end) */
    if (from < 0 || to < 0 || f->uses[y] != 1 ||
        !fuse_conv_step(g, &p->steps[from]) || !fuse_conv_step(g, &p->steps[to]) ||
        p->steps[from].k->device != DEVICE_CPU || p->steps[to].k->device != DEVICE_CPU)
        return ONYX_OK;
    int64_t groups = shuffle_groups(p, x, v, w, y);
    if (!groups || !swaps_1_2(t, p->vals[v].type.rank)) return ONYX_OK;
    const op_schema *schema = f->sg->env.ops ? f->sg->env.ops->find("ai.onyx", "ChannelShuffle", 1)
                                             : NULL;
    if (!schema) return ONYX_OK;
    /* the node, its input, output and attribute in one block (freed with the step) */
    graph_node *fn = calloc(1, sizeof *fn + sizeof(graph_attr) + 2 * sizeof(int));
    if (!fn) return onyx_oom("channel shuffle");
    graph_attr *attr = (graph_attr *)(fn + 1);
    *attr = (graph_attr){.name = "group", .type = ATTR_INT, .i = groups};
    *fn = (graph_node){.name = n2->name, .op_type = "ChannelShuffle", .domain = "ai.onyx",
                       .version = 1, .schema = schema, .n_inputs = 1, .n_outputs = 1,
                       .n_attrs = 1, .attrs = attr};
    fn->inputs = (int *)(attr + 1);
    fn->outputs = fn->inputs + 1;
    fn->inputs[0] = x;
    fn->outputs[0] = y;
    const type_info *in_types[1] = {&p->vals[x].type};
    const kernel *k = f->sg->env.find_kernel(fn, 1, in_types, DEVICE_CPU);
    void *state = NULL;
    onyx_status st = k ? plan_prepare_kernel(f->sg, p, k, fn, NULL, NULL, &state) : ONYX_OK;
    if (!k || st != ONYX_OK) {
        free(fn);
        return st;
    }
    if (last->state && last->k->release) last->k->release(last->state);
    last->state = state;
    last->k = k;
    last->params = NULL;
    plan_set_fused(last, fn);
    int taken[2] = {r1, s};
    plan_absorb_steps(p, f->gone, taken, 2);
    f->consumer[x] = r2;
    log_write(&f->sg->env.log, ONYX_LOG_VERBOSE,
              "fusion: a channel shuffle of %lld groups as one step (ChannelShuffle '%s')",
              (long long)groups, fn->name ? fn->name : "");
    return ONYX_OK;
}
