/* Building the plan of a graph for one signature of input shapes: each node specialized
 * (inference, constant folding, kernel choice; placement and copies in core/exec_place.c), dead
 * steps dropped, the fusion passes (core/fuse.c, core/fuse_device.c), then lay_out (lifetimes,
 * views, in-place reuse, arena offsets through core/planner.c) and the device graph segments.
 * Also the plan helpers the fusion passes call back (plan_prepare_kernel, plan_readers,
 * plan_absorb_steps, plan_set_fused). Running a plan is core/exec_run.c. */
#include "core/exec_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/op_schema.h"
#include "core/fuse.h"
#include "core/log.h"
#include "core/profile.h"
#include "core/parallel.h"
#include "core/shared.h"

void plan_free(plan *p) {
    if (!p) return;
    while (p->idle) {
        run_ctx *next = p->idle->next;
        run_ctx_free(p, p->idle);
        p->idle = next;
    }
    pthread_mutex_destroy(&p->idle_lock);
    free(p->raw_weights);
    for (int s = 0; s < p->n_steps; s++) {
        plan_step *ps = &p->steps[s];
        if (ps->state && ps->k->release) ps->k->release(ps->state);
        free(ps->release);
        free(ps->own_node);
    }
    free(p->steps);
    free(p->segment_end);
    free(p->in_device);
    if (p->vals) {
        for (int i = 0; i < p->n_vals; i++) {
            plan_value *v = &p->vals[i];
            if (v->owns_constant && v->constant && v->device != DEVICE_CPU) {
                plan_free_device_constant(p, v);
            } else if (v->owns_constant && v->constant) {
                tensor_release(v->constant);
                free(v->constant);
            }
            type_release(&v->type);
        }
    }
    free(p->vals);
    if (p->sig)
        for (int i = 0; i < p->n_sig; i++) type_release(&p->sig[i]);
    free(p->sig);
    free(p);
}

/* ------------------------------------------------------------------ running one node */

static bool has_subgraphs(const graph_node *n) {
    for (int a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == ATTR_GRAPH || n->attrs[a].type == ATTR_GRAPHS) return true;
    return false;
}

/* Per-node arrays of inputs or outputs: on the caller's stack up to EXEC_IO_STACK entries, on the
 * heap past that (Concat, Sum, SequenceConstruct of hundreds of inputs: up to ONYX_VARIADIC). */
#define EXEC_IO_STACK 32

static void *io_array(void *stack, size_t stack_bytes, int n, size_t size) {
    size_t bytes = (size_t)(n > 0 ? n : 1) * size;
    void *a = bytes <= stack_bytes ? stack : malloc(bytes);
    if (a) memset(a, 0, bytes);
    return a;
}

static void io_free(void *a, const void *stack) {
    if (a != stack) free(a);
}

/* Runs inference for `node` with the given inputs; out must hold n_outputs types. */
static onyx_status infer_node(const graph_node *node, const type_info *const *in_types,
                              const tensor *const *in_values, type_info *out) {
    for (int o = 0; o < node->n_outputs; o++) type_init(&out[o]);
    if (!node->schema || !node->schema->infer) return ONYX_OK;
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
    const type_info *itypes_s[EXEC_IO_STACK];
    type_info store_s[EXEC_IO_STACK];
    const tensor *ivals_s[EXEC_IO_STACK];
    const type_info **itypes = io_array(itypes_s, sizeof itypes_s, node->n_inputs, sizeof *itypes);
    type_info *store = io_array(store_s, sizeof store_s, node->n_inputs, sizeof *store);
    const tensor **ivals = io_array(ivals_s, sizeof ivals_s, node->n_inputs, sizeof *ivals);
    onyx_status st = itypes && store && ivals ? ONYX_OK : onyx_oom("input types");
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
    io_free(itypes, itypes_s);
    io_free(store, store_s);
    io_free(ivals, ivals_s);
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
            /* a reshape-like alias may have a graph input as its root, bound per run; an
             * in-place output's root is arena memory, its slot fixed */
            if (v->alias_of >= 0 && in[0] && (ps->k->flags & KF_ALIAS_INPUT0))
                out[o]->t.data = in[0]->t.data;
            continue;
        }
        /* sequences and optionals are built by the kernel, like data-dependent shapes */
        if ((ps->k->flags & KF_DYNAMIC_OUTPUT) ||
            (v->type.kind != ONYX_VALUE_TENSOR && v->type.kind != ONYX_VALUE_NONE)) {
            value_clear(out[o]);
            continue;
        }
        if (type_is_static(&v->type) && v->device != DEVICE_CPU) { /* an output left on a device */
            value_clear(out[o]);
            CHECK(tensor_alloc_on(&out[o]->t, v->device, v->type.dtype, v->type.rank, v->type.dims));
            out[o]->kind = ONYX_VALUE_TENSOR;
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

onyx_status plan_run_step(const plan *p, const plan_step *ps, const graph *g,
                          struct exec_frame *frame, void *state) {
    const graph_node *node = step_node(g, ps);
    onyx_value *in_s[EXEC_IO_STACK], *out_s[EXEC_IO_STACK];
    onyx_value **in = io_array(in_s, sizeof in_s, node->n_inputs, sizeof *in),
               **out = io_array(out_s, sizeof out_s, node->n_outputs, sizeof *out);
    if (!in || !out) {
        io_free(in, in_s);
        io_free(out, out_s);
        return onyx_oom("node inputs");
    }
    for (int i = 0; i < node->n_inputs; i++)
        in[i] = node->inputs[i] >= 0 ? frame->vals[node->inputs[i]] : NULL;
    for (int o = 0; o < node->n_outputs; o++)
        out[o] = node->outputs[o] >= 0 ? frame->vals[node->outputs[o]] : NULL;
    onyx_status st = ONYX_OK;
    /* every tensor a kernel reads is on its device: a missing copy is an error, not garbage */
    for (int i = 0; i < node->n_inputs && !(ps->k->flags & KF_DEVICE_COPY); i++) {
        if (!in[i] || in[i]->kind != ONYX_VALUE_TENSOR) continue;
        bool on_host = i < 32 && (ps->k->host_inputs & (1u << i));
        device_kind want = on_host ? DEVICE_CPU : ps->k->device;
        if (in[i]->t.device != want)
            st = onyx_error(ONYX_ERR_RUNTIME, "input %d is on %s but the kernel reads it on %s", i,
                            device_name(in[i]->t.device), device_name(want));
    }
    if (st == ONYX_OK) st = bind_outputs(p, ps, node, in, out);
    if (st == ONYX_OK) {
        kernel_call call = {
            .node = node,
            .state = state,
            .n_in = node->n_inputs,
            .n_out = node->n_outputs,
            .in = in,
            .out = out,
            .frame = frame,
            .threads = parallel_threads(),
            .queue = frame->ctx ? frame->ctx->queue[ps->k->device] : NULL,
        };
        if (frame->profiler) {
            int64_t start = exec_now_ns();
            st = ps->k->run(&call);
            /* a device kernel only queues its work: wait for it, so the event is its run time */
            if (st == ONYX_OK && call.queue)
                st = p->devices[ps->k->device]->queue_finish(call.queue);
            profiler_node(frame->profiler, node, ps->k, node->n_inputs, in, node->n_outputs, out,
                          start, exec_now_ns(), frame->control ? frame->control->tag : NULL);
        } else {
            st = ps->k->run(&call);
        }
    }
    io_free(in, in_s);
    io_free(out, out_s);
    if (st != ONYX_OK) {
        char label[256];
        return onyx_error_prefix(st, "%s", node_label(node, label, sizeof label));
    }
    return ONYX_OK;
}

/* ------------------------------------------------------------------ specialization */

/* Folded outputs from this size up are compared with the weights they were made from. */
#define FOLD_SHARE_MIN_BYTES ((size_t)1 << 20)

/* Values that a node reads: its inputs and what its subgraphs capture. */
static void mark_reads(plan_value *vals, const graph_node *n, int step) {
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] >= 0 && vals[n->inputs[i]].last < step) vals[n->inputs[i]].last = step;
    for (int i = 0; i < n->n_captures; i++)
        if (vals[n->captures[i]].last < step) vals[n->captures[i]].last = step;
}

/* The weight among the node's inputs whose bytes folded output y repeats exactly (a Reshape of
 * it: a tied embedding's table), or NULL: y may borrow them. Only a weight the rep keeps as long
 * as the plans (from_weights), on the CPU, that no graph output hands out. */
static const tensor *weight_with_bytes(const plan *p, const graph *g, const graph_node *node,
                                       const tensor *y) {
    for (int i = 0; i < node->n_inputs; i++) {
        int vi = node->inputs[i];
        const tensor *w = vi >= 0 ? p->vals[vi].constant : NULL;
        if (w && p->vals[vi].from_weights && p->vals[vi].device == DEVICE_CPU &&
            !plan_value_is_output(g, vi) && w->dtype == y->dtype && w->dtype != ONYX_STRING &&
            w->nbytes == y->nbytes && w->nbytes >= FOLD_SHARE_MIN_BYTES &&
            (w->data == y->data || memcmp(w->data, y->data, w->nbytes) == 0))
            return w;
    }
    return NULL;
}

/* Whether node only gives its input 0 another shape: its output may be that input's bytes (other
 * kernels that may alias their input, Imputer, write into it). */
static bool relabels(const graph_node *node) {
    static const char *const ops[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
    if (*node->domain) return false;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (!strcmp(node->op_type, ops[i])) return true;
    return false;
}

/* Evaluates a node whose inputs are all constants, now, and keeps its outputs as constants. */
static onyx_status fold_node(plan *p, const graph *g, plan_step *ps) {
    const graph_node *node = step_node(g, ps);
    onyx_value **vals = calloc((size_t)node->n_outputs + 1, sizeof *vals);
    onyx_value *tmp_slots = calloc((size_t)node->n_inputs + (size_t)node->n_outputs + 1,
                                   sizeof(onyx_value));
    onyx_value **frame_vals = calloc((size_t)p->n_vals, sizeof(onyx_value *));
    onyx_status st = ONYX_OK;
    if (!vals || !tmp_slots || !frame_vals) {
        st = onyx_oom("constant folding");
        goto done;
    }
    for (int i = 0; i < node->n_inputs; i++) {
        int vi = node->inputs[i];
        if (vi < 0) continue;
        if (p->vals[vi].constant) {
            value_borrow_tensor(&tmp_slots[i], p->vals[vi].constant);
        } else { /* a shape-only op's input (OP_SHAPE_ONLY): its shape, and no data to read */
            const type_info *t = &p->vals[vi].type;
            st = tensor_set_shape(&tmp_slots[i].t, t->dtype, t->rank, t->dims);
            if (st != ONYX_OK) goto done;
            tmp_slots[i].kind = ONYX_VALUE_TENSOR;
        }
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
    /* a reshape-like output of a weight is made over the weight's bytes, as the planner aliases
     * it (no copy, not even for a moment: a tied embedding's table is large) */
    if (node->n_outputs == 1 && node->outputs[0] >= 0 && (ps->k->flags & KF_ALIAS_INPUT0) &&
        relabels(node) && node->n_inputs > 0 && node->inputs[0] >= 0) {
        plan_value *y = &p->vals[node->outputs[0]];
        const plan_value *x = &p->vals[node->inputs[0]];
        const tensor *w = x->constant;
        int64_t numel;
        size_t bytes;
        if (w && x->from_weights && x->device == DEVICE_CPU && w->dtype == y->type.dtype &&
            w->dtype != ONYX_STRING && type_is_static(&y->type) &&
            shape_numel(y->type.rank, y->type.dims, &numel) &&
            dtype_storage_size(y->type.dtype, numel, &bytes) && bytes == w->nbytes &&
            tensor_set_shape(&vals[0]->t, y->type.dtype, y->type.rank, y->type.dims) == ONYX_OK) {
            vals[0]->kind = ONYX_VALUE_TENSOR;
            vals[0]->t.owns = false;
            y->where = ST_ARENA;
            y->alias_of = node->inputs[0];
        }
    }
    /* a context of its own for the kernel's scratch, and a fork when the kernel forks */
    run_ctx scratch_ctx = {0};
    struct exec_frame frame = {.g = g, .vals = frame_vals, .parent = NULL, .ctx = &scratch_ctx};
    void *fork = NULL;
    if (ps->k->fork) st = ps->k->fork(ps->state, &fork);
    if (st == ONYX_OK) st = plan_run_step(p, ps, g, &frame, fork ? fork : ps->state);
    if (fork) ps->k->unfork(fork);
    free(scratch_ctx.scratch);
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
        const tensor *same = weight_with_bytes(p, g, node, &vals[o]->t);
        if (same) {
            *t = vals[o]->t; /* the weight's bytes under this shape: no second copy */
            t->data = same->data;
            t->owns = false;
        } else if (vals[o]->t.owns) {
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
    free(vals);
    return st;
}

static bool foldable(const subgraph *sg, const plan *p, const graph_node *node) {
    if (sg->env.optimization < ONYX_OPT_BASIC) return false;
    if ((node->schema->flags & OP_NONDETERMINISTIC) || has_subgraphs(node)) return false;
    bool shape_only = node->schema->flags & OP_SHAPE_ONLY;
    for (int i = 0; i < node->n_inputs; i++) {
        int vi = node->inputs[i];
        if (vi < 0 || p->vals[vi].where == ST_CONST) continue;
        const type_info *t = &p->vals[vi].type;
        if (!shape_only || t->kind != ONYX_VALUE_TENSOR || !type_is_static(t)) return false;
    }
    for (int o = 0; o < node->n_outputs; o++)
        if (node->outputs[o] >= 0 && p->vals[node->outputs[o]].type.kind != ONYX_VALUE_TENSOR)
            return false;
    return true;
}

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
                                  const graph_node *node, const struct fuse_chain *chain) {
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
    };
    return ONYX_OK;
}

/* Evicted weights among k's constant inputs restored (and kept from then on) unless k reads
 * them through its packed objects (KF_PACKED_WEIGHTS). A weight that k reads is read by k's node
 * alone (evict_packed) and a node gets the same kernel in every plan of a CPU session: a weight
 * such a kernel reads is never evicted after, so nothing is pinned before it is. */
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

/* After k prepared: the weights it read only through packed objects, which nothing else reads
 * (one reader in the graph, not an output, on the CPU), are evicted (core/shared.h). Plan
 * constants from weights are the model's (its pool) or the subgraph's (folded): the rep owns
 * both. */
static void evict_packed(const subgraph *sg, const plan *p, const graph_node *node,
                         const prep_view *v) {
    if (!sg->readers) return;
    const graph *g = sg->g;
    for (int i = 0; i < node->n_inputs; i++) {
        int vi = node->inputs[i];
        if (!v->packed[i] || vi < 0 || vi >= g->n_values || sg->readers[vi] != 1 ||
            (g->values[vi].flags & GV_OUTPUT))
            continue;
        const plan_value *pv = &p->vals[vi];
        if (pv->where == ST_CONST && pv->from_weights && pv->device == DEVICE_CPU &&
            pv->constant && pv->constant == v->in_values[i])
            shared_cache_evict(sg->env.shared, pv->constant);
    }
}

void plan_set_producers(const graph *g, plan *p) {
    for (int i = 0; i < p->n_vals; i++) p->vals[i].first = -1;
    for (int s = 0; s < p->n_steps; s++) {
        const graph_node *nd = step_node(g, &p->steps[s]);
        for (int o = 0; o < nd->n_outputs; o++)
            if (nd->outputs[o] >= 0) p->vals[nd->outputs[o]].first = s;
    }
}

void plan_readers(const graph *g, const plan *p, int *uses, int *consumer) {
    for (int i = 0; i < p->n_vals; i++) {
        uses[i] = 0;
        consumer[i] = -1;
    }
    for (int s = 0; s < p->n_steps; s++) {
        const graph_node *nd = step_node(g, &p->steps[s]);
        for (int k = 0; k < nd->n_inputs; k++)
            if (nd->inputs[k] >= 0) {
                uses[nd->inputs[k]]++;
                consumer[nd->inputs[k]] = s;
            }
        for (int k = 0; k < nd->n_captures; k++) uses[nd->captures[k]]++;
    }
}

void plan_absorb_steps(plan *p, bool *gone, const int *steps, int n) {
    for (int i = 0; i < n; i++) {
        plan_step *a = &p->steps[steps[i]];
        if (a->state && a->k->release) a->k->release(a->state);
        a->state = NULL;
        free(a->own_node); /* a device step's node with its inputs moved (exec_place.c) */
        a->own_node = NULL;
        gone[steps[i]] = true;
    }
}

void plan_set_fused(plan_step *ps, graph_node *fn) {
    if (ps->own_node != fn) free(ps->own_node);
    ps->own_node = fn;
    ps->fused = true;
}

/* Runs kernel k's prepare for `node` (a step's node, or a conv's copy made by the fusion pass,
 * with its `chain` of post-ops) on the plan's current types and constants. */
onyx_status plan_prepare_kernel(const subgraph *sg, plan *p, const kernel *k,
                                const graph_node *node, const struct fuse_chain *chain,
                                void **state) {
    *state = NULL;
    prep_view v;
    TRY(prep_view_make(&v, sg, p, node, chain));
    onyx_status st = restore_inputs(sg, k, &v);
    if (st == ONYX_OK && k->prepare) st = k->prepare(&v.prep, state);
    if (st == ONYX_OK) st = note_raw(p, &v);
    if (st == ONYX_OK) evict_packed(sg, p, node, &v);
    prep_view_free(&v);
    return st;
}

bool plan_kernel_supports(const subgraph *sg, const plan *p, const kernel *k,
                          const graph_node *node) {
    prep_view v;
    if (prep_view_make(&v, sg, p, node, NULL) != ONYX_OK) return false;
    if (restore_inputs(sg, k, &v) != ONYX_OK) {
        prep_view_free(&v);
        return false;
    }
    bool ok = k->supports(&v.prep);
    prep_view_free(&v);
    return ok;
}

/* Fills in the declared kind/dtype where inference could not say. */
static onyx_status merge_declared(type_info *t, const type_info *declared) {
    if (t->kind != ONYX_VALUE_NONE || declared->kind == ONYX_VALUE_NONE) return ONYX_OK;
    type_release(t);
    TRY(type_copy(t, declared));
    /* declared dims may be symbolic: keep rank and known dims only as a hint for tensors */
    return ONYX_OK;
}

/* Gives the node's outputs the constants an earlier plan folded from the same initializers; false
 * when some output has none yet. */
static bool reuse_folded(subgraph *sg, plan *p, const graph_node *node) {
    pthread_mutex_lock(&sg->lock);
    bool all = true;
    for (int o = 0; o < node->n_outputs && all; o++)
        all = node->outputs[o] < 0 || sg->folded[node->outputs[o]];
    for (int o = 0; o < node->n_outputs && all; o++) {
        int vi = node->outputs[o];
        if (vi < 0) continue;
        plan_value *v = &p->vals[vi];
        const tensor *t = sg->folded[vi];
        v->constant = (tensor *)t; /* borrowed: the subgraph keeps it */
        v->owns_constant = false;
        v->where = ST_CONST;
        v->from_weights = true;
        type_release(&v->type);
        type_set_tensor(&v->type, t->dtype, t->rank, t->dims);
    }
    pthread_mutex_unlock(&sg->lock);
    return all;
}

/* Hands the node's folded outputs to the subgraph, for every later plan. */
static void keep_folded(subgraph *sg, plan *p, const graph_node *node) {
    pthread_mutex_lock(&sg->lock);
    for (int o = 0; o < node->n_outputs; o++) {
        int vi = node->outputs[o];
        if (vi < 0) continue;
        plan_value *v = &p->vals[vi];
        v->from_weights = true;
        if (sg->folded[vi] || !v->owns_constant) continue; /* another plan kept it first */
        sg->folded[vi] = v->constant;
        v->owns_constant = false;
    }
    pthread_mutex_unlock(&sg->lock);
}

/* specialize_node with its arrays: in_types and in_values of n_inputs, out_types of n_outputs. */
static onyx_status specialize_node_io(subgraph *sg, plan *p, placement *pl, int n,
                                      const type_info **in_types, const tensor **in_values,
                                      type_info *out_types) {
    const graph *g = sg->g;
    const graph_node *node = &g->nodes[n];
    char label[256];
    bool inputs_known = true;
    for (int i = 0; i < node->n_inputs; i++) {
        int vi = node->inputs[i];
        in_types[i] = vi >= 0 ? &p->vals[vi].type : NULL;
        in_values[i] = vi >= 0 ? p->vals[vi].constant : NULL;
        if (vi >= 0 && p->vals[vi].type.kind == ONYX_VALUE_NONE) inputs_known = false;
    }
    /* With an input of unknown type (a control-flow output nobody declared) inference waits for
     * the run, when the real inputs are there. */
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
    }
    if (st != ONYX_OK) return st;

    /* constant inputs: evaluated now, on the CPU, whatever the session's devices */
    const kernel *cpu = sg->env.select(node, node->n_inputs, in_types, DEVICE_CPU);
    if (cpu && foldable(sg, p, node)) {
        bool from_weights = !(node->schema->flags & OP_SHAPE_ONLY);
        for (int i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] >= 0 && !p->vals[node->inputs[i]].from_weights) from_weights = false;
        if (from_weights && reuse_folded(sg, p, node)) return ONYX_OK;
        plan_step step = {.node = n, .k = cpu};
        st = plan_prepare_kernel(sg, p, cpu, node, NULL, &step.state);
        if (st == ONYX_OK) st = fold_node(p, g, &step);
        if (step.state && cpu->release) cpu->release(step.state);
        if (st != ONYX_OK) return onyx_error_prefix(st, "%s", node_label(node, label, sizeof label));
        if (from_weights) keep_folded(sg, p, node);
        return ONYX_OK;
    }
    onyx_error_clear();
    return place_node(sg, p, pl, n, in_types);
}

/* Infers node n's output types, then folds it (constant inputs) or places it (exec_place.c). */
static onyx_status specialize_node(subgraph *sg, plan *p, placement *pl, int n) {
    const graph_node *node = &sg->g->nodes[n];
    char label[256];
    if (!node->schema) {
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: %s", node_label(node, label, sizeof label),
                          node->unsupported ? node->unsupported : "no schema");
    }
    if (node->n_inputs > ONYX_VARIADIC || node->n_outputs > ONYX_VARIADIC)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: more than %d inputs or outputs",
                          node_label(node, label, sizeof label), ONYX_VARIADIC);
    const type_info **in_types = calloc((size_t)node->n_inputs + 1, sizeof *in_types);
    const tensor **in_values = calloc((size_t)node->n_inputs + 1, sizeof *in_values);
    type_info *out_types = calloc((size_t)node->n_outputs + 1, sizeof *out_types);
    onyx_status st = in_types && in_values && out_types
                         ? specialize_node_io(sg, p, pl, n, in_types, in_values, out_types)
                         : onyx_oom("node types");
    free(in_types);
    free(in_values);
    free(out_types); /* its types were moved into the plan's values, or released */
    return st;
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

/* Chooses where each value lives, computes lifetimes and the arena, and builds the slots. */
static onyx_status lay_out(subgraph *sg, plan *p) {
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
            if ((ps->k->flags & KF_VIEW) && v->alias_of < 0 && plan_view_offset(p, node, o, &at)) {
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

/* Whether plan value v has the same address in every run of a context: a constant, or arena
 * memory (directly or as an alias of it). Graph inputs and heap values move between runs. */
static bool fixed_address(const plan *p, int v) {
    if (v < 0) return true;
    const plan_value *pv = &p->vals[v];
    if (pv->where == ST_CONST) return true;
    if (pv->where != ST_ARENA) return false;
    int root = pv->alias_of >= 0 ? pv->alias_of : v;
    return p->vals[root].where == ST_ARENA || p->vals[root].where == ST_CONST;
}

/* A step that a device graph can replay: a kernel of a device with graphs, not a copy, whose
 * tensors stay at fixed addresses and whose host-read inputs are constants (a replay cannot see
 * new host values). */
static bool capturable(const subgraph *sg, const plan *p, const plan_step *ps) {
    const kernel *k = ps->k;
    const device_ops *d = p->devices[k->device];
    if (k->device == DEVICE_CPU || !d || !d->capture_begin ||
        (k->flags & (KF_DEVICE_COPY | KF_DYNAMIC_OUTPUT)))
        return false;
    const graph_node *node = step_node(sg->g, ps);
    for (int i = 0; i < node->n_inputs; i++) {
        int v = node->inputs[i];
        bool on_host = i < 32 && (k->host_inputs & (1u << i));
        if (!fixed_address(p, v) || (on_host && v >= 0 && p->vals[v].where != ST_CONST))
            return false;
    }
    for (int o = 0; o < node->n_outputs; o++)
        if (!fixed_address(p, node->outputs[o])) return false;
    return true;
}

/* Marks the runs of two or more consecutive capturable steps on one device, and logs how many
 * steps they hold (the steps left out each cost a launch from the host at every run). */
static onyx_status find_graph_segments(const subgraph *sg, plan *p) {
    int segments = 0, covered = 0, device_steps = 0;
    for (int s = 0; s < p->n_steps; s++) device_steps += p->steps[s].k->device != DEVICE_CPU;
    for (int s = 0; s < p->n_steps;) {
        int e = s;
        while (e < p->n_steps && capturable(sg, p, &p->steps[e]) &&
               p->steps[e].k->device == p->steps[s].k->device)
            e++;
        if (e - s >= 2) {
            if (!p->segment_end && !(p->segment_end = calloc((size_t)p->n_steps + 1, sizeof(int))))
                return onyx_oom("plan");
            p->segment_end[s] = e;
            segments++;
            covered += e - s;
        }
        s = e > s ? e : s + 1;
    }
    if (device_steps)
        log_write(&sg->env.log, ONYX_LOG_VERBOSE,
                  "device graphs: %d segment%s holding %d of the %d device steps", segments,
                  segments == 1 ? "" : "s", covered, device_steps);
    return ONYX_OK;
}

/* Steps whose outputs nothing reads (no later step, subgraph capture or graph output) leave the
 * plan, last first, so that what only they read leaves too: an exporter's Transpose read by
 * nothing but a Shape that folding made a constant, say. Random ops stay: each draw moves the
 * session's generator. */
static onyx_status drop_dead_steps(const graph *g, plan *p) {
    int *uses = calloc((size_t)p->n_vals + 1, sizeof *uses);
    int *consumer = calloc((size_t)p->n_vals + 1, sizeof *consumer);
    bool *gone = calloc((size_t)p->n_steps + 1, sizeof *gone);
    if (!uses || !consumer || !gone) {
        free(uses);
        free(consumer);
        free(gone);
        return onyx_oom("plan");
    }
    plan_readers(g, p, uses, consumer);
    for (int s = p->n_steps - 1; s >= 0; s--) {
        const graph_node *nd = step_node(g, &p->steps[s]);
        bool live = nd->schema && (nd->schema->flags & OP_NONDETERMINISTIC);
        for (int o = 0; o < nd->n_outputs && !live; o++) {
            int v = nd->outputs[o];
            live = v >= 0 && (uses[v] > 0 || plan_value_is_output(g, v));
        }
        if (live) continue;
        for (int i = 0; i < nd->n_inputs; i++)
            if (nd->inputs[i] >= 0) uses[nd->inputs[i]]--;
        for (int c = 0; c < nd->n_captures; c++) uses[nd->captures[c]]--;
        plan_absorb_steps(p, gone, &s, 1);
    }
    int k = 0;
    for (int s = 0; s < p->n_steps; s++)
        if (!gone[s]) p->steps[k++] = p->steps[s];
    p->n_steps = k;
    plan_set_producers(g, p);
    free(uses);
    free(consumer);
    free(gone);
    return ONYX_OK;
}

typedef struct {
    subgraph *sg;
    const type_info *sig;
    const device_kind *in_device;
    device_kind out_device;
    plan **out;
} build_call;

static onyx_status build(void *arg) {
    build_call *a = arg;
    subgraph *sg = a->sg;
    const type_info *sig = a->sig;
    const device_kind *in_device = a->in_device;
    device_kind out_device = a->out_device;
    const graph *g = sg->g;
    onyx_status st = ONYX_OK;
    placement pl = {0};
    plan *p = calloc(1, sizeof *p);
    if (!p) {
        st = onyx_oom("plan");
        goto done;
    }
    atomic_init(&p->refs, 1);
    atomic_init(&p->raw_pinned, false);
    if (pthread_mutex_init(&p->idle_lock, NULL) != 0) {
        free(p);
        p = NULL;
        st = onyx_oom("plan");
        goto done;
    }
    /* Placement adds at most one value and one copy step per input and output of each node. */
    size_t edges = 0;
    for (int n = 0; n < g->n_nodes; n++)
        edges += (size_t)g->nodes[n].n_inputs + (size_t)g->nodes[n].n_outputs;
    p->n_vals = g->n_values;
    p->cap_vals = g->n_values + (int)edges;
    p->cap_steps = g->n_nodes + (int)edges;
    memcpy(p->devices, sg->env.devices, sizeof p->devices);
    p->n_sig = g->n_inputs + sg->n_captured;
    p->sig = calloc((size_t)p->n_sig + 1, sizeof *p->sig);
    p->vals = calloc((size_t)p->cap_vals + 1, sizeof *p->vals);
    p->steps = calloc((size_t)p->cap_steps + 1, sizeof *p->steps);
    if (!p->sig || !p->vals || !p->steps) {
        st = onyx_oom("plan");
        goto done;
    }
    for (int i = 0; i < p->n_sig; i++) CHECK(type_copy(&p->sig[i], &sig[i]));
    p->out_device = p->devices[out_device] ? out_device : DEVICE_CPU;
    if (in_device) {
        if (!(p->in_device = malloc(sizeof *p->in_device * (size_t)p->n_sig))) {
            st = onyx_oom("plan");
            goto done;
        }
        memcpy(p->in_device, in_device, sizeof *p->in_device * (size_t)p->n_sig);
    }
    for (int i = 0; i < g->n_values; i++) {
        plan_value *v = &p->vals[i];
        type_init(&v->type);
        v->alias_of = -1;
        v->alias_at = 0;
        v->first = v->last = -1;
        v->source = i;
        const graph_value *gv = &g->values[i];
        if (gv->flags & GV_INITIALIZER) {
            v->where = ST_CONST;
            v->from_weights = true;
            v->constant = gv->init;
            type_set_tensor(&v->type, gv->init->dtype, gv->init->rank, gv->init->dims);
        }
    }
    for (int i = 0; i < g->n_inputs; i++) {
        plan_value *v = &p->vals[g->inputs[i]];
        v->where = ST_INPUT;
        CHECK(type_copy(&v->type, &sig[i]));
        v->device = in_device ? in_device[i] : DEVICE_CPU;
        bool listed = v->device == DEVICE_CPU;
        for (int d = 0; d < sg->env.n_priority; d++) listed |= sg->env.priority[d] == v->device;
        if (!listed || !p->devices[v->device]) {
            st = onyx_error(ONYX_ERR_DEVICE, "input '%s' is in %s memory, a device this session "
                            "does not use", g->values[g->inputs[i]].name, device_name(v->device));
            goto done;
        }
    }
    /* captured values are inputs too: their values may differ between runs of one plan */
    for (int k = 0; k < sg->n_captured; k++) {
        plan_value *v = &p->vals[sg->captured[k]];
        v->where = ST_INPUT;
        CHECK(type_copy(&v->type, &sig[g->n_inputs + k]));
    }

    CHECK(placement_init(&pl, sg, p));
    for (int n = 0; n < g->n_nodes; n++) CHECK(specialize_node(sg, p, &pl, n));
    if (sg->env.optimization >= ONYX_OPT_BASIC) CHECK(drop_dead_steps(g, p));
    if (sg->env.optimization >= ONYX_OPT_ALL) {
        CHECK(fuse_plan(sg, p));        /* core/fuse.c */
        CHECK(fuse_device_plan(sg, p)); /* core/fuse_device.c */
    }
    for (int i = 0; i < g->n_outputs; i++) {
        int vi = g->outputs[i];
        if (vi >= 0 && p->vals[vi].where == ST_NONE && p->vals[vi].first < 0) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "graph output '%s' is never produced",
                                g->values[vi].name);
            goto done;
        }
    }
    CHECK(lay_out(sg, p));
    for (int s = 0; s < p->n_steps; s++) p->has_forks |= p->steps[s].k->fork != NULL;
    if (sg->env.device_graphs) CHECK(find_graph_segments(sg, p));
    *a->out = p;
    p = NULL;
done:
    placement_free(&pl);
    plan_free(p);
    return st;
}

onyx_status plan_build(subgraph *sg, const type_info *sig, const device_kind *in_device,
                       device_kind out_device, plan **out) {
    /* kernels prepare (and oneDNN builds primitives) in the arena they will run in */
    build_call call = {sg, sig, in_device, out_device, out};
    return parallel_within(sg->env.threads, NULL, build, &call);
}
