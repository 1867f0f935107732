/* Writes a model as onyx runs it (core/model_write.h): each graph rewritten as a session's level
 * asks, turned into protobuf-c messages allocated from one pool, packed and written through
 * temporary files renamed into place, so that a file being read in place (the external data of
 * the model loaded) is never overwritten under its reader. */
#include "core/model_write.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "core/graph_types.h"
#include "core/pool.h"

enum { EXTERNAL_ALIGN = 64 }; /* initializers in the external file start at multiples of this */

typedef struct writer {
    pool p; /* the messages, their arrays and strings */
    const model *m;
    const op_registry *ops;
    optimize_options opt;
    const model_write_options *w;
    graph **rewritten;    /* the graphs the rewrites made, freed at the end */
    int n_rewritten;
    const graph_node **nodes; /* every node written, for the version check, and its message */
    Onnx__NodeProto **protos;
    int n_nodes, cap_nodes;
    FILE *ext;            /* the external data file (its temporary name) */
    char *ext_path, *ext_tmp, *model_tmp;
    uint64_t ext_size;
} writer;

static bool is_default_domain(const char *d) { return !d || !*d || !strcmp(d, "ai.onnx"); }

/* ai.onnx opset -> the IR version ONNX released it with (onnx.helper's VERSION_TABLE): a raised
 * opset needs at least that IR. */
static int64_t ir_for_opset(int64_t opset) {
    static const int64_t first_opset_of_ir[][2] = {{9, 4},   {10, 5},  {11, 6},  {12, 7},
                                                   {15, 8},  {19, 9},  {21, 10}, {23, 11},
                                                   {24, 12}, {25, 13}, {28, 14}};
    int64_t ir = 3;
    for (size_t i = 0; i < sizeof first_opset_of_ir / sizeof *first_opset_of_ir; i++)
        if (opset >= first_opset_of_ir[i][0]) ir = first_opset_of_ir[i][1];
    return ir;
}

static char *dup(writer *w, const char *s) { return pool_strdup(&w->p, s ? s : ""); }

#define NEW(w, type, init, var)                                                                    \
    type *var = pool_alloc(&(w)->p, 1, sizeof(type));                                              \
    if (!var) return onyx_oom("optimized model");                                                  \
    *var = (type)init

/* ------------------------------------------------------------------ types */

static onyx_status type_proto(writer *w, const type_info *t, const char *const *dim_params,
                              Onnx__TypeProto **out) {
    *out = NULL;
    if (!t || t->kind == ONYX_VALUE_NONE) return ONYX_OK;
    NEW(w, Onnx__TypeProto, ONNX__TYPE_PROTO__INIT, tp);
    switch (t->kind) {
    case ONYX_VALUE_TENSOR: {
        NEW(w, Onnx__TypeProto__Tensor, ONNX__TYPE_PROTO__TENSOR__INIT, tt);
        tt->has_elem_type = t->dtype != ONYX_UNDEFINED;
        tt->elem_type = (int32_t)t->dtype;
        if (t->rank >= 0) {
            NEW(w, Onnx__TensorShapeProto, ONNX__TENSOR_SHAPE_PROTO__INIT, shape);
            shape->n_dim = (size_t)t->rank;
            shape->dim = pool_alloc(&w->p, (size_t)t->rank + 1, sizeof *shape->dim);
            if (!shape->dim) return onyx_oom("optimized model");
            for (int i = 0; i < t->rank; i++) {
                NEW(w, Onnx__TensorShapeProto__Dimension, ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT,
                    d);
                if (t->dims[i] >= 0) {
                    d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                    d->dim_value = t->dims[i];
                } else if (dim_params && dim_params[i]) {
                    d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                    d->dim_param = dup(w, dim_params[i]);
                    if (!d->dim_param) return onyx_oom("optimized model");
                }
                shape->dim[i] = d;
            }
            tt->shape = shape;
        }
        tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
        tp->tensor_type = tt;
        break;
    }
    case ONYX_VALUE_SEQUENCE: {
        NEW(w, Onnx__TypeProto__Sequence, ONNX__TYPE_PROTO__SEQUENCE__INIT, st);
        TRY(type_proto(w, t->elem, NULL, &st->elem_type));
        tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
        tp->sequence_type = st;
        break;
    }
    case ONYX_VALUE_OPTIONAL: {
        NEW(w, Onnx__TypeProto__Optional, ONNX__TYPE_PROTO__OPTIONAL__INIT, ot);
        TRY(type_proto(w, t->elem, NULL, &ot->elem_type));
        tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
        tp->optional_type = ot;
        break;
    }
    case ONYX_VALUE_MAP: {
        NEW(w, Onnx__TypeProto__Map, ONNX__TYPE_PROTO__MAP__INIT, mt);
        mt->has_key_type = t->dtype != ONYX_UNDEFINED;
        mt->key_type = (int32_t)t->dtype;
        TRY(type_proto(w, t->elem, NULL, &mt->value_type));
        tp->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
        tp->map_type = mt;
        break;
    }
    default: return ONYX_OK;
    }
    *out = tp;
    return ONYX_OK;
}

static onyx_status value_info(writer *w, const char *name, const type_info *t,
                              const char *const *dim_params, Onnx__ValueInfoProto **out) {
    NEW(w, Onnx__ValueInfoProto, ONNX__VALUE_INFO_PROTO__INIT, vi);
    vi->name = dup(w, name);
    if (!vi->name) return onyx_oom("optimized model");
    TRY(type_proto(w, t, dim_params, &vi->type));
    *out = vi;
    return ONYX_OK;
}

/* ------------------------------------------------------------------ tensors */

static Onnx__StringStringEntryProto *entry(writer *w, const char *key, const char *value) {
    Onnx__StringStringEntryProto *e = pool_alloc(&w->p, 1, sizeof *e);
    if (!e) return NULL;
    *e = (Onnx__StringStringEntryProto)ONNX__STRING_STRING_ENTRY_PROTO__INIT;
    e->key = dup(w, key);
    e->value = dup(w, value);
    return e->key && e->value ? e : NULL;
}

/* Appends the bytes to the external file at the next aligned offset: where they went. */
static onyx_status write_external(writer *w, const tensor *t, Onnx__TensorProto *tp) {
    uint64_t offset = (w->ext_size + EXTERNAL_ALIGN - 1) / EXTERNAL_ALIGN * EXTERNAL_ALIGN;
    static const unsigned char zeros[EXTERNAL_ALIGN];
    size_t pad = (size_t)(offset - w->ext_size);
    if ((pad && fwrite(zeros, 1, pad, w->ext) != pad) ||
        fwrite(t->data, 1, t->nbytes, w->ext) != t->nbytes)
        return onyx_error(ONYX_ERR_IO, "optimized model: cannot write '%s': %s", w->ext_path,
                          strerror(errno));
    w->ext_size = offset + t->nbytes;
    char off[32], len[32];
    snprintf(off, sizeof off, "%" PRIu64, offset);
    snprintf(len, sizeof len, "%zu", t->nbytes);
    tp->external_data = pool_alloc(&w->p, 3, sizeof *tp->external_data);
    if (!tp->external_data) return onyx_oom("optimized model");
    tp->external_data[0] = entry(w, "location", w->w->external_name);
    tp->external_data[1] = entry(w, "offset", off);
    tp->external_data[2] = entry(w, "length", len);
    if (!tp->external_data[0] || !tp->external_data[1] || !tp->external_data[2])
        return onyx_oom("optimized model");
    tp->n_external_data = 3;
    tp->has_data_location = 1;
    tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    return ONYX_OK;
}

/* `initializer`: it may go to the external file (attribute tensors stay in their node). */
static onyx_status tensor_proto(writer *w, const char *name, const tensor *t, bool initializer,
                                Onnx__TensorProto **out) {
    if (t->device != DEVICE_CPU || (t->nbytes && !t->data))
        return onyx_error(ONYX_ERR_UNSUPPORTED,
                          "optimized model: tensor '%s' is not in host memory", name ? name : "");
    NEW(w, Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT, tp);
    tp->name = name ? dup(w, name) : NULL;
    tp->has_data_type = 1;
    tp->data_type = (int32_t)t->dtype;
    tp->n_dims = (size_t)t->rank;
    tp->dims = (int64_t *)t->dims; /* packed, never changed */
    if (t->dtype == ONYX_STRING) {
        const char *const *s = t->data;
        tp->n_string_data = (size_t)t->numel;
        tp->string_data = pool_alloc(&w->p, (size_t)t->numel + 1, sizeof *tp->string_data);
        if (!tp->string_data) return onyx_oom("optimized model");
        for (int64_t i = 0; i < t->numel; i++) {
            tp->string_data[i].data = (uint8_t *)s[i];
            tp->string_data[i].len = strlen(s[i]);
        }
    } else if (initializer && w->ext && t->nbytes >= w->w->external_min_bytes) {
        TRY(write_external(w, t, tp));
    } else {
        tp->has_raw_data = 1;
        tp->raw_data.data = t->data;
        tp->raw_data.len = t->nbytes;
    }
    *out = tp;
    return ONYX_OK;
}

/* ------------------------------------------------------------------ names */

/* The names values are written with: a graph's own, and those of the graphs around it (which its
 * captures read and its own may not shadow). The rewrites name the values they add after others
 * and do not look for clashes (the engine refers to values by index): a name taken already gets a
 * suffix. */
typedef struct scope {
    const struct scope *parent;
    const char **names; /* per value of the graph, as written */
    const char **set;   /* the names of this graph, open addressing */
    size_t cap;
} scope;

static uint64_t hash_name(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool taken(const scope *sc, const char *name) {
    for (; sc; sc = sc->parent)
        for (size_t i = hash_name(name) & (sc->cap - 1); sc->set[i]; i = (i + 1) & (sc->cap - 1))
            if (!strcmp(sc->set[i], name)) return true;
    return false;
}

static void take(scope *sc, const char *name) {
    size_t i = hash_name(name) & (sc->cap - 1);
    while (sc->set[i]) i = (i + 1) & (sc->cap - 1);
    sc->set[i] = name;
}

static onyx_status name_values(writer *w, const graph *g, const scope *parent, scope *sc) {
    *sc = (scope){.parent = parent, .cap = 16};
    while (sc->cap < 2 * (size_t)g->n_values + 2) sc->cap *= 2;
    sc->names = pool_alloc(&w->p, (size_t)g->n_values + 1, sizeof *sc->names);
    sc->set = pool_alloc(&w->p, sc->cap, sizeof *sc->set);
    if (!sc->names || !sc->set) return onyx_oom("optimized model");
    for (int v = 0; v < g->n_values; v++) {
        const graph_value *gv = &g->values[v];
        if (gv->flags & GV_CAPTURED) {
            sc->names[v] = parent ? parent->names[gv->outer] : gv->name;
            continue;
        }
        const char *name = gv->name;
        if (taken(sc, name)) {
            size_t len = strlen(gv->name) + 24;
            char *fresh = pool_alloc(&w->p, len, 1);
            if (!fresh) return onyx_oom("optimized model");
            unsigned k = 1;
            do snprintf(fresh, len, "%s_%u", gv->name, k++);
            while (taken(sc, fresh));
            name = fresh;
        }
        take(sc, name);
        sc->names[v] = name;
    }
    return ONYX_OK;
}

/* ------------------------------------------------------------------ nodes and graphs */

static onyx_status graph_proto(writer *w, const graph *orig, const scope *parent,
                               Onnx__GraphProto **out);

static onyx_status attribute_proto(writer *w, const scope *sc, const graph_node *n,
                                   const graph_attr *a, Onnx__AttributeProto **out) {
    NEW(w, Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT, ap);
    ap->name = dup(w, a->name);
    if (!ap->name) return onyx_oom("optimized model");
    ap->has_type = 1;
    ap->type = (Onnx__AttributeProto__AttributeType)a->type;
    switch (a->type) {
    case ATTR_FLOAT: ap->has_f = 1; ap->f = a->f; break;
    case ATTR_INT: ap->has_i = 1; ap->i = a->i; break;
    case ATTR_STRING:
        ap->has_s = 1;
        ap->s.data = (uint8_t *)a->s;
        ap->s.len = a->s_len;
        break;
    case ATTR_TENSOR: TRY(tensor_proto(w, NULL, a->t, false, &ap->t)); break;
    case ATTR_GRAPH: TRY(graph_proto(w, a->g, sc, &ap->g)); break;
    case ATTR_FLOATS: ap->n_floats = a->n; ap->floats = (float *)a->floats; break;
    case ATTR_INTS: ap->n_ints = a->n; ap->ints = (int64_t *)a->ints; break;
    case ATTR_STRINGS:
        ap->n_strings = a->n;
        ap->strings = pool_alloc(&w->p, a->n + 1, sizeof *ap->strings);
        if (!ap->strings) return onyx_oom("optimized model");
        for (size_t i = 0; i < a->n; i++) {
            ap->strings[i].data = (uint8_t *)a->strings[i];
            ap->strings[i].len = strlen(a->strings[i]);
        }
        break;
    case ATTR_TENSORS:
        ap->n_tensors = a->n;
        ap->tensors = pool_alloc(&w->p, a->n + 1, sizeof *ap->tensors);
        if (!ap->tensors) return onyx_oom("optimized model");
        for (size_t i = 0; i < a->n; i++)
            TRY(tensor_proto(w, NULL, a->tensors[i], false, &ap->tensors[i]));
        break;
    case ATTR_GRAPHS:
        ap->n_graphs = a->n;
        ap->graphs = pool_alloc(&w->p, a->n + 1, sizeof *ap->graphs);
        if (!ap->graphs) return onyx_oom("optimized model");
        for (size_t i = 0; i < a->n; i++) TRY(graph_proto(w, a->graphs[i], sc, &ap->graphs[i]));
        break;
    default: {
        /* sparse tensors are kept densified, type protos not at all: ONNX cannot get them back */
        char label[256];
        return onyx_error(ONYX_ERR_UNSUPPORTED,
                          "optimized model: %s: onyx cannot write attribute '%s' of type %s",
                          node_label(n, label, sizeof label), a->name,
                          graph_attr_type_name((int)a->type));
    }
    }
    *out = ap;
    return ONYX_OK;
}

static onyx_status node_proto(writer *w, const scope *sc, const graph_node *n,
                              Onnx__NodeProto **out) {
    NEW(w, Onnx__NodeProto, ONNX__NODE_PROTO__INIT, np);
    np->name = n->name && n->name[0] ? dup(w, n->name) : NULL;
    np->op_type = dup(w, n->op_type);
    np->domain = dup(w, n->domain);
    np->input = pool_alloc(&w->p, (size_t)n->n_inputs + 1, sizeof *np->input);
    np->output = pool_alloc(&w->p, (size_t)n->n_outputs + 1, sizeof *np->output);
    np->attribute = pool_alloc(&w->p, (size_t)n->n_attrs + 1, sizeof *np->attribute);
    if (!np->op_type || !np->domain || !np->input || !np->output || !np->attribute)
        return onyx_oom("optimized model");
    np->n_input = (size_t)n->n_inputs;
    np->n_output = (size_t)n->n_outputs;
    np->n_attribute = (size_t)n->n_attrs;
    for (int k = 0; k < n->n_inputs; k++)
        np->input[k] = (char *)(n->inputs[k] >= 0 ? sc->names[n->inputs[k]] : "");
    for (int k = 0; k < n->n_outputs; k++)
        np->output[k] = (char *)(n->outputs[k] >= 0 ? sc->names[n->outputs[k]] : "");
    for (int k = 0; k < n->n_attrs; k++)
        TRY(attribute_proto(w, sc, n, &n->attrs[k], &np->attribute[k]));
    if (w->n_nodes == w->cap_nodes) {
        int cap = w->cap_nodes ? 2 * w->cap_nodes : 64;
        const graph_node **nodes = realloc(w->nodes, (size_t)cap * sizeof *nodes);
        if (nodes) w->nodes = nodes;
        Onnx__NodeProto **protos = realloc(w->protos, (size_t)cap * sizeof *protos);
        if (protos) w->protos = protos;
        if (!nodes || !protos) return onyx_oom("optimized model");
        w->cap_nodes = cap;
    }
    w->nodes[w->n_nodes] = n;
    w->protos[w->n_nodes++] = np;
    *out = np;
    return ONYX_OK;
}

static onyx_status keep_rewritten(writer *w, graph *rewritten) {
    if (!rewritten) return ONYX_OK;
    graph **rs = realloc(w->rewritten, ((size_t)w->n_rewritten + 1) * sizeof *rs);
    if (!rs) {
        graph_optimized_free(rewritten);
        return onyx_oom("optimized model");
    }
    w->rewritten = rs;
    w->rewritten[w->n_rewritten++] = rewritten;
    return ONYX_OK;
}

/* The graph's outputs as the model declares them; where it gives no element type (or no type), as
 * inference finds them (ONNX requires an output's element type). */
static onyx_status outputs(writer *w, const graph *orig, const graph *g, const scope *sc,
                           Onnx__GraphProto *gp) {
    type_info *inferred = NULL;
    onyx_status st = ONYX_OK;
    for (int k = 0; k < g->n_outputs; k++) {
        /* a rewrite that remakes an output drops its declared type: the model's is still true */
        int v = g->outputs[k];
        const graph_value *gv = v < orig->n_values ? &orig->values[v] : &g->values[v];
        const type_info *t = &gv->type;
        if (t->kind == ONYX_VALUE_NONE ||
            (t->kind == ONYX_VALUE_TENSOR && t->dtype == ONYX_UNDEFINED)) {
            if (!inferred) CHECK(graph_infer_types(g, &inferred));
            t = &inferred[v];
        }
        CHECK(value_info(w, sc->names[v], t, gv->dim_params, &gp->output[gp->n_output++]));
    }
done:
    if (inferred) graph_types_free(g, inferred);
    return st;
}

/* `orig` rewritten as the session's level asks, as a GraphProto. */
static onyx_status graph_proto(writer *w, const graph *orig, const scope *parent,
                               Onnx__GraphProto **out) {
    graph *rewritten = NULL;
    TRY(graph_optimize(orig, w->ops, &w->opt, &rewritten));
    const graph *g = rewritten ? rewritten : orig;
    TRY(keep_rewritten(w, rewritten));
    scope sc;
    TRY(name_values(w, g, parent, &sc));
    bool is_main = !orig->parent;
    /* initializers nothing reads any more (the rewrites folded them into others) are left out */
    bool *used = pool_alloc(&w->p, (size_t)g->n_values + 1, sizeof *used);
    if (!used) return onyx_oom("optimized model");
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) used[n->inputs[k]] = true;
        for (int k = 0; k < n->n_captures; k++) used[n->captures[k]] = true;
    }
    for (int k = 0; k < g->n_outputs; k++) used[g->outputs[k]] = true;
    size_t n_init = 0, n_info = 0;
    for (int v = 0; v < g->n_values; v++) {
        const graph_value *gv = &g->values[v];
        if (gv->flags & GV_CAPTURED) continue;
        if ((gv->flags & GV_INITIALIZER) && used[v]) n_init++;
        else if (gv->producer >= 0 && !(gv->flags & GV_OUTPUT) && gv->type.kind != ONYX_VALUE_NONE)
            n_info++;
    }
    /* before IR 4 every initializer is also a graph input (onyx's main graph keeps such inputs
     * constant, as it did when it loaded them) */
    bool inits_as_inputs = is_main && w->m->ir_version < 4;
    NEW(w, Onnx__GraphProto, ONNX__GRAPH_PROTO__INIT, gp);
    gp->name = dup(w, g->name);
    gp->doc_string = is_main && w->m->graph_doc_string && *w->m->graph_doc_string
                         ? dup(w, w->m->graph_doc_string) : NULL;
    gp->node = pool_alloc(&w->p, (size_t)g->n_nodes + 1, sizeof *gp->node);
    gp->initializer = pool_alloc(&w->p, n_init + 1, sizeof *gp->initializer);
    gp->input = pool_alloc(&w->p, (size_t)g->n_inputs + (inits_as_inputs ? n_init : 0) + 1,
                           sizeof *gp->input);
    gp->output = pool_alloc(&w->p, (size_t)g->n_outputs + 1, sizeof *gp->output);
    gp->value_info = pool_alloc(&w->p, n_info + 1, sizeof *gp->value_info);
    if (!gp->name || !gp->node || !gp->initializer || !gp->input || !gp->output || !gp->value_info)
        return onyx_oom("optimized model");
    for (int i = 0; i < g->n_nodes; i++)
        TRY(node_proto(w, &sc, &g->nodes[i], &gp->node[gp->n_node++]));
    for (int k = 0; k < g->n_inputs; k++) {
        const graph_value *gv = &g->values[g->inputs[k]];
        TRY(value_info(w, sc.names[g->inputs[k]], &gv->type, gv->dim_params,
                       &gp->input[gp->n_input++]));
    }
    for (int v = 0; v < g->n_values; v++) {
        const graph_value *gv = &g->values[v];
        if (gv->flags & GV_CAPTURED) continue;
        if ((gv->flags & GV_INITIALIZER) && used[v]) {
            TRY(tensor_proto(w, sc.names[v], gv->init, true,
                             &gp->initializer[gp->n_initializer++]));
            if (inits_as_inputs)
                TRY(value_info(w, sc.names[v], &gv->type, NULL, &gp->input[gp->n_input++]));
        } else if (gv->producer >= 0 && !(gv->flags & GV_OUTPUT) &&
                   gv->type.kind != ONYX_VALUE_NONE) {
            TRY(value_info(w, sc.names[v], &gv->type, gv->dim_params,
                           &gp->value_info[gp->n_value_info++]));
        }
    }
    TRY(outputs(w, orig, g, &sc, gp));
    *out = gp;
    return ONYX_OK;
}

/* ------------------------------------------------------------------ opsets */

/* The opset of `domain` the written model imports (`onnx_opset` for ai.onnx). */
static int64_t written_opset(const writer *w, const char *domain, int64_t onnx_opset) {
    if (is_default_domain(domain)) return onnx_opset;
    int64_t v = model_opset(w->m, domain);
    return v ? v : 1;
}

/* Whether ai.onyx names node n's op at n's version (ops/registry.c's aliases). */
static bool has_alias(const writer *w, const graph_node *n) {
    const op_schema *s = w->ops->find("ai.onyx", n->op_type, 1);
    return s && !*s->domain && !strcmp(s->op_type, n->op_type) && s->since_version == n->version;
}

/* Whether every node reads as its own version under ai.onnx `opset` (the others' opsets as the
 * model imports them), where `aliases` lets an ai.onnx op newer than it be written in ai.onyx;
 * *bad: the first node that would not. */
static bool reads_the_same(const writer *w, int64_t opset, bool aliases, const graph_node **bad) {
    for (int i = 0; i < w->n_nodes; i++) {
        const graph_node *n = w->nodes[i];
        *bad = n;
        if (aliases && is_default_domain(n->domain) && n->version > opset) {
            if (!has_alias(w, n)) return false;
            continue;
        }
        const op_schema *s =
            w->ops->find(n->domain, n->op_type, written_opset(w, n->domain, opset));
        if (!s || s->since_version != n->version) return false;
    }
    return true;
}

/* The ai.onnx opset of the written model: the model's, raised to the newest version a rewrite made
 * where every other node still reads as its own version; else the model's, with the newer ops
 * written under their ai.onyx names (set in their messages). */
static onyx_status choose_opset(writer *w, int64_t *onnx_opset) {
    int64_t opset = model_opset(w->m, ""), raised = opset;
    const graph_node *newest = NULL, *bad = NULL, *unused;
    char label[256], other[256];
    for (int i = 0; i < w->n_nodes; i++) {
        const graph_node *n = w->nodes[i];
        if (!n->schema)
            return onyx_error(ONYX_ERR_UNSUPPORTED, "optimized model: %s: %s",
                              node_label(n, label, sizeof label),
                              n->unsupported ? n->unsupported : "no schema");
        if (is_default_domain(n->domain) && n->version > raised) {
            raised = n->version;
            newest = n;
        }
    }
    if (reads_the_same(w, raised, false, &bad)) {
        *onnx_opset = raised;
        return ONYX_OK;
    }
    if (newest && reads_the_same(w, opset, true, &unused)) {
        for (int i = 0; i < w->n_nodes; i++)
            if (is_default_domain(w->nodes[i]->domain) && w->nodes[i]->version > opset)
                w->protos[i]->domain = (char *)"ai.onyx";
        *onnx_opset = opset;
        return ONYX_OK;
    }
    char why[600] = "";
    if (newest)
        snprintf(why, sizeof why, " (raised from %" PRId64 " for the rewrite's %s, which ai.onyx "
                 "has no name for)", opset, node_label(newest, other, sizeof other));
    return onyx_error(ONYX_ERR_UNSUPPORTED,
                      "optimized model: %s would not read as that version under opset %" PRId64
                      " of %s%s; onyx cannot write this graph",
                      node_label(bad, label, sizeof label),
                      written_opset(w, bad->domain, raised),
                      is_default_domain(bad->domain) ? "ai.onnx" : bad->domain, why);
}

static onyx_status opset_imports(writer *w, Onnx__ModelProto *mp) {
    int64_t onnx_opset = 0;
    TRY(choose_opset(w, &onnx_opset));
    /* the model's imports, and the domains the rewrites brought in */
    int cap = w->m->n_opsets + w->n_nodes + 2;
    mp->opset_import = pool_alloc(&w->p, (size_t)cap, sizeof *mp->opset_import);
    if (!mp->opset_import) return onyx_oom("optimized model");
    bool have_default = false;
    for (int i = 0; i < w->m->n_opsets; i++) {
        const opset_import *o = &w->m->opsets[i];
        NEW(w, Onnx__OperatorSetIdProto, ONNX__OPERATOR_SET_ID_PROTO__INIT, op);
        op->domain = dup(w, o->domain);
        op->has_version = 1;
        op->version = is_default_domain(o->domain) ? onnx_opset : o->version;
        have_default |= is_default_domain(o->domain);
        mp->opset_import[mp->n_opset_import++] = op;
    }
    for (int i = 0; i < w->n_nodes; i++) {
        const char *d = w->protos[i]->domain;
        if (is_default_domain(d) ? have_default : model_opset(w->m, d) != 0) continue;
        bool listed = false;
        for (size_t k = 0; k < mp->n_opset_import && !listed; k++)
            listed = !strcmp(mp->opset_import[k]->domain, d);
        if (listed) continue;
        NEW(w, Onnx__OperatorSetIdProto, ONNX__OPERATOR_SET_ID_PROTO__INIT, op);
        op->domain = dup(w, d);
        op->has_version = 1;
        op->version = written_opset(w, d, onnx_opset);
        have_default |= is_default_domain(d);
        mp->opset_import[mp->n_opset_import++] = op;
    }
    mp->has_ir_version = 1;
    mp->ir_version = w->m->ir_version;
    if (onnx_opset > model_opset(w->m, "") && ir_for_opset(onnx_opset) > mp->ir_version)
        mp->ir_version = ir_for_opset(onnx_opset);
    return ONYX_OK;
}

/* ------------------------------------------------------------------ files */

/* The external data name is a file name or relative path below the model's folder. */
static onyx_status check_external_name(const char *name) {
    const char *bad = name[0] == '/' ? "is absolute" : NULL;
    for (const char *p = name; !bad && *p;) {
        size_t len = strcspn(p, "/");
        if (len == 2 && p[0] == '.' && p[1] == '.') bad = "leaves the model's folder";
        p += len + (p[len] == '/');
    }
    if (!bad && name[strlen(name) - 1] == '/') bad = "names a folder";
    if (bad)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "optimized model: external initializers file '%s' %s: give a file name "
                          "relative to the model's folder", name, bad);
    return ONYX_OK;
}

static onyx_status open_external(writer *w) {
    const char *path = w->w->path, *name = w->w->external_name;
    TRY(check_external_name(name));
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path + 1) : 0;
    size_t len = dir + strlen(name) + 1;
    w->ext_path = malloc(len);
    w->ext_tmp = malloc(len + 16);
    if (!w->ext_path || !w->ext_tmp) return onyx_oom("optimized model");
    snprintf(w->ext_path, len, "%.*s%s", (int)dir, path, name);
    if (!strcmp(w->ext_path, path))
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "optimized model: external initializers file '%s' is the model file",
                          w->ext_path);
    snprintf(w->ext_tmp, len + 16, "%s.onyx-tmp", w->ext_path);
    w->ext = fopen(w->ext_tmp, "wb");
    if (!w->ext)
        return onyx_error(ONYX_ERR_IO, "optimized model: cannot write '%s': %s", w->ext_path,
                          strerror(errno));
    return ONYX_OK;
}

static onyx_status write_model(writer *w, const Onnx__ModelProto *mp) {
    size_t size = onnx__model_proto__get_packed_size(mp);
    if (size > INT32_MAX)
        return onyx_error(ONYX_ERR_UNSUPPORTED,
                          "optimized model: %zu bytes, past protobuf's 2 GiB: give an external "
                          "initializers file", size);
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes) return onyx_oom("optimized model");
    onnx__model_proto__pack(mp, bytes);
    size_t len = strlen(w->w->path) + 16;
    w->model_tmp = malloc(len);
    FILE *f = w->model_tmp ? (snprintf(w->model_tmp, len, "%s.onyx-tmp", w->w->path),
                              fopen(w->model_tmp, "wb"))
                           : NULL;
    bool ok = f && fwrite(bytes, 1, size, f) == size;
    int err = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    free(bytes);
    if (!w->model_tmp) return onyx_oom("optimized model");
    if (!ok)
        return onyx_error(ONYX_ERR_IO, "optimized model: cannot write '%s': %s", w->w->path,
                          strerror(err));
    /* the data first: a model in place always finds its data */
    if (w->ext_tmp && rename(w->ext_tmp, w->ext_path) != 0)
        return onyx_error(ONYX_ERR_IO, "optimized model: cannot write '%s': %s", w->ext_path,
                          strerror(errno));
    if (rename(w->model_tmp, w->w->path) != 0)
        return onyx_error(ONYX_ERR_IO, "optimized model: cannot write '%s': %s", w->w->path,
                          strerror(errno));
    free(w->model_tmp);
    w->model_tmp = NULL; /* renamed: nothing to remove */
    free(w->ext_tmp);
    w->ext_tmp = NULL;
    return ONYX_OK;
}

onyx_status model_write_optimized(const model *m, const op_registry *ops,
                                  const optimize_options *opt, const model_write_options *wo) {
    if (!m || !ops || !opt || !wo || !wo->path || !wo->path[0])
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "optimized model: no path to write to");
    writer w = {.m = m, .ops = ops, .opt = *opt, .w = wo};
    w.opt.observe = NULL;
    pool_init(&w.p);
    onyx_status st = ONYX_OK;
    if (wo->external_name && wo->external_name[0]) CHECK(open_external(&w));
    Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
    CHECK(graph_proto(&w, m->main, NULL, &mp.graph));
    CHECK(opset_imports(&w, &mp));
    mp.producer_name = dup(&w, m->producer_name);
    mp.producer_version = dup(&w, m->producer_version);
    mp.domain = dup(&w, m->domain);
    mp.doc_string = dup(&w, m->doc_string);
    mp.has_model_version = m->model_version != 0;
    mp.model_version = m->model_version;
    mp.metadata_props = pool_alloc(&w.p, (size_t)m->n_props + 1, sizeof *mp.metadata_props);
    if (!mp.producer_name || !mp.producer_version || !mp.domain || !mp.doc_string ||
        !mp.metadata_props) {
        st = onyx_oom("optimized model");
        goto done;
    }
    for (int i = 0; i < m->n_props; i++) {
        if (!(mp.metadata_props[i] = entry(&w, m->props[i].key, m->props[i].value))) {
            st = onyx_oom("optimized model");
            goto done;
        }
        mp.n_metadata_props++;
    }
    if (w.ext) {
        FILE *f = w.ext;
        w.ext = NULL;
        if (fclose(f) != 0) {
            st = onyx_error(ONYX_ERR_IO, "optimized model: cannot write '%s': %s", w.ext_path,
                            strerror(errno));
            goto done;
        }
    }
    st = write_model(&w, &mp);
done:
    if (w.ext) fclose(w.ext);
    if (w.ext_tmp) remove(w.ext_tmp);
    if (w.model_tmp) remove(w.model_tmp);
    free(w.ext_tmp);
    free(w.ext_path);
    free(w.model_tmp);
    for (int i = 0; i < w.n_rewritten; i++) graph_optimized_free(w.rewritten[i]);
    free(w.rewritten);
    free(w.nodes);
    free(w.protos);
    pool_destroy(&w.p);
    return st;
}
