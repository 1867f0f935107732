/* The plan builder, the top of the plan layers: builds the plan of a graph for one signature of
 * input shapes by calling the layers below in order: each node specialized (inference; constant
 * folding, which runs the node's step through core/plan_step.c; placement and copies,
 * core/exec_place.c), dead steps dropped, the fusion passes (core/fuse.c, core/fuse_device.c),
 * lifetimes and arena offsets (core/planner.c), then the device graph segments. Nothing below
 * calls it; running a plan is core/exec_run.c, above it. */
#include "core/plan_build.h"

#include <stdlib.h>
#include <string.h>

#include "core/exec_place.h"
#include "core/fuse.h"
#include "core/fuse_device.h"
#include "core/log.h"
#include "core/op_schema.h"
#include "core/parallel.h"
#include "core/plan.h"
#include "core/plan_prepare.h"
#include "core/plan_step.h"
#include "core/planner.h"

/* ------------------------------------------------------------------ specialization */

static bool has_subgraphs(const graph_node *n) {
    for (int a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == ATTR_GRAPH || n->attrs[a].type == ATTR_GRAPHS) return true;
    return false;
}

/* Folded outputs from this size up are compared with the weights they were made from. */
#define FOLD_SHARE_MIN_BYTES ((size_t)1 << 20)

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
     * the run, when the real inputs are there. The geometry the schema resolves on the way is the
     * one the node's kernels get (core/op_params.h); where it resolves none yet (unknown types or
     * ranks), each run does. */
    onyx_status st = ONYX_OK;
    op_params resolved = {.kind = OP_PARAMS_NONE};
    const op_params *params = NULL;
    if (inputs_known) {
        st = plan_infer_node(node, in_types, in_values, out_types, &resolved);
    } else {
        for (int o = 0; o < node->n_outputs; o++) type_init(&out_types[o]);
    }
    if (resolved.kind == OP_PARAMS_NONE && (node->schema->flags & OP_GEOMETRY))
        resolved.kind = OP_PARAMS_UNRESOLVED;
    if (st == ONYX_OK) st = plan_keep_params(p, &resolved, &params);
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
    const kernel *cpu = sg->env.find_kernel(node, node->n_inputs, in_types, DEVICE_CPU);
    if (cpu && foldable(sg, p, node)) {
        bool from_weights = !(node->schema->flags & OP_SHAPE_ONLY);
        for (int i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] >= 0 && !p->vals[node->inputs[i]].from_weights) from_weights = false;
        if (from_weights && reuse_folded(sg, p, node)) return ONYX_OK;
        plan_step step = {.node = n, .k = cpu, .params = params};
        st = plan_prepare_kernel(sg, p, cpu, node, params, NULL, &step.state);
        if (st == ONYX_OK) st = fold_node(p, g, &step);
        if (step.state && cpu->release) cpu->release(step.state);
        if (st != ONYX_OK) return onyx_error_prefix(st, "%s", node_label(node, label, sizeof label));
        if (from_weights) keep_folded(sg, p, node);
        return ONYX_OK;
    }
    return place_node(sg, p, pl, n, in_types, params);
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
    CHECK(plan_lay_out(sg, p)); /* core/planner.c */
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
