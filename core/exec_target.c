/* Graph outputs written into memory the caller gives (onyx_rep_run_into). An output goes straight
 * into its target when nothing the run reads can be in that memory: a kernel writing its output
 * over an input it is still reading would compute garbage. The one exception is an alias the
 * kernel declares safe: GroupQueryAttention's present key/value over its past key/value, one
 * buffer of the cache's capacity appended in place (KF_CACHE_IN_PLACE), as onnxruntime-genai
 * binds them. Everything else is computed in onyx's memory and copied into its target after the
 * run, when nothing reads the inputs any more. */
#include "core/exec_target.h"

#include <stdint.h>

/* Whether two tensors' bytes overlap (in one device's memory). */
static bool overlap(const tensor *a, const tensor *b) {
    if (a->device != b->device || !a->data || !b->data || !a->nbytes || !b->nbytes)
        return false;
    uintptr_t a0 = (uintptr_t)a->data, b0 = (uintptr_t)b->data;
    return a0 < b0 + b->nbytes && b0 < a0 + a->nbytes;
}

static const tensor *tensor_of(const onyx_value *v) {
    return v && v->kind == ONYX_VALUE_TENSOR ? &v->t : NULL;
}

static const char *output_name(const graph *g, int i) {
    return g->outputs[i] >= 0 ? g->values[g->outputs[i]].name : "";
}

/* The step that makes graph output vi, in the memory of target t's device, into a buffer the
 * executor hands it (so into t as well), or -1: an input or constant passed through, an output
 * listed twice, one its kernel sizes itself or one made on another device. */
static int made_into(const graph *g, const plan *p, int vi, const tensor *t) {
    const plan_value *v = &p->vals[vi];
    int listed = 0;
    for (int i = 0; i < g->n_outputs; i++) listed += g->outputs[i] == vi;
    if (listed != 1 || v->where != ST_HEAP || v->first < 0 || v->device != t->device ||
        v->type.kind != ONYX_VALUE_TENSOR)
        return -1;
    const kernel *k = p->steps[v->first].k;
    if (k->device != t->device || (k->flags & KF_DYNAMIC_OUTPUT)) return -1;
    return v->first;
}

/* The graph input whose memory target t may be, as step s's kernel declares for output vi
 * (KF_CACHE_IN_PLACE: outputs 1 and 2 over inputs 3 and 4): exactly that input's bytes, the input
 * read by no other input slot of the step and by no later step; -1 when there is none. */
static int declared_alias(const graph *g, const plan *p, int s, int vi, const tensor *t,
                          const onyx_value *const *inputs) {
    const plan_step *ps = &p->steps[s];
    if (!(ps->k->flags & KF_CACHE_IN_PLACE)) return -1;
    const graph_node *node = step_node(g, ps);
    int slot = -1;
    for (int o = 1; o <= 2 && o < node->n_outputs; o++)
        if (node->outputs[o] == vi) slot = o + 2;
    if (slot < 0 || slot >= node->n_inputs || node->inputs[slot] < 0) return -1;
    int src = node->inputs[slot];
    for (int j = 0; j < node->n_inputs; j++)
        if (j != slot && node->inputs[j] == src) return -1;
    if (p->vals[src].last != s) return -1;
    for (int i = 0; i < g->n_inputs; i++) {
        if (g->inputs[i] != src) continue;
        const tensor *in = tensor_of(inputs[i]);
        bool same = in && in->device == t->device && in->data == t->data &&
                    in->nbytes == t->nbytes && in->dtype == t->dtype;
        return same ? i : -1;
    }
    return -1;
}

onyx_status target_mark(const subgraph *sg, const plan *p, run_ctx *ctx,
                        const onyx_value *const *inputs, onyx_value *const *targets) {
    const graph *g = sg->g;
    for (int i = 0; i < g->n_outputs; i++) /* all checked before anything is marked */
        for (int j = 0; j < i; j++) {
            const tensor *t = tensor_of(targets[i]), *u = tensor_of(targets[j]);
            if (t && u && overlap(t, u))
                return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                                  "outputs '%s' and '%s' are given overlapping targets",
                                  output_name(g, j), output_name(g, i));
        }
    for (int i = 0; i < g->n_outputs; i++) {
        const tensor *t = tensor_of(targets[i]);
        if (!t) continue;
        int vi = g->outputs[i];
        int s = vi >= 0 ? made_into(g, p, vi, t) : -1;
        if (s < 0) continue;
        int alias = declared_alias(g, p, s, vi, t, inputs);
        bool clear = true;
        for (int k = 0; k < g->n_inputs && clear; k++) {
            const tensor *in = tensor_of(inputs[k]);
            clear = k == alias || !in || !overlap(t, in);
        }
        ctx->targeted[vi] = clear;
    }
    return ONYX_OK;
}

onyx_status target_check(const char *name, const type_info *want, const tensor *t) {
    if (want->kind == ONYX_VALUE_TENSOR && want->dtype == t->dtype &&
        shape_equal(want->rank, want->dims, t->rank, t->dims))
        return ONYX_OK;
    char got[160], is[160];
    type_info tt;
    type_init(&tt);
    type_set_tensor(&tt, t->dtype, t->rank, t->dims);
    return onyx_error(ONYX_ERR_SHAPE, "output '%s' is %s; its target is %s", name,
                      type_str(want, got, sizeof got), type_str(&tt, is, sizeof is));
}

onyx_status target_take(const graph *g, const run_ctx *ctx, int vi, const onyx_value *made,
                        onyx_value *t) {
    if (ctx->targeted[vi]) return ONYX_OK;
    if (!made || made->kind != ONYX_VALUE_TENSOR)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "output '%s' is not a tensor: it takes no "
                                                     "target", g->values[vi].name);
    type_info want;
    type_init(&want);
    TRY(type_of_value(&want, made));
    onyx_status st = target_check(g->values[vi].name, &want, &t->t);
    type_release(&want);
    TRY(st);
    return tensor_copy_data(&t->t, &made->t);
}
