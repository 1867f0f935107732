/* The window a convolution's or pool's schema resolves once per plan (core/op_params.h): what the
 * schemas hand out for auto_pad SAME_UPPER / SAME_LOWER, dilations and groups, ceil mode, a
 * transposed convolution and unknown dims; and that the CPU kernels compute from that window, at
 * prepare and per run, not from the node's attributes (their nodes here have none). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec_internal.h"
#include "kernels_cpu/cpu_kernels.h"
#include "ops/schema.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---------------------------------------------------------------- the schemas' windows */

typedef struct fixture {
    graph_node node;
    graph_attr attrs[6];
    type_info in[3];
    const type_info *in_ptrs[3];
    const tensor *values[3];
    type_info out[2];
    op_params params;
} fixture;

static void setup_node(fixture *f, const char *op, int64_t opset, int n_in) {
    memset(f, 0, sizeof *f);
    f->node.op_type = op;
    f->node.domain = "";
    f->node.name = "n";
    f->node.schema = schema_lookup("", op, opset);
    assert_non_null(f->node.schema);
    f->node.version = f->node.schema->since_version;
    f->node.n_inputs = n_in;
    f->node.n_outputs = 1;
    f->node.attrs = f->attrs;
    for (int i = 0; i < 3; i++) type_init(&f->in[i]);
    for (int i = 0; i < 2; i++) type_init(&f->out[i]);
}

static void set_input(fixture *f, int i, int rank, const int64_t *dims) {
    type_set_tensor(&f->in[i], ONYX_FLOAT, rank, dims);
    f->in_ptrs[i] = &f->in[i];
}

static void add_ints(fixture *f, const char *name, const int64_t *v, size_t n) {
    graph_attr *a = &f->attrs[f->node.n_attrs++];
    a->name = name;
    a->type = ATTR_INTS;
    a->ints = v;
    a->n = n;
}

static void add_int(fixture *f, const char *name, int64_t v) {
    graph_attr *a = &f->attrs[f->node.n_attrs++];
    a->name = name;
    a->type = ATTR_INT;
    a->i = v;
}

static void add_string(fixture *f, const char *name, const char *v) {
    graph_attr *a = &f->attrs[f->node.n_attrs++];
    a->name = name;
    a->type = ATTR_STRING;
    a->s = v;
    a->s_len = strlen(v);
}

/* Runs the schema's inference asking for its params; the window it resolved. */
static const geom_window *infer_window(fixture *f) {
    infer_ctx ctx = {.node = &f->node, .n_in = f->node.n_inputs, .n_out = f->node.n_outputs,
                     .in = f->in_ptrs, .in_value = f->values, .out = f->out,
                     .params = &f->params};
    assert_int_equal(f->node.schema->infer(&ctx), ONYX_OK);
    assert_int_equal(f->params.kind, OP_PARAMS_WINDOW);
    return op_params_window(&f->params);
}

static void teardown(fixture *f) {
    for (int i = 0; i < 3; i++) type_release(&f->in[i]);
    for (int i = 0; i < 2; i++) type_release(&f->out[i]);
}

static void assert_pads(const geom_window *w, int i, int64_t begin, int64_t end) {
    assert_int_equal(w->pad_b[i], begin);
    assert_int_equal(w->pad_e[i], end);
}

/* SAME_UPPER puts the odd pixel of padding at the end, SAME_LOWER at the beginning: a 4-wide
 * kernel over 5 pixels at stride 1 pads 3. */
static void conv_same_upper_and_lower(void **unused) {
    (void)unused;
    const char *modes[] = {"SAME_UPPER", "SAME_LOWER"};
    for (int m = 0; m < 2; m++) {
        fixture f;
        setup_node(&f, "Conv", 22, 2);
        const int64_t x[] = {1, 3, 5, 5}, w[] = {8, 3, 4, 4};
        set_input(&f, 0, 4, x);
        set_input(&f, 1, 4, w);
        add_string(&f, "auto_pad", modes[m]);
        const geom_window *g = infer_window(&f);
        assert_true(geom_window_known(g));
        assert_false(g->transposed);
        assert_int_equal(g->nsp, 2);
        assert_int_equal(g->n, 1);
        assert_int_equal(g->c, 3);
        assert_int_equal(g->m, 8);
        assert_int_equal(g->group, 1);
        for (int i = 0; i < 2; i++) {
            assert_int_equal(g->in[i], 5);
            assert_int_equal(g->k[i], 4);
            assert_int_equal(g->out[i], 5);
            assert_pads(g, i, m == 0 ? 1 : 2, m == 0 ? 2 : 1);
        }
        assert_int_equal(f.out[0].dims[2], 5);
        teardown(&f);
    }
}

/* Dilations widen the window, groups split the channels, explicit pads stay as given. */
static void conv_dilations_and_groups(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "Conv", 11, 2);
    const int64_t x[] = {2, 4, 9, 10}, w[] = {6, 2, 3, 3};
    const int64_t dil[] = {2, 3}, pads[] = {1, 0, 1, 2}, strides[] = {1, 2};
    set_input(&f, 0, 4, x);
    set_input(&f, 1, 4, w);
    add_ints(&f, "dilations", dil, 2);
    add_ints(&f, "pads", pads, 4);
    add_ints(&f, "strides", strides, 2);
    add_int(&f, "group", 2);
    const geom_window *g = infer_window(&f);
    assert_int_equal(g->group, 2);
    assert_int_equal(g->c, 4);
    assert_int_equal(g->m, 6);
    assert_int_equal(g->dil[0], 2);
    assert_int_equal(g->dil[1], 3);
    assert_pads(g, 0, 1, 1);
    assert_pads(g, 1, 0, 2);
    /* extents 5 and 7: (9 + 2 - 5) / 1 + 1 = 7, (10 + 2 - 7) / 2 + 1 = 3 */
    assert_int_equal(g->out[0], 7);
    assert_int_equal(g->out[1], 3);
    teardown(&f);
}

/* ceil mode counts a last, partial window: 6 pixels, kernel 3, stride 2 give 3 outputs, not 2. */
static void maxpool_ceil_mode(void **unused) {
    (void)unused;
    for (int ceil = 0; ceil <= 1; ceil++) {
        fixture f;
        setup_node(&f, "MaxPool", 12, 1);
        const int64_t x[] = {1, 2, 6, 7}, k[] = {3, 3}, s[] = {2, 2};
        set_input(&f, 0, 4, x);
        add_ints(&f, "kernel_shape", k, 2);
        add_ints(&f, "strides", s, 2);
        add_int(&f, "ceil_mode", ceil);
        const geom_window *g = infer_window(&f);
        assert_int_equal(g->c, 2);
        assert_int_equal(g->m, 2);
        assert_int_equal(g->out[0], ceil ? 3 : 2);
        assert_int_equal(g->out[1], 3);
        assert_pads(g, 0, 0, 0);
        assert_int_equal(f.out[0].dims[2], g->out[0]);
        teardown(&f);
    }
}

/* A pool over dims not known yet (a generic plan): the known ones resolved, the rest -1, and the
 * window marked unknown so that each run resolves it again. */
static void pool_with_unknown_dims(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "AveragePool", 19, 1);
    const int64_t x[] = {-1, 3, -1, 8}, k[] = {2, 2};
    set_input(&f, 0, 4, x);
    add_ints(&f, "kernel_shape", k, 2);
    add_string(&f, "auto_pad", "SAME_LOWER");
    const geom_window *g = infer_window(&f);
    assert_false(geom_window_known(g));
    assert_int_equal(g->n, -1);
    assert_int_equal(g->c, 3);
    assert_int_equal(g->in[0], -1);
    assert_int_equal(g->out[0], -1);
    assert_int_equal(g->out[1], 8);
    assert_pads(g, 1, 1, 0); /* SAME_LOWER: the odd pixel first */
    teardown(&f);
}

/* ConvTranspose: the output channels come from W and the group, SAME_UPPER's output is in *
 * stride with the natural size's excess cropped at the end. */
static void convtranspose_window(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "ConvTranspose", 11, 2);
    const int64_t x[] = {1, 4, 3, 3}, w[] = {4, 3, 3, 3}, s[] = {2, 2};
    set_input(&f, 0, 4, x);
    set_input(&f, 1, 4, w);
    add_ints(&f, "strides", s, 2);
    add_int(&f, "group", 2);
    add_string(&f, "auto_pad", "SAME_UPPER");
    const geom_window *g = infer_window(&f);
    assert_true(g->transposed);
    assert_int_equal(g->m, 6);
    assert_int_equal(g->out[0], 6);
    assert_pads(g, 0, 0, 1); /* natural 2 * 2 + 3 = 7, one more than 6 */
    teardown(&f);
}

/* The global pools resolve no window: their kernels reduce whole planes. */
static void global_pool_has_no_window(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "GlobalAveragePool", 22, 1);
    const int64_t x[] = {1, 2, 3, 3};
    set_input(&f, 0, 4, x);
    f.params.kind = OP_PARAMS_WINDOW; /* inference must not touch what it has none of */
    infer_ctx ctx = {.node = &f.node, .n_in = 1, .n_out = 1, .in = f.in_ptrs,
                     .in_value = f.values, .out = f.out, .params = &f.params};
    assert_int_equal(f.node.schema->infer(&ctx), ONYX_OK);
    assert_int_equal(f.params.kind, OP_PARAMS_WINDOW);
    assert_false(f.node.schema->flags & OP_GEOMETRY);
    assert_true(schema_lookup("", "MaxPool", 22)->flags & OP_GEOMETRY);
    assert_true(schema_lookup("", "Conv", 22)->flags & OP_GEOMETRY);
    teardown(&f);
}

/* ---------------------------------------------------------------- kernels read the window */

static const kernel *cpu_kernel(const char *op) {
    size_t n;
    const kernel *t = cpu_kernel_table(&n);
    for (size_t i = 0; i < n; i++)
        if (!*t[i].domain && !strcmp(t[i].op_type, op)) return &t[i];
    return NULL;
}

/* A window of `nsp` = 2 over X [n, c, h, w]: kernel k, stride s, pads pb/pe, output out. */
static geom_window window_2d(int64_t n, int64_t c, int64_t m, int64_t h, int64_t w, int64_t k,
                             int64_t s, int64_t pb, int64_t pe, int64_t oh, int64_t ow) {
    geom_window g;
    memset(&g, 0, sizeof g);
    g.nsp = 2;
    g.n = n;
    g.c = c;
    g.m = m;
    g.group = 1;
    const int64_t in[2] = {h, w}, out[2] = {oh, ow};
    for (int i = 0; i < 2; i++) {
        g.in[i] = in[i];
        g.out[i] = out[i];
        g.k[i] = k;
        g.stride[i] = s;
        g.dil[i] = 1;
        g.pad_b[i] = pb;
        g.pad_e[i] = pe;
    }
    return g;
}

/* Prepares kernel k for `node` with these input and output types and prepare-time params, then
 * runs it once on `in` into `out` with run-time params. */
static onyx_status prepare_and_run(const kernel *k, const graph_node *node, int n_in,
                                   const type_info *in_types, const type_info *out_type,
                                   const op_params *at_prepare, const op_params *at_run,
                                   onyx_value *in, onyx_value *out) {
    const type_info *in_ptrs[3] = {&in_types[0], n_in > 1 ? &in_types[1] : NULL, NULL};
    const tensor *values[3] = {0};
    kernel_prep prep = {.node = node, .n_in = n_in, .n_out = 1, .in_type = in_ptrs,
                        .in_value = values, .out_type = out_type, .params = at_prepare};
    void *state = NULL, *fork = NULL;
    onyx_status st = k->prepare(&prep, &state);
    if (st == ONYX_OK && k->fork) st = k->fork(state, &fork);
    if (st == ONYX_OK) {
        run_ctx ctx;
        memset(&ctx, 0, sizeof ctx);
        struct exec_frame frame = {.ctx = &ctx};
        onyx_value *ins[3] = {&in[0], n_in > 1 ? &in[1] : NULL, NULL};
        onyx_value *outs[1] = {out};
        kernel_call call = {.node = node, .state = fork ? fork : state, .n_in = n_in, .n_out = 1,
                            .in = ins, .out = outs, .frame = &frame, .threads = 1,
                            .params = at_run};
        st = k->run(&call);
        free(ctx.scratch);
    }
    if (fork) k->unfork(fork);
    if (state && k->release) k->release(state);
    return st;
}

static void fill_float(onyx_value *v, int rank, const int64_t *dims, float start) {
    assert_int_equal(value_alloc_tensor(v, ONYX_FLOAT, rank, dims), ONYX_OK);
    float *d = v->t.data;
    for (int64_t i = 0; i < v->t.numel; i++) d[i] = start + (float)i;
}

/* MaxPool from the window alone (its node has no kernel_shape): known at prepare (oneDNN's
 * primitive) and known only per run (a generic plan's prepare, then the run's own window). */
static void maxpool_kernel_reads_the_window(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("MaxPool");
    assert_non_null(k);
    graph_node node = {.name = "pool", .op_type = "MaxPool", .domain = "", .version = 12,
                       .n_inputs = 1, .n_outputs = 1};
    const int64_t xd[] = {1, 1, 4, 4}, yd[] = {1, 1, 2, 2}, unknown[] = {1, 1, -1, -1};
    op_params run = {.kind = OP_PARAMS_WINDOW, .u.window = window_2d(1, 1, 1, 4, 4, 2, 2, 0, 0,
                                                                     2, 2)};
    op_params partial = run;
    partial.u.window.in[0] = partial.u.window.in[1] = -1;
    partial.u.window.out[0] = partial.u.window.out[1] = -1;
    for (int generic = 0; generic <= 1; generic++) {
        type_info xt, yt;
        type_set_tensor(&xt, ONYX_FLOAT, 4, generic ? unknown : xd);
        type_set_tensor(&yt, ONYX_FLOAT, 4, generic ? unknown : yd);
        onyx_value x = {0}, y = {0};
        fill_float(&x, 4, xd, 0.f);
        assert_int_equal(value_alloc_tensor(&y, ONYX_FLOAT, 4, yd), ONYX_OK);
        assert_int_equal(prepare_and_run(k, &node, 1, &xt, &yt, generic ? &partial : &run, &run,
                                         &x, &y),
                         ONYX_OK);
        const float *o = y.t.data, want[] = {5, 7, 13, 15}; /* the max of each 2x2 block */
        for (int i = 0; i < 4; i++) assert_true(o[i] == want[i]);
        /* without the plan's window the kernel has nothing to pool by */
        assert_int_equal(prepare_and_run(k, &node, 1, &xt, &yt, NULL, NULL, &x, &y),
                         ONYX_ERR_RUNTIME);
        value_clear(&x);
        value_clear(&y);
        type_release(&xt);
        type_release(&yt);
    }
}

/* Conv from the window alone (its node has no pads): a 3x3 kernel of ones over a 3x3 image of
 * ones padded by 1 sums 4 at the corners, 6 at the edges, 9 in the middle. float runs oneDNN's
 * primitive made at prepare, double the im2col loops at run. */
static void conv_kernel_reads_the_window(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("Conv");
    assert_non_null(k);
    graph_node node = {.name = "conv", .op_type = "Conv", .domain = "", .version = 11,
                       .n_inputs = 2, .n_outputs = 1};
    const int64_t xd[] = {1, 1, 3, 3}, wd[] = {1, 1, 3, 3};
    op_params win = {.kind = OP_PARAMS_WINDOW, .u.window = window_2d(1, 1, 1, 3, 3, 3, 1, 1, 1,
                                                                     3, 3)};
    const onyx_dtype types[] = {ONYX_FLOAT, ONYX_DOUBLE};
    for (int t = 0; t < N(types); t++) {
        type_info it[2], yt;
        type_set_tensor(&it[0], types[t], 4, xd);
        type_set_tensor(&it[1], types[t], 4, wd);
        type_set_tensor(&yt, types[t], 4, xd);
        onyx_value in[2] = {{0}}, y = {0};
        for (int i = 0; i < 2; i++) {
            assert_int_equal(value_alloc_tensor(&in[i], types[t], 4, xd), ONYX_OK);
            for (int64_t e = 0; e < 9; e++) {
                if (types[t] == ONYX_FLOAT) ((float *)in[i].t.data)[e] = 1.f;
                else ((double *)in[i].t.data)[e] = 1.0;
            }
        }
        assert_int_equal(value_alloc_tensor(&y, types[t], 4, xd), ONYX_OK);
        assert_int_equal(prepare_and_run(k, &node, 2, it, &yt, &win, &win, in, &y), ONYX_OK);
        const double want[] = {4, 6, 4, 6, 9, 6, 4, 6, 4};
        for (int e = 0; e < 9; e++) {
            double got = types[t] == ONYX_FLOAT ? ((float *)y.t.data)[e] : ((double *)y.t.data)[e];
            assert_true(got == want[e]);
        }
        for (int i = 0; i < 2; i++) value_clear(&in[i]);
        value_clear(&y);
        for (int i = 0; i < 2; i++) type_release(&it[i]);
        type_release(&yt);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(conv_same_upper_and_lower),
        cmocka_unit_test(conv_dilations_and_groups),
        cmocka_unit_test(maxpool_ceil_mode),
        cmocka_unit_test(pool_with_unknown_dims),
        cmocka_unit_test(convtranspose_window),
        cmocka_unit_test(global_pool_has_no_window),
        cmocka_unit_test(maxpool_kernel_reads_the_window),
        cmocka_unit_test(conv_kernel_reads_the_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
