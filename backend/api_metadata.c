/* The public model-metadata API (include/onyx.h): a ModelProto's header fields read by walking its
 * protobuf wire format, where the graph's nodes are only glanced at and the weights skipped (never
 * unpacked or copied), or taken from a loaded model. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/loader.h"
#include "core/loader_wire.h"

typedef struct md_entry { /* a metadata_props pair, or an opset import (text = domain) */
    char *key, *value;
    int64_t version;
} md_entry;

typedef struct md_op {
    char *domain, *op_type;
    size_t count;
} md_op;

struct onyx_model_metadata {
    int64_t ir_version, model_version;
    char *producer_name, *producer_version, *domain, *doc_string, *graph_name, *graph_doc_string;
    md_entry *props, *opsets;
    size_t n_props, n_opsets, cap_props, cap_opsets;
    md_op *ops;
    size_t n_ops, cap_ops;
    size_t nodes, initializers;
};

/* ---------------------------------------------------------------- building */

static char *dup_n(const void *s, size_t n) {
    char *d = malloc(n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* Replaces *slot by a copy of s[0..n) (protobuf: the last occurrence of a field wins). */
static onyx_status set_str(char **slot, const void *s, size_t n) {
    char *d = dup_n(s, n);
    if (!d) return onyx_oom("model metadata");
    free(*slot);
    *slot = d;
    return ONYX_OK;
}

static void *grow(void *items, size_t *cap, size_t n, size_t size) {
    if (n < *cap) return items;
    size_t c = *cap ? *cap * 2 : 8;
    void *p = realloc(items, c * size);
    if (p) *cap = c;
    return p;
}

static onyx_status add_entry(md_entry **items, size_t *n, size_t *cap, const void *key,
                             size_t key_len, const void *value, size_t value_len, int64_t version) {
    md_entry *p = grow(*items, cap, *n, sizeof **items);
    if (!p) return onyx_oom("model metadata");
    *items = p;
    md_entry *e = &p[*n];
    e->key = dup_n(key, key_len);
    e->value = value ? dup_n(value, value_len) : NULL;
    e->version = version;
    if (!e->key || (value && !e->value)) {
        free(e->key);
        free(e->value);
        return onyx_oom("model metadata");
    }
    (*n)++;
    return ONYX_OK;
}

static bool same(const char *s, const void *p, size_t n) {
    return strlen(s) == n && (n == 0 || memcmp(s, p, n) == 0);
}

/* Counts one node of op (domain, op_type); "ai.onnx" is the default domain, stored as "". */
static onyx_status count_op(onyx_model_metadata *md, const char *domain, size_t domain_len,
                            const char *op_type, size_t op_len) {
    if (same("ai.onnx", domain, domain_len)) domain_len = 0;
    md->nodes++;
    for (size_t i = 0; i < md->n_ops; i++)
        if (same(md->ops[i].op_type, op_type, op_len) && same(md->ops[i].domain, domain, domain_len)) {
            md->ops[i].count++;
            return ONYX_OK;
        }
    md_op *p = grow(md->ops, &md->cap_ops, md->n_ops, sizeof *md->ops);
    if (!p) return onyx_oom("model metadata");
    md->ops = p;
    md_op *op = &p[md->n_ops];
    op->domain = dup_n(domain, domain_len);
    op->op_type = dup_n(op_type, op_len);
    op->count = 1;
    if (!op->domain || !op->op_type) {
        free(op->domain);
        free(op->op_type);
        return onyx_oom("model metadata");
    }
    md->n_ops++;
    return ONYX_OK;
}

static int cmp_ops(const void *a, const void *b) {
    const md_op *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    int c = strcmp(x->domain, y->domain);
    return c ? c : strcmp(x->op_type, y->op_type);
}

static onyx_status new_metadata(onyx_model_metadata **out) {
    onyx_model_metadata *md = calloc(1, sizeof *md);
    if (!md) return onyx_oom("model metadata");
    static const char *const empty = "";
    char **strs[] = {&md->producer_name, &md->producer_version, &md->domain,
                     &md->doc_string,    &md->graph_name,       &md->graph_doc_string};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (set_str(strs[i], empty, 0) != ONYX_OK) {
            onyx_model_metadata_free(md);
            return onyx_oom("model metadata");
        }
    *out = md;
    return ONYX_OK;
}

void onyx_model_metadata_free(onyx_model_metadata *md) {
    if (!md) return;
    free(md->producer_name);
    free(md->producer_version);
    free(md->domain);
    free(md->doc_string);
    free(md->graph_name);
    free(md->graph_doc_string);
    for (size_t i = 0; i < md->n_props; i++) {
        free(md->props[i].key);
        free(md->props[i].value);
    }
    for (size_t i = 0; i < md->n_opsets; i++) free(md->opsets[i].key);
    for (size_t i = 0; i < md->n_ops; i++) {
        free(md->ops[i].domain);
        free(md->ops[i].op_type);
    }
    free(md->props);
    free(md->opsets);
    free(md->ops);
    free(md);
}

/* ---------------------------------------------------------------- protobuf wire walking */

typedef struct wire {
    const uint8_t *p, *end;
} wire;

static bool wire_varint(wire *w, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (w->p >= w->end) return false;
        uint8_t b = *w->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* One field: its number and either its varint or its bytes (length-delimited); fixed-width fields
 * are skipped. Returns 1 for a field, 0 at the end, -1 on malformed data. */
static int wire_next(wire *w, uint32_t *field, uint64_t *varint, wire *bytes, bool *is_bytes) {
    uint64_t key, len;
    if (w->p >= w->end) return 0;
    if (!wire_varint(w, &key)) return -1;
    *field = (uint32_t)(key >> 3);
    *is_bytes = false;
    switch (key & 7) {
    case 0: return wire_varint(w, varint) ? 1 : -1;
    case 1:
        if (w->end - w->p < 8) return -1;
        w->p += 8;
        return 1;
    case 5:
        if (w->end - w->p < 4) return -1;
        w->p += 4;
        return 1;
    case 2:
        if (!wire_varint(w, &len) || len > (uint64_t)(w->end - w->p)) return -1;
        bytes->p = w->p;
        bytes->end = w->p + len;
        w->p += len;
        *is_bytes = true;
        return 1;
    default: return -1;
    }
}

#define WLEN(b) ((size_t)((b).end - (b).p))

static onyx_status malformed(const char *what) {
    return onyx_error(ONYX_ERR_INVALID_MODEL, "not a valid ONNX ModelProto: malformed %s", what);
}

/* Walks the fields of one message, calling `fn` for each. */
typedef onyx_status (*field_fn)(void *ctx, uint32_t field, uint64_t varint, wire bytes, bool is_bytes);

static onyx_status walk(wire w, const char *what, field_fn fn, void *ctx) {
    uint32_t field;
    uint64_t v = 0;
    wire b = {NULL, NULL};
    bool is_bytes;
    int r;
    while ((r = wire_next(&w, &field, &v, &b, &is_bytes)) > 0) TRY(fn(ctx, field, v, b, is_bytes));
    return r < 0 ? malformed(what) : ONYX_OK;
}

typedef struct pair_ctx {
    wire a, b;
    uint64_t n;
} pair_ctx;

/* StringStringEntryProto (key 1, value 2) and OperatorSetIdProto (domain 1, version 2). */
static onyx_status pair_field(void *ctx, uint32_t field, uint64_t v, wire b, bool is_bytes) {
    pair_ctx *c = ctx;
    if (field == 1 && is_bytes) c->a = b;
    else if (field == 2 && is_bytes) c->b = b;
    else if (field == 2) c->n = v;
    return ONYX_OK;
}

static onyx_status node_field(void *ctx, uint32_t field, uint64_t v, wire b, bool is_bytes) {
    (void)v;
    pair_ctx *c = ctx;
    if (field == 4 && is_bytes) c->a = b;      /* op_type */
    else if (field == 7 && is_bytes) c->b = b; /* domain */
    return ONYX_OK;
}

static onyx_status graph_field(void *ctx, uint32_t field, uint64_t v, wire b, bool is_bytes) {
    (void)v;
    onyx_model_metadata *md = ctx;
    if (!is_bytes) return ONYX_OK;
    switch (field) {
    case 1: { /* node */
        pair_ctx n = {{b.p, b.p}, {b.p, b.p}, 0};
        TRY(walk(b, "node", node_field, &n));
        return count_op(md, (const char *)n.b.p, WLEN(n.b), (const char *)n.a.p, WLEN(n.a));
    }
    case 2: return set_str(&md->graph_name, b.p, WLEN(b));
    case 5:  /* initializer */
    case 15: /* sparse_initializer */
        md->initializers++;
        return ONYX_OK;
    case 10: return set_str(&md->graph_doc_string, b.p, WLEN(b));
    default: return ONYX_OK;
    }
}

typedef struct model_ctx {
    onyx_model_metadata *md;
    bool has_ir, has_graph;
} model_ctx;

static onyx_status model_field(void *ctx, uint32_t field, uint64_t v, wire b, bool is_bytes) {
    model_ctx *c = ctx;
    onyx_model_metadata *md = c->md;
    if (!is_bytes) {
        if (field == 1) {
            md->ir_version = (int64_t)v;
            c->has_ir = true;
        } else if (field == 5) {
            md->model_version = (int64_t)v;
        }
        return ONYX_OK;
    }
    switch (field) {
    case 2: return set_str(&md->producer_name, b.p, WLEN(b));
    case 3: return set_str(&md->producer_version, b.p, WLEN(b));
    case 4: return set_str(&md->domain, b.p, WLEN(b));
    case 6: return set_str(&md->doc_string, b.p, WLEN(b));
    case 7:
        c->has_graph = true;
        /* A graph field given twice merges into one, as protobuf does. */
        return walk(b, "graph", graph_field, md);
    case 8: {
        pair_ctx o = {{b.p, b.p}, {NULL, NULL}, 0};
        TRY(walk(b, "opset_import", pair_field, &o));
        return add_entry(&md->opsets, &md->n_opsets, &md->cap_opsets, o.a.p, WLEN(o.a), NULL, 0,
                         (int64_t)o.n);
    }
    case 14: {
        pair_ctx e = {{b.p, b.p}, {b.p, b.p}, 0};
        TRY(walk(b, "metadata_props", pair_field, &e));
        return add_entry(&md->props, &md->n_props, &md->cap_props, e.a.p, WLEN(e.a), e.b.p,
                         WLEN(e.b), 0);
    }
    default: return ONYX_OK;
    }
}

onyx_status onyx_model_metadata_read_buffer(const void *bytes, size_t size,
                                            onyx_model_metadata **out) {
    if (!out)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "onyx_model_metadata_read_buffer: out is NULL");
    if (!bytes && size)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "onyx_model_metadata_read_buffer: bytes is NULL");
    TRY(loader_check_wire(&onnx__model_proto__descriptor, bytes, size, "ONNX ModelProto"));
    onyx_model_metadata *md;
    TRY(new_metadata(&md));
    model_ctx c = {md, false, false};
    wire w = {bytes, (const uint8_t *)bytes + size};
    onyx_status st = walk(w, "model", model_field, &c);
    if (st == ONYX_OK && !c.has_ir && !c.has_graph)
        st = onyx_error(ONYX_ERR_INVALID_MODEL,
                        "not an ONNX ModelProto: it has neither an ir_version nor a graph");
    if (st != ONYX_OK) {
        onyx_model_metadata_free(md);
        return st;
    }
    qsort(md->ops, md->n_ops, sizeof *md->ops, cmp_ops);
    *out = md;
    return ONYX_OK;
}

onyx_status onyx_model_metadata_read_file(const char *path, onyx_model_metadata **out) {
    if (!path || !out)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "onyx_model_metadata_read_file: NULL argument");
    /* Mapped, not read: the walk touches the pages of headers and node descriptions, not those of
     * the weights. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return onyx_error(ONYX_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    onyx_status st;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
        void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        close(fd);
        if (p == MAP_FAILED)
            return onyx_error(ONYX_ERR_IO, "cannot map '%s': %s", path, strerror(errno));
        st = onyx_model_metadata_read_buffer(p, (size_t)sb.st_size, out);
        munmap(p, (size_t)sb.st_size);
    } else {
        close(fd);
        void *bytes = NULL;
        size_t size = 0;
        TRY(loader_read_file(path, &bytes, &size, NULL));
        st = onyx_model_metadata_read_buffer(bytes, size, out);
        free(bytes);
    }
    if (st != ONYX_OK) return onyx_error_prefix(st, "%s", path);
    return ONYX_OK;
}

/* ---------------------------------------------------------------- from a loaded model */

onyx_status onyx_model_get_metadata(const onyx_model *om, onyx_model_metadata **out) {
    if (!om || !out)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "onyx_model_get_metadata: NULL argument");
    const model *m = (const model *)(uintptr_t)om;
    onyx_model_metadata *md;
    TRY(new_metadata(&md));
    onyx_status st = ONYX_OK;
    md->ir_version = m->ir_version;
    md->model_version = m->model_version;
    const char *const from[] = {m->producer_name, m->producer_version, m->domain, m->doc_string,
                                m->graph_doc_string};
    char **to[] = {&md->producer_name, &md->producer_version, &md->domain, &md->doc_string,
                   &md->graph_doc_string};
    for (size_t k = 0; k < sizeof from / sizeof from[0]; k++)
        if (from[k] && *from[k]) CHECK(set_str(to[k], from[k], strlen(from[k])));
    for (int i = 0; i < m->n_props; i++)
        CHECK(add_entry(&md->props, &md->n_props, &md->cap_props, m->props[i].key,
                        strlen(m->props[i].key), m->props[i].value, strlen(m->props[i].value), 0));
    for (int i = 0; i < m->n_opsets; i++) {
        const char *d = m->opsets[i].domain ? m->opsets[i].domain : "";
        CHECK(add_entry(&md->opsets, &md->n_opsets, &md->cap_opsets, d, strlen(d), NULL, 0,
                        m->opsets[i].version));
    }
    const graph *g = m->main;
    if (g) {
        if (g->name) CHECK(set_str(&md->graph_name, g->name, strlen(g->name)));
        for (int i = 0; i < g->n_nodes; i++) {
            const graph_node *n = &g->nodes[i];
            const char *d = n->domain ? n->domain : "", *op = n->op_type ? n->op_type : "";
            CHECK(count_op(md, d, strlen(d), op, strlen(op)));
        }
        for (int i = 0; i < g->n_values; i++)
            if ((g->values[i].flags & GV_INITIALIZER) && !(g->values[i].flags & GV_CAPTURED))
                md->initializers++;
    }
    qsort(md->ops, md->n_ops, sizeof *md->ops, cmp_ops);
    *out = md;
    md = NULL;
done:
    onyx_model_metadata_free(md);
    return st;
}

/* ---------------------------------------------------------------- accessors */

#define STR_GETTER(field)                                                                          \
    const char *onyx_model_metadata_##field(const onyx_model_metadata *md) {                       \
        return md && md->field ? md->field : "";                                                   \
    }
STR_GETTER(producer_name)
STR_GETTER(producer_version)
STR_GETTER(domain)
STR_GETTER(doc_string)
STR_GETTER(graph_name)
STR_GETTER(graph_doc_string)

int64_t onyx_model_metadata_ir_version(const onyx_model_metadata *md) {
    return md ? md->ir_version : 0;
}

int64_t onyx_model_metadata_model_version(const onyx_model_metadata *md) {
    return md ? md->model_version : 0;
}

static onyx_status out_of_range(const char *fn, size_t index, size_t n) {
    return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: index %zu out of range (the model has %zu)",
                      fn, index, n);
}

size_t onyx_model_metadata_prop_count(const onyx_model_metadata *md) { return md ? md->n_props : 0; }

onyx_status onyx_model_metadata_prop(const onyx_model_metadata *md, size_t index, const char **key,
                                     const char **value) {
    if (!md) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "onyx_model_metadata_prop: metadata is NULL");
    if (index >= md->n_props) return out_of_range("onyx_model_metadata_prop", index, md->n_props);
    if (key) *key = md->props[index].key;
    if (value) *value = md->props[index].value;
    return ONYX_OK;
}

const char *onyx_model_metadata_lookup(const onyx_model_metadata *md, const char *key) {
    if (!md || !key) return NULL;
    for (size_t i = md->n_props; i-- > 0;)
        if (strcmp(md->props[i].key, key) == 0) return md->props[i].value;
    return NULL;
}

size_t onyx_model_metadata_opset_count(const onyx_model_metadata *md) {
    return md ? md->n_opsets : 0;
}

onyx_status onyx_model_metadata_opset(const onyx_model_metadata *md, size_t index,
                                      const char **domain, int64_t *version) {
    if (!md) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "onyx_model_metadata_opset: metadata is NULL");
    if (index >= md->n_opsets) return out_of_range("onyx_model_metadata_opset", index, md->n_opsets);
    if (domain) *domain = md->opsets[index].key;
    if (version) *version = md->opsets[index].version;
    return ONYX_OK;
}

size_t onyx_model_metadata_node_count(const onyx_model_metadata *md) { return md ? md->nodes : 0; }

size_t onyx_model_metadata_initializer_count(const onyx_model_metadata *md) {
    return md ? md->initializers : 0;
}

size_t onyx_model_metadata_op_count(const onyx_model_metadata *md) { return md ? md->n_ops : 0; }

onyx_status onyx_model_metadata_op(const onyx_model_metadata *md, size_t index, const char **domain,
                                   const char **op_type, size_t *count) {
    if (!md) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "onyx_model_metadata_op: metadata is NULL");
    if (index >= md->n_ops) return out_of_range("onyx_model_metadata_op", index, md->n_ops);
    if (domain) *domain = md->ops[index].domain;
    if (op_type) *op_type = md->ops[index].op_type;
    if (count) *count = md->ops[index].count;
    return ONYX_OK;
}
