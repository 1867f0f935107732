/* The rewriter's state and the helpers the rules share (core/rewriter.h): reader lists built once
 * per pass, so that a rule asks who reads a value without scanning the graph, and the placed
 * nodes, put in order once the pass is over. */
#include "core/rewriter.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph_types.h"

onyx_status rw_init(rewriter *r, const graph *g, const op_registry *ops) {
    *r = (rewriter){.g = g, .ops = ops};
    size_t nv = (size_t)g->n_values, nn = (size_t)g->n_nodes;
    r->uses = calloc(nv + 1, sizeof *r->uses);
    r->producer = malloc((nv + 1) * sizeof *r->producer);
    r->reader_at = calloc(nv + 2, sizeof *r->reader_at);
    r->gone = calloc(nn + 1, sizeof *r->gone);
    r->retyped = calloc(nv + 1, sizeof *r->retyped);
    if (!r->uses || !r->producer || !r->reader_at || !r->gone || !r->retyped)
        return onyx_oom("graph rewrite");
    for (int v = 0; v < g->n_values; v++) r->producer[v] = -1;
    /* per value, each node reading it once: counted, then filled in node order */
    int *last = malloc((nv + 1) * sizeof *last);
    if (!last) return onyx_oom("graph rewrite");
    for (int pass = 0; pass < 2; pass++) {
        for (int v = 0; v < g->n_values; v++) last[v] = -1;
        for (int n = 0; n < g->n_nodes; n++) {
            const graph_node *nd = &g->nodes[n];
            for (int k = 0; k < nd->n_inputs + nd->n_captures; k++) {
                int v = k < nd->n_inputs ? nd->inputs[k] : nd->captures[k - nd->n_inputs];
                if (v < 0 || last[v] == n) continue;
                last[v] = n;
                if (pass == 0) r->reader_at[v + 1]++;
                else r->reader[r->reader_at[v] + --r->uses[v]] = n; /* uses: room left, here */
            }
        }
        if (pass == 0) {
            for (int v = 0; v < g->n_values; v++) {
                r->uses[v] = r->reader_at[v + 1]; /* room, counted down as filled */
                r->reader_at[v + 1] += r->reader_at[v];
            }
            r->reader = malloc(((size_t)r->reader_at[g->n_values] + 1) * sizeof *r->reader);
            if (!r->reader) {
                free(last);
                return onyx_oom("graph rewrite");
            }
        }
    }
    free(last);
    /* filled from the back: put each list in node order */
    for (int v = 0; v < g->n_values; v++)
        for (int a = r->reader_at[v], b = r->reader_at[v + 1] - 1; a < b; a++, b--) {
            int t = r->reader[a];
            r->reader[a] = r->reader[b];
            r->reader[b] = t;
        }
    for (int n = 0; n < g->n_nodes; n++) {
        const graph_node *nd = &g->nodes[n];
        for (int i = 0; i < nd->n_inputs; i++)
            if (nd->inputs[i] >= 0) r->uses[nd->inputs[i]]++;
        for (int c = 0; c < nd->n_captures; c++) r->uses[nd->captures[c]] += 2; /* never inner */
        for (int o = 0; o < nd->n_outputs; o++)
            if (nd->outputs[o] >= 0) r->producer[nd->outputs[o]] = n;
    }
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] >= 0) r->uses[g->outputs[o]] += 2; /* graph outputs stay */
    return ONYX_OK;
}

void rw_free(rewriter *r) {
    for (int k = 0; k < r->n_placed; k++) {
        free(r->placed[k].node.inputs);
        free(r->placed[k].node.attrs);
    }
    free(r->placed);
    for (int k = 0; k < r->n_blocks; k++) free(r->blocks[k]);
    free(r->blocks);
    free(r->added);
    graph_types_free(r->g, r->types);
    free(r->uses);
    free(r->producer);
    free(r->reader_at);
    free(r->reader);
    free(r->gone);
    free(r->retyped);
    *r = (rewriter){0};
}

onyx_status rw_finish(rewriter *r, graph **out, void ***owned, int *n_owned) {
    *out = NULL;
    *owned = NULL;
    *n_owned = 0;
    if (r->n_placed == 0) return ONYX_OK;
    const graph *g = r->g;
    graph *copy = malloc(sizeof *copy);
    int *first = calloc((size_t)g->n_nodes * 2 + 1, sizeof *first); /* placed per slot, counted */
    int *order = malloc(((size_t)r->n_placed + 1) * sizeof *order);
    void **own = calloc(2 * (size_t)r->n_placed + (size_t)r->n_blocks + 1, sizeof *own);
    if (copy) {
        *copy = *g;
        copy->nodes = calloc((size_t)g->n_nodes + (size_t)r->n_placed + 1, sizeof *copy->nodes);
        copy->values = malloc(((size_t)g->n_values + (size_t)r->n_added + 1) *
                              sizeof *copy->values);
    }
    if (!copy || !first || !order || !own || !copy->nodes || !copy->values) {
        if (copy) {
            free(copy->nodes);
            free(copy->values);
        }
        free(copy);
        free(first);
        free(order);
        free(own);
        return onyx_oom("graph rewrite");
    }
    memcpy(copy->values, g->values, (size_t)g->n_values * sizeof *g->values);
    for (int v = 0; v < g->n_values; v++) {
        copy->values[v].producer = -1; /* set again below by the node that makes it, if any */
        if (r->retyped[v]) {
            type_init(&copy->values[v].type);
            copy->values[v].dim_params = NULL;
        }
    }
    if (r->n_added) /* r->added is NULL without */
        memcpy(copy->values + g->n_values, r->added, (size_t)r->n_added * sizeof *r->added);
    copy->n_values += r->n_added;
    int n_own = 0;
    for (int k = 0; k < r->n_blocks; k++) own[n_own++] = r->blocks[k];
    r->n_blocks = 0; /* owned by the copy now */
    /* the placed nodes by slot (2 per original node: at it, after it), in placement order */
    for (int k = 0; k < r->n_placed; k++)
        first[2 * r->placed[k].anchor + r->placed[k].after + 1]++;
    for (int s = 0; s < 2 * g->n_nodes; s++) first[s + 1] += first[s];
    for (int k = 0; k < r->n_placed; k++) {
        int slot = 2 * r->placed[k].anchor + r->placed[k].after;
        order[first[slot]++] = k;
    }
    int kept = 0, k = 0;
    for (int slot = 0; slot < 2 * g->n_nodes; slot++) {
        int n = slot / 2, end = first[slot];
        bool replaced = !(slot % 2) && k < end;
        if (!(slot % 2) && !replaced && !r->gone[n]) {
            copy->nodes[kept] = g->nodes[n];
            for (int o = 0; o < g->nodes[n].n_outputs; o++)
                if (g->nodes[n].outputs[o] >= 0) copy->values[g->nodes[n].outputs[o]].producer = kept;
            kept++;
        }
        for (; k < end; k++) {
            graph_node *nd = &r->placed[order[k]].node;
            own[n_own++] = nd->inputs; /* the copy owns the node's blocks from now on */
            if (nd->attrs) own[n_own++] = nd->attrs;
            copy->nodes[kept] = *nd;
            for (int o = 0; o < nd->n_outputs; o++)
                if (nd->outputs[o] >= 0) copy->values[nd->outputs[o]].producer = kept;
            kept++;
        }
    }
    copy->n_nodes = kept;
    r->n_placed = 0; /* owned by the copy now */
    free(first);
    free(order);
    *out = copy;
    *owned = own;
    *n_owned = n_own;
    return ONYX_OK;
}

/* ---- reading the graph */

bool rw_is_op(const graph_node *n, const char *op) {
    return n && !*n->domain && !strcmp(n->op_type, op);
}

int rw_index(const rewriter *r, const graph_node *n) { return (int)(n - r->g->nodes); }

const graph_node *rw_producer(const rewriter *r, int v) {
    if (v < 0 || r->producer[v] < 0 || r->gone[r->producer[v]]) return NULL;
    return &r->g->nodes[r->producer[v]];
}

int rw_readers(const rewriter *r, int v, const int **nodes) {
    if (v < 0) {
        *nodes = NULL;
        return 0;
    }
    *nodes = r->reader + r->reader_at[v];
    return r->reader_at[v + 1] - r->reader_at[v];
}

bool rw_reads_input(const graph_node *n, int v) {
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] == v) return true;
    return false;
}

const graph_node *rw_sole_reader(const rewriter *r, int v) {
    if (v < 0 || r->uses[v] != 1) return NULL;
    const int *nodes;
    int count = rw_readers(r, v, &nodes);
    for (int k = 0; k < count; k++) {
        const graph_node *nd = &r->g->nodes[nodes[k]];
        if (!r->gone[nodes[k]] && rw_reads_input(nd, v)) return nd;
    }
    return NULL;
}

int rw_other_input(const graph_node *n, int v) {
    if (!n || n->n_inputs != 2) return -1;
    if (n->inputs[0] == v) return n->inputs[1];
    if (n->inputs[1] == v) return n->inputs[0];
    return -1;
}

const tensor *rw_constant(const rewriter *r, int v) {
    for (int hops = 0; v >= 0 && hops < 8; hops++) {
        const graph_value *gv = &r->g->values[v];
        const graph_node *p = rw_producer(r, v);
        if (rw_is_op(p, "Identity") && p->n_inputs == 1) {
            v = p->inputs[0];
            continue;
        }
        return (gv->flags & GV_INITIALIZER) ? gv->init
               : rw_is_op(p, "Constant")      ? attr_tensor(p, "value")
                                              : NULL;
    }
    return NULL;
}

const tensor *rw_float_constant(const rewriter *r, int v) {
    const tensor *t = rw_constant(r, v);
    return t && dtype_is_float(t->dtype) ? t : NULL;
}

double rw_scalar(const rewriter *r, int v) {
    if (v < 0) return NAN;
    const tensor *t = NULL;
    const graph_value *gv = &r->g->values[v];
    if (gv->flags & GV_INITIALIZER) t = gv->init;
    const graph_node *p = rw_producer(r, v);
    if (!t && rw_is_op(p, "Constant")) t = attr_tensor(p, "value");
    if (!t || t->numel != 1 || !dtype_is_float(t->dtype)) return NAN;
    return tensor_get_f64(t, 0);
}

bool rw_near(double a, double b) { return fabs(a - b) <= 1e-3 * fabs(b); }

int64_t rw_reduce_axes(const rewriter *r, const graph_node *n, const int64_t **axes) {
    *axes = NULL;
    if (n->version < 18) return (int64_t)attr_ints(n, "axes", axes);
    if (n->n_inputs < 2 || n->inputs[1] < 0) return 0;
    const graph_value *gv = &r->g->values[n->inputs[1]];
    const tensor *a = (gv->flags & GV_INITIALIZER) ? gv->init : NULL;
    if (!a || a->dtype != ONYX_INT64 || a->rank != 1) return -1;
    *axes = a->data;
    return a->numel;
}

onyx_status rw_need_types(rewriter *r) {
    return r->types ? ONYX_OK : graph_infer_types(r->g, &r->types);
}

int rw_known_dims(rewriter *r, int v, const int64_t **dims) {
    if (!r->types && graph_infer_types(r->g, &r->types) != ONYX_OK) {
        /* out of memory for the types: recovered from, as the rules that need dims do not apply
         * (every rewrite is optional) */
        onyx_error_clear();
        r->types = NULL;
        return -1;
    }
    const type_info *t = r->types ? &r->types[v] : NULL;
    if (!t || t->kind != ONYX_VALUE_TENSOR || t->rank < 0) return -1;
    *dims = t->dims;
    return t->rank;
}

int rw_static_dims(rewriter *r, int v, const int64_t **dims) {
    int rank = rw_known_dims(r, v, dims);
    for (int i = 0; i < rank; i++)
        if ((*dims)[i] < 0) return -1;
    return rank;
}

/* ---- QDQ parameters */

bool rw_eight_bit(onyx_dtype t) { return t == ONYX_UINT8 || t == ONYX_INT8; }

bool rw_qdq_params(const rewriter *r, const graph_node *n, bool dq, int64_t count, int rank,
                   int axis_want, rw_qparams *out) {
    if (!rw_is_op(n, dq ? "DequantizeLinear" : "QuantizeLinear") || n->n_inputs < 3 ||
        n->n_outputs != 1 || n->inputs[0] < 0 || n->inputs[1] < 0 || n->inputs[2] < 0 ||
        attr_int(n, "block_size", 0) != 0)
        return false;
    int64_t out_type = attr_int(n, "output_dtype", 0); /* 0: the default (DQ float, Q zp's) */
    if (out_type != 0 && !(dq && out_type == 1 /* FLOAT */)) return false;
    const tensor *s = rw_constant(r, n->inputs[1]), *z = rw_constant(r, n->inputs[2]);
    if (!s || !z || s->dtype != ONYX_FLOAT || !rw_eight_bit(z->dtype) || s->numel != z->numel ||
        (count && s->numel != count))
        return false;
    if (s->numel > 1) { /* per channel: along axis_want of the quantized tensor */
        int64_t axis = attr_int(n, "axis", 1);
        if (axis < 0) axis += rank;
        if (axis != axis_want || s->rank != 1) return false;
    }
    *out = (rw_qparams){.x = n->inputs[0], .scale = n->inputs[1], .zero = n->inputs[2], .s = s,
                        .z = z};
    return true;
}

bool rw_activation_dq(const rewriter *r, int v, rw_qparams *out) {
    return rw_qdq_params(r, rw_producer(r, v), true, 1, 0, 0, out);
}

void rw_release(rewriter *r, int v) {
    if (v < 0 || --r->uses[v] > 0) return;
    const graph_node *p = rw_producer(r, v);
    if (!rw_is_op(p, "DequantizeLinear")) return;
    r->gone[rw_index(r, p)] = true;
    for (int i = 0; i < p->n_inputs; i++) rw_release(r, p->inputs[i]);
}

/* ---- the patch */

onyx_status rw_place_node(rewriter *r, const graph_node *anchor, bool after,
                          const graph_node *like, const graph_node *const *members,
                          int n_members) {
    const op_schema *schema = like->schema;
    /* An ai.onnx op as the model's opset defines it where that is newer than the version asked
     * for (which then differs only in the types it takes): the rewritten graph reads the same
     * under the model's opset when it is written out (core/model_write.c). */
    int64_t opset = *like->domain ? 0 : model_opset(r->g->model, "");
    /* (none there for an opset past onyx's newest: onyx.allow_newer_opsets) */
    if (!schema && opset > like->version)
        schema = r->ops->find(like->domain, like->op_type, opset);
    if (!schema) schema = r->ops->find(like->domain, like->op_type, like->version);
    if (!schema) return ONYX_OK; /* the registry lacks the op: keep the pattern as it is */
    if (r->n_placed == r->cap_placed) {
        int cap = r->cap_placed ? 2 * r->cap_placed : 16;
        rw_placed *grown = realloc(r->placed, (size_t)cap * sizeof *grown);
        if (!grown) return onyx_oom("graph rewrite");
        r->placed = grown;
        r->cap_placed = cap;
    }
    int n_io = like->n_inputs + like->n_outputs;
    int *io = calloc((size_t)n_io + 1, sizeof *io);
    graph_attr *attr = like->n_attrs ? calloc((size_t)like->n_attrs, sizeof *attr) : NULL;
    if (!io || (like->n_attrs && !attr)) {
        free(io);
        free(attr);
        return onyx_oom("graph rewrite");
    }
    for (int k = 0; k < n_members; k++) r->gone[rw_index(r, members[k])] = true;
    memcpy(io, like->inputs, (size_t)like->n_inputs * sizeof *io);
    memcpy(io + like->n_inputs, like->outputs, (size_t)like->n_outputs * sizeof *io);
    if (like->n_attrs) memcpy(attr, like->attrs, (size_t)like->n_attrs * sizeof *attr);
    rw_placed *p = &r->placed[r->n_placed++];
    p->anchor = rw_index(r, anchor);
    p->after = after;
    p->node = *like;
    p->node.version = schema->since_version;
    p->node.schema = schema;
    p->node.inputs = io;
    p->node.outputs = io + like->n_inputs;
    p->node.attrs = attr;
    return ONYX_OK;
}

onyx_status rw_place_at(rewriter *r, const graph_node *anchor, bool after, const char *name,
                        const graph_node *const *members, int n_members, const char *domain,
                        const char *op_type, int64_t version, const int *ins, int n_in, int y,
                        const graph_attr *attrs, int n_attrs) {
    int outs[1] = {y};
    graph_node like = {.name = name, .op_type = op_type, .domain = domain, .version = (int)version,
                       .n_inputs = n_in, .n_outputs = 1, .inputs = (int *)ins, .outputs = outs,
                       .attrs = (graph_attr *)attrs, .n_attrs = n_attrs};
    return rw_place_node(r, anchor, after, &like, members, n_members);
}

onyx_status rw_place(rewriter *r, const graph_node *last, const graph_node *const *members,
                     int n_members, const char *op_type, int64_t version, const int *ins, int n_in,
                     int y, const graph_attr *attrs, int n_attrs) {
    return rw_place_at(r, last, false, last->name, members, n_members, "", op_type, version, ins,
                       n_in, y, attrs, n_attrs);
}

bool rw_replaced(const rewriter *r, const graph_node *n) {
    int idx = rw_index(r, n);
    for (int k = 0; k < r->n_placed; k++)
        if (r->placed[k].anchor == idx && !r->placed[k].after) return true;
    return false;
}

const graph_node *rw_placed_after(const rewriter *r, const graph_node *n) {
    int idx = rw_index(r, n);
    for (int k = 0; k < r->n_placed; k++)
        if (r->placed[k].anchor == idx && r->placed[k].after) return &r->placed[k].node;
    return NULL;
}

bool rw_keep(rewriter *r, void *p) {
    void **grown = p ? realloc(r->blocks, ((size_t)r->n_blocks + 1) * sizeof *grown) : NULL;
    if (!grown) {
        free(p);
        return false;
    }
    r->blocks = grown;
    r->blocks[r->n_blocks++] = p;
    return true;
}

int rw_add_value(rewriter *r, int like, const char *suffix, tensor *init) {
    const char *base = r->g->values[like].name ? r->g->values[like].name : "";
    size_t len = strlen(base) + strlen(suffix) + 1;
    char *name = malloc(len);
    if (!rw_keep(r, name)) return -1;
    graph_value *grown = realloc(r->added, ((size_t)r->n_added + 1) * sizeof *grown);
    if (!grown) return -1;
    r->added = grown;
    snprintf(name, len, "%s%s", base, suffix);
    graph_value *v = &r->added[r->n_added];
    *v = (graph_value){.name = name, .producer = -1, .outer = -1, .init = init,
                       .flags = init ? GV_INITIALIZER : 0};
    type_init(&v->type);
    if (init) type_set_tensor(&v->type, init->dtype, init->rank, init->dims);
    return r->g->n_values + r->n_added++;
}

int rw_add_shape(rewriter *r, int like, const int64_t *dims, int n) {
    tensor *t = malloc(sizeof *t + (size_t)n * sizeof *dims);
    if (!rw_keep(r, t)) return -1;
    *t = (tensor){.dtype = ONYX_INT64, .rank = 1, .dims = {n}, .numel = n, .data = t + 1,
                  .nbytes = (size_t)n * sizeof *dims, .device = DEVICE_CPU};
    memcpy(t->data, dims, t->nbytes);
    return rw_add_value(r, like, "/shape", t);
}
