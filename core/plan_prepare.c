/* Preparing a kernel for a node of a plan: what its prepare (or supports check) sees of the node
 * (the plan's current types and constants, the fusion chain), evicted weights restored first,
 * and after it the weights it reads as stored noted and those it packed evicted
 * (core/shared.h). Used by placement, the fusion passes and constant folding. */
#include "core/plan_prepare.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/shared.h"

/* What a kernel's prepare (or supports check) sees of `node` in plan p. */
typedef struct prep_view {
    const type_info **in_types;
    const tensor **in_values;
    type_info *outs;
    bool *packed, *raw;
    kernel_prep prep;
} prep_view;

static void prep_view_free(prep_view *v) {
    free(v->in_types);
    free(v->in_values);
    free(v->outs);
    free(v->packed);
    free(v->raw);
}

static onyx_status prep_view_make(prep_view *v, const subgraph *sg, const plan *p,
                                  const graph_node *node, const op_params *params,
                                  const struct fuse_chain *chain) {
    memset(v, 0, sizeof *v);
    v->in_types = calloc((size_t)node->n_inputs + 1, sizeof *v->in_types);
    v->in_values = calloc((size_t)node->n_inputs + 1, sizeof *v->in_values);
    v->outs = calloc((size_t)node->n_outputs + 1, sizeof *v->outs);
    v->packed = calloc((size_t)node->n_inputs + 1, sizeof *v->packed);
    v->raw = calloc((size_t)node->n_inputs + 1, sizeof *v->raw);
    if (!v->in_types || !v->in_values || !v->outs || !v->packed || !v->raw) {
        prep_view_free(v);
        return onyx_oom("kernel prepare");
    }
    for (int i = 0; i < node->n_inputs; i++) {
        int vi = node->inputs[i];
        v->in_types[i] = vi >= 0 ? &p->vals[vi].type : NULL;
        v->in_values[i] = vi >= 0 ? p->vals[vi].constant : NULL;
    }
    for (int o = 0; o < node->n_outputs; o++)
        if (node->outputs[o] >= 0) v->outs[o] = p->vals[node->outputs[o]].type; /* shallow view */
    v->prep = (kernel_prep){
        .node = node,
        .n_in = node->n_inputs,
        .n_out = node->n_outputs,
        .in_type = v->in_types,
        .in_value = v->in_values,
        .out_type = v->outs,
        .env = &sg->env,
        .fused = chain,
        .packed = v->packed,
        .raw = v->raw,
        .params = params,
    };
    return ONYX_OK;
}

/* Evicted weights among k's constant inputs restored (and kept from then on) unless k reads
 * them through its packed objects (KF_PACKED_WEIGHTS). A weight is evicted only once every node
 * reading it read it packed (evict_packed), and a node gets the same kernel in every plan of a
 * CPU session: a weight such a kernel reads is never evicted after, so nothing is pinned before
 * it is. */
static onyx_status restore_inputs(const subgraph *sg, const kernel *k, const prep_view *v) {
    if (!sg->readers || (k->flags & KF_PACKED_WEIGHTS)) return ONYX_OK;
    for (int i = 0; i < v->prep.n_in; i++)
        if (v->in_values[i] && shared_cache_evicted(sg->env.shared, v->in_values[i]))
            TRY(shared_cache_restore(sg->env.shared, v->in_values[i], true));
    return ONYX_OK;
}

/* The weights k reads as stored, added to the plan's list (pinned when it runs). */
static onyx_status note_raw(plan *p, const prep_view *v) {
    for (int i = 0; i < v->prep.n_in; i++) {
        if (!v->raw[i] || !v->in_values[i]) continue;
        bool known = false;
        for (int j = 0; j < p->n_raw && !known; j++) known = p->raw_weights[j] == v->in_values[i];
        if (known) continue;
        const tensor **grown = realloc(p->raw_weights, sizeof *grown * (size_t)(p->n_raw + 1));
        if (!grown) return onyx_oom("plan");
        p->raw_weights = grown;
        p->raw_weights[p->n_raw++] = v->in_values[i];
    }
    return ONYX_OK;
}

/* Whether every node input reading value vi has now been prepared reading it only through
 * packed objects, input i of node counted (once) among them: the graph's node itself (not a
 * fused copy) when others read vi too. */
static bool all_reads_packed(const subgraph *sg, const graph_node *node, int i, int vi) {
    if (sg->readers[vi] == 1) return true;
    const graph *g = sg->g;
    uintptr_t at = (uintptr_t)node, first = (uintptr_t)g->nodes;
    if (at < first || at >= (uintptr_t)(g->nodes + g->n_nodes)) return false;
    int n = (int)((at - first) / sizeof *node);
    if (!atomic_exchange(&sg->packed_input[sg->input_at[n] + i], true))
        atomic_fetch_add(&sg->packed_reads[vi], 1);
    return atomic_load(&sg->packed_reads[vi]) == sg->readers[vi];
}

/* After k prepared: the weights it read only through packed objects, which nothing else reads
 * but through packed objects too (a node gets the same kernel in every plan, so such a reader
 * stays one; not an output; on the CPU), are evicted (core/shared.h). Plan constants from
 * weights are the model's (its pool) or the subgraph's (folded): the rep owns both. */
static void evict_packed(const subgraph *sg, const plan *p, const graph_node *node,
                         const prep_view *v) {
    if (!sg->readers) return;
    const graph *g = sg->g;
    for (int i = 0; i < node->n_inputs; i++) {
        int vi = node->inputs[i];
        if (!v->packed[i] || vi < 0 || vi >= g->n_values || (g->values[vi].flags & GV_OUTPUT))
            continue;
        const plan_value *pv = &p->vals[vi];
        if (pv->where == ST_CONST && pv->from_weights && pv->device == DEVICE_CPU &&
            pv->constant && pv->constant == v->in_values[i] && all_reads_packed(sg, node, i, vi))
            shared_cache_evict(sg->env.shared, pv->constant);
    }
}

onyx_status plan_prepare_kernel(const subgraph *sg, plan *p, const kernel *k,
                                const graph_node *node, const op_params *params,
                                const struct fuse_chain *chain, void **state) {
    *state = NULL;
    prep_view v;
    TRY(prep_view_make(&v, sg, p, node, params, chain));
    onyx_status st = restore_inputs(sg, k, &v);
    if (st == ONYX_OK && k->prepare) st = k->prepare(&v.prep, state);
    if (st == ONYX_OK) st = note_raw(p, &v);
    if (st == ONYX_OK) evict_packed(sg, p, node, &v);
    prep_view_free(&v);
    return st;
}

bool plan_kernel_takes_chain(const subgraph *sg, const plan *p, const kernel *k,
                             const graph_node *node, const op_params *params,
                             const struct fuse_chain *chain) {
    prep_view v;
    if (prep_view_make(&v, sg, p, node, params, chain) != ONYX_OK) return false;
    if (restore_inputs(sg, k, &v) != ONYX_OK) {
        prep_view_free(&v);
        return false;
    }
    bool ok = k->takes_chain(&v.prep);
    prep_view_free(&v);
    return ok;
}

bool plan_kernel_supports(const subgraph *sg, const plan *p, const kernel *k,
                          const graph_node *node, const op_params *params) {
    prep_view v;
    if (prep_view_make(&v, sg, p, node, params, NULL) != ONYX_OK) return false;
    if (restore_inputs(sg, k, &v) != ONYX_OK) {
        prep_view_free(&v);
        return false;
    }
    bool ok = k->supports(&v.prep);
    prep_view_free(&v);
    return ok;
}
