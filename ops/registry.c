/* The schema registry: every op file's version list, looked up by (domain, op, opset). For the
 * standard domains, ONNX's own version history (ops/onnx_versions.h) says which version of an op
 * a model asks for, and a version onyx does not implement is refused by name: running it as the
 * nearest older one would give silently wrong answers. */
#include "ops/schema.h"

#include <stdio.h>
#include <string.h>

#define OP(name) extern const op_schema op_##name[];
#include "ops/list_all.h"
#undef OP

static const op_schema *const all_ops[] = {
#define OP(name) op_##name,
#include "ops/list_all.h"
#undef OP
    NULL,
};

typedef struct spec_domain {
    const char *domain;
    int newest;
} spec_domain;

typedef struct spec_op {
    const char *domain, *op_type;
    const int *versions; /* increasing, 0-terminated */
} spec_op;

static const spec_domain spec_domains[] = {
#define ONNX_DOMAIN(domain, newest) {domain, newest},
#define ONNX_OP(domain, op, ...)
#include "ops/onnx_versions.h"
#undef ONNX_DOMAIN
#undef ONNX_OP
};

static const spec_op spec_ops[] = {
#define ONNX_DOMAIN(domain, newest)
#define ONNX_OP(domain, op, ...) {domain, op, (const int[]){__VA_ARGS__, 0}},
#include "ops/onnx_versions.h"
#undef ONNX_DOMAIN
#undef ONNX_OP
};

/* Domains whose ops are onyx's own knowledge (no ONNX history): their newest opset. ai.onyx holds
 * the ops onyx's graph rewrites make (ops/contrib_quant/lookuptable.c) and names for standard ops
 * at one version (onyx_aliases below). */
static const spec_domain other_domains[] = {{"com.microsoft", 1}, {"ai.onyx", 1}};

#define COUNT(a) (sizeof(a) / sizeof *(a))

static const char *canonical(const char *domain) {
    return strcmp(domain, "ai.onnx") == 0 ? "" : domain;
}

static const spec_domain *find_domain(const char *domain) {
    domain = canonical(domain);
    for (size_t k = 0; k < COUNT(spec_domains); k++)
        if (strcmp(spec_domains[k].domain, domain) == 0) return &spec_domains[k];
    for (size_t k = 0; k < COUNT(other_domains); k++)
        if (strcmp(other_domains[k].domain, domain) == 0) return &other_domains[k];
    return NULL;
}

static const spec_op *find_spec(const char *domain, const char *op_type) {
    domain = canonical(domain);
    for (size_t k = 0; k < COUNT(spec_ops); k++)
        if (strcmp(spec_ops[k].op_type, op_type) == 0 && strcmp(spec_ops[k].domain, domain) == 0)
            return &spec_ops[k];
    return NULL;
}

/* onyx's versions of an op, or NULL. */
static const op_schema *find_versions(const char *domain, const char *op_type) {
    domain = canonical(domain);
    for (size_t k = 0; all_ops[k]; k++)
        if (strcmp(all_ops[k]->op_type, op_type) == 0 &&
            strcmp(canonical(all_ops[k]->domain), domain) == 0)
            return all_ops[k];
    return NULL;
}

/* The greatest version <= opset of a 0-terminated list, or 0. */
static int version_at(const int *versions, int64_t opset) {
    int v = 0;
    for (; *versions && *versions <= opset; versions++) v = *versions;
    return v;
}

/* What pick_version finds: the schema, or why there is none. */
typedef enum version_pick {
    VERSION_FOUND,
    VERSION_UNKNOWN_OP,        /* neither ONNX nor onyx has the op */
    VERSION_NONE_AT_OPSET,     /* the op's first version is newer than the opset */
    VERSION_NOT_IMPLEMENTED,   /* onyx has no version of the op */
    VERSION_NEWER_THAN_ONYX,   /* the opset asks for a version past onyx's newest */
    VERSION_SKIPPED,           /* the opset asks for a version between two of onyx's */
} version_pick;

/* The rule that picks an op's version, written once: the version the opset asks for (ONNX's
 * where it has a history, else onyx's own) in *asked, and onyx's schema of exactly that version
 * in *out, or why there is none. Sets no message. */
static version_pick pick_version(const int *spec_versions, const op_schema *versions,
                                 int64_t opset, int *asked, const op_schema **out) {
    *asked = 0;
    if (!versions && !spec_versions) return VERSION_UNKNOWN_OP;
    if (spec_versions) {
        *asked = version_at(spec_versions, opset);
    } else {
        for (const op_schema *s = versions; s->op_type; s++)
            if (s->since_version <= opset) *asked = s->since_version;
    }
    if (!*asked) return VERSION_NONE_AT_OPSET;
    if (!versions) return VERSION_NOT_IMPLEMENTED;
    const op_schema *newest = versions;
    for (const op_schema *s = versions; s->op_type; s++) {
        if (s->since_version == *asked) {
            *out = s;
            return VERSION_FOUND;
        }
        newest = s;
    }
    return *asked > newest->since_version ? VERSION_NEWER_THAN_ONYX : VERSION_SKIPPED;
}

const op_schema *schema_find_in(const int *spec_versions, const op_schema *versions,
                                int64_t opset) {
    const op_schema *s = NULL;
    int asked;
    return pick_version(spec_versions, versions, opset, &asked, &s) == VERSION_FOUND ? s : NULL;
}

onyx_status schema_resolve_in(const int *spec_versions, const op_schema *versions,
                              const char *domain, const char *op_type, int64_t opset,
                              const op_schema **out) {
    const char *dot = *domain ? "." : "";
    int asked;
    version_pick pick = pick_version(spec_versions, versions, opset, &asked, out);
    switch (pick) {
    case VERSION_FOUND: return ONYX_OK;
    case VERSION_UNKNOWN_OP:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "unknown op %s%s%s", domain, dot, op_type);
    case VERSION_NONE_AT_OPSET:
        return onyx_error(ONYX_ERR_INVALID_MODEL, "op %s%s%s has no version at or below opset %lld",
                          domain, dot, op_type, (long long)opset);
    case VERSION_NOT_IMPLEMENTED:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "onyx does not implement %s%s%s-%d", domain, dot,
                          op_type, asked);
    case VERSION_NEWER_THAN_ONYX:
    case VERSION_SKIPPED: break;
    }
    const op_schema *newest = versions;
    char list[256];
    size_t used = 0;
    list[0] = '\0';
    for (const op_schema *s = versions; s->op_type; s++) {
        newest = s;
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%d",
                                     s == versions ? "" : ", ", s->since_version);
    }
    if (pick == VERSION_NEWER_THAN_ONYX)
        return onyx_error(ONYX_ERR_UNSUPPORTED,
                          "%s%s%s-%d is newer than the newest version onyx implements (%d)", domain,
                          dot, op_type, asked, newest->since_version);
    return onyx_error(ONYX_ERR_UNSUPPORTED, "onyx does not implement %s%s%s-%d (it implements %s)",
                      domain, dot, op_type, asked, list);
}

/* Standard ops that the graph rewrites make at a version newer than a model's opset may import:
 * the optimized model onyx writes (core/model_write.c) names them in ai.onyx, where each stands
 * for that one version, and reads back as it. */
static const struct {
    const char *op_type;
    int version;
} onyx_aliases[] = {{"Gelu", 20}, {"Swish", 24}, {"LayerNormalization", 17}};

/* An ai.onyx alias as the standard op it stands for: *domain and *opset rewritten to that op's. */
static void unalias(const char **domain, const char *op_type, int64_t *opset) {
    if (strcmp(*domain, "ai.onyx") != 0 || *opset < 1) return;
    for (size_t k = 0; k < COUNT(onyx_aliases); k++)
        if (!strcmp(onyx_aliases[k].op_type, op_type)) {
            *domain = "";
            *opset = onyx_aliases[k].version;
        }
}

onyx_status schema_resolve(const char *domain, const char *op_type, int64_t opset,
                           const op_schema **out) {
    unalias(&domain, op_type, &opset);
    const spec_op *spec = find_spec(domain, op_type);
    return schema_resolve_in(spec ? spec->versions : NULL, find_versions(domain, op_type), domain,
                             op_type, opset, out);
}

const op_schema *schema_find(const char *domain, const char *op_type, int64_t opset) {
    unalias(&domain, op_type, &opset);
    const spec_op *spec = find_spec(domain, op_type);
    return schema_find_in(spec ? spec->versions : NULL, find_versions(domain, op_type), opset);
}

const op_schema *schema_lookup(const char *domain, const char *op_type, int64_t opset) {
    const op_schema *s = NULL;
    return schema_resolve(domain, op_type, opset, &s) == ONYX_OK ? s : NULL;
}

int64_t schema_max_opset(const char *domain) {
    const spec_domain *d = find_domain(domain);
    return d ? d->newest : 0;
}

void schema_foreach(void (*fn)(const op_schema *s, void *arg), void *arg) {
    for (size_t k = 0; all_ops[k]; k++)
        for (const op_schema *s = all_ops[k]; s->op_type; s++) fn(s, arg);
}

const op_registry ops_registry = {
    .resolve = schema_resolve,
    .find = schema_find,
    .max_opset = schema_max_opset,
};
