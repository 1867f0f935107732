/* The versioned op registry: a node runs under exactly the op version its opset asks for, or is
 * refused by name; and every schema onyx has declares the versions and attributes the op really
 * has (ONNX's own schemas, onnxruntime's for com.microsoft: tests/unit/onnx_attributes.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "kernels_cpu/cpu_kernels.h"
#include "ops/schema.h"

static void assert_error_mentions(const char *want) {
    const char *msg = onyx_last_error();
    if (!strstr(msg, want)) fail_msg("error '%s' does not mention '%s'", msg, want);
}

/* Op X as ONNX has it (1, 6, 13, 25) and as a smaller onyx implements it (1, 13). */
static const int spec_x[] = {1, 6, 13, 25, 0};
static const op_schema onyx_x[] = {
    {"", "X", 1, 1, 1, 1, 1, NULL, NULL, 0},
    {"", "X", 13, 1, 1, 1, 1, NULL, NULL, 0},
    OP_END,
};

static void test_resolves_the_version_asked(void **state) {
    (void)state;
    const op_schema *s = NULL;
    assert_int_equal(schema_resolve_in(spec_x, onyx_x, "", "X", 5, &s), ONYX_OK);
    assert_ptr_equal(s, &onyx_x[0]);
    assert_int_equal(schema_resolve_in(spec_x, onyx_x, "", "X", 13, &s), ONYX_OK);
    assert_ptr_equal(s, &onyx_x[1]);
    assert_int_equal(schema_resolve_in(spec_x, onyx_x, "", "X", 24, &s), ONYX_OK);
    assert_ptr_equal(s, &onyx_x[1]);
}

static void test_refuses_a_newer_version(void **state) {
    (void)state;
    const op_schema *s = NULL;
    assert_int_equal(schema_resolve_in(spec_x, onyx_x, "", "X", 28, &s), ONYX_ERR_UNSUPPORTED);
    assert_error_mentions("X-25 is newer than the newest version onyx implements (13)");
    assert_null(s);
}

static void test_refuses_a_skipped_version(void **state) {
    (void)state;
    const op_schema *s = NULL;
    /* opset 7 asks for X-6, which onyx skipped: X-1 would run without X-6's changes */
    assert_int_equal(schema_resolve_in(spec_x, onyx_x, "", "X", 7, &s), ONYX_ERR_UNSUPPORTED);
    assert_error_mentions("onyx does not implement X-6 (it implements 1, 13)");
    assert_null(s);
}

static void test_refuses_below_the_first_version(void **state) {
    (void)state;
    static const int spec_late[] = {9, 0};
    const op_schema *s = NULL;
    assert_int_equal(schema_resolve_in(spec_late, NULL, "", "Late", 8, &s), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("op Late has no version at or below opset 8");
}

static void test_unknown_ops(void **state) {
    (void)state;
    const op_schema *s = NULL;
    assert_int_equal(schema_resolve_in(NULL, NULL, "com.example", "Y", 1, &s), ONYX_ERR_UNSUPPORTED);
    assert_error_mentions("unknown op com.example.Y");
    assert_int_equal(schema_resolve_in(spec_x, NULL, "", "X", 13, &s), ONYX_ERR_UNSUPPORTED);
    assert_error_mentions("onyx does not implement X-13");
    /* outside the standard domains onyx's own versions are the history */
    static const op_schema contrib[] = {{"com.microsoft", "Z", 1, 1, 1, 1, 1, NULL, NULL, 0},
                                        OP_END};
    assert_int_equal(schema_resolve_in(NULL, contrib, "com.microsoft", "Z", 1, &s), ONYX_OK);
    assert_ptr_equal(s, &contrib[0]);
}

static void test_real_registry(void **state) {
    (void)state;
    const op_schema *s = NULL;
    assert_int_equal(schema_max_opset(""), 28);
    assert_int_equal(schema_max_opset("ai.onnx"), 28);
    assert_int_equal(schema_max_opset("ai.onnx.ml"), 5);
    assert_int_equal(schema_max_opset("com.microsoft"), 1);
    assert_int_equal(schema_max_opset("com.example"), 0);
    /* Abs changed in 6 and 13: opset 12 asks for Abs-6 */
    assert_int_equal(schema_resolve("", "Abs", 12, &s), ONYX_OK);
    assert_int_equal(s->since_version, 6);
    assert_int_equal(schema_resolve("", "NoSuchOp", 13, &s), ONYX_ERR_UNSUPPORTED);
    assert_error_mentions("unknown op NoSuchOp");
}

/* ---- the lookup that answers without a message (op_registry.find) */

/* A miss of find: NULL, and the message it found empty is still empty. */
static void misses_quietly(const op_schema *found) {
    assert_null(found);
    if (*onyx_last_error()) fail_msg("a lookup set the message '%s'", onyx_last_error());
}

static void test_find_answers_without_a_message(void **state) {
    (void)state;
    onyx_error_clear();
    static const int spec_late[] = {9, 0};
    /* present: the version resolve picks */
    assert_ptr_equal(schema_find_in(spec_x, onyx_x, 5), &onyx_x[0]);
    assert_ptr_equal(schema_find_in(spec_x, onyx_x, 24), &onyx_x[1]);
    /* each of resolve's refusals, found quietly */
    misses_quietly(schema_find_in(spec_x, onyx_x, 28));   /* newer than onyx's newest */
    misses_quietly(schema_find_in(spec_x, onyx_x, 7));    /* a version onyx skipped */
    misses_quietly(schema_find_in(spec_late, NULL, 8));   /* no version at the opset */
    misses_quietly(schema_find_in(spec_x, NULL, 13));     /* an op onyx lacks */
    misses_quietly(schema_find_in(NULL, NULL, 1));        /* an op nobody has */
    /* and resolve still says why, for the same tables */
    const op_schema *s = NULL;
    assert_int_equal(schema_resolve_in(spec_x, onyx_x, "", "X", 28, &s), ONYX_ERR_UNSUPPORTED);
    assert_error_mentions("X-25 is newer");
    onyx_error_clear();
}

static void test_real_registry_find(void **state) {
    (void)state;
    onyx_error_clear();
    const op_schema *s = NULL;
    /* find answers as resolve does, through the loader's registry too */
    assert_int_equal(schema_resolve("", "Abs", 12, &s), ONYX_OK);
    assert_ptr_equal(schema_find("", "Abs", 12), s);
    assert_ptr_equal(ops_registry.find("ai.onnx", "Abs", 12), s);
    assert_int_equal(schema_find("", "Abs", 12)->since_version, 6);
    /* an ai.onyx alias is the standard op at its one version */
    const op_schema *gelu = schema_find("ai.onyx", "Gelu", 1);
    assert_non_null(gelu);
    assert_string_equal(gelu->domain, "");
    assert_int_equal(gelu->since_version, 20);
    misses_quietly(schema_find("", "NoSuchOp", 13));           /* absent */
    misses_quietly(ops_registry.find("", "Gelu", 19));         /* an opset before the op */
    misses_quietly(schema_find("com.microsoft", "Abs", 1));    /* the wrong domain */
    misses_quietly(schema_find("com.example", "Abs", 13));     /* a domain nobody has */
    misses_quietly(schema_find("ai.onyx", "LookupTable", 0));  /* before ai.onyx's first */
    assert_non_null(ops_registry.find("ai.onyx", "LookupTable", 1));
    assert_string_equal(onyx_last_error(), "");
}

/* ---- every onyx schema against the op's real versions and attributes */

typedef struct spec_attrs {
    const char *domain, *op_type;
    int version;
    const char *attrs; /* "name:TYPE name:TYPE ..." */
} spec_attrs;

static const spec_attrs all_spec_attrs[] = {
#define ONNX_ATTRS(domain, op, version, attrs) {domain, op, version, attrs},
#include "tests/unit/onnx_attributes.h"
#undef ONNX_ATTRS
};

static const spec_attrs *spec_for(const op_schema *s) {
    const char *domain = strcmp(s->domain, "ai.onnx") == 0 ? "" : s->domain;
    for (size_t k = 0; k < sizeof all_spec_attrs / sizeof *all_spec_attrs; k++) {
        const spec_attrs *a = &all_spec_attrs[k];
        if (a->version == s->since_version && !strcmp(a->op_type, s->op_type) &&
            !strcmp(a->domain, domain))
            return a;
    }
    return NULL;
}

/* Whether "name:TYPE" is a word of the list. */
static bool listed(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
    return false;
}

typedef struct audit {
    int checked, failures;
    char first[512];
} audit;

static void audit_fail(audit *a, const char *fmt, const char *op, int version, const char *what) {
    if (!a->failures++) snprintf(a->first, sizeof a->first, fmt, op, version, what);
    print_message(fmt, op, version, what);
    print_message("\n");
}

static void audit_schema(const op_schema *s, void *arg) {
    audit *a = arg;
    const spec_attrs *spec = spec_for(s);
    if (!spec) {
        /* a version the op does not have would never be asked for: its schema is dead or wrong */
        if (!strcmp(s->domain, "") || !strcmp(s->domain, "com.microsoft") ||
            !strncmp(s->domain, "ai.onnx", 7))
            audit_fail(a, "%s-%d: %s", s->op_type, s->since_version, "no such version of the op");
        return;
    }
    a->checked++;
    int declared = 0;
    for (const attr_spec *at = s->attrs; at && at->name; at++, declared++) {
        char word[128];
        snprintf(word, sizeof word, "%s:%s", at->name, graph_attr_type_name((int)at->type));
        if (!listed(spec->attrs, word))
            audit_fail(a, "%s-%d declares attribute %s, which the op does not have", s->op_type,
                       s->since_version, word);
    }
    /* onyx may leave out an attribute only where it refuses it (com.microsoft ops it implements
     * in part); in the standard domains every attribute is implemented */
    if (strcmp(s->domain, "com.microsoft") != 0) {
        int spec_count = 0;
        for (const char *p = spec->attrs; *p; p++)
            if (*p == ':') spec_count++;
        if (declared < spec_count)
            audit_fail(a, "%s-%d: %s", s->op_type, s->since_version,
                       "declares fewer attributes than the op has");
    }
}

static void test_schemas_match_the_ops(void **state) {
    (void)state;
    audit a = {0};
    schema_foreach(audit_schema, &a);
    assert_true(a.checked > 600);
    if (a.failures) fail_msg("%d schema mismatches, the first: %s", a.failures, a.first);
}

typedef struct knows {
    const char *domain, *op_type;
    bool found;
} knows;

static void find_op(const op_schema *s, void *arg) {
    knows *k = arg;
    const char *domain = strcmp(s->domain, "ai.onnx") == 0 ? "" : s->domain;
    if (!strcmp(s->op_type, k->op_type) && !strcmp(domain, k->domain)) k->found = true;
}

/* Every version of an op that onyx knows, up to its domain's newest opset, is implemented. */
static void test_every_version_implemented(void **state) {
    (void)state;
    int failures = 0;
    for (size_t k = 0; k < sizeof all_spec_attrs / sizeof *all_spec_attrs; k++) {
        const spec_attrs *a = &all_spec_attrs[k];
        if (!strcmp(a->domain, "com.microsoft") || a->version > schema_max_opset(a->domain))
            continue;
        knows op = {a->domain, a->op_type, false};
        schema_foreach(find_op, &op);
        if (!op.found) continue; /* an op onyx does not have: refused as unknown */
        const op_schema *s = NULL;
        if (schema_resolve(a->domain, a->op_type, a->version, &s) == ONYX_OK &&
            s->since_version == a->version)
            continue;
        print_message("%s: %s\n", a->op_type, onyx_last_error());
        failures++;
    }
    assert_int_equal(failures, 0);
}

/* Every CPU kernel serves versions the op has: its range starts and ends at one of onyx's own
 * versions of the op, so a kernel cannot claim a version whose meaning no schema states. */
static void test_kernel_ranges_are_versions(void **state) {
    (void)state;
    size_t count = 0;
    const kernel *table = cpu_kernel_table(&count);
    int failures = 0;
    for (size_t k = 0; k < count; k++) {
        const kernel *kn = &table[k];
        const op_schema *lo = NULL, *hi = NULL;
        if (schema_resolve(kn->domain, kn->op_type, kn->since_min, &lo) != ONYX_OK ||
            lo->since_version != kn->since_min ||
            schema_resolve(kn->domain, kn->op_type, kn->since_max, &hi) != ONYX_OK ||
            hi->since_version != kn->since_max) {
            print_message("CPU kernel %s%s%s [%d, %d]: %s\n", kn->domain, *kn->domain ? "." : "",
                          kn->op_type, kn->since_min, kn->since_max,
                          lo && hi ? "a bound is not a version of the op" : onyx_last_error());
            failures++;
        }
    }
    assert_true(count > 200); /* the table is there */
    assert_int_equal(failures, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolves_the_version_asked),
        cmocka_unit_test(test_refuses_a_newer_version),
        cmocka_unit_test(test_refuses_a_skipped_version),
        cmocka_unit_test(test_refuses_below_the_first_version),
        cmocka_unit_test(test_unknown_ops),
        cmocka_unit_test(test_real_registry),
        cmocka_unit_test(test_find_answers_without_a_message),
        cmocka_unit_test(test_real_registry_find),
        cmocka_unit_test(test_schemas_match_the_ops),
        cmocka_unit_test(test_every_version_implemented),
        cmocka_unit_test(test_kernel_ranges_are_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
