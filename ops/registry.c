/* The schema registry: every op file's version list, looked up by (domain, op, opset). */
#include "ops/schema.h"

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

static bool same_domain(const char *a, const char *b) {
    if (strcmp(a, "ai.onnx") == 0) a = "";
    if (strcmp(b, "ai.onnx") == 0) b = "";
    return strcmp(a, b) == 0;
}

const op_schema *schema_lookup(const char *domain, const char *op_type, int64_t opset) {
    bool known = false;
    for (size_t k = 0; all_ops[k]; k++) {
        const op_schema *s = all_ops[k];
        if (strcmp(s->op_type, op_type) != 0 || !same_domain(s->domain, domain)) continue;
        known = true;
        const op_schema *best = NULL;
        for (; s->op_type; s++)
            if (s->since_version <= opset) best = s;
        if (best) return best;
    }
    if (known)
        onyx_error(ONYX_ERR_INVALID_MODEL, "op %s%s%s has no version at or below opset %lld",
                   domain, *domain ? "." : "", op_type, (long long)opset);
    else
        onyx_error(ONYX_ERR_UNSUPPORTED, "unknown op %s%s%s", domain, *domain ? "." : "", op_type);
    return NULL;
}

int64_t schema_max_opset(const char *domain) {
    if (same_domain(domain, "")) return 27;
    if (strcmp(domain, "ai.onnx.ml") == 0) return 5;
    return 1; /* ai.onnx.preview(.training) and unknown domains */
}

void schema_foreach(void (*fn)(const op_schema *s, void *arg), void *arg) {
    for (size_t k = 0; all_ops[k]; k++)
        for (const op_schema *s = all_ops[k]; s->op_type; s++) fn(s, arg);
}

const op_registry ops_registry = {schema_lookup, schema_max_opset};
