/* ModelProto -> model: opsets, graphs (values by index, captures of enclosing graphs, Kahn order),
 * nodes resolved against their schemas, attributes and types. Everything lands in the model's
 * pool, so an error anywhere only has to destroy the pool. */
#include "core/loader.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/loader_wire.h"
#include "core/op_schema.h"
#include "core/tensor_proto.h"

/* ------------------------------------------------------------------ small containers */

/* name -> value index, open addressing; keys are pool strings. */
typedef struct name_map {
    const char **keys;
    int *vals;
    size_t cap, count;
} name_map;

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static int map_get(const name_map *m, const char *key) {
    if (!m->cap) return -1;
    for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i]) return -1;
        if (strcmp(m->keys[i], key) == 0) return m->vals[i];
    }
}

static onyx_status map_put(name_map *m, const char *key, int val) {
    if ((m->count + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        const char **keys = calloc(cap, sizeof *keys);
        int *vals = calloc(cap, sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return onyx_oom("value name table");
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i]) continue;
            size_t j = hash_str(m->keys[i]) & (cap - 1);
            while (keys[j]) j = (j + 1) & (cap - 1);
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    size_t i = hash_str(key) & (m->cap - 1);
    while (m->keys[i]) i = (i + 1) & (m->cap - 1);
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return ONYX_OK;
}

static void map_free(name_map *m) {
    free(m->keys);
    free(m->vals);
}

typedef struct int_vec {
    int *v;
    int n, cap;
} int_vec;

static onyx_status vec_add_unique(int_vec *a, int x) {
    for (int i = 0; i < a->n; i++)
        if (a->v[i] == x) return ONYX_OK;
    if (a->n == a->cap) {
        int cap = a->cap ? a->cap * 2 : 4;
        int *v = realloc(a->v, (size_t)cap * sizeof *v);
        if (!v) return onyx_oom("capture list");
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return ONYX_OK;
}

/* ------------------------------------------------------------------ builder state */

typedef struct loader {
    model *m;
    pool *p;
    const char *base_dir;
    /* The ModelProto came from protobuf-c's unpack (system allocator) and is freed right after
     * loading: each initializer's raw bytes are freed as soon as they are copied, so loading a
     * model holds about one copy of its weights at a time rather than two. */
    bool release_raw;
    const op_registry *ops; /* resolves each node's schema */
    /* The main graph's initializers when its bytes were split (loader_split_model): unpacked
     * one by one from `bytes`; with release_bytes (the loader owns them, malloc'ed), the pages
     * before the initializer just decoded are handed back to the system as it goes. */
    const Onnx__GraphProto *main_gp;
    const uint8_t *bytes;
    const loader_split *split;
    bool release_bytes;
    size_t released; /* bytes before this offset are handed back */
} loader;

/* A graph under construction. Values grow while subgraphs capture from it, so they live in a
 * heap array until the graph is finished and copied into the pool. */
typedef struct gbuild {
    struct gbuild *parent;
    int owner;                 /* index of the node of `parent` whose attribute this graph is */
    loader *ld;
    const Onnx__GraphProto *gp;
    graph *g;
    graph_value *values;
    int n_values, cap_values;
    name_map names;
    graph_node *nodes;         /* pool, in file order until sorted */
    int n_nodes;
    int_vec *caps;             /* per node */
} gbuild;

static const char *str_or_empty(const char *s) { return s ? s : ""; }

static bool is_default_domain(const char *d) {
    return !d || d[0] == '\0' || strcmp(d, "ai.onnx") == 0;
}

static onyx_status add_value(gbuild *b, const char *name, int producer, unsigned flags, int *out) {
    if (b->n_values == INT_MAX / 2)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "graph has too many values");
    if (b->n_values == b->cap_values) {
        int cap = b->cap_values ? b->cap_values * 2 : 64;
        graph_value *v = realloc(b->values, (size_t)cap * sizeof *v);
        if (!v) return onyx_oom("graph values");
        b->values = v;
        b->cap_values = cap;
    }
    graph_value *v = &b->values[b->n_values];
    memset(v, 0, sizeof *v);
    v->name = name;
    type_init(&v->type);
    v->producer = producer;
    v->outer = -1;
    v->flags = flags;
    TRY(map_put(&b->names, name, b->n_values));
    *out = b->n_values++;
    return ONYX_OK;
}

/* Finds `name` in this graph or, through captures, in an enclosing one; -1 when undefined.
 * A value of an enclosing graph gets a GV_CAPTURED stand-in at every level between, and each
 * owning node records the enclosing-level index it reads. */
static onyx_status lookup_or_capture(gbuild *b, const char *name, int *out) {
    int i = map_get(&b->names, name);
    if (i >= 0 || !b->parent) {
        *out = i;
        return ONYX_OK;
    }
    int pi;
    TRY(lookup_or_capture(b->parent, name, &pi));
    if (pi < 0) {
        *out = -1;
        return ONYX_OK;
    }
    const graph_value *outer = &b->parent->values[pi];
    TRY(add_value(b, outer->name, -1, GV_CAPTURED, &i));
    b->values[i].outer = pi;
    b->values[i].type = outer->type; /* pool-owned parts are shared, never freed */
    b->values[i].dim_params = outer->dim_params;
    TRY(vec_add_unique(&b->parent->caps[b->owner], pi));
    *out = i;
    return ONYX_OK;
}

/* ------------------------------------------------------------------ types */

static onyx_status load_type(loader *ld, const Onnx__TypeProto *tp, type_info *out,
                             const char *const **dim_params) {
    type_init(out);
    if (dim_params) *dim_params = NULL;
    if (!tp) return ONYX_OK;
    const Onnx__TensorShapeProto *shape = NULL;
    int32_t elem = 0;
    const Onnx__TypeProto *inner = NULL;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        out->kind = ONYX_VALUE_TENSOR;
        if (tp->tensor_type) {
            elem = tp->tensor_type->elem_type;
            shape = tp->tensor_type->shape;
        }
        break;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        /* Sparse values are densified on load, so they are tensors to the engine. */
        out->kind = ONYX_VALUE_TENSOR;
        if (tp->sparse_tensor_type) {
            elem = tp->sparse_tensor_type->elem_type;
            shape = tp->sparse_tensor_type->shape;
        }
        break;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        out->kind = ONYX_VALUE_SEQUENCE;
        inner = tp->sequence_type ? tp->sequence_type->elem_type : NULL;
        break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        out->kind = ONYX_VALUE_OPTIONAL;
        inner = tp->optional_type ? tp->optional_type->elem_type : NULL;
        break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        out->kind = ONYX_VALUE_MAP;
        inner = tp->map_type ? tp->map_type->value_type : NULL;
        if (tp->map_type && tp->map_type->has_key_type) {
            int32_t key = tp->map_type->key_type;
            if (key != ONYX_INT64 && key != ONYX_INT32 && key != ONYX_STRING && key != ONYX_INT8 &&
                key != ONYX_INT16 && key != ONYX_UINT8 && key != ONYX_UINT16 &&
                key != ONYX_UINT32 && key != ONYX_UINT64)
                return onyx_error(ONYX_ERR_INVALID_MODEL, "map key type %d is not an integer or "
                                  "string type", (int)key);
            out->dtype = (onyx_dtype)key;
        }
        break;
    default: return ONYX_OK;
    }
    if (inner) {
        out->elem = pool_alloc(ld->p, 1, sizeof *out->elem);
        if (!out->elem) return onyx_oom("type");
        return load_type(ld, inner, out->elem, NULL);
    }
    if (out->kind != ONYX_VALUE_TENSOR) return ONYX_OK;
    if (elem != 0 && !dtype_valid(elem))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "type has unknown element type %d", (int)elem);
    out->dtype = (onyx_dtype)elem;
    if (!shape) return ONYX_OK;
    if (shape->n_dim > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "type has rank %zu; onyx supports at most %d",
                          shape->n_dim, ONYX_MAX_RANK);
    out->rank = (int)shape->n_dim;
    const char **params = NULL;
    if (dim_params) {
        params = pool_alloc(ld->p, shape->n_dim ? shape->n_dim : 1, sizeof *params);
        if (!params) return onyx_oom("dim names");
    }
    for (size_t i = 0; i < shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = shape->dim[i];
        out->dims[i] = -1;
        if (!d) continue;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (d->dim_value >= 0) out->dims[i] = d->dim_value;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                   d->dim_param && d->dim_param[0] && params) {
            params[i] = pool_strdup(ld->p, d->dim_param);
            if (!params[i]) return onyx_oom("dim name");
        }
    }
    if (dim_params) *dim_params = params;
    return ONYX_OK;
}

static void tensor_type(type_info *t, const tensor *x) {
    type_init(t);
    t->kind = ONYX_VALUE_TENSOR;
    t->dtype = x->dtype;
    t->rank = x->rank;
    for (int i = 0; i < x->rank; i++) t->dims[i] = x->dims[i];
}

/* ------------------------------------------------------------------ attributes */

static onyx_status build_graph(loader *ld, const Onnx__GraphProto *gp, gbuild *parent, int owner,
                               graph *g);

/* The first IR versions may leave `type` out: the field that is set says it. */
static int guess_attr_type(const Onnx__AttributeProto *ap) {
    if (ap->has_f) return ATTR_FLOAT;
    if (ap->has_i) return ATTR_INT;
    if (ap->has_s) return ATTR_STRING;
    if (ap->t) return ATTR_TENSOR;
    if (ap->g) return ATTR_GRAPH;
    if (ap->sparse_tensor) return ATTR_SPARSE_TENSOR;
    if (ap->tp) return ATTR_TYPE_PROTO;
    if (ap->n_floats) return ATTR_FLOATS;
    if (ap->n_ints) return ATTR_INTS;
    if (ap->n_strings) return ATTR_STRINGS;
    if (ap->n_tensors) return ATTR_TENSORS;
    if (ap->n_graphs) return ATTR_GRAPHS;
    if (ap->n_sparse_tensors) return ATTR_SPARSE_TENSORS;
    if (ap->n_type_protos) return ATTR_TYPE_PROTOS;
    return ATTR_UNDEFINED;
}

/* A pool copy of n elements (never NULL on success, even for n = 0). */
static void *pool_copy(pool *p, const void *src, size_t n, size_t size) {
    void *v = pool_alloc(p, n ? n : 1, size);
    if (v && n) memcpy(v, src, n * size);
    return v;
}

static onyx_status load_subgraph(gbuild *b, int node, const Onnx__GraphProto *gp, graph **out) {
    graph *g = pool_alloc(b->ld->p, 1, sizeof *g);
    if (!g) return onyx_oom("subgraph");
    TRY(build_graph(b->ld, gp, b, node, g));
    *out = g;
    return ONYX_OK;
}

static onyx_status load_attr(gbuild *b, int node, const Onnx__AttributeProto *ap, graph_attr *a) {
    loader *ld = b->ld;
    pool *p = ld->p;
    if (!ap || !ap->name || !ap->name[0])
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute without a name");
    a->name = pool_strdup(p, ap->name);
    if (!a->name) return onyx_oom("attribute name");
    if (ap->ref_attr_name && ap->ref_attr_name[0])
        return onyx_error(ONYX_ERR_UNSUPPORTED,
                          "refers to function attribute '%s'; only function bodies may do that, "
                          "and onyx does not expand functions",
                          ap->ref_attr_name);
    int type = ap->has_type && ap->type != 0 ? (int)ap->type : guess_attr_type(ap);
    if (type == ATTR_UNDEFINED) {
        /* No type and no value: an empty list of an old writer, typed by the schema. */
        const op_schema *s = b->nodes[node].schema;
        for (const attr_spec *sp = s ? s->attrs : NULL; sp && sp->name; sp++)
            if (strcmp(sp->name, ap->name) == 0) type = (int)sp->type;
        bool list = type == ATTR_FLOATS || type == ATTR_INTS || type == ATTR_STRINGS ||
                    type == ATTR_TENSORS || type == ATTR_GRAPHS || type == ATTR_SPARSE_TENSORS ||
                    type == ATTR_TYPE_PROTOS;
        if (!list) return onyx_error(ONYX_ERR_INVALID_MODEL, "has no type and no value");
    }
    a->type = (attr_type)type;
    size_t n = 0;
    switch (type) {
    case ATTR_FLOAT: a->f = ap->f; return ONYX_OK;
    case ATTR_INT: a->i = ap->i; return ONYX_OK;
    case ATTR_STRING:
        a->s = pool_strndup(p, (const char *)ap->s.data, ap->s.len);
        if (!a->s) return onyx_oom("attribute string");
        a->s_len = ap->s.len;
        return ONYX_OK;
    case ATTR_TENSOR:
    case ATTR_SPARSE_TENSOR:
        if (type == ATTR_TENSOR ? !ap->t : !ap->sparse_tensor) break;
        a->t = pool_alloc(p, 1, sizeof *a->t);
        if (!a->t) return onyx_oom("attribute tensor");
        return type == ATTR_TENSOR ? tensor_proto_decode(ap->t, ld->base_dir, p, a->t)
                                   : tensor_proto_decode_sparse(ap->sparse_tensor, ld->base_dir, p,
                                                                a->t);
    case ATTR_GRAPH:
        if (!ap->g) break;
        return load_subgraph(b, node, ap->g, &a->g);
    case ATTR_TYPE_PROTO:
        if (!ap->tp) break;
        a->tp = pool_alloc(p, 1, sizeof *a->tp);
        if (!a->tp) return onyx_oom("attribute type");
        return load_type(ld, ap->tp, a->tp, NULL);
    case ATTR_FLOATS:
        a->n = ap->n_floats;
        a->floats = pool_copy(p, ap->floats, a->n, sizeof *a->floats);
        return a->floats ? ONYX_OK : onyx_oom("attribute floats");
    case ATTR_INTS:
        a->n = ap->n_ints;
        a->ints = pool_copy(p, ap->ints, a->n, sizeof *a->ints);
        return a->ints ? ONYX_OK : onyx_oom("attribute ints");
    case ATTR_STRINGS: {
        n = ap->n_strings;
        const char **v = pool_alloc(p, n ? n : 1, sizeof *v);
        if (!v) return onyx_oom("attribute strings");
        for (size_t i = 0; i < n; i++) {
            v[i] = pool_strndup(p, (const char *)ap->strings[i].data, ap->strings[i].len);
            if (!v[i]) return onyx_oom("attribute string");
        }
        a->strings = v;
        a->n = n;
        return ONYX_OK;
    }
    case ATTR_TENSORS:
    case ATTR_SPARSE_TENSORS: {
        n = type == ATTR_TENSORS ? ap->n_tensors : ap->n_sparse_tensors;
        tensor **v = pool_alloc(p, n ? n : 1, sizeof *v);
        if (!v) return onyx_oom("attribute tensors");
        for (size_t i = 0; i < n; i++) {
            v[i] = pool_alloc(p, 1, sizeof *v[i]);
            if (!v[i]) return onyx_oom("attribute tensor");
            if (type == ATTR_TENSORS)
                TRY(tensor_proto_decode(ap->tensors[i], ld->base_dir, p, v[i]));
            else
                TRY(tensor_proto_decode_sparse(ap->sparse_tensors[i], ld->base_dir, p, v[i]));
        }
        a->tensors = v;
        a->n = n;
        return ONYX_OK;
    }
    case ATTR_GRAPHS: {
        n = ap->n_graphs;
        graph **v = pool_alloc(p, n ? n : 1, sizeof *v);
        if (!v) return onyx_oom("attribute graphs");
        for (size_t i = 0; i < n; i++) {
            onyx_status st = load_subgraph(b, node, ap->graphs[i], &v[i]);
            if (st != ONYX_OK) return onyx_error_prefix(st, "graph %zu", i);
        }
        a->graphs = v;
        a->n = n;
        return ONYX_OK;
    }
    case ATTR_TYPE_PROTOS: {
        n = ap->n_type_protos;
        type_info **v = pool_alloc(p, n ? n : 1, sizeof *v);
        if (!v) return onyx_oom("attribute types");
        for (size_t i = 0; i < n; i++) {
            v[i] = pool_alloc(p, 1, sizeof *v[i]);
            if (!v[i]) return onyx_oom("attribute type");
            TRY(load_type(ld, ap->type_protos[i], v[i], NULL));
        }
        a->tps = v;
        a->n = n;
        return ONYX_OK;
    }
    default:
        return onyx_error(ONYX_ERR_INVALID_MODEL, "has unknown type %d", type);
    }
    return onyx_error(ONYX_ERR_INVALID_MODEL, "has type %s but no value", graph_attr_type_name(type));
}

/* ------------------------------------------------------------------ nodes */

static onyx_status check_count(const char *what, int n, int lo, int hi) {
    bool variadic = hi >= ONYX_VARIADIC;
    if (n >= lo && (variadic || n <= hi)) return ONYX_OK;
    if (variadic)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "has %d %s, expected at least %d", n, what, lo);
    return onyx_error(ONYX_ERR_INVALID_MODEL, "has %d %s, expected %d to %d", n, what, lo, hi);
}

/* Domain, schema, version and arity. A node onyx cannot run (an unknown op, or a version of it
 * onyx does not implement) keeps schema NULL and says why in `unsupported`: whether the model
 * runs is decided at prepare and is_compatible, while the model itself still loads (`onyx info`
 * shows it). */
static onyx_status resolve_schema(loader *ld, graph_node *n) {
    int64_t opset = model_opset(ld->m, n->domain);
    /* onnxruntime's contrib ops have one version, and its transformer optimizer leaves models
     * that use them without the import; onnxruntime runs them, and so do we */
    if (opset == 0 && !strcmp(n->domain, "com.microsoft")) opset = 1;
    if (opset == 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "domain '%s' is not imported by the model (no opset_import for it)",
                          n->domain[0] ? n->domain : "ai.onnx");
    const op_schema *s = NULL;
    onyx_status st = ld->ops->resolve(n->domain, n->op_type, opset, &s);
    if (st == ONYX_ERR_UNSUPPORTED) {
        /* the refusal moves into the node's note: the model still loads */
        n->unsupported = pool_strdup(ld->p, onyx_last_error());
        onyx_error_clear();
        if (!n->unsupported) return onyx_oom("node");
        n->schema = NULL;
        n->version = 0;
        return ONYX_OK;
    }
    TRY(st);
    n->schema = s;
    n->version = s->since_version;
    n->domain = s->domain; /* an ai.onyx alias reads as the standard op it stands for */
    TRY(check_count("inputs", n->n_inputs, s->min_inputs, s->max_inputs));
    TRY(check_count("outputs", n->n_outputs, s->min_outputs, s->max_outputs));
    /* The first min_outputs outputs are required (ONNX's checker refuses them empty too), and
     * kernels write them without looking: an omitted one would be a NULL output at run time. */
    for (int k = 0; k < s->min_outputs; k++)
        if (n->outputs[k] < 0)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "output %d is required but has no name", k);
    return ONYX_OK;
}

/* Every attribute of the node is one its schema declares, of the declared type: an attribute
 * onyx does not know would otherwise be ignored, and the node would run without its meaning. */
static onyx_status check_attrs(const graph_node *n) {
    if (!n->schema) return ONYX_OK;
    for (int k = 0; k < n->n_attrs; k++) {
        const graph_attr *a = &n->attrs[k];
        const attr_spec *sp = n->schema->attrs;
        while (sp && sp->name && strcmp(sp->name, a->name) != 0) sp++;
        if (!sp || !sp->name)
            return onyx_error(ONYX_ERR_UNSUPPORTED, "%s-%d has no attribute '%s'", n->op_type,
                              n->version, a->name);
        if (a->type != sp->type)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute '%s' is %s, expected %s",
                              sp->name, graph_attr_type_name((int)a->type),
                              graph_attr_type_name((int)sp->type));
    }
    return ONYX_OK;
}

/* Schema, inputs (capturing from enclosing graphs as needed) and attributes of node i. */
static onyx_status build_node(gbuild *b, int i) {
    loader *ld = b->ld;
    const Onnx__NodeProto *np = b->gp->node[i];
    graph_node *n = &b->nodes[i];
    TRY(resolve_schema(ld, n));
    for (int k = 0; k < n->n_inputs; k++) {
        const char *name = str_or_empty(np->input[k]);
        if (!name[0]) {
            n->inputs[k] = -1;
            continue;
        }
        TRY(lookup_or_capture(b, name, &n->inputs[k]));
        if (n->inputs[k] < 0)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "input %d '%s' is not defined (not a graph input, initializer, or "
                              "output of any node%s)",
                              k, name, b->parent ? " here or in an enclosing graph" : "");
    }
    if (np->n_attribute > (1u << 24))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "has %zu attributes, expected at most %u",
                          np->n_attribute, 1u << 24);
    n->n_attrs = (int)np->n_attribute;
    n->attrs = pool_alloc(ld->p, np->n_attribute ? np->n_attribute : 1, sizeof *n->attrs);
    if (!n->attrs) return onyx_oom("attributes");
    onyx_status st = ONYX_OK;
    name_map seen = {0}; /* a map, not pairwise compares: attribute counts are untrusted */
    for (int k = 0; k < n->n_attrs; k++) {
        st = load_attr(b, i, np->attribute[k], &n->attrs[k]);
        if (st != ONYX_OK) {
            if (n->attrs[k].name) onyx_error_prefix(st, "attribute '%s'", n->attrs[k].name);
            goto done;
        }
        if (map_get(&seen, n->attrs[k].name) >= 0) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "attribute '%s' is given twice",
                            n->attrs[k].name);
            goto done;
        }
        CHECK(map_put(&seen, n->attrs[k].name, k));
    }
    st = check_attrs(n);
done:
    map_free(&seen);
    return st;
}

/* Registers node i's name, op and outputs (before any input is resolved, so that every name of
 * the graph is known when inputs and subgraphs look them up). */
static onyx_status declare_node(gbuild *b, int i) {
    pool *p = b->ld->p;
    const Onnx__NodeProto *np = b->gp->node[i];
    graph_node *n = &b->nodes[i];
    if (!np) return onyx_error(ONYX_ERR_INVALID_MODEL, "node %d is empty", i);
    n->name = pool_strdup(p, str_or_empty(np->name));
    n->op_type = pool_strdup(p, str_or_empty(np->op_type));
    n->domain = pool_strdup(p, is_default_domain(np->domain) ? "" : np->domain);
    if (!n->name || !n->op_type || !n->domain) return onyx_oom("node names");
    if (!n->op_type[0]) return onyx_error(ONYX_ERR_INVALID_MODEL, "node %d has no op_type", i);
    if (np->n_input > (1u << 24) || np->n_output > (1u << 24))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "node %d has %zu inputs and %zu outputs", i,
                          np->n_input, np->n_output);
    n->n_inputs = (int)np->n_input;
    n->n_outputs = (int)np->n_output;
    n->inputs = pool_alloc(p, np->n_input ? np->n_input : 1, sizeof *n->inputs);
    n->outputs = pool_alloc(p, np->n_output ? np->n_output : 1, sizeof *n->outputs);
    if (!n->inputs || !n->outputs) return onyx_oom("node edges");
    for (int k = 0; k < n->n_outputs; k++) {
        const char *name = str_or_empty(np->output[k]);
        n->outputs[k] = -1;
        if (!name[0]) continue;
        int prev = map_get(&b->names, name);
        if (prev >= 0) {
            char other[256];
            const graph_value *v = &b->values[prev];
            if (v->producer >= 0)
                node_label(&b->nodes[v->producer], other, sizeof other);
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "output %d '%s' is assigned twice: it is already %s%s", k, name,
                              v->producer >= 0                 ? "an output of "
                              : (v->flags & GV_INITIALIZER) ? "an initializer"
                                                              : "a graph input",
                              v->producer >= 0 ? other : "");
        }
        const char *copy = pool_strdup(p, name);
        if (!copy) return onyx_oom("value name");
        TRY(add_value(b, copy, i, 0, &n->outputs[k]));
    }
    return ONYX_OK;
}

/* ------------------------------------------------------------------ order */

/* Kahn's algorithm with a min-heap on the file position, so that a graph already in order keeps
 * it and an unordered one changes as little as possible. Edges come from inputs and from the
 * values a node's subgraphs capture. */
static onyx_status sort_nodes(gbuild *b) {
    int n = b->n_nodes;
    onyx_status st = ONYX_OK;
    int *indeg = NULL, *start = NULL, *succ = NULL, *heap = NULL, *order = NULL;
    bool sorted = true;
    size_t edges = 0;
    for (int i = 0; i < n && sorted; i++) {
        const graph_node *nd = &b->nodes[i];
        for (int k = 0; k < nd->n_inputs; k++) {
            int v = nd->inputs[k];
            if (v >= 0 && b->values[v].producer >= i) sorted = false;
        }
        for (int k = 0; k < b->caps[i].n; k++)
            if (b->values[b->caps[i].v[k]].producer >= i) sorted = false;
    }
    if (sorted) return ONYX_OK;

    indeg = calloc((size_t)n, sizeof *indeg);
    start = calloc((size_t)n + 1, sizeof *start);
    heap = malloc((size_t)n * sizeof *heap);
    order = malloc((size_t)n * sizeof *order);
    if (!indeg || !start || !heap || !order) {
        st = onyx_oom("node order");
        goto done;
    }
    /* Successor lists in CSR form: count, prefix sum, fill. */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            const graph_node *nd = &b->nodes[i];
            int total = nd->n_inputs + b->caps[i].n;
            for (int k = 0; k < total; k++) {
                int v = k < nd->n_inputs ? nd->inputs[k] : b->caps[i].v[k - nd->n_inputs];
                if (v < 0) continue;
                int pr = b->values[v].producer;
                if (pr < 0) continue;
                if (pass == 0) {
                    if (edges == INT_MAX) {
                        st = onyx_error(ONYX_ERR_INVALID_MODEL, "graph '%s' has more than %d "
                                        "edges", b->g->name, INT_MAX);
                        goto done;
                    }
                    start[pr + 1]++;
                    indeg[i]++;
                    edges++;
                } else {
                    succ[start[pr]++] = i;
                }
            }
        }
        if (pass == 0) {
            for (int i = 0; i < n; i++) start[i + 1] += start[i];
            succ = malloc((edges ? edges : 1) * sizeof *succ);
            if (!succ) {
                st = onyx_oom("node order");
                goto done;
            }
        } else {
            /* start[i] now points at the end of list i: shift back. */
            for (int i = n; i > 0; i--) start[i] = start[i - 1];
            start[0] = 0;
        }
    }
    int hn = 0, done_n = 0;
    for (int i = 0; i < n; i++)
        if (indeg[i] == 0) heap[hn++] = i; /* ascending: already a heap */
    while (hn > 0) {
        int top = heap[0];
        heap[0] = heap[--hn];
        for (int at = 0;;) {
            int l = 2 * at + 1, r = l + 1, m = at;
            if (l < hn && heap[l] < heap[m]) m = l;
            if (r < hn && heap[r] < heap[m]) m = r;
            if (m == at) break;
            int t = heap[at];
            heap[at] = heap[m];
            heap[m] = t;
            at = m;
        }
        order[done_n++] = top;
        for (int e = start[top]; e < start[top + 1]; e++) {
            int s = succ[e];
            if (--indeg[s] > 0) continue;
            int at = hn++;
            heap[at] = s;
            while (at > 0 && heap[(at - 1) / 2] > heap[at]) {
                int t = heap[at];
                heap[at] = heap[(at - 1) / 2];
                heap[(at - 1) / 2] = t;
                at = (at - 1) / 2;
            }
        }
    }
    if (done_n < n) {
        /* Name a node on the cycle by one input whose producer is also stuck. */
        for (int i = 0; i < n; i++) {
            if (indeg[i] == 0) continue;
            const graph_node *nd = &b->nodes[i];
            int total = nd->n_inputs + b->caps[i].n;
            for (int k = 0; k < total; k++) {
                int v = k < nd->n_inputs ? nd->inputs[k] : b->caps[i].v[k - nd->n_inputs];
                if (v < 0 || b->values[v].producer < 0 || indeg[b->values[v].producer] == 0)
                    continue;
                char lab[256], other[256];
                node_label(nd, lab, sizeof lab);
                node_label(&b->nodes[b->values[v].producer], other, sizeof other);
                st = onyx_error(ONYX_ERR_INVALID_MODEL,
                                "graph '%s' has a cycle: %s %s '%s', produced by %s, which "
                                "depends on it",
                                b->g->name, lab, k < nd->n_inputs ? "reads" : "captures",
                                b->values[v].name, other);
                goto done;
            }
        }
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "graph '%s' has a cycle", b->g->name);
        goto done;
    }
    /* Apply the order: nodes, their capture lists and the values' producers. */
    graph_node *nodes = pool_alloc(b->ld->p, (size_t)n, sizeof *nodes);
    int_vec *caps = malloc((size_t)n * sizeof *caps);
    if (!nodes || !caps) {
        free(caps);
        st = onyx_oom("node order");
        goto done;
    }
    for (int k = 0; k < n; k++) {
        nodes[k] = b->nodes[order[k]];
        caps[k] = b->caps[order[k]];
        indeg[order[k]] = k; /* reused: old index -> new index */
    }
    for (int v = 0; v < b->n_values; v++)
        if (b->values[v].producer >= 0) b->values[v].producer = indeg[b->values[v].producer];
    free(b->caps);
    b->caps = caps;
    b->nodes = nodes;
done:
    free(indeg);
    free(start);
    free(succ);
    free(heap);
    free(order);
    return st;
}

/* ------------------------------------------------------------------ graphs */

/* Initializer `k` (tp, or sparse sp) of graph b: decoded into the model's pool. */
static onyx_status declare_initializer(gbuild *b, const Onnx__TensorProto *tp,
                                       const Onnx__SparseTensorProto *sp, size_t k) {
    loader *ld = b->ld;
    const char *name = sp ? (sp->values ? sp->values->name : NULL) : (tp ? tp->name : NULL);
    if (!name || !name[0])
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%sinitializer %zu has no name",
                          sp ? "sparse " : "", k);
    if (map_get(&b->names, name) >= 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "initializer '%s' is given twice", name);
    tensor *t = pool_alloc(ld->p, 1, sizeof *t);
    const char *copy = pool_strdup(ld->p, name);
    if (!t || !copy) return onyx_oom("initializer");
    TRY(sp ? tensor_proto_decode_sparse(sp, ld->base_dir, ld->p, t)
           : tensor_proto_decode(tp, ld->base_dir, ld->p, t));
    int v;
    TRY(add_value(b, copy, -1, GV_INITIALIZER, &v));
    b->values[v].init = t;
    tensor_type(&b->values[v].type, t);
    return ONYX_OK;
}

/* Hands back the whole pages of the loader's own bytes before `upto`: what is behind the
 * initializer just decoded is read no more. */
static void release_bytes_before(loader *ld, size_t upto) {
    if (!ld->release_bytes || upto <= ld->released) return;
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t from = ((uintptr_t)ld->bytes + ld->released + (uintptr_t)page - 1) &
                     ~((uintptr_t)page - 1),
              to = ((uintptr_t)ld->bytes + upto) & ~((uintptr_t)page - 1);
    if (page > 0 && to > from) madvise((void *)from, to - from, MADV_DONTNEED);
    ld->released = upto;
}

static onyx_status declare_initializers(gbuild *b) {
    loader *ld = b->ld;
    const Onnx__GraphProto *gp = b->gp;
    size_t first = 0; /* the split-off initializers come first, in file order */
    if (gp == ld->main_gp && ld->split) {
        const loader_split *sp = ld->split;
        for (size_t k = 0; k < sp->n_inits; k++) {
            Onnx__TensorProto *tp;
            onyx_status st = loader_tensor_unpack(ld->bytes, sp->inits[k], &tp);
            if (st != ONYX_OK) return onyx_error_prefix(st, "initializer %zu", k);
            st = declare_initializer(b, tp, NULL, k);
            loader_tensor_free(tp);
            TRY(st);
            release_bytes_before(ld, sp->inits[k].offset + sp->inits[k].size);
        }
        first = sp->n_inits;
    }
    for (size_t k = 0; k < gp->n_initializer; k++) {
        Onnx__TensorProto *tp = gp->initializer[k];
        TRY(declare_initializer(b, tp, NULL, first + k));
        if (ld->release_raw && tp && tp->has_raw_data && tp->raw_data.data) {
            free(tp->raw_data.data); /* ours, the rest freed after loading */
            tp->raw_data.data = NULL;
            tp->raw_data.len = 0;
        }
    }
    for (size_t k = 0; k < gp->n_sparse_initializer; k++)
        TRY(declare_initializer(b, NULL, gp->sparse_initializer[k], k));
    return ONYX_OK;
}

static onyx_status declare_inputs(gbuild *b) {
    loader *ld = b->ld;
    const Onnx__GraphProto *gp = b->gp;
    int *inputs = pool_alloc(ld->p, gp->n_input ? gp->n_input : 1, sizeof *inputs);
    bool *seen = calloc(b->n_values ? (size_t)b->n_values : 1, sizeof *seen);
    onyx_status st = ONYX_OK;
    int n_in = 0;
    if (!inputs || !seen) {
        st = onyx_oom("graph inputs");
        goto done;
    }
    for (size_t k = 0; k < gp->n_input; k++) {
        const Onnx__ValueInfoProto *vi = gp->input[k];
        const char *name = vi ? vi->name : NULL;
        if (!name || !name[0]) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "graph input %zu has no name", k);
            goto done;
        }
        int v = map_get(&b->names, name);
        if (v >= 0) {
            if (!(b->values[v].flags & GV_INITIALIZER) || seen[v]) {
                st = onyx_error(ONYX_ERR_INVALID_MODEL, "graph input '%s' is listed twice", name);
                goto done;
            }
            seen[v] = true;
            /* An initializer named like an input is that input's default value. The main graph
             * keeps it as a constant (before IR 4 every initializer is listed as an input, and the
             * public API counts initializers out of the inputs). A subgraph's inputs are always
             * supplied by the op that runs it, so there the input wins. */
            if (!b->parent) continue;
            b->values[v].flags = GV_INPUT;
            b->values[v].init = NULL;
        } else {
            const char *copy = pool_strdup(ld->p, name);
            if (!copy) {
                st = onyx_oom("input name");
                goto done;
            }
            CHECK(add_value(b, copy, -1, GV_INPUT, &v));
        }
        graph_value *gv = &b->values[v];
        st = load_type(ld, vi->type, &gv->type, &gv->dim_params);
        if (st != ONYX_OK) {
            onyx_error_prefix(st, "graph input '%s'", name);
            goto done;
        }
        inputs[n_in++] = v;
    }
    b->g->inputs = inputs;
    b->g->n_inputs = n_in;
done:
    free(seen);
    return st;
}

static onyx_status declare_outputs(gbuild *b) {
    loader *ld = b->ld;
    const Onnx__GraphProto *gp = b->gp;
    int *outputs = pool_alloc(ld->p, gp->n_output ? gp->n_output : 1, sizeof *outputs);
    if (!outputs) return onyx_oom("graph outputs");
    for (size_t k = 0; k < gp->n_output; k++) {
        const Onnx__ValueInfoProto *vi = gp->output[k];
        const char *name = vi ? vi->name : NULL;
        if (!name || !name[0])
            return onyx_error(ONYX_ERR_INVALID_MODEL, "graph output %zu has no name", k);
        int v;
        TRY(lookup_or_capture(b, name, &v));
        if (v < 0)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "graph output '%s' is not produced by any node and is not an input "
                              "or initializer",
                              name);
        graph_value *gv = &b->values[v];
        gv->flags |= GV_OUTPUT;
        if (!(gv->flags & (GV_INITIALIZER | GV_INPUT))) {
            onyx_status st = load_type(ld, vi->type, &gv->type, &gv->dim_params);
            if (st != ONYX_OK) return onyx_error_prefix(st, "graph output '%s'", name);
        }
        outputs[k] = v;
    }
    b->g->outputs = outputs;
    b->g->n_outputs = (int)gp->n_output;
    return ONYX_OK;
}

/* value_info only adds types to values that nodes produce; names it does not know are ignored
 * (exporters leave stale entries behind). */
static onyx_status apply_value_info(gbuild *b) {
    const Onnx__GraphProto *gp = b->gp;
    for (size_t k = 0; k < gp->n_value_info; k++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[k];
        if (!vi || !vi->name) continue;
        int v = map_get(&b->names, vi->name);
        if (v < 0) continue;
        graph_value *gv = &b->values[v];
        if (gv->producer < 0 || gv->type.kind != ONYX_VALUE_NONE) continue;
        onyx_status st = load_type(b->ld, vi->type, &gv->type, &gv->dim_params);
        if (st != ONYX_OK) return onyx_error_prefix(st, "value_info '%s'", vi->name);
    }
    return ONYX_OK;
}

static onyx_status build_graph(loader *ld, const Onnx__GraphProto *gp, gbuild *parent, int owner,
                               graph *g) {
    onyx_status st = ONYX_OK;
    gbuild b = {0};
    b.parent = parent;
    b.owner = owner;
    b.ld = ld;
    b.gp = gp;
    b.g = g;
    g->parent = parent ? parent->g : NULL;
    g->model = ld->m;
    g->name = pool_strdup(ld->p, str_or_empty(gp->name));
    if (!g->name) return onyx_oom("graph name");
    if (gp->n_node > INT_MAX / 4 || gp->n_input > INT_MAX / 4 || gp->n_output > INT_MAX / 4)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "graph '%s' has %zu nodes, %zu inputs and %zu outputs; at most %d each",
                          g->name, gp->n_node, gp->n_input, gp->n_output, INT_MAX / 4);
    b.n_nodes = (int)gp->n_node;
    b.nodes = pool_alloc(ld->p, gp->n_node ? gp->n_node : 1, sizeof *b.nodes);
    b.caps = calloc(gp->n_node ? gp->n_node : 1, sizeof *b.caps);
    if (!b.nodes || !b.caps) {
        st = onyx_oom("graph nodes");
        goto done;
    }
    CHECK(declare_initializers(&b));
    CHECK(declare_inputs(&b));
    for (int i = 0; i < b.n_nodes; i++) {
        st = declare_node(&b, i);
        if (st != ONYX_OK) {
            char lab[256];
            if (b.nodes[i].op_type)
                onyx_error_prefix(st, "%s", node_label(&b.nodes[i], lab, sizeof lab));
            goto done;
        }
    }
    for (int i = 0; i < b.n_nodes; i++) {
        st = build_node(&b, i);
        if (st != ONYX_OK) {
            char lab[256];
            onyx_error_prefix(st, "%s", node_label(&b.nodes[i], lab, sizeof lab));
            goto done;
        }
    }
    CHECK(declare_outputs(&b));
    CHECK(apply_value_info(&b));
    CHECK(sort_nodes(&b));

    g->n_values = b.n_values;
    g->values = pool_alloc(ld->p, b.n_values ? (size_t)b.n_values : 1, sizeof *g->values);
    if (!g->values) {
        st = onyx_oom("graph values");
        goto done;
    }
    if (b.n_values) memcpy(g->values, b.values, (size_t)b.n_values * sizeof *g->values);
    for (int i = 0; i < b.n_nodes; i++) {
        graph_node *n = &b.nodes[i];
        n->n_captures = b.caps[i].n;
        n->captures = pool_alloc(ld->p, b.caps[i].n ? (size_t)b.caps[i].n : 1, sizeof(int));
        if (!n->captures) {
            st = onyx_oom("node captures");
            goto done;
        }
        if (b.caps[i].n) memcpy(n->captures, b.caps[i].v, (size_t)b.caps[i].n * sizeof(int));
    }
    g->nodes = b.nodes;
    g->n_nodes = b.n_nodes;
done:
    if (b.caps)
        for (int i = 0; i < b.n_nodes; i++) free(b.caps[i].v);
    free(b.caps);
    free(b.values);
    map_free(&b.names);
    return st;
}

/* ------------------------------------------------------------------ models */

static onyx_status load_opsets(loader *ld, const Onnx__ModelProto *mp) {
    model *m = ld->m;
    m->opsets = pool_alloc(ld->p, mp->n_opset_import + 1, sizeof *m->opsets);
    if (!m->opsets) return onyx_oom("opsets");
    for (size_t k = 0; k < mp->n_opset_import; k++) {
        const Onnx__OperatorSetIdProto *o = mp->opset_import[k];
        if (!o) continue;
        const char *dom = is_default_domain(o->domain) ? "" : o->domain;
        const char *shown = dom[0] ? dom : "ai.onnx";
        if (!o->has_version || o->version < 1 || o->version > LOADER_MAX_OPSET)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "opset_import for domain '%s' has version %" PRId64
                              ", expected 1 to %d",
                              shown, o->has_version ? o->version : (int64_t)0, LOADER_MAX_OPSET);
        /* skl2onnx writes a domain twice at the same version; onnx's checker and onnxruntime
         * take that. Only two different versions of one domain are ambiguous. */
        int64_t seen = model_opset(m, dom);
        if (seen == o->version) continue;
        if (seen != 0)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "opset_import lists domain '%s' twice with different versions (%" PRId64
                              " and %" PRId64 ")",
                              shown, seen, o->version);
        opset_import *oi = &m->opsets[m->n_opsets++];
        oi->domain = pool_strdup(ld->p, dom);
        if (!oi->domain) return onyx_oom("opset domain");
        oi->version = o->version;
    }
    /* As the ONNX checker: from IR 3 on a model must import some opset. One that imports only
     * other domains (ai.onnx.ml, training) is fine; its ai.onnx nodes are refused by domain. */
    if (m->n_opsets == 0 && m->ir_version >= 3)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "model (IR version %" PRId64 ") has no opset_import (expected at least "
                          "the default domain ai.onnx)",
                          m->ir_version);
    if (m->n_opsets == 0) {
        /* IR 1 and 2 predate opset_import: their ops are opset 1. */
        m->opsets[m->n_opsets].domain = "";
        m->opsets[m->n_opsets].version = 1;
        m->n_opsets++;
    }
    return ONYX_OK;
}

/* A copy of s in the model's pool ("" for NULL). */
static onyx_status keep_string(model *m, const char *s, const char **out) {
    *out = pool_strdup(&m->pool, s ? s : "");
    return *out ? ONYX_OK : onyx_oom("model metadata");
}

/* The ModelProto's descriptive fields, kept for the metadata API. */
static onyx_status load_descriptions(model *m, const Onnx__ModelProto *mp) {
    TRY(keep_string(m, mp->producer_name, &m->producer_name));
    TRY(keep_string(m, mp->producer_version, &m->producer_version));
    TRY(keep_string(m, mp->domain, &m->domain));
    TRY(keep_string(m, mp->doc_string, &m->doc_string));
    TRY(keep_string(m, mp->graph ? mp->graph->doc_string : NULL, &m->graph_doc_string));
    m->model_version = mp->has_model_version ? mp->model_version : 0;
    if (mp->n_metadata_props == 0) return ONYX_OK;
    if (mp->n_metadata_props > INT32_MAX)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "model has too many metadata_props");
    m->props = pool_alloc(&m->pool, mp->n_metadata_props, sizeof *m->props);
    if (!m->props) return onyx_oom("model metadata");
    for (size_t i = 0; i < mp->n_metadata_props; i++) {
        const Onnx__StringStringEntryProto *e = mp->metadata_props[i];
        TRY(keep_string(m, e ? e->key : NULL, &m->props[i].key));
        TRY(keep_string(m, e ? e->value : NULL, &m->props[i].value));
    }
    m->n_props = (int)mp->n_metadata_props;
    return ONYX_OK;
}

/* `src`: how the bytes were split (NULL: mp holds everything); release_raw: mp is ours. */
static onyx_status load_model(const op_registry *ops, const Onnx__ModelProto *mp,
                              const char *base_dir, bool release_raw, const loader *src,
                              model **out) {
    onyx_status st = ONYX_OK;
    pool p;
    pool_init(&p);
    if (!ops || !mp || !out)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "model_from_proto: NULL argument");
    model *m = pool_alloc(&p, 1, sizeof *m);
    if (!m) {
        pool_destroy(&p);
        return onyx_oom("model");
    }
    m->pool = p; /* from here on the model's copy of the pool is the live one */
    m->refs = 1;
    loader ld = {.m = m, .p = &m->pool, .release_raw = release_raw, .ops = ops};
    if (src) {
        ld.main_gp = mp->graph;
        ld.bytes = src->bytes;
        ld.split = src->split;
        ld.release_bytes = src->release_bytes;
    }
    if (base_dir) {
        m->base_dir = pool_strdup(&m->pool, base_dir);
        if (!m->base_dir) {
            st = onyx_oom("model folder");
            goto done;
        }
        ld.base_dir = m->base_dir;
    }
    if (!mp->has_ir_version || mp->ir_version < 1) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "model has no valid ir_version (got %" PRId64 ")",
                        mp->has_ir_version ? mp->ir_version : (int64_t)0);
        goto done;
    }
    if (mp->ir_version > LOADER_MAX_IR_VERSION) {
        /* a newer IR may carry fields this reader would drop without a word */
        st = onyx_error(ONYX_ERR_UNSUPPORTED,
                        "model IR version %" PRId64 " is newer than the newest onyx reads (%d)",
                        mp->ir_version, LOADER_MAX_IR_VERSION);
        goto done;
    }
    m->ir_version = mp->ir_version;
    CHECK(load_descriptions(m, mp));
    CHECK(load_opsets(&ld, mp));
    if (!mp->graph) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "model has no graph");
        goto done;
    }
    m->main = pool_alloc(&m->pool, 1, sizeof *m->main);
    if (!m->main) {
        st = onyx_oom("graph");
        goto done;
    }
    CHECK(build_graph(&ld, mp->graph, NULL, -1, m->main));
    *out = m;
    m = NULL;
done:
    if (m) {
        pool dead = m->pool;
        pool_destroy(&dead);
    }
    return st;
}

onyx_status model_from_proto(const op_registry *ops, const Onnx__ModelProto *mp,
                             const char *base_dir, model **out) {
    return load_model(ops, mp, base_dir, false, NULL, out);
}

/* Unpacks and loads. The main graph's initializers are unpacked one at a time from the bytes
 * (loader_split_model), so that each weight is copied once; `owned` bytes are freed when done,
 * their pages handed back as the initializers are decoded. */
static onyx_status load_bytes(const op_registry *ops, const void *bytes, size_t size, bool owned,
                              const char *base_dir, model **out) {
    loader_split split = {0};
    onyx_status st = loader_check_wire(&onnx__model_proto__descriptor, bytes, size, "ONNX ModelProto");
    if (st == ONYX_OK) st = loader_split_model(bytes, size, &split);
    Onnx__ModelProto *mp = NULL;
    if (st == ONYX_OK) {
        mp = split.n_inits ? onnx__model_proto__unpack(NULL, split.skeleton_size, split.skeleton)
                           : onnx__model_proto__unpack(NULL, size, bytes);
        free(split.skeleton);
        split.skeleton = NULL;
        if (!mp)
            st = onyx_error(ONYX_ERR_INVALID_MODEL,
                            "not a valid ONNX ModelProto (truncated or corrupt)");
    }
    if (owned && !split.n_inits) { /* nothing more to read from them */
        free((void *)bytes);
        owned = false;
    }
    if (st == ONYX_OK) {
        loader src = {.bytes = bytes, .split = split.n_inits ? &split : NULL,
                      .release_bytes = owned};
        st = load_model(ops, mp, base_dir, true, &src, out);
    }
    if (mp) onnx__model_proto__free_unpacked(mp, NULL);
    loader_split_free(&split);
    if (owned) free((void *)bytes);
    return st;
}

onyx_status model_load_bytes(const op_registry *ops, const void *bytes, size_t size,
                             const char *base_dir, model **out) {
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "model_load_bytes: out is NULL");
    return load_bytes(ops, bytes, size, false, base_dir, out);
}

onyx_status model_load_owned_bytes(const op_registry *ops, void *bytes, size_t size,
                                   const char *base_dir, model **out) {
    if (!out) {
        free(bytes);
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "model_load_owned_bytes: out is NULL");
    }
    return load_bytes(ops, bytes, size, true, base_dir, out);
}
