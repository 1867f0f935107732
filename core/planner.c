/* The memory planner, after the fusion passes: where each value of a plan lives, its lifetime,
 * the views (core/exec_view.c) and in-place reuse that let values share bytes, and the offsets in
 * one arena per device, so that two values share bytes only when their lifetimes do not
 * overlap (or one is a view or an in-place successor of the other). */
#include "core/planner.h"

#include <stdlib.h>
#include <string.h>

#include "core/exec_view.h"
#include "core/log.h"

#define ARENA_ALIGN 64

static int by_size_desc(const void *a, const void *b, void *vals_) {
    const plan_value *vals = vals_;
    const int ia = *(const int *)a, ib = *(const int *)b;
    if (vals[ia].size != vals[ib].size) return vals[ia].size > vals[ib].size ? -1 : 1;
    return ia - ib;
}

static bool lifetimes_overlap(const plan_value *a, const plan_value *b) {
    return a->first <= b->last && b->first <= a->last;
}

/* Greedy best-fit by decreasing size (as TFLite's and ORT's planners do): each value takes the
 * lowest offset that does not collide with an already placed value whose lifetime overlaps. */
size_t plan_assign_offsets(plan_value *vals, int n, device_kind device) {
    int *order = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    int *placed = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    size_t total = 0;
    if (!order || !placed) {
        free(order);
        free(placed);
        return SIZE_MAX;
    }
    int count = 0;
    for (int i = 0; i < n; i++)
        if (vals[i].where == ST_ARENA && vals[i].alias_of < 0 && vals[i].device == device)
            order[count++] = i;
    qsort_r(order, (size_t)count, sizeof(int), by_size_desc, vals);

    int n_placed = 0;
    for (int k = 0; k < count; k++) {
        plan_value *v = &vals[order[k]];
        size_t size = (v->size + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
        size_t offset = 0;
        /* Restart the scan whenever the candidate moves: placed values are few per step. */
        for (bool moved = true; moved;) {
            moved = false;
            for (int j = 0; j < n_placed; j++) {
                const plan_value *p = &vals[placed[j]];
                if (!lifetimes_overlap(v, p)) continue;
                size_t psize = (p->size + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
                if (offset < p->offset + psize && p->offset < offset + size) {
                    offset = p->offset + psize;
                    moved = true;
                }
            }
        }
        v->offset = offset;
        if (offset + size > total) total = offset + size;
        placed[n_placed++] = order[k];
    }
    free(order);
    free(placed);
    return total;
}

/* ------------------------------------------------------------------ lifetimes and places */

/* Values that a node reads: its inputs and what its subgraphs capture. */
static void mark_reads(plan_value *vals, const graph_node *n, int step) {
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] >= 0 && vals[n->inputs[i]].last < step) vals[n->inputs[i]].last = step;
    for (int i = 0; i < n->n_captures; i++)
        if (vals[n->captures[i]].last < step) vals[n->captures[i]].last = step;
}

/* Whether an input of node other than input i has the arena bytes of `root`. */
static bool read_elsewhere(const plan *p, const graph_node *node, int i, int root) {
    for (int j = 0; j < node->n_inputs; j++) {
        int src = node->inputs[j];
        if (j != i && src >= 0 && (src == root || p->vals[src].alias_of == root)) return true;
    }
    return false;
}

/* The arena value whose bytes output v of step s may take: the root of an input (addend_only:
 * of input 3, of v's shape, which no other input of the step reads: a conv's X may be its own
 * addend) that nothing reads after this step, of v's size, type, layout and device; -1 if none.
 * The input and its root both have v's size, so a view inside a root (exec_view.c) is never taken. */
static int inplace_root(const plan *p, const graph_node *node, const plan_value *v, int s,
                        bool addend_only) {
    for (int i = addend_only ? 3 : 0; i < node->n_inputs; i++) {
        int src = node->inputs[i];
        if (src < 0) continue;
        const plan_value *in = &p->vals[src];
        if (addend_only && (i != 3 || !shape_equal(in->type.rank, in->type.dims, v->type.rank,
                                                   v->type.dims)))
            break;
        int root = in->alias_of >= 0 ? in->alias_of : src;
        const plan_value *r = &p->vals[root];
        if (in->where == ST_ARENA && r->where == ST_ARENA && in->last == s && r->last == s &&
            in->size == v->size && r->size == v->size && in->type.dtype == v->type.dtype &&
            in->channels_last == v->channels_last && in->device == v->device &&
            r->device == v->device && !(addend_only && read_elsewhere(p, node, i, root)))
            return root;
    }
    return -1;
}

/* The arena value whose bytes the Concat output v of step s may start with: input 0's root,
 * when nothing reads it after this step, no other input is it, and input 0 is v's first bytes
 * (every dim before the axis 1, and every other dim too for a channels-last v; same type, layout
 * and device; the root grows to v's size); -1 if none. */
static int prefix_root(const plan *p, const graph_node *node, const plan_value *v, int s) {
    if (node->n_inputs < 1 || node->inputs[0] < 0) return -1;
    const plan_value *in = &p->vals[node->inputs[0]];
    int root = in->alias_of >= 0 ? in->alias_of : node->inputs[0];
    const plan_value *r = &p->vals[root];
    int rank = v->type.rank;
    int64_t axis = attr_int(node, "axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || in->type.rank != rank || in->where != ST_ARENA ||
        r->where != ST_ARENA || in->alias_at != 0 || in->last != s || r->last != s ||
        in->type.dtype != v->type.dtype ||
        in->channels_last != v->channels_last || in->device != v->device ||
        r->device != v->device || in->size > v->size || read_elsewhere(p, node, 0, root))
        return -1;
    /* channels last, the pixels are the outer rows too: one pixel alone, then */
    for (int k = 0; k < (v->channels_last ? rank : axis); k++)
        if (k != axis && v->type.dims[k] != 1) return -1;
    return root;
}

onyx_status plan_lay_out(subgraph *sg, plan *p) {
    const graph *g = sg->g;
    for (int s = 0; s < p->n_steps; s++) mark_reads(p->vals, step_node(g, &p->steps[s]), s);
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] >= 0) p->vals[g->outputs[i]].last = p->n_steps; /* handed out at end */
    /* a value nobody reads still lives while its producer writes it */
    for (int i = 0; i < p->n_vals; i++)
        if (p->vals[i].first >= 0 && p->vals[i].last < p->vals[i].first)
            p->vals[i].last = p->vals[i].first;

    for (int s = 0; s < p->n_steps; s++) {
        const plan_step *ps = &p->steps[s];
        const graph_node *node = step_node(g, ps);
        for (int o = 0; o < node->n_outputs; o++) {
            int vi = node->outputs[o];
            if (vi < 0) continue;
            plan_value *v = &p->vals[vi];
            bool is_output = plan_value_is_output(g, vi);
            v->where = ST_HEAP;
            if (is_output) continue;
            if ((ps->k->flags & KF_DYNAMIC_OUTPUT) || !type_is_static(&v->type) ||
                v->type.dtype == ONYX_STRING) {
                if (log_enabled(&sg->env.log, ONYX_LOG_VERBOSE)) {
                    char label[256], type[160];
                    log_write(&sg->env.log, ONYX_LOG_VERBOSE,
                              "plan: %s output %d is allocated per run (%s%s)",
                              node_label(node, label, sizeof label), o,
                              type_str(&v->type, type, sizeof type),
                              (ps->k->flags & KF_DYNAMIC_OUTPUT) ? ", sized by its kernel" : "");
                }
                continue;
            }
            size_t size;
            int64_t numel, dims[ONYX_MAX_RANK];
            memcpy(dims, v->type.dims, sizeof(int64_t) * (size_t)v->type.rank);
            if (!shape_numel(v->type.rank, dims, &numel) ||
                !dtype_storage_size(v->type.dtype, numel, &size))
                return onyx_error(ONYX_ERR_NO_MEMORY, "value '%s': size overflows",
                                  g->values[v->source].name);
            v->where = ST_ARENA;
            v->size = size;
            /* reshape-like: share input 0's buffer when it has the same size */
            if (o == 0 && (ps->k->flags & KF_ALIAS_INPUT0) && node->n_inputs > 0 &&
                node->inputs[0] >= 0) {
                int src = node->inputs[0];
                plan_value *in = &p->vals[src];
                size_t in_size = 0;
                int64_t in_numel;
                bool same_size = type_is_static(&in->type) &&
                                 shape_numel(in->type.rank, in->type.dims, &in_numel) &&
                                 dtype_storage_size(in->type.dtype, in_numel, &in_size) &&
                                 in_size == size && in->type.dtype == v->type.dtype &&
                                 in->device == v->device;
                if (same_size && (in->where == ST_ARENA || in->where == ST_INPUT ||
                                  in->where == ST_CONST)) {
                    bool chained = in->where == ST_ARENA && in->alias_of >= 0;
                    int root = chained ? in->alias_of : src;
                    v->alias_of = root;
                    v->alias_at = chained ? in->alias_at : 0;
                    if (p->vals[root].where == ST_ARENA && p->vals[root].last < v->last)
                        p->vals[root].last = v->last;
                }
            }
            size_t at;
            if ((ps->k->flags & KF_VIEW) && v->alias_of < 0 &&
                plan_view_offset(p, node, ps->params, o, &at)) {
                const plan_value *in = &p->vals[node->inputs[0]];
                int root = in->alias_of >= 0 ? in->alias_of : node->inputs[0];
                if (in->where == ST_ARENA && p->vals[root].where == ST_ARENA) {
                    v->alias_of = root;
                    v->alias_at = in->alias_at + at;
                    if (p->vals[root].last < v->last) p->vals[root].last = v->last;
                }
            }
            if (o == 0 && (ps->k->flags & KF_INPLACE_PREFIX) && v->alias_of < 0) {
                int root = prefix_root(p, node, v, s);
                if (root >= 0) {
                    v->alias_of = root;
                    if (p->vals[root].size < v->size) p->vals[root].size = v->size;
                    if (p->vals[root].last < v->last) p->vals[root].last = v->last;
                }
            }
            if (o == 0 && (ps->k->flags & (KF_INPLACE | KF_INPLACE_ADDEND)) && v->alias_of < 0) {
                int root = inplace_root(p, node, v, s, !(ps->k->flags & KF_INPLACE));
                if (root >= 0) {
                    v->alias_of = root;
                    if (p->vals[root].last < v->last) p->vals[root].last = v->last;
                }
            }
        }
    }
    /* aliases of arena values extend their root's lifetime: settle roots after all marks */
    for (int i = 0; i < p->n_vals; i++) {
        plan_value *v = &p->vals[i];
        if (v->where == ST_ARENA && v->alias_of >= 0 && p->vals[v->alias_of].where == ST_ARENA &&
            p->vals[v->alias_of].last < v->last)
            p->vals[v->alias_of].last = v->last;
    }
    /* one arena per device; each run context allocates its own (core/exec_run.c) */
    size_t total = 0;
    for (int d = 0; d < DEVICE_KINDS; d++) {
        size_t size = plan_assign_offsets(p->vals, p->n_vals, (device_kind)d);
        if (size == SIZE_MAX) return onyx_oom("memory plan");
        p->arena_size[d] = size;
        total += size;
    }
    if (sg->env.memory_limit && total > sg->env.memory_limit)
        return onyx_error(ONYX_ERR_NO_MEMORY,
                          "the plan needs %zu bytes of working memory per run, over the session's "
                          "limit of %zu", total, sg->env.memory_limit);

    /* Outputs planned with a fixed shape from inputs whose shape was not known (downstream of a
     * data-dependent op) are checked against the real inputs on every run. */
    for (int s = 0; s < p->n_steps; s++) {
        plan_step *ps = &p->steps[s];
        const graph_node *node = step_node(g, ps);
        if (ps->k->flags & KF_DYNAMIC_OUTPUT) continue;
        bool unknown_input = false, static_output = false;
        for (int i = 0; i < node->n_inputs; i++) {
            int vi = node->inputs[i];
            if (vi < 0) continue;
            const type_info *t = &p->vals[vi].type;
            unknown_input |= (t->kind == ONYX_VALUE_TENSOR || t->kind == ONYX_VALUE_NONE) &&
                             !type_is_static(t);
        }
        for (int o = 0; o < node->n_outputs; o++)
            static_output |= node->outputs[o] >= 0 && type_is_static(&p->vals[node->outputs[o]].type);
        ps->recheck = unknown_input && static_output;
    }

    /* heap values are released after their last reader; those in a device's memory when the
     * run ends, after its queue has finished: a kernel reading one may not have run yet when
     * its step returns, and a block freed then could go to another run's queue */
    for (int s = 0; s < p->n_steps; s++) {
        plan_step *ps = &p->steps[s];
        const graph_node *node = step_node(g, ps);
        int cap = node->n_inputs + node->n_captures + node->n_outputs;
        ps->release = calloc((size_t)cap + 1, sizeof(int));
        if (!ps->release) return onyx_oom("plan");
        int *cand = ps->release;
        int nc = 0;
        for (int i = 0; i < node->n_inputs; i++) cand[nc++] = node->inputs[i];
        for (int i = 0; i < node->n_captures; i++) cand[nc++] = node->captures[i];
        for (int o = 0; o < node->n_outputs; o++) cand[nc++] = node->outputs[o];
        int kept = 0;
        for (int c = 0; c < nc; c++) {
            int vi = cand[c];
            if (vi < 0 || p->vals[vi].where != ST_HEAP || p->vals[vi].device != DEVICE_CPU)
                continue;
            if (p->vals[vi].last != s) continue;
            bool dup = false;
            for (int k = 0; k < kept; k++) dup |= ps->release[k] == vi;
            if (!dup) ps->release[kept++] = vi;
        }
        ps->n_release = kept;
    }
    return ONYX_OK;
}
