/* Specializing a graph for one signature of input shapes (inference, constant folding, kernel
 * choice, memory plan) and running the resulting plan. */
#include "core/exec_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/op_schema.h"
#include "core/fuse.h"
#include "core/parallel.h"

#define MAX_PLANS 16

const graph *subgraph_graph(const subgraph *sg) { return sg->g; }

onyx_status subgraph_create(const graph *g, const exec_env *env, subgraph **out) {
    subgraph *sg = calloc(1, sizeof *sg);
    if (!sg) return onyx_oom("subgraph");
    sg->g = g;
    sg->env = *env;
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i].flags & GV_CAPTURED) sg->n_captured++;
    sg->captured = calloc((size_t)sg->n_captured + 1, sizeof(int));
    if (!sg->captured) {
        free(sg);
        return onyx_oom("subgraph");
    }
    for (int i = 0, k = 0; i < g->n_values; i++)
        if (g->values[i].flags & GV_CAPTURED) sg->captured[k++] = i;
    *out = sg;
    return ONYX_OK;
}

static void plan_free(plan *p, const graph *g) {
    if (!p) return;
    for (int s = 0; s < p->n_steps; s++) {
        plan_step *ps = &p->steps[s];
        if (ps->state && ps->k->release) ps->k->release(ps->state);
        free(ps->release);
        free(ps->fused_node);
    }
    free(p->steps);
    if (p->vals) {
        for (int i = 0; i < g->n_values; i++) {
            plan_value *v = &p->vals[i];
            if (v->owns_constant && v->constant) {
                tensor_release(v->constant);
                free(v->constant);
            }
            type_release(&v->type);
        }
    }
    if (p->slots)
        for (int i = 0; i < g->n_values; i++) value_clear(&p->slots[i]);
    free(p->vals);
    free(p->slots);
    free(p->frame);
    if (p->sig)
        for (int i = 0; i < p->n_sig; i++) type_release(&p->sig[i]);
    free(p->sig);
    free(p->arena);
    free(p);
}

void subgraph_free(subgraph *sg) {
    if (!sg) return;
    while (sg->plans) {
        plan *next = sg->plans->next;
        plan_free(sg->plans, sg->g);
        sg->plans = next;
    }
    free(sg->captured);
    free(sg);
}

/* ------------------------------------------------------------------ signatures */

static bool types_equal(const type_info *a, const type_info *b) {
    if (a->kind != b->kind || a->dtype != b->dtype) return false;
    if (a->kind == ONYX_VALUE_TENSOR &&
        (a->rank != b->rank ||
         (a->rank > 0 && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) != 0)))
        return false;
    if ((a->elem == NULL) != (b->elem == NULL)) return false;
    return a->elem == NULL || types_equal(a->elem, b->elem);
}

/* A sequence's items may change shape between runs without changing the plan: the signature of
 * a non-tensor value keeps its kinds and dtypes only. */
static void strip_shapes(type_info *t) {
    for (; t; t = t->elem) t->rank = -1;
}

static onyx_status signature_of(type_info *out, const onyx_value *v) {
    if (!v) {
        type_init(out);
        return ONYX_OK;
    }
    TRY(type_of_value(out, v));
    if (out->kind != ONYX_VALUE_TENSOR) strip_shapes(out->elem);
    return ONYX_OK;
}

static plan *find_plan(subgraph *sg, const type_info *sig, int n_sig) {
    plan *prev = NULL;
    for (plan *p = sg->plans; p; prev = p, p = p->next) {
        if (p->n_sig != n_sig) continue;
        bool same = true;
        for (int i = 0; i < n_sig && same; i++) same = types_equal(&p->sig[i], &sig[i]);
        if (!same) continue;
        if (prev) { /* move to front */
            prev->next = p->next;
            p->next = sg->plans;
            sg->plans = p;
        }
        return p;
    }
    return NULL;
}

static void cache_plan(subgraph *sg, plan *p) {
    p->next = sg->plans;
    sg->plans = p;
    if (++sg->n_plans <= MAX_PLANS) return;
    /* drop the least recently used */
    plan *q = sg->plans;
    while (q->next && q->next->next) q = q->next;
    plan_free(q->next, sg->g);
    q->next = NULL;
    sg->n_plans--;
}

/* ------------------------------------------------------------------ running one node */

static bool has_subgraphs(const graph_node *n) {
    for (int a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == ATTR_GRAPH || n->attrs[a].type == ATTR_GRAPHS) return true;
    return false;
}

/* Runs inference for `node` with the given inputs; out must hold n_outputs types. */
static onyx_status infer_node(const graph_node *node, const type_info *const *in_types,
                              const tensor *const *in_values, type_info *out) {
    for (int o = 0; o < node->n_outputs; o++) type_init(&out[o]);
    if (!node->schema->infer) return ONYX_OK;
    infer_ctx ctx = {
        .node = node,
        .n_in = node->n_inputs,
        .n_out = node->n_outputs,
        .in = in_types,
        .in_value = in_values,
        .out = out,
    };
    return node->schema->infer(&ctx);
}

/* Infers the node's outputs again from the values it actually gets: everything is known now. */
static onyx_status infer_actual(const graph_node *node, onyx_value *const *in, type_info *rt) {
    const type_info *itypes[ONYX_VARIADIC] = {0};
    type_info store[ONYX_VARIADIC];
    const tensor *ivals[ONYX_VARIADIC] = {0};
    onyx_status st = ONYX_OK;
    int n = 0;
    for (; n < node->n_inputs && st == ONYX_OK; n++) {
        type_init(&store[n]);
        itypes[n] = NULL;
        ivals[n] = NULL;
        if (!in[n]) continue;
        st = type_of_value(&store[n], in[n]);
        itypes[n] = &store[n];
        if (in[n]->kind == ONYX_VALUE_TENSOR) ivals[n] = &in[n]->t;
    }
    if (st == ONYX_OK) st = infer_node(node, itypes, ivals, rt);
    for (int i = 0; i < n; i++) type_release(&store[i]);
    return st;
}

/* Gives every output of the step a buffer before its kernel runs: arena outputs are ready (or
 * alias their input); heap outputs with a known shape are allocated; the rest are inferred from
 * the actual inputs now, or left empty for kernels that size their own outputs. A step whose
 * static outputs were planned from inputs of unknown shape first checks that the real inputs
 * give those shapes. */
static onyx_status bind_outputs(const plan *p, const plan_step *ps, const graph_node *node,
                                onyx_value *const *in, onyx_value *const *out) {
    type_info *rt = NULL;
    onyx_status st = ONYX_OK;
    if (ps->recheck) {
        if (!(rt = calloc((size_t)node->n_outputs, sizeof *rt))) return onyx_oom("output types");
        CHECK(infer_actual(node, in, rt));
    }
    for (int o = 0; o < node->n_outputs; o++) {
        int vi = node->outputs[o];
        if (vi < 0) continue;
        const plan_value *v = &p->vals[vi];
        if (rt && type_is_static(&rt[o]) && type_is_static(&v->type) &&
            (rt[o].dtype != v->type.dtype ||
             !shape_equal(rt[o].rank, rt[o].dims, v->type.rank, v->type.dims))) {
            char got[160], want[160];
            st = onyx_error(ONYX_ERR_SHAPE, "output %d: the inputs give %s, expected %s", o,
                            type_str(&rt[o], got, sizeof got), type_str(&v->type, want, sizeof want));
            goto done;
        }
        if (v->where == ST_ARENA) {
            if (v->alias_of >= 0 && in[0]) out[o]->t.data = in[0]->t.data;
            continue;
        }
        /* sequences and optionals are built by the kernel, like data-dependent shapes */
        if ((ps->k->flags & KF_DYNAMIC_OUTPUT) ||
            (v->type.kind != ONYX_VALUE_TENSOR && v->type.kind != ONYX_VALUE_NONE)) {
            value_clear(out[o]);
            continue;
        }
        if (type_is_static(&v->type)) {
            CHECK(value_alloc_tensor(out[o], v->type.dtype, v->type.rank, v->type.dims));
            continue;
        }
        if (!rt) {
            if (!(rt = calloc((size_t)node->n_outputs, sizeof *rt))) {
                st = onyx_oom("output types");
                goto done;
            }
            CHECK(infer_actual(node, in, rt));
        }
        if (rt[o].kind != ONYX_VALUE_TENSOR && rt[o].kind != ONYX_VALUE_NONE) {
            value_clear(out[o]);
            continue;
        }
        if (!type_is_static(&rt[o])) {
            char buf[128];
            st = onyx_error(ONYX_ERR_UNSUPPORTED, "output %d: shape not known after inference (%s)",
                            o, type_str(&rt[o], buf, sizeof buf));
            goto done;
        }
        CHECK(value_alloc_tensor(out[o], rt[o].dtype, rt[o].rank, rt[o].dims));
    }
done:
    if (rt) {
        for (int o = 0; o < node->n_outputs; o++) type_release(&rt[o]);
        free(rt);
    }
    return st;
}

static onyx_status run_step(const plan *p, const plan_step *ps, const graph *g,
                            struct exec_frame *frame) {
    const graph_node *node = step_node(g, ps);
    onyx_value *in[ONYX_VARIADIC] = {0}, *out[ONYX_VARIADIC] = {0};
    for (int i = 0; i < node->n_inputs; i++)
        in[i] = node->inputs[i] >= 0 ? frame->vals[node->inputs[i]] : NULL;
    for (int o = 0; o < node->n_outputs; o++)
        out[o] = node->outputs[o] >= 0 ? frame->vals[node->outputs[o]] : NULL;
    onyx_status st = bind_outputs(p, ps, node, in, out);
    if (st == ONYX_OK) {
        kernel_call call = {
            .node = node,
            .state = ps->state,
            .n_in = node->n_inputs,
            .n_out = node->n_outputs,
            .in = in,
            .out = out,
            .frame = frame,
            .threads = parallel_threads(),
        };
        st = ps->k->run(&call);
    }
    if (st != ONYX_OK) {
        char label[256];
        return onyx_error_prefix(st, "%s", node_label(node, label, sizeof label));
    }
    return ONYX_OK;
}

/* ------------------------------------------------------------------ specialization */

/* Values that a node reads: its inputs and what its subgraphs capture. */
static void mark_reads(plan_value *vals, const graph_node *n, int step) {
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] >= 0 && vals[n->inputs[i]].last < step) vals[n->inputs[i]].last = step;
    for (int i = 0; i < n->n_captures; i++)
        if (vals[n->captures[i]].last < step) vals[n->captures[i]].last = step;
}

/* Evaluates a node whose inputs are all constants, now, and keeps its outputs as constants. */
static onyx_status fold_node(plan *p, const graph *g, plan_step *ps) {
    const graph_node *node = step_node(g, ps);
    onyx_value *vals[ONYX_VARIADIC * 2] = {0};
    onyx_value *tmp_slots = calloc((size_t)node->n_inputs + (size_t)node->n_outputs + 1,
                                   sizeof(onyx_value));
    onyx_value **frame_vals = calloc((size_t)g->n_values, sizeof(onyx_value *));
    onyx_status st = ONYX_OK;
    if (!tmp_slots || !frame_vals) {
        st = onyx_oom("constant folding");
        goto done;
    }
    for (int i = 0; i < node->n_inputs; i++) {
        int vi = node->inputs[i];
        if (vi < 0) continue;
        value_borrow_tensor(&tmp_slots[i], p->vals[vi].constant);
        frame_vals[vi] = &tmp_slots[i];
    }
    for (int o = 0; o < node->n_outputs; o++) {
        int vi = node->outputs[o];
        if (vi < 0) continue;
        vals[o] = &tmp_slots[node->n_inputs + o];
        frame_vals[vi] = vals[o];
    }
    /* The outputs of a folded node are heap values for this one run. */
    plan_value *saved = calloc((size_t)node->n_outputs + 1, sizeof *saved);
    if (!saved) {
        st = onyx_oom("constant folding");
        goto done;
    }
    for (int o = 0; o < node->n_outputs; o++)
        if (node->outputs[o] >= 0) {
            saved[o] = p->vals[node->outputs[o]];
            p->vals[node->outputs[o]].where = ST_HEAP;
            p->vals[node->outputs[o]].alias_of = -1;
        }
    struct exec_frame frame = {.g = g, .vals = frame_vals, .parent = NULL};
    st = run_step(p, ps, g, &frame);
    for (int o = 0; o < node->n_outputs; o++)
        if (node->outputs[o] >= 0) {
            plan_value *v = &p->vals[node->outputs[o]];
            v->where = saved[o].where;
            v->alias_of = saved[o].alias_of;
        }
    free(saved);
    if (st != ONYX_OK) goto done;
    for (int o = 0; o < node->n_outputs; o++) {
        int vi = node->outputs[o];
        if (vi < 0) continue;
        if (vals[o]->kind != ONYX_VALUE_TENSOR) {
            st = onyx_error(ONYX_ERR_RUNTIME, "folded output %d is not a tensor", o);
            goto done;
        }
        tensor *t = malloc(sizeof *t);
        if (!t) {
            st = onyx_oom("folded constant");
            goto done;
        }
        if (vals[o]->t.owns) {
            *t = vals[o]->t; /* take the buffer */
            vals[o]->t.owns = false;
            vals[o]->t.data = NULL;
        } else if ((st = tensor_copy(t, &vals[o]->t)) != ONYX_OK) {
            free(t);
            goto done;
        }
        plan_value *v = &p->vals[vi];
        v->constant = t;
        v->owns_constant = true;
        v->where = ST_CONST;
        type_release(&v->type);
        type_set_tensor(&v->type, t->dtype, t->rank, t->dims);
    }
done:
    if (tmp_slots)
        for (int i = 0; i < node->n_inputs + node->n_outputs; i++) value_clear(&tmp_slots[i]);
    free(tmp_slots);
    free(frame_vals);
    return st;
}

static bool foldable(const plan *p, const graph_node *node, const kernel *k) {
    if ((node->schema->flags & OP_NONDETERMINISTIC) || has_subgraphs(node)) return false;
    if (k->flags & KF_DYNAMIC_OUTPUT) return false;
    for (int i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0 && p->vals[node->inputs[i]].where != ST_CONST) return false;
    for (int o = 0; o < node->n_outputs; o++)
        if (node->outputs[o] >= 0 && p->vals[node->outputs[o]].type.kind != ONYX_VALUE_TENSOR)
            return false;
    return true;
}

/* Runs kernel k's prepare for `node` (a step's node, or a conv's copy made by the fusion pass,
 * with its `chain` of post-ops) on the plan's current types and constants. */
onyx_status plan_prepare_kernel(const subgraph *sg, const plan *p, const kernel *k,
                                const graph_node *node, const struct fuse_chain *chain,
                                void **state) {
    *state = NULL;
    if (!k->prepare) return ONYX_OK;
    const type_info *in_types[ONYX_VARIADIC] = {0};
    const tensor *in_values[ONYX_VARIADIC] = {0};
    type_info *outs = calloc((size_t)node->n_outputs + 1, sizeof *outs);
    if (!outs) return onyx_oom("kernel prepare");
    for (int i = 0; i < node->n_inputs && i < ONYX_VARIADIC; i++) {
        int vi = node->inputs[i];
        in_types[i] = vi >= 0 ? &p->vals[vi].type : NULL;
        in_values[i] = vi >= 0 ? p->vals[vi].constant : NULL;
    }
    for (int o = 0; o < node->n_outputs; o++)
        if (node->outputs[o] >= 0) outs[o] = p->vals[node->outputs[o]].type; /* shallow view */
    kernel_prep prep = {
        .node = node,
        .n_in = node->n_inputs,
        .n_out = node->n_outputs,
        .in_type = in_types,
        .in_value = in_values,
        .out_type = outs,
        .env = &sg->env,
        .fused = chain,
    };
    onyx_status st = k->prepare(&prep, state);
    free(outs);
    return st;
}

/* Fills in the declared kind/dtype where inference could not say. */
static onyx_status merge_declared(type_info *t, const type_info *declared) {
    if (t->kind != ONYX_VALUE_NONE || declared->kind == ONYX_VALUE_NONE) return ONYX_OK;
    type_release(t);
    TRY(type_copy(t, declared));
    /* declared dims may be symbolic: keep rank and known dims only as a hint for tensors */
    return ONYX_OK;
}

static onyx_status specialize_node(subgraph *sg, plan *p, int n, int step_index) {
    const graph *g = sg->g;
    const graph_node *node = &g->nodes[n];
    char label[256];
    plan_step *ps = &p->steps[step_index];
    ps->node = n;
    if (!node->schema) {
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: no schema for op %s%s%s",
                          node_label(node, label, sizeof label), node->domain,
                          *node->domain ? "." : "", node->op_type);
    }
    if (node->n_inputs > ONYX_VARIADIC || node->n_outputs > ONYX_VARIADIC)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: more than %d inputs or outputs",
                          node_label(node, label, sizeof label), ONYX_VARIADIC);

    const type_info *in_types[ONYX_VARIADIC];
    const tensor *in_values[ONYX_VARIADIC];
    bool inputs_known = true;
    for (int i = 0; i < node->n_inputs; i++) {
        int vi = node->inputs[i];
        in_types[i] = vi >= 0 ? &p->vals[vi].type : NULL;
        in_values[i] = vi >= 0 ? p->vals[vi].constant : NULL;
        if (vi >= 0 && p->vals[vi].type.kind == ONYX_VALUE_NONE) inputs_known = false;
    }
    /* With an input of unknown type (a control-flow output nobody declared) inference waits for
     * the run, when the real inputs are there. */
    type_info out_types[ONYX_VARIADIC];
    onyx_status st = ONYX_OK;
    if (inputs_known) {
        st = infer_node(node, in_types, in_values, out_types);
    } else {
        for (int o = 0; o < node->n_outputs; o++) type_init(&out_types[o]);
    }
    if (st != ONYX_OK) {
        for (int o = 0; o < node->n_outputs; o++) type_release(&out_types[o]);
        return onyx_error_prefix(st, "%s", node_label(node, label, sizeof label));
    }
    for (int o = 0; o < node->n_outputs; o++) {
        int vi = node->outputs[o];
        if (vi < 0) {
            type_release(&out_types[o]);
            continue;
        }
        plan_value *v = &p->vals[vi];
        type_release(&v->type);
        v->type = out_types[o];
        if (st == ONYX_OK) st = merge_declared(&v->type, &g->values[vi].type);
        v->first = step_index;
    }
    if (st != ONYX_OK) return st;

    ps->k = sg->env.select(node, node->n_inputs, in_types, sg->env.device);
    if (!ps->k) return onyx_error_prefix(ONYX_ERR_UNSUPPORTED, "%s", node_label(node, label, sizeof label));

    st = plan_prepare_kernel(sg, p, ps->k, node, NULL, &ps->state);
    if (st != ONYX_OK) return onyx_error_prefix(st, "%s", node_label(node, label, sizeof label));
    return ONYX_OK;
}

/* Chooses where each value lives, computes lifetimes and the arena, and builds the slots. */
static onyx_status lay_out(subgraph *sg, plan *p) {
    const graph *g = sg->g;
    for (int s = 0; s < p->n_steps; s++) mark_reads(p->vals, step_node(g, &p->steps[s]), s);
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] >= 0) p->vals[g->outputs[i]].last = p->n_steps; /* handed out at end */
    /* a value nobody reads still lives while its producer writes it */
    for (int i = 0; i < g->n_values; i++)
        if (p->vals[i].first >= 0 && p->vals[i].last < p->vals[i].first)
            p->vals[i].last = p->vals[i].first;

    for (int s = 0; s < p->n_steps; s++) {
        const plan_step *ps = &p->steps[s];
        const graph_node *node = step_node(g, ps);
        for (int o = 0; o < node->n_outputs; o++) {
            int vi = node->outputs[o];
            if (vi < 0) continue;
            plan_value *v = &p->vals[vi];
            bool is_output = g->values[vi].flags & GV_OUTPUT;
            v->where = ST_HEAP;
            if (is_output || (ps->k->flags & KF_DYNAMIC_OUTPUT) || !type_is_static(&v->type) ||
                v->type.dtype == ONYX_STRING)
                continue;
            size_t size;
            int64_t numel;
            if (!shape_numel(v->type.rank, v->type.dims, &numel) ||
                !dtype_storage_size(v->type.dtype, numel, &size))
                return onyx_error(ONYX_ERR_NO_MEMORY, "value '%s': size overflows",
                                  g->values[vi].name);
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
                                 in_size == size && in->type.dtype == v->type.dtype;
                if (same_size && (in->where == ST_ARENA || in->where == ST_INPUT ||
                                  in->where == ST_CONST)) {
                    int root = in->where == ST_ARENA && in->alias_of >= 0 ? in->alias_of : src;
                    v->alias_of = root;
                    if (p->vals[root].where == ST_ARENA && p->vals[root].last < v->last)
                        p->vals[root].last = v->last;
                }
            }
        }
    }
    /* aliases of arena values extend their root's lifetime: settle roots after all marks */
    for (int i = 0; i < g->n_values; i++) {
        plan_value *v = &p->vals[i];
        if (v->where == ST_ARENA && v->alias_of >= 0 && p->vals[v->alias_of].where == ST_ARENA &&
            p->vals[v->alias_of].last < v->last)
            p->vals[v->alias_of].last = v->last;
    }
    size_t arena_size = plan_assign_offsets(p->vals, g->n_values);
    if (arena_size == SIZE_MAX) return onyx_oom("memory plan");
    /* Allocated even when every arena value is empty: their data pointers are then offsets
     * into it, and kernels offset them (by 0), which is undefined behaviour on NULL. */
    p->arena = aligned_alloc(64, arena_size ? arena_size : 64);
    if (!p->arena) return onyx_oom("arena");
    p->arena_size = arena_size;

    /* slots: what a frame points at for each value */
    for (int i = 0; i < g->n_values; i++) {
        plan_value *v = &p->vals[i];
        onyx_value *slot = &p->slots[i];
        if (v->where == ST_CONST) {
            value_borrow_tensor(slot, v->constant);
        } else if (v->where == ST_ARENA) {
            TRY(tensor_set_shape(&slot->t, v->type.dtype, v->type.rank, v->type.dims));
            slot->kind = ONYX_VALUE_TENSOR;
            slot->t.owns = false;
            slot->t.data = v->alias_of >= 0 ? NULL : (char *)p->arena + v->offset;
        }
    }
    for (int i = 0; i < g->n_values; i++) {
        plan_value *v = &p->vals[i];
        if (v->where == ST_ARENA && v->alias_of >= 0) {
            const plan_value *root = &p->vals[v->alias_of];
            if (root->where == ST_ARENA) p->slots[i].t.data = (char *)p->arena + root->offset;
            else if (root->where == ST_CONST) p->slots[i].t.data = root->constant->data;
            /* ST_INPUT roots are bound per run by bind_outputs */
        }
    }

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

    /* heap values are released after their last reader */
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
            if (vi < 0 || p->vals[vi].where != ST_HEAP) continue;
            if (p->vals[vi].last != s) continue;
            bool dup = false;
            for (int k = 0; k < kept; k++) dup |= ps->release[k] == vi;
            if (!dup) ps->release[kept++] = vi;
        }
        ps->n_release = kept;
    }
    return ONYX_OK;
}

/* Builds a plan for the signature `sig` (graph inputs, then captured values). */
static onyx_status build_plan(subgraph *sg, const type_info *sig, plan **out) {
    const graph *g = sg->g;
    onyx_status st = ONYX_OK;
    /* kernels prepare (and oneDNN builds primitives) under the count they will run with */
    parallel_scope saved_threads = parallel_enter(sg->env.threads);
    plan *p = calloc(1, sizeof *p);
    if (!p) {
        st = onyx_oom("plan");
        goto done;
    }
    p->n_sig = g->n_inputs + sg->n_captured;
    p->sig = calloc((size_t)p->n_sig + 1, sizeof *p->sig);
    p->vals = calloc((size_t)g->n_values + 1, sizeof *p->vals);
    p->slots = calloc((size_t)g->n_values + 1, sizeof *p->slots);
    p->steps = calloc((size_t)g->n_nodes + 1, sizeof *p->steps);
    p->frame = calloc((size_t)g->n_values + 1, sizeof *p->frame);
    if (!p->sig || !p->vals || !p->slots || !p->steps || !p->frame) {
        st = onyx_oom("plan");
        goto done;
    }
    for (int i = 0; i < p->n_sig; i++) CHECK(type_copy(&p->sig[i], &sig[i]));
    for (int i = 0; i < g->n_values; i++) {
        plan_value *v = &p->vals[i];
        type_init(&v->type);
        v->alias_of = -1;
        v->first = v->last = -1;
        const graph_value *gv = &g->values[i];
        if (gv->flags & GV_INITIALIZER) {
            v->where = ST_CONST;
            v->constant = gv->init;
            type_set_tensor(&v->type, gv->init->dtype, gv->init->rank, gv->init->dims);
        }
    }
    for (int i = 0; i < g->n_inputs; i++) {
        plan_value *v = &p->vals[g->inputs[i]];
        v->where = ST_INPUT;
        CHECK(type_copy(&v->type, &sig[i]));
    }
    /* captured values are inputs too: their values may differ between runs of one plan */
    for (int k = 0; k < sg->n_captured; k++) {
        plan_value *v = &p->vals[sg->captured[k]];
        v->where = ST_INPUT;
        CHECK(type_copy(&v->type, &sig[g->n_inputs + k]));
    }

    int n_steps = 0;
    for (int n = 0; n < g->n_nodes; n++) {
        plan_step *ps = &p->steps[n_steps];
        ps->state = NULL;
        CHECK(specialize_node(sg, p, n, n_steps));
        if (foldable(p, &g->nodes[n], ps->k)) {
            onyx_status fs = fold_node(p, g, ps);
            if (ps->state && ps->k->release) ps->k->release(ps->state);
            ps->state = NULL;
            if (fs != ONYX_OK) {
                st = fs;
                goto done;
            }
            for (int o = 0; o < g->nodes[n].n_outputs; o++)
                if (g->nodes[n].outputs[o] >= 0) p->vals[g->nodes[n].outputs[o]].first = -1;
            continue;
        }
        p->n_steps = ++n_steps;
    }
    CHECK(fuse_plan(sg, p)); /* optimizer: fuse conv chains (core/fuse.c) */
    for (int i = 0; i < g->n_outputs; i++) {
        int vi = g->outputs[i];
        if (vi >= 0 && p->vals[vi].where == ST_NONE && p->vals[vi].first < 0) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "graph output '%s' is never produced",
                                g->values[vi].name);
            goto done;
        }
    }
    CHECK(lay_out(sg, p));
    p->complete = true;
    *out = p;
    p = NULL;
done:
    plan_free(p, g);
    parallel_leave(saved_threads);
    return st;
}

onyx_status subgraph_specialize(subgraph *sg, const type_info *const *in_types) {
    const graph *g = sg->g;
    int n_sig = g->n_inputs + sg->n_captured;
    type_info *sig = calloc((size_t)n_sig + 1, sizeof *sig);
    if (!sig) return onyx_oom("signature");
    onyx_status st = ONYX_OK;
    for (int i = 0; i < n_sig; i++) type_init(&sig[i]);
    for (int i = 0; i < g->n_inputs; i++)
        if (in_types && in_types[i]) CHECK(type_copy(&sig[i], in_types[i]));
    for (int k = 0; k < sg->n_captured; k++)
        CHECK(type_copy(&sig[g->n_inputs + k], &g->values[sg->captured[k]].type));
    if (!find_plan(sg, sig, n_sig)) {
        plan *p = NULL;
        CHECK(build_plan(sg, sig, &p));
        cache_plan(sg, p);
    }
done:
    for (int i = 0; i < n_sig; i++) type_release(&sig[i]);
    free(sig);
    return st;
}

/* ------------------------------------------------------------------ running a plan */

static onyx_status check_input(const graph_value *gv, const onyx_value *v) {
    if (!v) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "input '%s' is missing", gv->name);
    if (type_accepts(&gv->type, v)) return ONYX_OK;
    char want[160], got[160];
    type_info t;
    type_init(&t);
    TRY(type_of_value(&t, v));
    onyx_error(ONYX_ERR_SHAPE, "input '%s': expected %s, got %s", gv->name,
               type_str(&gv->type, want, sizeof want), type_str(&t, got, sizeof got));
    type_release(&t);
    return ONYX_ERR_SHAPE;
}

/* Kind and element type only: subgraph bodies and graph outputs are often declared with loose
 * or symbolic dims, but a different element type is always a broken model. */
static bool kind_and_dtype_fit(const type_info *t, const onyx_value *v) {
    if (t->kind == ONYX_VALUE_NONE) return true;
    if (!v || t->kind != v->kind) return false;
    return t->kind != ONYX_VALUE_TENSOR || t->dtype == ONYX_UNDEFINED || t->dtype == v->t.dtype;
}

static onyx_status type_mismatch(const char *what, const graph_value *gv, const onyx_value *v) {
    char want[160], got[160] = "nothing";
    type_info t;
    type_init(&t);
    if (v) TRY(type_of_value(&t, v));
    onyx_error(ONYX_ERR_INVALID_MODEL, "%s '%s' is declared %s but gets %s", what, gv->name,
               type_str(&gv->type, want, sizeof want), v ? type_str(&t, got, sizeof got) : got);
    type_release(&t);
    return ONYX_ERR_INVALID_MODEL;
}

static void clear_heap_values(plan *p, const graph *g, struct exec_frame *frame) {
    for (int i = 0; i < g->n_values; i++)
        if (p->vals[i].where == ST_HEAP) value_clear(frame->vals[i]);
}

/* The value behind signature entry i: the graph inputs, then the captured values. */
static const onyx_value *sig_value(const subgraph *sg, const struct exec_frame *outer,
                                   const onyx_value *const *inputs, int i) {
    const graph *g = sg->g;
    if (i < g->n_inputs) return inputs[i];
    return outer->vals[g->values[sg->captured[i - g->n_inputs]].outer];
}

/* True when the most recent plan was made for tensors of exactly these shapes, the common case
 * of a rep run again and again: then nothing is built and nothing allocated to find the plan. */
static bool fits_recent_plan(const subgraph *sg, const struct exec_frame *outer,
                             const onyx_value *const *inputs) {
    const plan *p = sg->plans;
    if (!p) return false;
    for (int i = 0; i < p->n_sig; i++) {
        const type_info *t = &p->sig[i];
        const onyx_value *v = sig_value(sg, outer, inputs, i);
        if (t->kind != ONYX_VALUE_TENSOR || !v || v->kind != ONYX_VALUE_TENSOR ||
            v->t.dtype != t->dtype || v->t.rank != t->rank ||
            memcmp(v->t.dims, t->dims, sizeof(int64_t) * (size_t)t->rank) != 0)
            return false;
    }
    return true;
}

/* Finds or builds the plan for the signature of these inputs. */
static onyx_status plan_for(subgraph *sg, struct exec_frame *outer,
                            const onyx_value *const *inputs, plan **out) {
    if (fits_recent_plan(sg, outer, inputs)) {
        *out = sg->plans;
        return ONYX_OK;
    }
    int n_sig = sg->g->n_inputs + sg->n_captured;
    type_info *sig = calloc((size_t)n_sig + 1, sizeof *sig);
    if (!sig) return onyx_oom("signature");
    onyx_status st = ONYX_OK;
    for (int i = 0; i < n_sig; i++) type_init(&sig[i]);
    for (int i = 0; i < n_sig; i++) CHECK(signature_of(&sig[i], sig_value(sg, outer, inputs, i)));
    plan *p = find_plan(sg, sig, n_sig);
    if (!p) {
        CHECK(build_plan(sg, sig, &p));
        cache_plan(sg, p);
    }
    *out = p;
done:
    for (int i = 0; i < n_sig; i++) type_release(&sig[i]);
    free(sig);
    return st;
}

onyx_status subgraph_run(subgraph *sg, struct exec_frame *outer, const onyx_value *const *inputs,
                         onyx_value *const *outputs) {
    const graph *g = sg->g;
    if (!outer) {
        if (sg->n_captured > 0)
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "value '%s' needs an enclosing graph",
                              g->values[sg->captured[0]].name);
        for (int i = 0; i < g->n_inputs; i++) TRY(check_input(&g->values[g->inputs[i]], inputs[i]));
    } else {
        for (int i = 0; i < g->n_inputs; i++) {
            const graph_value *gv = &g->values[g->inputs[i]];
            if (!kind_and_dtype_fit(&gv->type, inputs[i]))
                return type_mismatch("subgraph input", gv, inputs[i]);
        }
    }
    plan *p = NULL;
    TRY(plan_for(sg, outer, inputs, &p));

    onyx_value **vals = p->frame;
    for (int i = 0; i < g->n_values; i++) vals[i] = &p->slots[i];
    for (int i = 0; i < g->n_inputs; i++) vals[g->inputs[i]] = (onyx_value *)inputs[i];
    for (int k = 0; k < sg->n_captured; k++)
        vals[sg->captured[k]] = outer->vals[g->values[sg->captured[k]].outer];
    struct exec_frame frame = {.g = g, .vals = vals, .parent = outer};

    onyx_status st = ONYX_OK;
    parallel_scope saved_threads = parallel_enter(outer ? 0 : sg->env.threads);
    for (int s = 0; s < p->n_steps && st == ONYX_OK; s++) {
        const plan_step *ps = &p->steps[s];
        st = run_step(p, ps, g, &frame);
        for (int r = 0; r < ps->n_release && st == ONYX_OK; r++) value_clear(vals[ps->release[r]]);
    }
    parallel_leave(saved_threads);
    for (int i = 0; i < g->n_outputs && st == ONYX_OK; i++) {
        int vi = g->outputs[i];
        if (vi < 0) continue;
        if (!kind_and_dtype_fit(&g->values[vi].type, vals[vi])) {
            st = type_mismatch("graph output", &g->values[vi], vals[vi]);
            break;
        }
        bool listed_again = false;
        for (int j = i + 1; j < g->n_outputs; j++) listed_again |= g->outputs[j] == vi;
        if (p->vals[vi].where == ST_HEAP && !listed_again)
            value_move(outputs[i], vals[vi]);
        else
            st = value_copy(outputs[i], vals[vi]);
    }
    clear_heap_values(p, g, &frame);
    return st;
}
