/* Duplicate nodes by hashing (core/graph_cse.h): each node's key is its op, its attributes and
 * the canonical values it reads; nodes with equal keys are compared in full. */
#include "core/graph_cse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/value.h"

/* Constants up to this size are compared by content (exporters repeat scalars and small shape
 * vectors per layer); larger ones only by identity, which keeps the pass linear. */
#define SMALL_CONSTANT_BYTES 256

typedef struct cse {
    const graph *g;
    int *canon; /* per value: the value it equals (itself, or an earlier duplicate's) */
} cse;

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t hash_str(uint64_t h, const char *s) { return s ? hash_bytes(h, s, strlen(s)) : h; }

/* t where it is small enough to compare by content (and has its data), else NULL. */
static const tensor *small(const tensor *t) {
    if (!t || t->dtype == ONYX_STRING || t->nbytes > SMALL_CONSTANT_BYTES) return NULL;
    return t->nbytes > 0 && !t->data ? NULL : t;
}

static uint64_t hash_tensor(uint64_t h, const tensor *t) {
    h = hash_bytes(mix(h, (uint64_t)t->dtype), t->dims, (size_t)t->rank * sizeof t->dims[0]);
    return t->nbytes ? hash_bytes(h, t->data, t->nbytes) : h;
}

/* The value of an initializer or of a Constant node's `value`, where it is small. */
static const tensor *small_constant(const cse *c, int v) {
    const graph_value *gv = &c->g->values[v];
    const tensor *t = (gv->flags & GV_INITIALIZER) ? gv->init : NULL;
    if (!t && gv->producer >= 0) {
        const graph_node *p = &c->g->nodes[gv->producer];
        if (!strcmp(p->op_type, "Constant") && !*p->domain && p->n_attrs == 1 &&
            p->attrs[0].type == ATTR_TENSOR && !strcmp(p->attrs[0].name, "value"))
            t = p->attrs[0].t;
    }
    return small(t);
}

static bool same_tensor(const tensor *a, const tensor *b) {
    if (!a || !b) return a == b;
    if (a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes ||
        a->dtype == ONYX_STRING || (a->nbytes && (!a->data || !b->data)))
        return false;
    if (memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]) != 0) return false;
    return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

static uint64_t hash_value(const cse *c, int v) {
    if (v < 0) return 0x51ed;
    const tensor *t = small_constant(c, v);
    return t ? hash_tensor(2, t) : mix(1, (uint64_t)c->canon[v]);
}

static bool same_value(const cse *c, int a, int b) {
    if (a < 0 || b < 0) return a == b;
    if (c->canon[a] == c->canon[b]) return true;
    const tensor *ta = small_constant(c, a), *tb = small_constant(c, b);
    return ta && tb && same_tensor(ta, tb);
}

static bool same_attr(const graph_attr *a, const graph_attr *b) {
    if (a->type != b->type) return false;
    switch (a->type) {
    case ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case ATTR_INT: return a->i == b->i;
    case ATTR_STRING: return a->s_len == b->s_len && !memcmp(a->s, b->s, a->s_len);
    case ATTR_TENSOR: return same_tensor(a->t, b->t);
    case ATTR_FLOATS: return a->n == b->n && !memcmp(a->floats, b->floats, a->n * sizeof(float));
    case ATTR_INTS: return a->n == b->n && !memcmp(a->ints, b->ints, a->n * sizeof(int64_t));
    case ATTR_STRINGS:
        if (a->n != b->n) return false;
        for (size_t k = 0; k < a->n; k++)
            if (strcmp(a->strings[k], b->strings[k]) != 0) return false;
        return true;
    default: return false; /* graphs, type protos, tensor lists: never taken as equal */
    }
}

/* The name, and the value where it is a number or a small tensor. */
static uint64_t attr_hash(const graph_attr *a) {
    uint64_t h = hash_str(0x100, a->name);
    switch (a->type) {
    case ATTR_FLOAT: return hash_bytes(h, &a->f, sizeof a->f);
    case ATTR_INT: return mix(h, (uint64_t)a->i);
    case ATTR_TENSOR: return small(a->t) ? hash_tensor(h, a->t) : h;
    default: return h;
    }
}

static const graph_attr *attr_named(const graph_node *n, const char *name) {
    for (int k = 0; k < n->n_attrs; k++)
        if (!strcmp(n->attrs[k].name, name)) return &n->attrs[k];
    return NULL;
}

/* Ops whose result is a function of their inputs and attributes alone. */
static bool deterministic(const graph_node *n) {
    static const char *const drawn[] = {"RandomNormal", "RandomNormalLike", "RandomUniform",
                                        "RandomUniformLike", "Multinomial", "Bernoulli",
                                        "Dropout"};
    if (*n->domain) return false;
    for (size_t k = 0; k < sizeof drawn / sizeof drawn[0]; k++)
        if (!strcmp(n->op_type, drawn[k])) return false;
    return true;
}

/* Ops that only relabel their input cost nothing, and a second reader would keep them from
 * folding into a product's strided view (core/fuse.c) or a pattern (the LayerNorm rewrite finds
 * gamma through the TorchScript exporter's Identity nodes): they stay as they are. */
static bool relabel(const graph_node *n) {
    static const char *const ops[] = {"Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten"};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (!strcmp(n->op_type, ops[k])) return true;
    return false;
}

/* Constant nodes stay (the pattern rewrites read their values where they are): their outputs are
 * compared by content instead. */
static bool candidate(const graph_node *n) {
    if (n->n_outputs != 1 || n->outputs[0] < 0 || n->n_inputs < 1 || n->n_captures > 0 ||
        !deterministic(n) || relabel(n))
        return false;
    for (int k = 0; k < n->n_attrs; k++) {
        attr_type t = n->attrs[k].type;
        if (t == ATTR_GRAPH || t == ATTR_GRAPHS) return false;
    }
    return true;
}

static uint64_t node_key(const cse *c, const graph_node *n) {
    uint64_t h = hash_str(hash_str(0xcbf29ce484222325ull, n->domain), n->op_type);
    h = mix(h, (uint64_t)n->version);
    h = mix(h, (uint64_t)n->n_inputs);
    for (int i = 0; i < n->n_inputs; i++) h = mix(h, hash_value(c, n->inputs[i]));
    /* attributes summed: their order may differ between equal nodes */
    uint64_t attrs = 0;
    for (int k = 0; k < n->n_attrs; k++) attrs += attr_hash(&n->attrs[k]);
    return mix(h, attrs);
}

static bool same_node(const cse *c, const graph_node *a, const graph_node *b) {
    if (strcmp(a->op_type, b->op_type) != 0 || strcmp(a->domain, b->domain) != 0 ||
        a->version != b->version || a->n_inputs != b->n_inputs || a->n_attrs != b->n_attrs)
        return false;
    for (int i = 0; i < a->n_inputs; i++)
        if (!same_value(c, a->inputs[i], b->inputs[i])) return false;
    for (int k = 0; k < a->n_attrs; k++) {
        const graph_attr *o = attr_named(b, a->attrs[k].name);
        if (!o || !same_attr(&a->attrs[k], o)) return false;
    }
    return true;
}

onyx_status graph_find_duplicates(const graph *g, int **dup_of) {
    *dup_of = NULL;
    int *dup = malloc(((size_t)g->n_nodes + 1) * sizeof *dup);
    int *canon = malloc(((size_t)g->n_values + 1) * sizeof *canon);
    size_t cap = 64;
    while (cap < 2 * (size_t)g->n_nodes) cap *= 2;
    int *slot = malloc(cap * sizeof *slot); /* open addressing over node indices, -1 empty */
    uint64_t *keys = malloc(((size_t)g->n_nodes + 1) * sizeof *keys);
    if (!dup || !canon || !slot || !keys) {
        free(dup);
        free(canon);
        free(slot);
        free(keys);
        return onyx_oom("duplicate nodes");
    }
    for (int v = 0; v < g->n_values; v++) canon[v] = v;
    for (size_t s = 0; s < cap; s++) slot[s] = -1;
    cse c = {.g = g, .canon = canon};
    for (int n = 0; n < g->n_nodes; n++) {
        const graph_node *nd = &g->nodes[n];
        dup[n] = -1;
        if (!candidate(nd)) continue;
        keys[n] = node_key(&c, nd);
        size_t s = (size_t)keys[n] & (cap - 1);
        for (; slot[s] >= 0; s = (s + 1) & (cap - 1)) {
            int o = slot[s];
            if (keys[o] == keys[n] && same_node(&c, &g->nodes[o], nd)) {
                dup[n] = o;
                canon[nd->outputs[0]] = canon[g->nodes[o].outputs[0]];
                break;
            }
        }
        if (dup[n] < 0) slot[s] = n;
    }
    free(canon);
    free(slot);
    free(keys);
    *dup_of = dup;
    return ONYX_OK;
}
