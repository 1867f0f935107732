/* The rewrite rules' table (core/rules/table.c), the driver that runs it (core/optimize.c) and the
 * rewriter's reader lists (core/rewriter.c). The graph each rule makes is checked rule by rule in
 * tests/python/test_rewrite_rules.py; this test checks that every rule has a case there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/loader.h"
#include "core/optimize.h"
#include "core/rewriter.h"
#include "core/rules/rules.h"
#include "ops/schema.h"

static char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static model *load(const char *path) {
    size_t size;
    char *bytes = slurp(path, &size);
    model *m = NULL;
    assert_int_equal(model_load_bytes(&ops_registry, bytes, size, NULL, &m), ONYX_OK);
    free(bytes);
    return m;
}

static void rule_names_are_unique_and_their_files_exist(void **state) {
    (void)state;
    int n;
    const rewrite_rule *rules = rewrite_rules(&n);
    assert_true(n >= 25);
    for (int k = 0; k < n; k++) {
        assert_non_null(rules[k].apply);
        assert_int_equal(access(rules[k].family, R_OK), 0);
        for (int j = 0; j < k; j++) assert_string_not_equal(rules[j].name, rules[k].name);
    }
}

static void root_ops_are_ops_onyx_knows(void **state) {
    (void)state;
    int n;
    const rewrite_rule *rules = rewrite_rules(&n);
    for (int k = 0; k < n; k++) {
        if (!rules[k].op_type) continue; /* every node */
        const op_schema *schema = NULL;
        int64_t opset = ops_registry.max_opset(rules[k].domain);
        assert_int_equal(ops_registry.resolve(rules[k].domain, rules[k].op_type, opset, &schema),
                         ONYX_OK);
        assert_non_null(schema);
    }
}

/* The driver runs the passes in order, each its rules in a row. */
static void passes_come_in_order(void **state) {
    (void)state;
    int n;
    const rewrite_rule *rules = rewrite_rules(&n);
    for (int k = 1; k < n; k++) assert_true(rules[k].pass >= rules[k - 1].pass);
}

static void every_rule_has_a_graph_shape_test(void **state) {
    (void)state;
    size_t size;
    char *cases = slurp("tests/python/test_rewrite_rules.py", &size);
    const char *table = strstr(cases, "CASES = {");
    assert_non_null(table);
    int n;
    const rewrite_rule *rules = rewrite_rules(&n);
    for (int k = 0; k < n; k++) {
        char key[128];
        snprintf(key, sizeof key, "'%s':", rules[k].name);
        if (!strstr(table, key)) fail_msg("rule %s has no case in test_rewrite_rules.py", rules[k].name);
    }
    free(cases);
}

/* Each value's readers as the rewriter lists them are the nodes that read it by an input or a
 * subgraph capture, each once, in graph order; the sole reader is the one non-gone node reading it
 * by an input where the value has one use. Over models with subgraph captures (concurrency.onnx's
 * Loop) and repeated inputs (activation_patterns.onnx's x * x). */
static void reader_lists_match_a_scan(void **state) {
    (void)state;
    static const char *const paths[] = {"tests/models/concurrency.onnx",
                                        "tests/models/activation_patterns.onnx",
                                        "tests/models/tiny/tiny_bert.onnx"};
    for (size_t p = 0; p < sizeof paths / sizeof *paths; p++) {
        model *m = load(paths[p]);
        const graph *g = m->main;
        rewriter r;
        assert_int_equal(rw_init(&r, g, &ops_registry), ONYX_OK);
        int checked = 0;
        for (int v = 0; v < g->n_values; v++) {
            const int *readers;
            int count = rw_readers(&r, v, &readers), k = 0;
            const graph_node *sole = NULL;
            for (int n = 0; n < g->n_nodes; n++) {
                const graph_node *nd = &g->nodes[n];
                bool reads = false;
                for (int i = 0; i < nd->n_inputs; i++) reads |= nd->inputs[i] == v;
                if (reads && !sole) sole = nd;
                for (int c = 0; c < nd->n_captures; c++) reads |= nd->captures[c] == v;
                if (!reads) continue;
                assert_true(k < count);
                assert_int_equal(readers[k++], n);
            }
            assert_int_equal(k, count);
            assert_ptr_equal(rw_sole_reader(&r, v), r.uses[v] == 1 ? sole : NULL);
            checked += count;
        }
        assert_true(checked > 0);
        rw_free(&r);
        model_release(m);
    }
}

typedef struct fired {
    int count;
    char names[16][32];
} fired;

static void observe(void *user, const char *rule, const char *family, const graph_node *root) {
    fired *f = user;
    assert_non_null(strstr(family, "core/rules/"));
    assert_non_null(root);
    if (f->count < 16) snprintf(f->names[f->count], sizeof f->names[0], "%s", rule);
    f->count++;
}

static int count_named(const fired *f, const char *name) {
    int n = 0;
    for (int k = 0; k < f->count && k < 16; k++) n += !strcmp(f->names[k], name);
    return n;
}

/* activation_patterns.onnx spells GELU (both forms) and SiLU out, and near misses of them: at
 * level ALL the rules make those ops, each change told to the observer; at BASIC no rule runs. */
static void level_decides_which_rules_run(void **state) {
    (void)state;
    model *m = load("tests/models/activation_patterns.onnx");
    fired f = {0};
    optimize_options o = {.level = ONYX_OPT_BASIC, .observe = observe, .user = &f};
    graph *out = NULL;
    assert_int_equal(graph_optimize(m->main, &ops_registry, &o, &out), ONYX_OK);
    assert_null(out);
    assert_int_equal(f.count, 0);
    o.level = ONYX_OPT_ALL;
    assert_int_equal(graph_optimize(m->main, &ops_registry, &o, &out), ONYX_OK);
    assert_non_null(out);
    assert_true(out->n_nodes < m->main->n_nodes);
    assert_int_equal(count_named(&f, "gelu_erf"), 3);
    assert_int_equal(count_named(&f, "gelu_tanh"), 1);
    assert_int_equal(count_named(&f, "swish"), 1);
    char ops[512];
    graph_op_counts(out, ops, sizeof ops);
    /* three GELUs of x, two of them then the first's duplicates; the near misses (x / 1.5,
     * y * Sigmoid(x)) stay */
    assert_string_equal(ops, "Add 1, Div 1, Erf 1, Gelu 2, Identity 2, Mul 3, Sigmoid 1, Swish 1");
    /* cut short where it does not fit, always terminated */
    char small[8];
    graph_op_counts(out, small, sizeof small);
    assert_int_equal(strlen(small), sizeof small - 1);
    graph_optimized_free(out);
    model_release(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rule_names_are_unique_and_their_files_exist),
        cmocka_unit_test(root_ops_are_ops_onyx_knows),
        cmocka_unit_test(passes_come_in_order),
        cmocka_unit_test(every_rule_has_a_graph_shape_test),
        cmocka_unit_test(reader_lists_match_a_scan),
        cmocka_unit_test(level_decides_which_rules_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
