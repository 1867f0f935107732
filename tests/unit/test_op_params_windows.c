/* The windows of the remaining windowed ops, resolved once per plan (core/op_params.h): what the
 * schemas of MaxUnpool (the transposed window of the pool it undoes), Col2Im (the blocks' window
 * over the image, from its shape inputs), DeformConv (a convolution's) and com.microsoft
 * QLinearAveragePool (NCHW order whatever the layout) hand out, known and unknown; and that their
 * CPU kernels compute from that window alone (their nodes here have no window attributes, and
 * Col2Im's shape inputs hold nonsense). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "op_params_fixture.h"

/* ---------------------------------------------------------------- the schemas' windows */

/* MaxUnpool: kernel 2, stride 2 and an end pad of 1 over 3 pixels unpool to (3-1)*2 - 1 + 2 = 5;
 * an output_shape of 6 pads Y, not the window the indices address. */
static void maxunpool_window(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "", "MaxUnpool", 22, 3);
    const int64_t x[] = {1, 2, 3, 3}, k[] = {2, 2}, s[] = {2, 2}, pads[] = {0, 0, 1, 1};
    const int64_t shape[] = {1, 2, 6, 6};
    set_input(&f, 0, ONYX_FLOAT, 4, x);
    set_input(&f, 1, ONYX_INT64, 4, x);
    set_ints(&f, 2, shape, 4, true);
    add_ints(&f, "kernel_shape", k, 2);
    add_ints(&f, "strides", s, 2);
    add_ints(&f, "pads", pads, 4);
    const geom_window *g = infer_window(&f);
    assert_true(geom_window_known(g));
    assert_true(g->transposed);
    assert_int_equal(g->n, 1);
    assert_int_equal(g->c, 2);
    assert_int_equal(g->m, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(g->in[i], 3);
        assert_int_equal(g->k[i], 2);
        assert_int_equal(g->stride[i], 2);
        assert_int_equal(g->pad_b[i], 0);
        assert_int_equal(g->pad_e[i], 1);
        assert_int_equal(g->out[i], 5);
        assert_int_equal(f.out[0].dims[2 + i], 6);
    }
    teardown(&f);
}

/* Col2Im with its shapes known: image 4x5, blocks 2x2 dilated by 2 along the width (extent 3)
 * give 3x3 blocks; X's 8 rows are 2 channels of 4 taps. Without the shapes' values no window yet
 * (each run resolves it). */
static void col2im_window(void **unused) {
    (void)unused;
    for (int known = 0; known <= 1; known++) {
        fixture f;
        setup_node(&f, "", "Col2Im", 18, 3);
        const int64_t x[] = {1, 8, 9}, image[] = {4, 5}, block[] = {2, 2}, dil[] = {1, 2};
        const int64_t two = 2;
        set_input(&f, 0, ONYX_FLOAT, 3, x);
        if (known) {
            set_ints(&f, 1, image, 2, true);
            set_ints(&f, 2, block, 2, true);
        } else {
            set_input(&f, 1, ONYX_INT64, 1, &two);
            set_input(&f, 2, ONYX_INT64, 1, &two);
        }
        add_ints(&f, "dilations", dil, 2);
        if (!known) {
            infer_geometry(&f);
            assert_int_equal(f.params.kind, OP_PARAMS_NONE);
            assert_int_equal(f.out[0].rank, 4);
            teardown(&f);
            continue;
        }
        const geom_window *g = infer_window(&f);
        assert_true(geom_window_known(g));
        assert_false(g->transposed);
        assert_int_equal(g->n, 1);
        assert_int_equal(g->c, 2);
        assert_int_equal(g->in[0], 4);
        assert_int_equal(g->in[1], 5);
        assert_int_equal(g->k[0], 2);
        assert_int_equal(g->k[1], 2);
        assert_int_equal(g->dil[1], 2);
        assert_int_equal(g->out[0], 3);
        assert_int_equal(g->out[1], 3);
        assert_int_equal(f.out[0].dims[1], 2);
        teardown(&f);
    }
}

/* DeformConv: a grouped convolution's window (output channels and groups from W and the
 * attribute); with X's image dims unknown, a window marked unknown for each run to resolve. */
static void deformconv_window(void **unused) {
    (void)unused;
    for (int generic = 0; generic <= 1; generic++) {
        fixture f;
        setup_node(&f, "", "DeformConv", 19, 3);
        const int64_t x[] = {2, 4, 7, 6}, xg[] = {-1, 4, -1, -1}, w[] = {6, 2, 3, 3};
        const int64_t off[] = {2, 18, -1, -1}, s[] = {2, 1}, pads[] = {1, 0, 1, 0};
        set_input(&f, 0, ONYX_FLOAT, 4, generic ? xg : x);
        set_input(&f, 1, ONYX_FLOAT, 4, w);
        set_input(&f, 2, ONYX_FLOAT, 4, off);
        add_int(&f, "group", 2);
        add_ints(&f, "strides", s, 2);
        add_ints(&f, "pads", pads, 4);
        const geom_window *g = infer_window(&f);
        assert_int_equal(g->c, 4);
        assert_int_equal(g->m, 6);
        assert_int_equal(g->group, 2);
        assert_int_equal(g->k[0], 3);
        assert_int_equal(g->pad_b[0], 1);
        assert_int_equal(g->pad_e[0], 1);
        if (generic) {
            assert_false(geom_window_known(g));
            assert_int_equal(g->in[0], -1);
            assert_int_equal(g->out[0], -1);
        } else {
            assert_true(geom_window_known(g));
            /* (7 + 2 - 3) / 2 + 1 = 4, (6 - 3) / 1 + 1 = 4 */
            assert_int_equal(g->out[0], 4);
            assert_int_equal(g->out[1], 4);
            assert_int_equal(f.out[0].dims[1], 6);
        }
        teardown(&f);
    }
}

/* QLinearAveragePool over NHWC X [1, 5, 6, 3]: the window in NCHW order (3 channels), SAME_UPPER's
 * pads (the odd pixel at the end) resolved; with X's rank unknown, none yet. */
static void qlinearaveragepool_window(void **unused) {
    (void)unused;
    for (int rank_known = 0; rank_known <= 1; rank_known++) {
        fixture f;
        setup_node(&f, "com.microsoft", "QLinearAveragePool", 1, 5);
        const int64_t x[] = {1, 5, 6, 3}, k[] = {2, 3}, s[] = {2, 2};
        if (rank_known) set_input(&f, 0, ONYX_UINT8, 4, x);
        else set_input(&f, 0, ONYX_UINT8, -1, NULL);
        set_input(&f, 1, ONYX_FLOAT, 0, NULL);
        set_input(&f, 2, ONYX_UINT8, 0, NULL);
        set_input(&f, 3, ONYX_FLOAT, 0, NULL);
        set_input(&f, 4, ONYX_UINT8, 0, NULL);
        add_int(&f, "channels_last", 1);
        add_ints(&f, "kernel_shape", k, 2);
        add_ints(&f, "strides", s, 2);
        add_string(&f, "auto_pad", "SAME_UPPER");
        if (!rank_known) {
            infer_geometry(&f);
            assert_int_equal(f.params.kind, OP_PARAMS_NONE);
            teardown(&f);
            continue;
        }
        const geom_window *g = infer_window(&f);
        assert_true(geom_window_known(g));
        assert_int_equal(g->n, 1);
        assert_int_equal(g->c, 3);
        assert_int_equal(g->in[0], 5);
        assert_int_equal(g->in[1], 6);
        assert_int_equal(g->out[0], 3);
        assert_int_equal(g->out[1], 3);
        /* (3-1)*2 + 2 - 5 = 1 and (3-1)*2 + 3 - 6 = 1 pixel of padding, at the end */
        for (int i = 0; i < 2; i++) {
            assert_int_equal(g->pad_b[i], 0);
            assert_int_equal(g->pad_e[i], 1);
        }
        assert_int_equal(f.out[0].dims[3], 3); /* Y stays NHWC */
        teardown(&f);
    }
}

/* ---------------------------------------------------------------- kernels read the window */

static void alloc_float(onyx_value *v, int rank, const int64_t *dims, float fill) {
    assert_int_equal(value_alloc_tensor(v, ONYX_FLOAT, rank, dims), ONYX_OK);
    for (int64_t i = 0; i < v->t.numel; i++) ((float *)v->t.data)[i] = fill;
}

static void alloc_ints(onyx_value *v, int64_t n, const int64_t *vals) {
    assert_int_equal(value_alloc_tensor(v, ONYX_INT64, 1, &n), ONYX_OK);
    memcpy(v->t.data, vals, (size_t)n * sizeof *vals);
}

/* MaxUnpool from the window alone: 2x2 values to the corners of 4x4, then of a 5x5 output_shape
 * (indices re-addressed from the window's 4x4); no window, no run. */
static void maxunpool_kernel_reads_the_window(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("", "MaxUnpool");
    assert_non_null(k);
    graph_node node = {.name = "unpool", .op_type = "MaxUnpool", .domain = "", .version = 22,
                       .n_inputs = 2, .n_outputs = 1};
    op_params p = {.kind = OP_PARAMS_WINDOW, .u.window = window_2d(1, 1, 1, 2, 2, 2, 2, 0, 0,
                                                                   4, 4)};
    p.u.window.transposed = true;
    const int64_t xd[] = {1, 1, 2, 2}, idx[] = {0, 3, 12, 15};
    onyx_value in[2] = {{0}};
    alloc_float(&in[0], 4, xd, 0.f);
    for (int i = 0; i < 4; i++) ((float *)in[0].t.data)[i] = (float)(i + 1);
    assert_int_equal(value_alloc_tensor(&in[1], ONYX_INT64, 4, xd), ONYX_OK);
    memcpy(in[1].t.data, idx, sizeof idx);
    for (int64_t side = 4; side <= 5; side++) {
        const int64_t yd[] = {1, 1, side, side};
        onyx_value y = {0};
        alloc_float(&y, 4, yd, -1.f);
        assert_int_equal(run_kernel(k, &node, 2, in, &y, &p), ONYX_OK);
        const float *o = y.t.data;
        for (int64_t e = 0; e < side * side; e++) {
            int64_t r = e / side, c = e % side;
            float want = r == 0 && c == 0 ? 1 : r == 0 && c == 3 ? 2 : r == 3 && c == 0 ? 3
                       : r == 3 && c == 3 ? 4 : 0;
            assert_true(o[e] == want);
        }
        assert_int_equal(run_kernel(k, &node, 2, in, &y, NULL), ONYX_ERR_RUNTIME);
        value_clear(&y);
    }
    for (int i = 0; i < 2; i++) value_clear(&in[i]);
}

/* Col2Im from the window alone: four 2x2 blocks of ones over a 3x3 image count how many blocks
 * cover each pixel; image_shape and block_shape say nonsense the kernel never reads. */
static void col2im_kernel_reads_the_window(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("", "Col2Im");
    assert_non_null(k);
    graph_node node = {.name = "col2im", .op_type = "Col2Im", .domain = "", .version = 18,
                       .n_inputs = 3, .n_outputs = 1};
    op_params p = {.kind = OP_PARAMS_WINDOW, .u.window = window_2d(1, 1, 1, 3, 3, 2, 1, 0, 0,
                                                                   2, 2)};
    const int64_t xd[] = {1, 4, 4}, yd[] = {1, 1, 3, 3}, nonsense[] = {7, 7};
    onyx_value in[3] = {{0}}, y = {0};
    alloc_float(&in[0], 3, xd, 1.f);
    alloc_ints(&in[1], 2, nonsense);
    alloc_ints(&in[2], 2, nonsense);
    alloc_float(&y, 4, yd, -1.f);
    assert_int_equal(run_kernel(k, &node, 3, in, &y, &p), ONYX_OK);
    const float want[] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
    for (int e = 0; e < 9; e++) assert_true(((float *)y.t.data)[e] == want[e]);
    /* a window for another image is refused, not computed with */
    op_params other = p;
    other.u.window.in[1] = 4;
    assert_int_equal(run_kernel(k, &node, 3, in, &y, &other), ONYX_ERR_RUNTIME);
    for (int i = 0; i < 3; i++) value_clear(&in[i]);
    value_clear(&y);
}

/* DeformConv from the window alone (its node has no pads): with zero offsets, a 3x3 kernel of
 * ones over a 3x3 image of ones padded by 1 sums 4 at the corners, 6 at the edges, 9 inside. */
static void deformconv_kernel_reads_the_window(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("", "DeformConv");
    assert_non_null(k);
    graph_node node = {.name = "deform", .op_type = "DeformConv", .domain = "", .version = 19,
                       .n_inputs = 3, .n_outputs = 1};
    op_params p = {.kind = OP_PARAMS_WINDOW, .u.window = window_2d(1, 1, 1, 3, 3, 3, 1, 1, 1,
                                                                   3, 3)};
    const int64_t xd[] = {1, 1, 3, 3}, od[] = {1, 18, 3, 3};
    onyx_value in[3] = {{0}}, y = {0};
    alloc_float(&in[0], 4, xd, 1.f);
    alloc_float(&in[1], 4, xd, 1.f);
    alloc_float(&in[2], 4, od, 0.f);
    alloc_float(&y, 4, xd, -1.f);
    assert_int_equal(run_kernel(k, &node, 3, in, &y, &p), ONYX_OK);
    const float want[] = {4, 6, 4, 6, 9, 6, 4, 6, 4};
    for (int e = 0; e < 9; e++) assert_true(((float *)y.t.data)[e] == want[e]);
    assert_int_equal(run_kernel(k, &node, 3, in, &y, NULL), ONYX_ERR_RUNTIME);
    for (int i = 0; i < 3; i++) value_clear(&in[i]);
    value_clear(&y);
}

/* QLinearAveragePool from the window alone (its node has no kernel_shape), NCHW and NHWC: the
 * 2x2 blocks of 4*i average to whole numbers, requantized at scale 1 and zero point 0. */
static void qlinearaveragepool_kernel_reads_the_window(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("com.microsoft", "QLinearAveragePool");
    assert_non_null(k);
    op_params p = {.kind = OP_PARAMS_WINDOW, .u.window = window_2d(1, 1, 1, 4, 4, 2, 2, 0, 0,
                                                                   2, 2)};
    for (int cl = 0; cl <= 1; cl++) {
        graph_attr layout = {.name = "channels_last", .type = ATTR_INT, .i = cl};
        graph_node node = {.name = "qpool", .op_type = "QLinearAveragePool",
                           .domain = "com.microsoft", .version = 1, .n_inputs = 5,
                           .n_outputs = 1, .attrs = &layout, .n_attrs = 1};
        const int64_t xd[2][4] = {{1, 1, 4, 4}, {1, 4, 4, 1}}, yd[2][4] = {{1, 1, 2, 2},
                                                                            {1, 2, 2, 1}};
        onyx_value in[5] = {{0}}, y = {0};
        assert_int_equal(value_alloc_tensor(&in[0], ONYX_UINT8, 4, xd[cl]), ONYX_OK);
        for (int i = 0; i < 16; i++) ((uint8_t *)in[0].t.data)[i] = (uint8_t)(4 * i);
        for (int i = 1; i < 5; i++) {
            onyx_dtype dt = i % 2 ? ONYX_FLOAT : ONYX_UINT8;
            assert_int_equal(value_alloc_tensor(&in[i], dt, 0, NULL), ONYX_OK);
            if (dt == ONYX_FLOAT) *(float *)in[i].t.data = 1.f;
            else *(uint8_t *)in[i].t.data = 0;
        }
        assert_int_equal(value_alloc_tensor(&y, ONYX_UINT8, 4, yd[cl]), ONYX_OK);
        assert_int_equal(run_kernel(k, &node, 5, in, &y, &p), ONYX_OK);
        const uint8_t want[] = {10, 18, 42, 50};
        for (int e = 0; e < 4; e++) assert_int_equal(((uint8_t *)y.t.data)[e], want[e]);
        assert_int_equal(run_kernel(k, &node, 5, in, &y, NULL), ONYX_ERR_RUNTIME);
        for (int i = 0; i < 5; i++) value_clear(&in[i]);
        value_clear(&y);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(maxunpool_window),
        cmocka_unit_test(col2im_window),
        cmocka_unit_test(deformconv_window),
        cmocka_unit_test(qlinearaveragepool_window),
        cmocka_unit_test(maxunpool_kernel_reads_the_window),
        cmocka_unit_test(col2im_kernel_reads_the_window),
        cmocka_unit_test(deformconv_kernel_reads_the_window),
        cmocka_unit_test(qlinearaveragepool_kernel_reads_the_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
