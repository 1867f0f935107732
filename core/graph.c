/* Read access to the graph IR (attributes, lookups, labels) and the model's lifetime. */
#include "core/graph.h"

#include <stdio.h>
#include <string.h>

#include "geometry/perm.h"

const char *graph_attr_type_name(int type) {
    static const char *const names[] = {
        "UNDEFINED", "FLOAT", "INT",     "STRING",        "TENSOR",         "GRAPH",
        "FLOATS",    "INTS",  "STRINGS", "TENSORS",       "GRAPHS",         "SPARSE_TENSOR",
        "SPARSE_TENSORS",     "TYPE_PROTO",    "TYPE_PROTOS"};
    return type >= 0 && type < (int)(sizeof names / sizeof names[0]) ? names[type] : "unknown";
}

const graph_attr *node_attr(const graph_node *n, const char *name) {
    if (!n || !name) return NULL;
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

int64_t attr_int(const graph_node *n, const char *name, int64_t dflt) {
    const graph_attr *a = node_attr(n, name);
    return a && a->type == ATTR_INT ? a->i : dflt;
}

float attr_float(const graph_node *n, const char *name, float dflt) {
    const graph_attr *a = node_attr(n, name);
    return a && a->type == ATTR_FLOAT ? a->f : dflt;
}

const char *attr_string(const graph_node *n, const char *name, const char *dflt) {
    const graph_attr *a = node_attr(n, name);
    return a && a->type == ATTR_STRING ? a->s : dflt;
}

size_t attr_ints(const graph_node *n, const char *name, const int64_t **out) {
    const graph_attr *a = node_attr(n, name);
    if (!a || a->type != ATTR_INTS) {
        if (out) *out = NULL;
        return 0;
    }
    if (out) *out = a->ints;
    return a->n;
}

size_t attr_floats(const graph_node *n, const char *name, const float **out) {
    const graph_attr *a = node_attr(n, name);
    if (!a || a->type != ATTR_FLOATS) {
        if (out) *out = NULL;
        return 0;
    }
    if (out) *out = a->floats;
    return a->n;
}

onyx_status node_transpose_perm(const graph_node *n, int rank, int64_t *perm) {
    const int64_t *p;
    size_t k = attr_ints(n, "perm", &p);
    geom_msg m;
    GEOM_TRY(m, geom_transpose_perm(node_attr(n, "perm") != NULL, p, k, rank, perm, &m));
    return ONYX_OK;
}

bool node_transpose_perm_ok(const graph_node *n, int rank, int64_t *perm) {
    const int64_t *p;
    size_t k = attr_ints(n, "perm", &p);
    geom_msg m;
    return geom_transpose_perm(node_attr(n, "perm") != NULL, p, k, rank, perm, &m) == ONYX_OK;
}

const tensor *attr_tensor(const graph_node *n, const char *name) {
    const graph_attr *a = node_attr(n, name);
    return a && (a->type == ATTR_TENSOR || a->type == ATTR_SPARSE_TENSOR) ? a->t : NULL;
}

const graph *attr_graph(const graph_node *n, const char *name) {
    const graph_attr *a = node_attr(n, name);
    return a && a->type == ATTR_GRAPH ? a->g : NULL;
}

const char *node_label(const graph_node *n, char *buf, size_t cap) {
    if (!buf || cap == 0) return buf;
    if (!n) {
        snprintf(buf, cap, "node ?");
        return buf;
    }
    const char *dom = n->domain ? n->domain : "";
    char op[160];
    if (n->version > 0)
        snprintf(op, sizeof op, "%s%s%s-%d", dom, *dom ? "." : "", n->op_type, n->version);
    else
        snprintf(op, sizeof op, "%s%s%s", dom, *dom ? "." : "", n->op_type);
    if (n->name && n->name[0])
        snprintf(buf, cap, "node '%s' (%s)", n->name, op);
    else
        snprintf(buf, cap, "unnamed node (%s)", op);
    return buf;
}

static bool is_default_domain(const char *d) {
    return !d || d[0] == '\0' || strcmp(d, "ai.onnx") == 0;
}

int64_t model_opset(const model *m, const char *domain) {
    if (!m) return 0;
    bool dflt = is_default_domain(domain);
    for (int i = 0; i < m->n_opsets; i++) {
        const char *d = m->opsets[i].domain;
        if (dflt ? is_default_domain(d) : (d && strcmp(d, domain) == 0)) return m->opsets[i].version;
    }
    return 0;
}

int graph_find_value(const graph *g, const char *name) {
    if (!g || !name) return -1;
    for (int i = 0; i < g->n_values; i++)
        if (strcmp(g->values[i].name, name) == 0) return i;
    return -1;
}

/* Atomic: reps prepared from one model may be freed on different threads. */
void model_retain(model *m) {
    if (m) __atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
}

void model_release(model *m) {
    if (!m || __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    /* The model lives in its own pool: copy the pool out before destroying it. */
    pool p = m->pool;
    pool_destroy(&p);
}
