/* The slices, pads and depth/space blocks the schemas of Slice, Pad, DepthToSpace and
 * SpaceToDepth resolve once per plan (core/op_params.h): what they hand out for bounds from
 * attributes and from constant inputs (negative starts and steps, clamping, axes), pads with axes
 * and crops, both channel orders, unknown dims, and none where a bound's input is not constant
 * (each run resolves it then); the contiguous-run rule the view decision reads; and that the CPU
 * kernels compute from those params alone (their nodes here have no attribute or bound input). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "op_params_fixture.h"

/* ---------------------------------------------------------------- the schemas' params */

static void assert_ints(const int64_t *got, const int64_t *want, int n) {
    for (int i = 0; i < n; i++) assert_int_equal(got[i], want[i]);
}

/* Slice-13 from constant inputs: axis 0 walks back by 2 from the last row, axis -1 (2) is cut
 * to [1, 6) by 2 with its end clamped, axis 1 untouched. */
static void slice_from_constant_inputs(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "", "Slice", 13, 5);
    const int64_t x[] = {5, 3, 6};
    const int64_t starts[] = {-1, 1}, ends[] = {INT64_MIN, 100}, axes[] = {0, -1},
                  steps[] = {-2, 2};
    set_input(&f, 0, ONYX_FLOAT, 3, x);
    set_ints(&f, 1, starts, 2, true);
    set_ints(&f, 2, ends, 2, true);
    set_ints(&f, 3, axes, 2, true);
    set_ints(&f, 4, steps, 2, true);
    infer_geometry(&f);
    const geom_slice *s = op_params_slice(&f.params);
    assert_non_null(s);
    assert_true(op_params_known(&f.params));
    assert_int_equal(s->rank, 3);
    const int64_t start[] = {4, 0, 1}, step[] = {-2, 1, 2}, len[] = {3, 3, 3};
    assert_ints(s->in, x, 3);
    assert_ints(s->start, start, 3);
    assert_ints(s->step, step, 3);
    assert_ints(s->len, len, 3);
    assert_ints(f.out[0].dims, len, 3);
    teardown(&f);
}

/* Slice-1 reads its bounds from attributes. */
static void slice_from_attributes(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "", "Slice", 9, 1);
    const int64_t x[] = {4, 10}, starts[] = {2}, ends[] = {-1}, axes[] = {1};
    set_input(&f, 0, ONYX_FLOAT, 2, x);
    add_ints(&f, "starts", starts, 1);
    add_ints(&f, "ends", ends, 1);
    add_ints(&f, "axes", axes, 1);
    infer_geometry(&f);
    const geom_slice *s = op_params_slice(&f.params);
    assert_non_null(s);
    assert_int_equal(s->start[1], 2);
    assert_int_equal(s->len[1], 7);
    assert_int_equal(s->len[0], 4);
    teardown(&f);
}

/* Bounds computed by the graph: nothing resolved at plan time (each run resolves its own); the
 * output keeps its rank. A dim not known yet: its axis unknown, the params not known. */
static void slice_runtime_bounds_and_unknown_dims(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "", "Slice", 13, 3);
    const int64_t x[] = {4, 10}, starts[] = {1}, ends[] = {3};
    set_input(&f, 0, ONYX_FLOAT, 2, x);
    set_ints(&f, 1, starts, 1, false);
    set_ints(&f, 2, ends, 1, true);
    infer_geometry(&f);
    assert_int_equal(f.params.kind, OP_PARAMS_NONE);
    assert_int_equal(f.out[0].rank, 2);
    teardown(&f);

    setup_node(&f, "", "Slice", 13, 3);
    const int64_t u[] = {-1, 10};
    set_input(&f, 0, ONYX_FLOAT, 2, u);
    set_ints(&f, 1, starts, 1, true);
    set_ints(&f, 2, ends, 1, true);
    infer_geometry(&f);
    const geom_slice *s = op_params_slice(&f.params);
    assert_non_null(s);
    assert_false(op_params_known(&f.params));
    assert_int_equal(s->len[0], -1);
    assert_int_equal(s->len[1], 10);
    teardown(&f);
}

/* Pad-18 over axes 0 and 2 (reflect): axis 0 padded 1 before, axis 2 cropped 2 before and padded
 * 3 after; axis 1 untouched. */
static void pad_with_axes_and_crops(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "", "Pad", 18, 4);
    const int64_t x[] = {2, 5, 4}, pads[] = {1, -2, 0, 3}, axes[] = {0, 2};
    set_input(&f, 0, ONYX_FLOAT, 3, x);
    set_ints(&f, 1, pads, 4, true);
    set_ints(&f, 3, axes, 2, true);
    add_string(&f, "mode", "reflect");
    infer_geometry(&f);
    const geom_pads *p = op_params_pads(&f.params);
    assert_non_null(p);
    assert_true(op_params_known(&f.params));
    assert_int_equal(p->mode, GEOM_PAD_REFLECT);
    const int64_t begin[] = {1, 0, -2}, end[] = {0, 0, 3}, out[] = {3, 5, 5};
    const int64_t at[] = {1, 0, 0}, crop[] = {0, 0, 2}, kept[] = {2, 5, 2};
    assert_ints(p->begin, begin, 3);
    assert_ints(p->end, end, 3);
    assert_ints(p->out, out, 3);
    assert_ints(p->at, at, 3);
    assert_ints(p->crop, crop, 3);
    assert_ints(p->kept, kept, 3);
    assert_ints(f.out[0].dims, out, 3);
    teardown(&f);
}

/* Pad-2's pads attribute and edge mode; an unknown dim leaves its axis unknown; pads computed by
 * the graph resolve nothing at plan time. */
static void pad_attributes_unknown_dims_and_runtime_pads(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "", "Pad", 2, 1);
    const int64_t x[] = {-1, 3}, pads[] = {0, 2, 0, 1};
    set_input(&f, 0, ONYX_FLOAT, 2, x);
    add_ints(&f, "pads", pads, 4);
    add_string(&f, "mode", "edge");
    infer_geometry(&f);
    const geom_pads *p = op_params_pads(&f.params);
    assert_non_null(p);
    assert_false(op_params_known(&f.params));
    assert_int_equal(p->mode, GEOM_PAD_EDGE);
    assert_int_equal(p->out[0], -1);
    assert_int_equal(p->out[1], 6);
    assert_int_equal(p->at[1], 2);
    assert_int_equal(p->kept[1], 3);
    teardown(&f);

    setup_node(&f, "", "Pad", 13, 2);
    const int64_t y[] = {2, 3};
    set_input(&f, 0, ONYX_FLOAT, 2, y);
    set_ints(&f, 1, pads, 4, false);
    infer_geometry(&f);
    assert_int_equal(f.params.kind, OP_PARAMS_NONE);
    teardown(&f);
}

/* DepthToSpace's two channel orders and SpaceToDepth: the 6-D view and permutation. */
static void depth_space_blocks(void **unused) {
    (void)unused;
    const char *modes[] = {"DCR", "CRD"};
    for (int m = 0; m < 2; m++) {
        fixture f;
        setup_node(&f, "", "DepthToSpace", 13, 1);
        const int64_t x[] = {1, 8, 2, 3};
        set_input(&f, 0, ONYX_FLOAT, 4, x);
        add_int(&f, "blocksize", 2);
        add_string(&f, "mode", modes[m]);
        infer_geometry(&f);
        const geom_blocks *b = op_params_blocks(&f.params);
        assert_non_null(b);
        assert_true(op_params_known(&f.params));
        const int64_t out[] = {1, 2, 4, 6};
        const int64_t dcr_view[] = {1, 2, 2, 2, 2, 3}, dcr_perm[] = {0, 3, 4, 1, 5, 2};
        const int64_t crd_view[] = {1, 2, 2, 2, 2, 3}, crd_perm[] = {0, 1, 4, 2, 5, 3};
        assert_ints(b->in, x, 4);
        assert_ints(b->out, out, 4);
        assert_ints(b->view, m ? crd_view : dcr_view, 6);
        assert_ints(b->perm, m ? crd_perm : dcr_perm, 6);
        teardown(&f);
    }
    fixture f;
    setup_node(&f, "", "SpaceToDepth", 13, 1);
    const int64_t x[] = {1, 2, 4, -1};
    set_input(&f, 0, ONYX_FLOAT, 4, x);
    add_int(&f, "blocksize", 2);
    infer_geometry(&f);
    const geom_blocks *b = op_params_blocks(&f.params);
    assert_non_null(b);
    assert_false(op_params_known(&f.params)); /* W unknown: each run resolves it */
    assert_int_equal(b->out[1], 8);
    assert_int_equal(b->out[2], 2);
    assert_int_equal(b->out[3], -1);
    teardown(&f);
}

/* ---------------------------------------------------------------- the view rule */

static geom_slice slice_of(int rank, const int64_t *in, const int64_t *start, const int64_t *len,
                           const int64_t *step) {
    geom_slice s;
    memset(&s, 0, sizeof s);
    s.rank = rank;
    for (int k = 0; k < rank; k++) {
        s.in[k] = in[k];
        s.start[k] = start[k];
        s.len[k] = len[k];
        s.step[k] = step[k];
    }
    return s;
}

/* A slice is one run of its input where the axes before the cut keep one element each and
 * those after it are whole; a step, a second cut or a reversed axis breaks it. */
static void slice_contiguous_runs(void **unused) {
    (void)unused;
    const int64_t in[] = {1, 6, 4, 5}, ones[] = {1, 1, 1, 1};
    int64_t at = -1;
    /* [0, 2:5, :, :]: rows 2..4 of 6, each 20 elements */
    geom_slice s = slice_of(4, in, (const int64_t[]){0, 2, 0, 0}, (const int64_t[]){1, 3, 4, 5},
                            ones);
    assert_true(geom_slice_contiguous(&s, &at));
    assert_int_equal(at, 40);
    /* [0, 3, 1, 1:4]: one row's part */
    s = slice_of(4, in, (const int64_t[]){0, 3, 1, 1}, (const int64_t[]){1, 1, 1, 3}, ones);
    assert_true(geom_slice_contiguous(&s, &at));
    assert_int_equal(at, 3 * 20 + 5 + 1);
    /* two cut axes: [0, 2:5, 1:3, :] */
    s = slice_of(4, in, (const int64_t[]){0, 2, 1, 0}, (const int64_t[]){1, 3, 2, 5}, ones);
    assert_false(geom_slice_contiguous(&s, &at));
    /* a step of 2 on the cut axis */
    s = slice_of(4, in, (const int64_t[]){0, 0, 0, 0}, (const int64_t[]){1, 3, 4, 5},
                 (const int64_t[]){1, 2, 1, 1});
    assert_false(geom_slice_contiguous(&s, &at));
    /* the last axis reversed whole */
    s = slice_of(4, in, (const int64_t[]){0, 0, 0, 4}, (const int64_t[]){1, 6, 4, 5},
                 (const int64_t[]){1, 1, 1, -1});
    assert_false(geom_slice_contiguous(&s, &at));
    /* empty, and unknown */
    s = slice_of(4, in, (const int64_t[]){0, 0, 0, 0}, (const int64_t[]){1, 0, 4, 5}, ones);
    assert_false(geom_slice_contiguous(&s, &at));
    s = slice_of(4, (const int64_t[]){1, -1, 4, 5}, (const int64_t[]){0, 0, 0, 0},
                 (const int64_t[]){1, -1, 4, 5}, ones);
    assert_false(geom_slice_contiguous(&s, &at));
}

/* ---------------------------------------------------------------- kernels read the params */

static void iota(onyx_value *v, int rank, const int64_t *dims) {
    assert_int_equal(value_alloc_tensor(v, ONYX_FLOAT, rank, dims), ONYX_OK);
    float *d = v->t.data;
    for (int64_t i = 0; i < v->t.numel; i++) d[i] = (float)i;
}

static void assert_floats(const onyx_value *v, const float *want, int n) {
    assert_int_equal(v->t.numel, n);
    const float *d = v->t.data;
    for (int i = 0; i < n; i++) assert_true(d[i] == want[i]);
}

/* Slice from the params alone (a Slice-13 node without its bound inputs): [3, 4] rows 2 and 0,
 * columns 3 and 1; the plan's slice for other dims, or none, is an error. */
static void slice_kernel_reads_the_params(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("", "Slice");
    assert_non_null(k);
    graph_node node = {.name = "s", .op_type = "Slice", .domain = "", .version = 13,
                       .n_inputs = 1, .n_outputs = 1};
    const int64_t xd[] = {3, 4}, yd[] = {2, 2};
    op_params p = {.kind = OP_PARAMS_SLICE};
    p.u.slice = slice_of(2, xd, (const int64_t[]){2, 3}, yd, (const int64_t[]){-2, -2});
    onyx_value x = {0}, y = {0};
    iota(&x, 2, xd);
    assert_int_equal(value_alloc_tensor(&y, ONYX_FLOAT, 2, yd), ONYX_OK);
    assert_int_equal(run_kernel(k, &node, 1, &x, &y, &p), ONYX_OK);
    assert_floats(&y, (const float[]){11, 9, 3, 1}, 4);
    assert_int_equal(run_kernel(k, &node, 1, &x, &y, NULL), ONYX_ERR_RUNTIME);
    p.u.slice.in[1] = 5;
    assert_int_equal(run_kernel(k, &node, 1, &x, &y, &p), ONYX_ERR_RUNTIME);
    value_clear(&x);
    value_clear(&y);
}

/* Pad from the params alone (a node without a mode attribute, so "constant" if it read it): the
 * params' reflect mode, [1, 3] padded 2 before and cropped 1 after along the last axis. */
static void pad_kernel_reads_the_params(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("", "Pad");
    assert_non_null(k);
    graph_node node = {.name = "p", .op_type = "Pad", .domain = "", .version = 18,
                       .n_inputs = 1, .n_outputs = 1};
    const int64_t xd[] = {1, 3}, yd[] = {1, 4};
    op_params p = {.kind = OP_PARAMS_PADS};
    geom_pads *g = &p.u.pads;
    g->rank = 2;
    g->mode = GEOM_PAD_REFLECT;
    const int64_t begin[] = {0, 2}, end[] = {0, -1}, at[] = {0, 2}, crop[] = {0, 0},
                  kept[] = {1, 2};
    for (int k2 = 0; k2 < 2; k2++) {
        g->in[k2] = xd[k2];
        g->out[k2] = yd[k2];
        g->begin[k2] = begin[k2];
        g->end[k2] = end[k2];
        g->at[k2] = at[k2];
        g->crop[k2] = crop[k2];
        g->kept[k2] = kept[k2];
    }
    onyx_value x = {0}, y = {0};
    iota(&x, 2, xd);
    assert_int_equal(value_alloc_tensor(&y, ONYX_FLOAT, 2, yd), ONYX_OK);
    assert_int_equal(run_kernel(k, &node, 1, &x, &y, &p), ONYX_OK);
    /* the kept [0, 1] at 2, reflected: 0 1 | 0 1 */
    assert_floats(&y, (const float[]){0, 1, 0, 1}, 4);
    assert_int_equal(run_kernel(k, &node, 1, &x, &y, NULL), ONYX_ERR_RUNTIME);
    value_clear(&x);
    value_clear(&y);
}

/* DepthToSpace from the params alone (its node has no blocksize): [1, 4, 1, 1] into [1, 1, 2, 2]
 * in DCR order reads the channels in order. */
static void depth_space_kernel_reads_the_params(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("", "DepthToSpace");
    assert_non_null(k);
    graph_node node = {.name = "d", .op_type = "DepthToSpace", .domain = "", .version = 13,
                       .n_inputs = 1, .n_outputs = 1};
    const int64_t xd[] = {1, 4, 1, 1}, yd[] = {1, 1, 2, 2};
    op_params p = {.kind = OP_PARAMS_BLOCKS};
    geom_blocks *b = &p.u.blocks;
    const int64_t view[] = {1, 2, 2, 1, 1, 1}, perm[] = {0, 3, 4, 1, 5, 2};
    memcpy(b->in, xd, sizeof b->in);
    memcpy(b->out, yd, sizeof b->out);
    memcpy(b->view, view, sizeof b->view);
    memcpy(b->perm, perm, sizeof b->perm);
    onyx_value x = {0}, y = {0};
    iota(&x, 4, xd);
    assert_int_equal(value_alloc_tensor(&y, ONYX_FLOAT, 4, yd), ONYX_OK);
    assert_int_equal(run_kernel(k, &node, 1, &x, &y, &p), ONYX_OK);
    assert_floats(&y, (const float[]){0, 1, 2, 3}, 4);
    assert_int_equal(run_kernel(k, &node, 1, &x, &y, NULL), ONYX_ERR_RUNTIME);
    value_clear(&x);
    value_clear(&y);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slice_from_constant_inputs),
        cmocka_unit_test(slice_from_attributes),
        cmocka_unit_test(slice_runtime_bounds_and_unknown_dims),
        cmocka_unit_test(pad_with_axes_and_crops),
        cmocka_unit_test(pad_attributes_unknown_dims_and_runtime_pads),
        cmocka_unit_test(depth_space_blocks),
        cmocka_unit_test(slice_contiguous_runs),
        cmocka_unit_test(slice_kernel_reads_the_params),
        cmocka_unit_test(pad_kernel_reads_the_params),
        cmocka_unit_test(depth_space_kernel_reads_the_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
