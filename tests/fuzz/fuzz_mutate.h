/* A structure-aware mutator for ModelProto bytes (LLVMFuzzerCustomMutator): byte flips rarely
 * keep a protobuf valid, so half of the mutations unpack the model, change one thing the way a
 * broken or hostile exporter would (op type, attribute values, an added attribute of the op's
 * schema, tensor data, declared types, wiring, opset, a dropped node) and pack it again.
 * Everything swapped in is malloc'ed, as protobuf-c's default allocator does, so that
 * free_unpacked releases it. */
#ifndef ONYX_FUZZ_MUTATE_H
#define ONYX_FUZZ_MUTATE_H

#include "ops/schema.h"
#include "tests/fuzz/fuzz_common.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* ---- what the schemas know: op types and their attributes */

#define MUT_MAX_SCHEMAS 4096
static const op_schema *mut_schemas[MUT_MAX_SCHEMAS];
static size_t mut_n_schemas;

static inline void mut_collect_schema(const op_schema *s, void *arg) {
    (void)arg;
    if (mut_n_schemas < MUT_MAX_SCHEMAS && s->domain[0] == '\0') mut_schemas[mut_n_schemas++] = s;
}

static inline const op_schema *mut_schema_of(const char *op) {
    const op_schema *found = NULL;
    for (size_t i = 0; op && i < mut_n_schemas; i++)
        if (strcmp(mut_schemas[i]->op_type, op) == 0) found = mut_schemas[i];
    return found; /* the newest version: the attribute set of the others is close */
}

/* ---- the parts of a model a mutation can pick */

#define MUT_CAP 512
typedef struct mut_parts {
    Onnx__GraphProto *graphs[MUT_CAP];
    Onnx__NodeProto *nodes[MUT_CAP];
    Onnx__GraphProto *node_graph[MUT_CAP];
    Onnx__AttributeProto *attrs[MUT_CAP];
    Onnx__TensorProto *tensors[MUT_CAP];
    Onnx__ValueInfoProto *vis[MUT_CAP];
    const char *names[MUT_CAP];
    size_t n_graphs, n_nodes, n_attrs, n_tensors, n_vis, n_names;
} mut_parts;

#define MUT_ADD(arr, n, x)                                                                         \
    do {                                                                                           \
        if ((n) < MUT_CAP && (x)) (arr)[(n)++] = (x);                                              \
    } while (0)

static inline void mut_walk(mut_parts *p, Onnx__GraphProto *g, int depth) {
    if (!g || depth > 8) return;
    MUT_ADD(p->graphs, p->n_graphs, g);
    for (size_t i = 0; i < g->n_initializer; i++) {
        MUT_ADD(p->tensors, p->n_tensors, g->initializer[i]);
        if (g->initializer[i]) MUT_ADD(p->names, p->n_names, g->initializer[i]->name);
    }
    for (size_t i = 0; i < g->n_input; i++) {
        MUT_ADD(p->vis, p->n_vis, g->input[i]);
        if (g->input[i]) MUT_ADD(p->names, p->n_names, g->input[i]->name);
    }
    for (size_t i = 0; i < g->n_output; i++) MUT_ADD(p->vis, p->n_vis, g->output[i]);
    for (size_t n = 0; n < g->n_node; n++) {
        Onnx__NodeProto *np = g->node[n];
        if (!np) continue;
        if (p->n_nodes < MUT_CAP) {
            p->node_graph[p->n_nodes] = g;
            p->nodes[p->n_nodes++] = np;
        }
        for (size_t o = 0; o < np->n_output; o++) MUT_ADD(p->names, p->n_names, np->output[o]);
        for (size_t a = 0; a < np->n_attribute; a++) {
            Onnx__AttributeProto *ap = np->attribute[a];
            if (!ap) continue;
            MUT_ADD(p->attrs, p->n_attrs, ap);
            MUT_ADD(p->tensors, p->n_tensors, ap->t);
            for (size_t k = 0; k < ap->n_tensors; k++) MUT_ADD(p->tensors, p->n_tensors, ap->tensors[k]);
            mut_walk(p, ap->g, depth + 1);
            for (size_t k = 0; k < ap->n_graphs; k++) mut_walk(p, ap->graphs[k], depth + 1);
        }
    }
}

/* ---- values worth trying */

static const int64_t mut_ints[] = {0, 1, 2, 3, -1, -2, 4, 7, 16, -3, 100, 127, 255, 65536,
                                   INT32_MAX, INT32_MIN, (int64_t)1 << 32, INT64_MAX, INT64_MIN,
                                   INT64_MAX - 1, INT64_MIN + 1, 1 << 20};
static const float mut_floats[] = {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 1e-9f, 1e9f, -1e30f,
                                   0.0f / 0.0f, 1.0f / 0.0f, -1.0f / 0.0f, 3.0f, 1e38f};
static const char *const mut_strings[] = {"", "constant", "reflect", "edge", "wrap", "NOTSET",
                                          "SAME_UPPER", "VALID", "linear", "nearest", "cubic",
                                          "tanh", "abc", "ij,jk->ik", "...ii->...i", "i,i", "DCR",
                                          "CRD", "half_pixel", "max", "mean", "none", "add"};

static inline int64_t mut_int(fuzz_rng *r) {
    return mut_ints[rng_below(r, sizeof mut_ints / sizeof mut_ints[0])];
}
static inline float mut_float(fuzz_rng *r) {
    return mut_floats[rng_below(r, sizeof mut_floats / sizeof mut_floats[0])];
}

static inline char *mut_strdup(const char *s) {
    char *c = strdup(s ? s : "");
    if (!c) abort();
    return c;
}

static inline void *mut_grow(void *arr, size_t n, size_t size) {
    void *v = realloc(arr, (n + 1) * size);
    if (!v) abort();
    return v;
}

static inline void mut_set_string(char **field, const char *s) {
    char *c = mut_strdup(s);
    free(*field);
    *field = c;
}

/* A fresh attribute of the schema's type `t` named `name`, with a value worth trying. */
static inline Onnx__AttributeProto *mut_new_attr(fuzz_rng *r, const char *name, attr_type t) {
    Onnx__AttributeProto *a = calloc(1, sizeof *a);
    if (!a) abort();
    onnx__attribute_proto__init(a);
    a->name = mut_strdup(name);
    a->has_type = 1;
    a->type = (Onnx__AttributeProto__AttributeType)t;
    switch (t) {
    case ATTR_INT: a->has_i = 1; a->i = mut_int(r); break;
    case ATTR_FLOAT: a->has_f = 1; a->f = mut_float(r); break;
    case ATTR_STRING: {
        const char *s = mut_strings[rng_below(r, sizeof mut_strings / sizeof mut_strings[0])];
        a->has_s = 1;
        a->s.len = strlen(s);
        a->s.data = (uint8_t *)mut_strdup(s);
        break;
    }
    case ATTR_INTS: {
        a->n_ints = rng_below(r, 5);
        a->ints = malloc((a->n_ints + 1) * sizeof *a->ints);
        if (!a->ints) abort();
        for (size_t i = 0; i < a->n_ints; i++) a->ints[i] = rng_below(r, 2) ? mut_int(r) : (int64_t)i;
        break;
    }
    case ATTR_FLOATS: {
        a->n_floats = rng_below(r, 5);
        a->floats = malloc((a->n_floats + 1) * sizeof *a->floats);
        if (!a->floats) abort();
        for (size_t i = 0; i < a->n_floats; i++) a->floats[i] = mut_float(r);
        break;
    }
    default: a->has_type = 0; a->type = 0; break; /* tensors, graphs: an empty attribute */
    }
    return a;
}

static const char *const mut_locations[] = {"data.bin", "sub/w.bin", "sub", "../data.bin",
                                            "/etc/hostname", "sub/../data.bin", "", "nope",
                                            "sub//w.bin", "./data.bin"};

static inline void mut_tensor_data(fuzz_rng *r, Onnx__TensorProto *t) {
    if (t->n_external_data && rng_below(r, 2)) {
        Onnx__StringStringEntryProto *e = t->external_data[rng_below(r, (unsigned)t->n_external_data)];
        if (!e) return;
        char num[32];
        snprintf(num, sizeof num, "%lld", (long long)mut_int(r));
        bool location = e->key && strcmp(e->key, "location") == 0;
        mut_set_string(&e->value, location ? mut_locations[rng_below(r, sizeof mut_locations /
                                                                            sizeof mut_locations[0])]
                                           : num);
    } else if (t->n_int64_data) t->int64_data[rng_below(r, (unsigned)t->n_int64_data)] = mut_int(r);
    else if (t->n_int32_data) t->int32_data[rng_below(r, (unsigned)t->n_int32_data)] = (int32_t)mut_int(r);
    else if (t->n_float_data) t->float_data[rng_below(r, (unsigned)t->n_float_data)] = mut_float(r);
    else if (t->raw_data.len >= 8 && rng_below(r, 2)) {
        int64_t v = mut_int(r);
        size_t at = rng_below(r, (unsigned)(t->raw_data.len / 8)) * 8;
        memcpy(t->raw_data.data + at, &v, 8);
    } else if (t->raw_data.len >= 4) {
        int32_t v = (int32_t)mut_int(r);
        float f = mut_float(r);
        size_t at = rng_below(r, (unsigned)(t->raw_data.len / 4)) * 4;
        memcpy(t->raw_data.data + at, rng_below(r, 2) ? (const void *)&v : (const void *)&f, 4);
    } else if (t->n_dims) {
        t->dims[rng_below(r, (unsigned)t->n_dims)] = rng_below(r, 4);
    }
}

static inline void mut_value_info(fuzz_rng *r, Onnx__ValueInfoProto *vi) {
    Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) return;
    Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (rng_below(r, 3) == 0 || !tt->shape || !tt->shape->n_dim) {
        tt->has_elem_type = 1;
        tt->elem_type = 1 + (int32_t)rng_below(r, 26);
        return;
    }
    Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[rng_below(r, (unsigned)tt->shape->n_dim)];
    if (!d) return;
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) free(d->dim_param);
    if (rng_below(r, 4) == 0) {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d->dim_param = mut_strdup(rng_below(r, 2) ? "N" : "M");
    } else {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = (int64_t)rng_below(r, 6);
    }
}

/* One structural change; false when the picked part does not exist in this model. */
static inline bool mut_apply(fuzz_rng *r, Onnx__ModelProto *mp, mut_parts *p) {
    switch (rng_below(r, 10)) {
    case 0: { /* op type */
        if (!p->n_nodes || !mut_n_schemas) return false;
        Onnx__NodeProto *n = p->nodes[rng_below(r, (unsigned)p->n_nodes)];
        mut_set_string(&n->op_type, mut_schemas[rng_below(r, (unsigned)mut_n_schemas)]->op_type);
        return true;
    }
    case 1:
    case 2: { /* an attribute value */
        if (!p->n_attrs) return false;
        Onnx__AttributeProto *a = p->attrs[rng_below(r, (unsigned)p->n_attrs)];
        if (a->has_i) a->i = mut_int(r);
        else if (a->n_ints) a->ints[rng_below(r, (unsigned)a->n_ints)] = mut_int(r);
        else if (a->has_f) a->f = mut_float(r);
        else if (a->n_floats) a->floats[rng_below(r, (unsigned)a->n_floats)] = mut_float(r);
        else if (a->t) mut_tensor_data(r, a->t);
        else return false;
        return true;
    }
    case 3: { /* an attribute the op's schema knows, added or replacing one */
        if (!p->n_nodes) return false;
        Onnx__NodeProto *n = p->nodes[rng_below(r, (unsigned)p->n_nodes)];
        const op_schema *s = mut_schema_of(n->op_type);
        if (!s || !s->attrs || !s->attrs[0].name) return false;
        size_t na = 0;
        while (s->attrs[na].name) na++;
        const attr_spec *sp = &s->attrs[rng_below(r, (unsigned)na)];
        Onnx__AttributeProto *a = mut_new_attr(r, sp->name, rng_below(r, 8) ? sp->type : ATTR_INTS);
        for (size_t k = 0; k < n->n_attribute; k++)
            if (n->attribute[k] && n->attribute[k]->name && strcmp(n->attribute[k]->name, sp->name) == 0) {
                onnx__attribute_proto__free_unpacked(n->attribute[k], NULL);
                n->attribute[k] = a;
                return true;
            }
        n->attribute = mut_grow(n->attribute, n->n_attribute, sizeof *n->attribute);
        n->attribute[n->n_attribute++] = a;
        return true;
    }
    case 4: /* tensor data: shape inputs, indices, pads */
        if (!p->n_tensors) return false;
        mut_tensor_data(r, p->tensors[rng_below(r, (unsigned)p->n_tensors)]);
        return true;
    case 5: /* declared input/output type */
        if (!p->n_vis) return false;
        mut_value_info(r, p->vis[rng_below(r, (unsigned)p->n_vis)]);
        return true;
    case 6: { /* rewire an input: another value, omitted, or one more input */
        if (!p->n_nodes || !p->n_names) return false;
        Onnx__NodeProto *n = p->nodes[rng_below(r, (unsigned)p->n_nodes)];
        const char *name = rng_below(r, 5) ? p->names[rng_below(r, (unsigned)p->n_names)] : "";
        if (n->n_input && rng_below(r, 3)) {
            mut_set_string(&n->input[rng_below(r, (unsigned)n->n_input)], name);
        } else {
            n->input = mut_grow(n->input, n->n_input, sizeof *n->input);
            n->input[n->n_input++] = mut_strdup(name);
        }
        return true;
    }
    case 7: /* opset */
        if (!mp->n_opset_import || !mp->opset_import[0]) return false;
        mp->opset_import[0]->has_version = 1;
        mp->opset_import[0]->version = 1 + (int64_t)rng_below(r, 26);
        return true;
    case 8: { /* drop a node (its outputs become undefined names) or its last input */
        if (!p->n_nodes) return false;
        size_t k = rng_below(r, (unsigned)p->n_nodes);
        Onnx__GraphProto *g = p->node_graph[k];
        Onnx__NodeProto *n = p->nodes[k];
        if (rng_below(r, 2) && n->n_input) {
            free(n->input[--n->n_input]);
            return true;
        }
        for (size_t i = 0; i < g->n_node; i++)
            if (g->node[i] == n) {
                onnx__node_proto__free_unpacked(n, NULL);
                memmove(&g->node[i], &g->node[i + 1], (g->n_node - i - 1) * sizeof *g->node);
                g->n_node--;
                break;
            }
        /* the parts list still points at the freed node: stop here */
        return true;
    }
    default: { /* a node output renamed, or an output omitted */
        if (!p->n_nodes) return false;
        Onnx__NodeProto *n = p->nodes[rng_below(r, (unsigned)p->n_nodes)];
        if (!n->n_output) return false;
        mut_set_string(&n->output[rng_below(r, (unsigned)n->n_output)],
                       rng_below(r, 3) ? "" : p->n_names ? p->names[rng_below(r, (unsigned)p->n_names)] : "x");
        return true;
    }
    }
}

/* Mutates the ModelProto in data[0, size) in place (capacity max_size); returns the new size,
 * or 0 when the bytes are not a model (the caller then mutates bytes). */
static inline size_t mut_model(uint8_t *data, size_t size, size_t max_size, unsigned seed) {
    if (!mut_n_schemas) schema_foreach(mut_collect_schema, NULL);
    if (loader_check_wire(&onnx__model_proto__descriptor, data, size, "mutator") != ONYX_OK)
        return 0;
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, size, data);
    if (!mp) return 0;
    fuzz_rng r = {(uint64_t)seed * 0x9e3779b97f4a7c15ull + 1};
    size_t out = 0;
    mut_parts *p = calloc(1, sizeof *p);
    if (p) {
        mut_walk(p, mp->graph, 0);
        bool changed = false;
        for (int tries = 0; tries < 8 && !changed; tries++) changed = mut_apply(&r, mp, p);
        size_t n = onnx__model_proto__get_packed_size(mp);
        if (changed && n <= max_size) out = onnx__model_proto__pack(mp, data);
        free(p);
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    return out;
}

#endif
