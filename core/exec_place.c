/* Placement while a plan is built: each node runs on the first device of the session's order whose
 * kernel takes it; where a value is made on one device and read on another, a copy step moves it
 * (once per value and device), and constants read on a device are uploaded (weights once per rep
 * and device, shared by its plans; others once per plan). Graph
 * outputs and values that subgraphs read stay on the CPU: a device step that makes one writes a
 * copy of its own, moved to the CPU right after it. On a device with graphs, inputs and outputs
 * left in its memory pass through copies within it (io_staged). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec_place.h"
#include "core/exec_frame.h"
#include "core/log.h"
#include "core/op_schema.h"
#include "core/plan_prepare.h"
#include "core/shared.h"

/* ------------------------------------------------------------------ copy steps */

typedef struct copy_state {
    const device_ops *from, *to;
} copy_state;

static onyx_status copy_run(const kernel_call *c) {
    const copy_state *s = c->state;
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (!x || !y || x->nbytes != y->nbytes || x->device != s->from->kind ||
        y->device != s->to->kind)
        return onyx_error(ONYX_ERR_RUNTIME, "copy between devices: tensors do not match the plan");
    if (x->nbytes == 0) return ONYX_OK;
    if (s->from == s->to) /* staging within a device (io_staged) */
        return s->to->copy(plan_step_queue(c, s->to->kind), y->data, x->data, x->nbytes);
    if (s->from->kind == DEVICE_CPU)
        return s->to->from_host(plan_step_queue(c, s->to->kind), y->data, x->data, x->nbytes);
    if (s->to->kind == DEVICE_CPU)
        return s->from->to_host(plan_step_queue(c, s->from->kind), y->data, x->data, x->nbytes);
    /* between two devices: through host memory */
    void *host;
    TRY(kernel_scratch(c, x->nbytes, &host));
    TRY(s->from->to_host(plan_step_queue(c, s->from->kind), host, x->data, x->nbytes));
    return s->to->from_host(plan_step_queue(c, s->to->kind), y->data, host, x->nbytes);
}

/* One kernel per destination device, so that profiles and logs say where a copy goes: onto the
 * host, from the host onto a device, or within a device (staging); made once for every slot of
 * the device registry. */
static kernel copy_kernels[DEVICE_KINDS], staging_kernels[DEVICE_KINDS];
static pthread_once_t copy_kernels_once = PTHREAD_ONCE_INIT;

static void make_copy_kernels(void) {
    for (int d = 0; d < DEVICE_KINDS; d++) {
        kernel k = {.domain = "onyx", .since_min = 1, .since_max = 1, .device = (device_kind)d,
                    .flags = KF_DEVICE_COPY, .run = copy_run, .release = free};
        copy_kernels[d] = staging_kernels[d] = k;
        copy_kernels[d].op_type = d == DEVICE_CPU ? "MemcpyToHost" : "MemcpyFromHost";
        staging_kernels[d].op_type = "MemcpyOnDevice";
    }
}

/* A node of the plan's own: a copy of `like` (or an empty node), with room for its inputs and
 * outputs and a name of up to `name_cap` bytes, all in one allocation (freed with free). */
static graph_node *own_node(const graph_node *like, int n_in, int n_out, size_t name_cap) {
    size_t ints = (size_t)n_in + (size_t)n_out;
    graph_node *nc = calloc(1, sizeof *nc + ints * sizeof(int) + name_cap);
    if (!nc) return NULL;
    if (like) *nc = *like;
    nc->n_inputs = n_in;
    nc->n_outputs = n_out;
    nc->inputs = (int *)(nc + 1);
    nc->outputs = nc->inputs + n_in;
    if (like) {
        memcpy(nc->inputs, like->inputs, sizeof(int) * (size_t)n_in);
        memcpy(nc->outputs, like->outputs, sizeof(int) * (size_t)n_out);
    }
    if (name_cap) nc->name = (char *)(nc->outputs + n_out);
    return nc;
}

/* A new plan value holding graph value `source` on `device`, typed like plan value `like`. */
static onyx_status new_value(plan *p, int like, device_kind device, int *out) {
    if (p->n_vals == p->cap_vals) return onyx_error(ONYX_ERR_RUNTIME, "plan: out of value slots");
    int idx = p->n_vals;
    plan_value *v = &p->vals[idx];
    memset(v, 0, sizeof *v);
    type_init(&v->type);
    TRY(type_copy(&v->type, &p->vals[like].type));
    v->alias_of = -1;
    v->first = v->last = -1;
    v->device = device;
    v->source = p->vals[like].source;
    p->n_vals++;
    *out = idx;
    return ONYX_OK;
}

static onyx_status append_step(plan *p, plan_step **out) {
    if (p->n_steps == p->cap_steps) return onyx_error(ONYX_ERR_RUNTIME, "plan: out of step slots");
    plan_step *ps = &p->steps[p->n_steps];
    memset(ps, 0, sizeof *ps);
    *out = ps;
    return ONYX_OK;
}

/* Appends the step copying plan value `from` into plan value `to` (on another device, or on
 * the same one where io_staged). */
static onyx_status append_copy(const subgraph *sg, plan *p, int node, int from, int to) {
    const plan_value *src = &p->vals[from], *dst = &p->vals[to];
    pthread_once(&copy_kernels_once, make_copy_kernels);
    const kernel *k = src->device == dst->device ? &staging_kernels[dst->device]
                                                 : &copy_kernels[dst->device];
    const char *name = sg->g->values[src->source].name;
    size_t cap = strlen(name) + 16;
    plan_step *ps = NULL;
    TRY(append_step(p, &ps));
    graph_node *nc = own_node(NULL, 1, 1, cap);
    if (!nc) return onyx_oom("copy step");
    snprintf((char *)nc->name, cap, "%s:to_%s", name, device_name(dst->device));
    nc->op_type = k->op_type;
    nc->domain = "onyx";
    nc->version = 1;
    nc->inputs[0] = from;
    nc->outputs[0] = to;
    ps->node = node;
    ps->own_node = nc;
    ps->k = k;
    p->vals[to].first = p->n_steps;
    p->n_steps++;
    /* the state is a pair of pointers to the environment's device tables */
    copy_state *cs = malloc(sizeof *cs);
    if (!cs) return onyx_oom("copy step");
    cs->from = p->devices[src->device];
    cs->to = p->devices[dst->device];
    ps->state = cs;
    return ONYX_OK;
}

/* ------------------------------------------------------------------ device constants */

/* A constant's bytes in a device's memory. */
typedef struct device_bytes {
    const device_ops *d;
    const tensor *host; /* make's: what to upload */
    void *data;
} device_bytes;

/* A copy of host tensor c's bytes in d's memory. */
static onyx_status upload_bytes(const device_ops *d, const tensor *c, void **out) {
    void *data = d->alloc(c->nbytes ? c->nbytes : 1);
    if (!data) return onyx_oom("device constant");
    onyx_status st = c->nbytes ? d->from_host(NULL, data, c->data, c->nbytes) : ONYX_OK;
    if (st != ONYX_OK) {
        d->free(data);
        return st;
    }
    *out = data;
    return ONYX_OK;
}

static onyx_status make_device_bytes(void *ctx, void **obj) {
    const device_bytes *want = ctx;
    device_bytes *b = malloc(sizeof *b);
    if (!b) return onyx_oom("device constant");
    *b = (device_bytes){.d = want->d};
    onyx_status st = upload_bytes(want->d, want->host, &b->data);
    if (st != ONYX_OK) {
        free(b);
        return st;
    }
    *obj = b;
    return ONYX_OK;
}

static void free_device_bytes(void *obj) {
    device_bytes *b = obj;
    b->d->free(b->data);
    free(b);
}

/* Uploads constant plan value `host` to `device` as plan value *out. A weight the rep keeps as
 * long as its plans (an initializer, or what a subgraph folded from them) is uploaded once per rep
 * and device, its bytes shared by every plan: a decoder's plans for prompts, decode steps and the
 * generic one would otherwise each hold the whole model in the device's memory. */
static onyx_status upload_constant(const subgraph *sg, plan *p, int host, device_kind device,
                                   int *out) {
    const tensor *c = p->vals[host].constant;
    if (c->dtype == ONYX_STRING)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "string constants live on the CPU only");
    int nv;
    TRY(new_value(p, host, device, &nv));
    plan_value *v = &p->vals[nv];
    tensor *t = calloc(1, sizeof *t);
    if (!t) return onyx_oom("device constant");
    *t = *c;
    t->owns = false;
    t->device = device;
    t->data = NULL;
    v->constant = t;
    v->owns_constant = true;
    v->where = ST_CONST;
    if (p->vals[host].from_weights && !p->vals[host].owns_constant && sg->env.shared) {
        device_bytes want = {.d = p->devices[device], .host = c};
        struct {
            char tag[8];
            int device;
            const void *host;
            size_t nbytes;
        } key;
        memset(&key, 0, sizeof key); /* the padding too: keys compare as bytes */
        memcpy(key.tag, "devbytes", 8);
        key.device = (int)device;
        key.host = c->data;
        key.nbytes = c->nbytes;
        void *obj = NULL;
        bool made = false;
        TRY(shared_cache_get(sg->env.shared, &key, sizeof key, make_device_bytes,
                             free_device_bytes, &want, &obj, &made));
        t->data = ((device_bytes *)obj)->data;
        v->shared_bytes = true;
    } else {
        TRY(upload_bytes(p->devices[device], c, &t->data));
    }
    *out = nv;
    return ONYX_OK;
}

/* ------------------------------------------------------------------ placement */

onyx_status placement_init(placement *pl, const subgraph *sg, const plan *p) {
    const graph *g = sg->g;
    memset(pl, 0, sizeof *pl);
    pl->host_only = calloc((size_t)g->n_values + 1, sizeof *pl->host_only);
    if (!pl->host_only) return onyx_oom("placement");
    for (int d = 0; d < DEVICE_KINDS; d++) {
        if (!(pl->copy_on[d] = malloc(sizeof(int) * ((size_t)p->cap_vals + 1)))) {
            placement_free(pl);
            return onyx_oom("placement");
        }
        for (int i = 0; i < p->cap_vals; i++) pl->copy_on[d][i] = -1;
    }
    for (int i = 0; i < g->n_values; i++)
        pl->host_only[i] = (g->values[i].flags & GV_OUTPUT) && p->out_device == DEVICE_CPU;
    for (int n = 0; n < g->n_nodes; n++)
        for (int c = 0; c < g->nodes[n].n_captures; c++) pl->host_only[g->nodes[n].captures[c]] = true;
    return ONYX_OK;
}

void placement_free(placement *pl) {
    for (int d = 0; d < DEVICE_KINDS; d++) free(pl->copy_on[d]);
    free(pl->host_only);
    memset(pl, 0, sizeof *pl);
}

/* Whether plan value vi, a graph input or output in `device`'s memory, is read or made there
 * through a copy in the device's arena: where the device replays its steps as graphs, which
 * record fixed addresses, the caller's buffers (new each run) would keep the steps that read
 * the inputs and make the outputs out of the graph, each launched from the host at every run;
 * a copy within the device costs less than such a launch of a library call. */
static bool io_staged(const subgraph *sg, const plan *p, int vi, device_kind device) {
    const type_info *t = &p->vals[vi].type;
    return device != DEVICE_CPU && sg->env.device_graphs && p->devices[device] &&
           p->devices[device]->capture_begin && t->kind == ONYX_VALUE_TENSOR &&
           type_is_static(t) && t->dtype != ONYX_STRING;
}

/* Whether a tensor of this type can live in a device's memory: numbers, of a known shape unless
 * `run_shapes` (then sized per run). */
static bool device_tensor(const type_info *t, bool run_shapes) {
    return t->kind == ONYX_VALUE_TENSOR && t->dtype != ONYX_STRING && t->dtype != ONYX_UNDEFINED &&
           (run_shapes || type_is_static(t));
}

/* The plan value through which `node` on `device` reads graph value vi: vi itself when it lives
 * there (but for a staged input, unless `in_place`: a cache the kernel may append to where the
 * caller bound it), else a copy (made now, once). */
static onyx_status value_on(const subgraph *sg, plan *p, placement *pl, int node, int vi,
                            device_kind device, bool in_place, int *out) {
    if (pl->copy_on[device][vi] >= 0) { /* a copy, or a staged output's arena value */
        *out = pl->copy_on[device][vi];
        return ONYX_OK;
    }
    if (p->vals[vi].device == device &&
        (in_place || !(p->vals[vi].where == ST_INPUT && io_staged(sg, p, vi, device)))) {
        *out = vi;
        return ONYX_OK;
    }
    int nv = -1;
    if (p->vals[vi].where == ST_CONST) {
        TRY(upload_constant(sg, p, vi, device, &nv));
    } else {
        /* a tensor of a shape known only at run moves as one (sized by the copy step per run):
         * only a KF_RUN_SHAPES kernel on a device reads or makes such values there */
        const type_info *t = &p->vals[vi].type;
        if (!device_tensor(t, true))
            return onyx_error(ONYX_ERR_UNSUPPORTED,
                              "value '%s' (%s) cannot move from %s to %s: only tensors of numbers "
                              "do", sg->g->values[vi].name,
                              t->kind == ONYX_VALUE_TENSOR ? "tensor" : "not a tensor",
                              device_name(p->vals[vi].device), device_name(device));
        TRY(new_value(p, vi, device, &nv));
        TRY(append_copy(sg, p, node, vi, nv));
    }
    pl->copy_on[device][vi] = nv;
    *out = nv;
    return ONYX_OK;
}

/* Whether kernel k of a device other than the CPU can hold this node at all: tensors in and out
 * (of shapes known now, unless k reads them at run: KF_RUN_SHAPES), no subgraphs. */
static bool device_can_hold(const plan *p, const graph_node *node, const kernel *k) {
    if (node->n_captures > 0) return false;
    for (int a = 0; a < node->n_attrs; a++)
        if (node->attrs[a].type == ATTR_GRAPH || node->attrs[a].type == ATTR_GRAPHS) return false;
    bool run_shapes = k->flags & KF_RUN_SHAPES;
    for (int i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0 && !device_tensor(&p->vals[node->inputs[i]].type, run_shapes))
            return false;
    for (int o = 0; o < node->n_outputs; o++)
        if (node->outputs[o] >= 0 && !device_tensor(&p->vals[node->outputs[o]].type, run_shapes))
            return false;
    return true;
}

/* The first kernel in the session's device order that takes the node. */
static const kernel *choose_kernel(const subgraph *sg, const plan *p, const graph_node *node,
                                   const type_info *const *in_types, const op_params *params) {
    const kernel *k = NULL;
    for (int i = 0; i < sg->env.n_priority && !k; i++) {
        device_kind d = sg->env.priority[i];
        const kernel *cand = sg->env.find_kernel(node, node->n_inputs, in_types, d);
        if (!cand) continue;
        if (d != DEVICE_CPU && !device_can_hold(p, node, cand)) continue;
        if (cand->supports && !plan_kernel_supports(sg, p, cand, node, params)) continue;
        k = cand;
    }
    return k;
}

onyx_status place_node(subgraph *sg, plan *p, placement *pl, int n,
                       const type_info *const *in_types, const op_params *params) {
    const graph *g = sg->g;
    const graph_node *node = &g->nodes[n];
    char label[256];
    const kernel *k = choose_kernel(sg, p, node, in_types, params);
    if (!k) {
        /* why, as the CPU (every session's last resort) says it; a CPU kernel here declined */
        if (sg->env.select(node, node->n_inputs, in_types, DEVICE_CPU))
            onyx_error(ONYX_ERR_UNSUPPORTED, "the CPU kernel for %s does not take these inputs",
                       node->op_type);
        return onyx_error_prefix(ONYX_ERR_UNSUPPORTED, "%s", node_label(node, label, sizeof label));
    }
    device_kind d = k->device;
    /* with several devices, every node's place (onyx info --placement reads these lines) */
    if (d != DEVICE_CPU || sg->env.n_priority > 1)
        log_write(&sg->env.log, ONYX_LOG_VERBOSE, "placement: %s on %s",
                  node_label(node, label, sizeof label), device_name(d));

    /* inputs: read where the kernel runs */
    graph_node *nc = NULL;
    for (int i = 0; i < node->n_inputs; i++) {
        int vi = node->inputs[i], at = -1;
        if (vi < 0) continue;
        bool on_host = i < 32 && (k->host_inputs & (1u << i));
        /* KF_CACHE_IN_PLACE: past key / value (inputs 3 and 4), which present may be over */
        bool in_place = (k->flags & KF_CACHE_IN_PLACE) && (i == 3 || i == 4);
        onyx_status st = value_on(sg, p, pl, n, vi, on_host ? DEVICE_CPU : d, in_place, &at);
        if (st != ONYX_OK) {
            free(nc);
            return onyx_error_prefix(st, "%s", node_label(node, label, sizeof label));
        }
        if (at == vi) continue;
        if (!nc && !(nc = own_node(node, node->n_inputs, node->n_outputs, 0)))
            return onyx_oom("placement");
        nc->inputs[i] = at;
    }
    /* outputs that must be on the CPU are made in copies of the device's, moved right after,
     * and graph outputs left in the device's memory are made in the arena where io_staged:
     * those where nc's output differs from the node's */
    for (int o = 0; o < node->n_outputs; o++) {
        int vi = node->outputs[o];
        if (vi < 0) continue;
        bool staged = d != DEVICE_CPU && !pl->host_only[vi] && p->out_device == d &&
                      plan_value_is_output(g, vi) && io_staged(sg, p, vi, d);
        if (d == DEVICE_CPU || (!pl->host_only[vi] && !staged)) {
            p->vals[vi].device = d;
            continue;
        }
        int nv = -1;
        onyx_status st = new_value(p, vi, d, &nv);
        if (st == ONYX_OK && !nc && !(nc = own_node(node, node->n_inputs, node->n_outputs, 0)))
            st = onyx_oom("placement");
        if (st != ONYX_OK) {
            free(nc);
            return st;
        }
        nc->outputs[o] = nv;
        pl->copy_on[d][vi] = nv;
    }
    plan_step *ps = NULL;
    onyx_status st = append_step(p, &ps);
    if (st != ONYX_OK) {
        free(nc);
        return st;
    }
    ps->node = n;
    ps->k = k;
    ps->own_node = nc;
    ps->params = params;
    const graph_node *runs = nc ? nc : node;
    for (int o = 0; o < runs->n_outputs; o++)
        if (runs->outputs[o] >= 0) p->vals[runs->outputs[o]].first = p->n_steps;
    p->n_steps++;
    st = plan_prepare_kernel(sg, p, k, runs, params, NULL, &ps->state);
    if (st != ONYX_OK) return onyx_error_prefix(st, "%s", node_label(node, label, sizeof label));
    for (int o = 0; nc && o < node->n_outputs; o++) {
        int from = nc->outputs[o], to = node->outputs[o];
        if (to < 0 || from == to) continue;
        p->vals[to].device = pl->host_only[to] ? DEVICE_CPU : d;
        TRY(append_copy(sg, p, n, from, to));
    }
    return ONYX_OK;
}
