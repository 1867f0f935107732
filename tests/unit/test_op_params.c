/* The geometry a schema resolves once per plan (core/op_params.h). Windows: what the conv and
 * pool schemas hand out for auto_pad SAME_UPPER / SAME_LOWER, dilations and groups, ceil mode, a
 * transposed convolution and unknown dims, and that the CPU kernels compute from that window, at
 * prepare and per run, not from the node's attributes (their nodes here have none). Products and
 * axes: what the MatMul family's schemas hand out (batch broadcast, 1-D operands, FusedMatMul's
 * transposes, unknown dims left to the run) and the reductions', softmaxes', ArgMax's and the
 * normalizations' axes; and that the CPU's MatMul, ReduceSum, Hardmax and ArgMax compute from
 * them, not from their nodes' attributes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "op_params_fixture.h"

/* ---------------------------------------------------------------- the schemas' windows */

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
        setup_node(&f, "", "Conv", 22, 2);
        const int64_t x[] = {1, 3, 5, 5}, w[] = {8, 3, 4, 4};
        set_input(&f, 0, ONYX_FLOAT, 4, x);
        set_input(&f, 1, ONYX_FLOAT, 4, w);
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
    setup_node(&f, "", "Conv", 11, 2);
    const int64_t x[] = {2, 4, 9, 10}, w[] = {6, 2, 3, 3};
    const int64_t dil[] = {2, 3}, pads[] = {1, 0, 1, 2}, strides[] = {1, 2};
    set_input(&f, 0, ONYX_FLOAT, 4, x);
    set_input(&f, 1, ONYX_FLOAT, 4, w);
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
        setup_node(&f, "", "MaxPool", 12, 1);
        const int64_t x[] = {1, 2, 6, 7}, k[] = {3, 3}, s[] = {2, 2};
        set_input(&f, 0, ONYX_FLOAT, 4, x);
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
    setup_node(&f, "", "AveragePool", 19, 1);
    const int64_t x[] = {-1, 3, -1, 8}, k[] = {2, 2};
    set_input(&f, 0, ONYX_FLOAT, 4, x);
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
    setup_node(&f, "", "ConvTranspose", 11, 2);
    const int64_t x[] = {1, 4, 3, 3}, w[] = {4, 3, 3, 3}, s[] = {2, 2};
    set_input(&f, 0, ONYX_FLOAT, 4, x);
    set_input(&f, 1, ONYX_FLOAT, 4, w);
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
    setup_node(&f, "", "GlobalAveragePool", 22, 1);
    const int64_t x[] = {1, 2, 3, 3};
    set_input(&f, 0, ONYX_FLOAT, 4, x);
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


/* ---------------------------------------------------------------- products and axes */

/* The product's geometry as the MatMul family's kernels walk it: A [2,1,3,4] @ B [5,4,6] gives
 * ten [3,4] @ [4,6] products over the batch dims [2,5], A's matrices repeated along the second
 * (stride 0), B's along the first; a 1-D A is one row; unknown dims leave it to each run. */
static void matmul_schemas_resolve_the_product(void **unused) {
    (void)unused;
    const char *ops[] = {"MatMul", "MatMulInteger"};
    for (int o = 0; o < N(ops); o++) {
        fixture f;
        setup_node(&f, "", ops[o], 13, 2);
        const int64_t a[] = {2, 1, 3, 4}, b[] = {5, 4, 6};
        set_input(&f, 0, ONYX_FLOAT, 4, a);
        set_input(&f, 1, ONYX_FLOAT, 3, b);
        for (int i = 0; o == 1 && i < 2; i++) f.in[i].dtype = ONYX_UINT8;
        infer(&f);
        assert_true(f.node.schema->flags & OP_GEOMETRY);
        const geom_matmul *g = op_params_matmul(&f.params);
        assert_non_null(g);
        assert_true(op_params_known(&f.params));
        assert_int_equal(g->m, 3);
        assert_int_equal(g->k, 4);
        assert_int_equal(g->n, 6);
        assert_int_equal(g->nbatch, 10);
        assert_int_equal(g->nb, 2);
        assert_int_equal(g->bdim[0], 2);
        assert_int_equal(g->bdim[1], 5);
        assert_int_equal(g->astr[0], 12);
        assert_int_equal(g->astr[1], 0);
        assert_int_equal(g->bstr[0], 0);
        assert_int_equal(g->bstr[1], 24);
        assert_int_equal(g->a_batches, 2);
        assert_int_equal(g->b_batches, 5);
        assert_int_equal(f.out[0].rank, 4);
        teardown(&f);
    }
    fixture f;
    setup_node(&f, "", "MatMul", 13, 2);
    const int64_t v[] = {4}, b[] = {4, 6};
    set_input(&f, 0, ONYX_FLOAT, 1, v);
    set_input(&f, 1, ONYX_FLOAT, 2, b);
    infer(&f);
    const geom_matmul *g = op_params_matmul(&f.params);
    assert_non_null(g);
    assert_int_equal(g->m, 1);
    assert_int_equal(g->nbatch, 1);
    assert_int_equal(g->n, 6);
    teardown(&f);
    setup_node(&f, "", "MatMul", 13, 2);
    const int64_t rows_unknown[] = {-1, 4};
    set_input(&f, 0, ONYX_FLOAT, 2, rows_unknown);
    set_input(&f, 1, ONYX_FLOAT, 2, b);
    infer(&f);
    assert_int_equal(f.params.kind, OP_PARAMS_NONE); /* the plan marks it: resolved per run */
    teardown(&f);
}

/* com.microsoft.FusedMatMul hands out the product of the transposed operands: A [4,3] with
 * transA is [3,4]. */
static void fused_matmul_resolves_the_transposed_product(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "", "MatMul", 13, 2);
    f.node.op_type = "FusedMatMul";
    f.node.domain = "com.microsoft";
    f.node.schema = schema_lookup("com.microsoft", "FusedMatMul", 1);
    assert_non_null(f.node.schema);
    f.node.version = 1;
    const int64_t a[] = {4, 3}, b[] = {4, 6};
    set_input(&f, 0, ONYX_FLOAT, 2, a);
    set_input(&f, 1, ONYX_FLOAT, 2, b);
    add_int(&f, "transA", 1);
    infer(&f);
    const geom_matmul *g = op_params_matmul(&f.params);
    assert_non_null(g);
    assert_int_equal(g->m, 3);
    assert_int_equal(g->k, 4);
    assert_int_equal(g->n, 6);
    teardown(&f);
}

static void assert_mask(const geom_axis_set *a, int rank, const bool *want) {
    assert_int_equal(a->rank, rank);
    for (int i = 0; i < rank; i++) assert_int_equal(a->mask[i], want[i]);
}

/* The reductions' axes: from a constant axes input (negative ones normalized), from the axes
 * attribute, or left to each run when the input's value is not known. */
static void reduce_schemas_resolve_their_axes(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "", "ReduceSum", 13, 2);
    const int64_t x[] = {2, 3, 4}, two[] = {2};
    set_input(&f, 0, ONYX_FLOAT, 3, x);
    set_input(&f, 1, ONYX_FLOAT, 1, two);
    f.in[1].dtype = ONYX_INT64;
    onyx_value axes = {0};
    assert_int_equal(value_alloc_tensor(&axes, ONYX_INT64, 1, two), ONYX_OK);
    ((int64_t *)axes.t.data)[0] = -1;
    ((int64_t *)axes.t.data)[1] = 0;
    f.values[1] = &axes.t;
    infer(&f);
    assert_true(f.node.schema->flags & OP_GEOMETRY);
    const geom_axis_set *a = op_params_axes(&f.params);
    assert_non_null(a);
    assert_int_equal(a->axis, -1);
    assert_mask(a, 3, (const bool[]){true, false, true});
    /* the axes' value unknown at plan time: nothing resolved, each run does */
    f.values[1] = NULL;
    f.params.kind = OP_PARAMS_NONE;
    type_release(&f.out[0]);
    type_init(&f.out[0]);
    infer(&f);
    assert_int_equal(f.params.kind, OP_PARAMS_NONE);
    value_clear(&axes);
    teardown(&f);
    setup_node(&f, "", "ReduceMean", 11, 1);
    const int64_t one[] = {-2};
    set_input(&f, 0, ONYX_FLOAT, 3, x);
    add_ints(&f, "axes", one, 1);
    infer(&f);
    a = op_params_axes(&f.params);
    assert_non_null(a);
    assert_mask(a, 3, (const bool[]){false, true, false});
    teardown(&f);
}

/* The ops along one axis: Softmax's default axis is 1 before v13 and -1 from it; ArgMax's axis
 * attribute, LayerNormalization's first normalized axis, and MeanVarianceNormalization's default
 * axes [0, 2, 3]. */
static void axis_schemas_resolve_their_axis(void **unused) {
    (void)unused;
    const int64_t x[] = {2, 3, 4}, x4[] = {2, 3, 4, 5}, scale[] = {4};
    struct {
        const char *op;
        int64_t opset;
        int n_in;
        int64_t axis; /* the attribute, 99: none */
        int want;
    } cases[] = {{"Softmax", 11, 1, 99, 1},    {"Softmax", 13, 1, 99, 2},
                 {"Hardmax", 13, 1, -3, 0},    {"ArgMax", 13, 1, -2, 1},
                 {"LpNormalization", 22, 1, 99, 2}, {"LayerNormalization", 17, 2, -1, 2}};
    for (int i = 0; i < N(cases); i++) {
        fixture f;
        setup_node(&f, "", cases[i].op, cases[i].opset, cases[i].n_in);
        set_input(&f, 0, ONYX_FLOAT, 3, x);
        if (cases[i].n_in > 1) set_input(&f, 1, ONYX_FLOAT, 1, scale);
        if (cases[i].axis != 99) add_int(&f, "axis", cases[i].axis);
        infer(&f);
        assert_true(f.node.schema->flags & OP_GEOMETRY);
        const geom_axis_set *a = op_params_axes(&f.params);
        assert_non_null(a);
        assert_int_equal(a->rank, 3);
        assert_int_equal(a->axis, cases[i].want);
        for (int d = 0; d < 3; d++) assert_int_equal(a->mask[d], d == cases[i].want);
        teardown(&f);
    }
    fixture f;
    setup_node(&f, "", "MeanVarianceNormalization", 13, 1);
    set_input(&f, 0, ONYX_FLOAT, 4, x4);
    infer(&f);
    const geom_axis_set *a = op_params_axes(&f.params);
    assert_non_null(a);
    assert_int_equal(a->axis, -1);
    assert_mask(a, 4, (const bool[]){true, false, true, true});
    teardown(&f);
}

/* ---------------------------------------------------------------- kernels read the window */

/* MaxPool from the window alone (its node has no kernel_shape): known at prepare (oneDNN's
 * primitive) and known only per run (a generic plan's prepare, then the run's own window). */
static void maxpool_kernel_reads_the_window(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("", "MaxPool");
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
    const kernel *k = cpu_kernel("", "Conv");
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

/* MatMul from the product's geometry (double: the generic path, every run): A [2,1,2] @ B
 * [1,2,3], B's one matrix shared by both of A's. Without the plan's geometry, or with one made
 * for other operands, the kernel refuses. */
static void matmul_kernel_reads_the_product(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("", "MatMul");
    assert_non_null(k);
    graph_node node = {.name = "mm", .op_type = "MatMul", .domain = "", .version = 13,
                       .n_inputs = 2, .n_outputs = 1};
    const int64_t ad[] = {2, 1, 2}, bd[] = {1, 2, 3}, yd[] = {2, 1, 3};
    op_params pr = {.kind = OP_PARAMS_MATMUL};
    assert_int_equal(geom_matmul_plan(3, ad, 3, bd, &pr.u.matmul, NULL), ONYX_OK);
    op_params other = {.kind = OP_PARAMS_MATMUL};
    const int64_t od[] = {1, 2, 2};
    assert_int_equal(geom_matmul_plan(3, ad, 3, od, &other.u.matmul, NULL), ONYX_OK);
    type_info it[2], yt;
    type_set_tensor(&it[0], ONYX_DOUBLE, 3, ad);
    type_set_tensor(&it[1], ONYX_DOUBLE, 3, bd);
    type_set_tensor(&yt, ONYX_DOUBLE, 3, yd);
    onyx_value in[2] = {{0}}, y = {0};
    assert_int_equal(value_alloc_tensor(&in[0], ONYX_DOUBLE, 3, ad), ONYX_OK);
    assert_int_equal(value_alloc_tensor(&in[1], ONYX_DOUBLE, 3, bd), ONYX_OK);
    assert_int_equal(value_alloc_tensor(&y, ONYX_DOUBLE, 3, yd), ONYX_OK);
    const double a[] = {1, 2, 3, 4}, b[] = {1, 0, 2, 0, 1, 3};
    memcpy(in[0].t.data, a, sizeof a);
    memcpy(in[1].t.data, b, sizeof b);
    assert_int_equal(prepare_and_run(k, &node, 2, it, &yt, &pr, &pr, in, &y), ONYX_OK);
    const double want[] = {1, 2, 8, 3, 4, 18};
    for (int i = 0; i < 6; i++) assert_true(((double *)y.t.data)[i] == want[i]);
    assert_int_equal(prepare_and_run(k, &node, 2, it, &yt, NULL, NULL, in, &y),
                     ONYX_ERR_RUNTIME);
    assert_int_equal(prepare_and_run(k, &node, 2, it, &yt, &other, &other, in, &y),
                     ONYX_ERR_RUNTIME);
    for (int i = 0; i < 2; i++) {
        value_clear(&in[i]);
        type_release(&it[i]);
    }
    value_clear(&y);
    type_release(&yt);
}

/* One kernel along axes run on X [[1, 2], [4, 3]] with the plan's axes {axis} (its node has no
 * axes attribute or input: ReduceSum would reduce all, Hardmax and ArgMax take their defaults),
 * into Y of dims yd; NULL params must fail. */
static void run_along(const char *op, int axis, onyx_dtype yt_dtype, int yrank,
                      const int64_t *yd, onyx_value *y) {
    const kernel *k = cpu_kernel("", op);
    assert_non_null(k);
    graph_node node = {.name = "n", .op_type = op, .domain = "", .version = 13, .n_inputs = 1,
                       .n_outputs = 1};
    const int64_t xd[] = {2, 2};
    op_params pa = {.kind = OP_PARAMS_AXES};
    geom_axis_set_one(2, axis, &pa.u.axes);
    type_info xt, yt;
    type_set_tensor(&xt, ONYX_FLOAT, 2, xd);
    type_set_tensor(&yt, yt_dtype, yrank, yd);
    onyx_value x = {0};
    assert_int_equal(value_alloc_tensor(&x, ONYX_FLOAT, 2, xd), ONYX_OK);
    const float xv[] = {1, 2, 4, 3};
    memcpy(x.t.data, xv, sizeof xv);
    assert_int_equal(value_alloc_tensor(y, yt_dtype, yrank, yd), ONYX_OK);
    assert_int_equal(prepare_and_run(k, &node, 1, &xt, &yt, NULL, NULL, &x, y), ONYX_ERR_RUNTIME);
    assert_int_equal(prepare_and_run(k, &node, 1, &xt, &yt, &pa, &pa, &x, y), ONYX_OK);
    value_clear(&x);
    type_release(&xt);
    type_release(&yt);
}

static void axis_kernels_read_the_axes(void **unused) {
    (void)unused;
    onyx_value y = {0};
    const int64_t col[] = {2, 1}, sq[] = {2, 2}, two[] = {2};
    run_along("ReduceSum", 1, ONYX_FLOAT, 2, col, &y); /* row sums, not the total */
    assert_true(((float *)y.t.data)[0] == 3 && ((float *)y.t.data)[1] == 7);
    value_clear(&y);
    run_along("Hardmax", 0, ONYX_FLOAT, 2, sq, &y); /* down the columns, not along the rows */
    const float hard[] = {0, 0, 1, 1};
    for (int i = 0; i < 4; i++) assert_true(((float *)y.t.data)[i] == hard[i]);
    value_clear(&y);
    run_along("ArgMax", 1, ONYX_INT64, 1, two, &y); /* along the rows, not down the columns */
    assert_int_equal(((int64_t *)y.t.data)[0], 1);
    assert_int_equal(((int64_t *)y.t.data)[1], 0);
    value_clear(&y);
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
        cmocka_unit_test(matmul_schemas_resolve_the_product),
        cmocka_unit_test(fused_matmul_resolves_the_transposed_product),
        cmocka_unit_test(reduce_schemas_resolve_their_axes),
        cmocka_unit_test(axis_schemas_resolve_their_axis),
        cmocka_unit_test(matmul_kernel_reads_the_product),
        cmocka_unit_test(axis_kernels_read_the_axes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
