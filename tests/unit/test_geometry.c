/* Unit tests for geometry/: the shape rules that op inference, the CPU kernels and the CUDA
 * plugin share, on their edge cases (zero and unknown dims, negative axes, ceil mode's dropped
 * last window, SAME_LOWER's odd pad, broadcasting 1 against 0, refusals and their words). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "geometry/axes.h"
#include "geometry/broadcast.h"
#include "geometry/depth_space.h"
#include "geometry/matmul.h"
#include "geometry/pads.h"
#include "geometry/perm.h"
#include "geometry/slice.h"
#include "geometry/window.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void assert_dims(int rank, const int64_t *dims, int want_rank, const int64_t *want) {
    assert_int_equal(rank, want_rank);
    for (int i = 0; i < rank; i++) assert_int_equal(dims[i], want[i]);
}

/* ---------------------------------------------------------------- broadcast */

static void test_broadcast_dim(void **state) {
    (void)state;
    int64_t o;
    assert_true(geom_broadcast_dim(1, 0, &o));
    assert_int_equal(o, 0); /* 1 stretches to 0 */
    assert_true(geom_broadcast_dim(0, 1, &o));
    assert_int_equal(o, 0);
    assert_true(geom_broadcast_dim(0, 0, &o));
    assert_int_equal(o, 0);
    assert_false(geom_broadcast_dim(0, 5, &o)); /* 0 is no 1: it does not stretch */
    assert_false(geom_broadcast_dim(2, 3, &o));
    assert_true(geom_broadcast_dim(-1, 5, &o));
    assert_int_equal(o, 5); /* an unknown dim must be 1 or 5 */
    assert_true(geom_broadcast_dim(7, -1, &o));
    assert_int_equal(o, 7);
    assert_true(geom_broadcast_dim(-1, 1, &o));
    assert_int_equal(o, -1);
    assert_true(geom_broadcast_dim(-1, -1, &o));
    assert_int_equal(o, -1);
}

static void test_broadcast_shapes(void **state) {
    (void)state;
    geom_msg m;
    int r;
    int64_t d[GEOM_MAX_RANK];
    const int64_t a[] = {2, 1, 4}, b[] = {3, 1}, want[] = {2, 3, 4};
    assert_int_equal(geom_broadcast_shapes(N(a), a, N(b), b, &r, d, &m), ONYX_OK);
    assert_dims(r, d, 3, want);
    /* a scalar broadcasts to anything; the output may be an input's own array */
    int64_t s[3] = {5, 0, 2};
    assert_int_equal(geom_broadcast_shapes(0, NULL, 3, s, &r, s, &m), ONYX_OK);
    const int64_t want_s[] = {5, 0, 2};
    assert_dims(r, s, 3, want_s);
    const int64_t c[] = {2, 3}, e[] = {4, 3};
    assert_int_equal(geom_broadcast_shapes(2, c, 2, e, &r, d, &m), ONYX_ERR_SHAPE);
    assert_non_null(strstr(m.text, "do not broadcast"));
    assert_non_null(strstr(m.text, "[2,3]"));
}

static void test_broadcast_strides(void **state) {
    (void)state;
    geom_msg m;
    int64_t st[4];
    const int64_t in[] = {3, 1}, out[] = {2, 3, 5}, want[] = {0, 1, 0};
    assert_int_equal(geom_broadcast_strides(2, in, 3, out, st, &m), ONYX_OK);
    for (int i = 0; i < 3; i++) assert_int_equal(st[i], want[i]);
    const int64_t full[] = {2, 3, 5}, want_full[] = {15, 5, 1};
    assert_int_equal(geom_broadcast_strides(3, full, 3, out, st, &m), ONYX_OK);
    for (int i = 0; i < 3; i++) assert_int_equal(st[i], want_full[i]);
    /* one way only: the input's rank may not pass the output's, nor a dim stretch the output */
    assert_int_equal(geom_broadcast_strides(3, out, 2, in, st, &m), ONYX_ERR_SHAPE);
    assert_non_null(strstr(m.text, "higher rank"));
    const int64_t wide[] = {4, 5};
    assert_int_equal(geom_broadcast_strides(2, wide, 3, out, st, &m), ONYX_ERR_SHAPE);
    /* a 1 against a 0 of the output reads nothing: stride 0 */
    const int64_t one[] = {1}, zero[] = {0};
    assert_int_equal(geom_broadcast_strides(1, one, 1, zero, st, &m), ONYX_OK);
    assert_int_equal(st[0], 0);
}

/* ---------------------------------------------------------------- matmul */

static void test_matmul_dims(void **state) {
    (void)state;
    geom_msg m;
    int r;
    int64_t d[GEOM_MAX_RANK];
    const int64_t a[] = {5, 1, 2, 3}, b[] = {4, 3, 7}, want[] = {5, 4, 2, 7};
    assert_int_equal(geom_matmul_dims(4, a, 3, b, &r, d, &m), ONYX_OK);
    assert_dims(r, d, 4, want);
    /* 1-D operands: promoted, their dim dropped again */
    const int64_t v[] = {3}, mat[] = {3, 6}, want_v[] = {6};
    assert_int_equal(geom_matmul_dims(1, v, 2, mat, &r, d, &m), ONYX_OK);
    assert_dims(r, d, 1, want_v);
    assert_int_equal(geom_matmul_dims(1, v, 1, v, &r, d, &m), ONYX_OK);
    assert_int_equal(r, 0);
    /* unknown dims stay unknown, and agree with any inner dim */
    const int64_t ua[] = {-1, 2, -1}, ub[] = {4, 5}, want_u[] = {-1, 2, 5};
    assert_int_equal(geom_matmul_dims(3, ua, 2, ub, &r, d, &m), ONYX_OK);
    assert_dims(r, d, 3, want_u);
    /* batch 1 against 0 */
    const int64_t za[] = {1, 2, 3}, zb[] = {0, 3, 4}, want_z[] = {0, 2, 4};
    assert_int_equal(geom_matmul_dims(3, za, 3, zb, &r, d, &m), ONYX_OK);
    assert_dims(r, d, 3, want_z);
    /* refusals */
    assert_int_equal(geom_matmul_dims(0, NULL, 2, mat, &r, d, &m), ONYX_ERR_SHAPE);
    assert_non_null(strstr(m.text, "operand A is a scalar"));
    const int64_t bad[] = {4, 6};
    assert_int_equal(geom_matmul_dims(2, mat, 2, bad, &r, d, &m), ONYX_ERR_SHAPE);
    assert_non_null(strstr(m.text, "inner dims 6 and 4 differ"));
    const int64_t ba[] = {2, 2, 3}, bb[] = {3, 3, 4};
    assert_int_equal(geom_matmul_dims(3, ba, 3, bb, &r, d, &m), ONYX_ERR_SHAPE);
    assert_non_null(strstr(m.text, "do not broadcast"));
}

static void test_matmul_plan(void **state) {
    (void)state;
    geom_msg m;
    geom_matmul s;
    const int64_t a[] = {2, 1, 4, 3}, b[] = {5, 3, 6};
    assert_int_equal(geom_matmul_plan(4, a, 3, b, &s, &m), ONYX_OK);
    assert_int_equal(s.m, 4);
    assert_int_equal(s.k, 3);
    assert_int_equal(s.n, 6);
    assert_int_equal(s.nb, 2);
    assert_int_equal(s.nbatch, 10);
    assert_int_equal(s.bdim[0], 2);
    assert_int_equal(s.bdim[1], 5);
    /* A repeats along the second batch dim, B along the first */
    assert_int_equal(s.astr[0], 12);
    assert_int_equal(s.astr[1], 0);
    assert_int_equal(s.bstr[0], 0);
    assert_int_equal(s.bstr[1], 18);
    assert_int_equal(s.a_batches, 2);
    assert_int_equal(s.b_batches, 5);
    /* a zero batch against a 1 */
    const int64_t za[] = {1, 2, 2}, zb[] = {0, 2, 2};
    assert_int_equal(geom_matmul_plan(3, za, 3, zb, &s, &m), ONYX_OK);
    assert_int_equal(s.nbatch, 0);
    const int64_t v[] = {3}, bad[] = {4, 2};
    assert_int_equal(geom_matmul_plan(1, v, 2, bad, &s, &m), ONYX_ERR_SHAPE);
    assert_non_null(strstr(m.text, "inner dims"));
}

/* ---------------------------------------------------------------- windows */

static void test_auto_pad_parse(void **state) {
    (void)state;
    geom_auto_pad ap;
    assert_true(geom_auto_pad_parse("", &ap));
    assert_int_equal(ap, GEOM_PAD_NOTSET);
    assert_true(geom_auto_pad_parse("SAME_LOWER", &ap));
    assert_int_equal(ap, GEOM_PAD_SAME_LOWER);
    assert_true(geom_auto_pad_parse("VALID", &ap));
    assert_int_equal(ap, GEOM_PAD_VALID);
    assert_false(geom_auto_pad_parse("same_upper", &ap));
}

static void test_split_pad(void **state) {
    (void)state;
    int64_t b, e;
    geom_split_pad(3, true, &b, &e); /* SAME_UPPER: the odd pixel at the end */
    assert_int_equal(b, 1);
    assert_int_equal(e, 2);
    geom_split_pad(3, false, &b, &e); /* SAME_LOWER: at the beginning */
    assert_int_equal(b, 2);
    assert_int_equal(e, 1);
    geom_split_pad(-3, true, &b, &e); /* a transposed conv's crop: floor division */
    assert_int_equal(b, -2);
    assert_int_equal(e, -1);
}

static void test_window_out(void **state) {
    (void)state;
    geom_msg m;
    int64_t pb = 0, pe = 0, o;
    /* explicit pads: floor((5 + 1 + 1 - 3) / 2) + 1 = 3 */
    pb = pe = 1;
    assert_int_equal(geom_window_out(5, 3, 2, 1, GEOM_PAD_NOTSET, false, &pb, &pe, &o, &m),
                     ONYX_OK);
    assert_int_equal(o, 3);
    /* ceil mode rounds up: in 6, k 3, s 2: floor gives 2, ceil 3 */
    pb = pe = 0;
    assert_int_equal(geom_window_out(6, 3, 2, 1, GEOM_PAD_NOTSET, true, &pb, &pe, &o, &m),
                     ONYX_OK);
    assert_int_equal(o, 3);
    /* ...but drops a last window that would start past the input and its left padding: in 2,
     * k 1, s 3, pad_end 1: span 2, rounded up 2 windows, the second at 3 >= 2: dropped */
    pb = 0;
    pe = 1;
    assert_int_equal(geom_window_out(2, 1, 3, 1, GEOM_PAD_NOTSET, true, &pb, &pe, &o, &m),
                     ONYX_OK);
    assert_int_equal(o, 1);
    /* ceil mode counts only with explicit pads */
    assert_int_equal(geom_window_out(6, 3, 2, 1, GEOM_PAD_VALID, true, &pb, &pe, &o, &m),
                     ONYX_OK);
    assert_int_equal(o, 2);
    assert_int_equal(pb, 0);
    assert_int_equal(pe, 0);
    /* SAME_LOWER with an odd total: in 5, k 4, s 1: out 5, total 3, two at the beginning */
    assert_int_equal(geom_window_out(5, 4, 1, 1, GEOM_PAD_SAME_LOWER, false, &pb, &pe, &o, &m),
                     ONYX_OK);
    assert_int_equal(o, 5);
    assert_int_equal(pb, 2);
    assert_int_equal(pe, 1);
    assert_int_equal(geom_window_out(5, 4, 1, 1, GEOM_PAD_SAME_UPPER, false, &pb, &pe, &o, &m),
                     ONYX_OK);
    assert_int_equal(pb, 1);
    assert_int_equal(pe, 2);
    /* SAME over an empty dim: no window, no pads */
    assert_int_equal(geom_window_out(0, 3, 1, 1, GEOM_PAD_SAME_UPPER, false, &pb, &pe, &o, &m),
                     ONYX_OK);
    assert_int_equal(o, 0);
    /* dilation: extent (3-1)*2+1 = 5 */
    pb = pe = 0;
    assert_int_equal(geom_window_out(9, 3, 1, 2, GEOM_PAD_NOTSET, false, &pb, &pe, &o, &m),
                     ONYX_OK);
    assert_int_equal(o, 5);
    /* unknown input */
    assert_int_equal(geom_window_out(-1, 3, 1, 1, GEOM_PAD_NOTSET, false, &pb, &pe, &o, &m),
                     ONYX_OK);
    assert_int_equal(o, -1);
    /* a zero dim without padding holds no window */
    pb = pe = 0;
    assert_int_equal(geom_window_out(0, 1, 1, 1, GEOM_PAD_NOTSET, false, &pb, &pe, &o, &m),
                     ONYX_ERR_SHAPE);
    assert_non_null(strstr(m.text, "smaller than the dilated kernel"));
}

static void test_transposed_window_out(void **state) {
    (void)state;
    geom_msg m;
    int64_t pb = 0, pe = 0, o;
    /* natural 2*(3-1) + 0 + 3 = 7, less pads 1+1 */
    pb = pe = 1;
    assert_int_equal(geom_transposed_window_out(3, 3, 2, 1, 0, GEOM_PAD_NOTSET, -1, &pb, &pe, &o,
                                                &m),
                     ONYX_OK);
    assert_int_equal(o, 5);
    /* SAME_UPPER: in * stride = 6, natural 7 - 6 = 1 split to the end */
    assert_int_equal(geom_transposed_window_out(3, 3, 2, 1, 0, GEOM_PAD_SAME_UPPER, -1, &pb, &pe,
                                                &o, &m),
                     ONYX_OK);
    assert_int_equal(o, 6);
    assert_int_equal(pb, 0);
    assert_int_equal(pe, 1);
    /* an output_shape past the natural size: negative pads */
    pb = pe = 0;
    assert_int_equal(geom_transposed_window_out(3, 3, 2, 1, 0, GEOM_PAD_NOTSET, 10, &pb, &pe, &o,
                                                &m),
                     ONYX_OK);
    assert_int_equal(o, 10);
    assert_int_equal(pb, -1);
    assert_int_equal(pe, -2);
    /* pads that eat the output */
    pb = pe = 4;
    assert_int_equal(geom_transposed_window_out(3, 3, 2, 1, 0, GEOM_PAD_NOTSET, -1, &pb, &pe, &o,
                                                &m),
                     ONYX_ERR_SHAPE);
    assert_non_null(strstr(m.text, "expected >= 1"));
    /* an empty input gives an empty output */
    pb = pe = 4;
    assert_int_equal(geom_transposed_window_out(0, 3, 2, 1, 0, GEOM_PAD_NOTSET, -1, &pb, &pe, &o,
                                                &m),
                     ONYX_OK);
    assert_int_equal(o, 0);
}

/* ---------------------------------------------------------------- axes */

static void test_axes(void **state) {
    (void)state;
    geom_msg m;
    int a;
    assert_int_equal(geom_axis(-1, 4, "axis", &a, &m), ONYX_OK);
    assert_int_equal(a, 3);
    assert_int_equal(geom_axis(-4, 4, "axis", &a, &m), ONYX_OK);
    assert_int_equal(a, 0);
    assert_int_equal(geom_axis(4, 4, "axis", &a, &m), ONYX_ERR_SHAPE);
    assert_non_null(strstr(m.text, "axis 4 is out of range for rank 4"));
    assert_int_equal(geom_axis(0, 0, "axis", &a, &m), ONYX_ERR_SHAPE); /* a scalar has none */
    int out[4];
    const int64_t ax[] = {-1, 0}, rep[] = {1, -3}, far[] = {5};
    assert_int_equal(geom_axes(ax, 2, 3, "axes", out, &m), ONYX_OK);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 0);
    assert_int_equal(geom_axes(rep, 2, 4, "axes", out, &m), ONYX_ERR_INVALID_MODEL);
    assert_non_null(strstr(m.text, "repeats axis 1"));
    assert_int_equal(geom_axes(far, 1, 3, "axes", out, &m), ONYX_ERR_SHAPE);
    const int64_t many[] = {0, 1, 2};
    assert_int_equal(geom_axes(many, 3, 2, "axes", out, &m), ONYX_ERR_INVALID_MODEL);
}

static void test_reduce_axes(void **state) {
    (void)state;
    geom_msg m;
    bool mask[4];
    const int64_t ax[] = {-1, 3, 0};
    assert_int_equal(geom_reduce_axes(ax, 3, false, 4, mask, &m), ONYX_OK); /* repeats allowed */
    assert_true(mask[0] && !mask[1] && !mask[2] && mask[3]);
    assert_int_equal(geom_reduce_axes(NULL, 0, false, 4, mask, &m), ONYX_OK);
    assert_true(mask[0] && mask[1] && mask[2] && mask[3]);
    assert_int_equal(geom_reduce_axes(NULL, 0, true, 4, mask, &m), ONYX_OK);
    assert_true(!mask[0] && !mask[1] && !mask[2] && !mask[3]);
    const int64_t far[] = {-5};
    mask[0] = true;
    assert_int_equal(geom_reduce_axes(far, 1, false, 4, mask, &m), ONYX_ERR_SHAPE);
    assert_true(mask[0]); /* untouched on failure */
}

/* ---------------------------------------------------------------- slices, pads */

static void test_slice_axis(void **state) {
    (void)state;
    int64_t first, len;
    geom_slice_axis(1, 100, 2, 10, &first, &len); /* end clamped to 10: 1,3,5,7,9 */
    assert_int_equal(first, 1);
    assert_int_equal(len, 5);
    geom_slice_axis(-3, INT64_MAX, 1, 10, &first, &len);
    assert_int_equal(first, 7);
    assert_int_equal(len, 3);
    geom_slice_axis(-1, INT64_MIN, -1, 4, &first, &len); /* the whole axis reversed */
    assert_int_equal(first, 3);
    assert_int_equal(len, 4);
    geom_slice_axis(8, 2, -3, 10, &first, &len); /* 8, 5 */
    assert_int_equal(first, 8);
    assert_int_equal(len, 2);
    geom_slice_axis(0, 5, INT64_MIN, 10, &first, &len); /* a negative step going up: empty */
    assert_int_equal(len, 0);
    assert_int_equal(first, 0);
    geom_slice_axis(9, 0, INT64_MIN, 10, &first, &len); /* one element, no overflow */
    assert_int_equal(first, 9);
    assert_int_equal(len, 1);
    geom_slice_axis(0, 3, -1, 0, &first, &len); /* an empty axis */
    assert_int_equal(len, 0);
    geom_slice_axis(0, 3, 1, 0, &first, &len);
    assert_int_equal(len, 0);
}

static void test_pads(void **state) {
    (void)state;
    geom_msg m;
    int64_t b[3], e[3];
    /* pads for axes 2 and 0 (the latter as -3): begins 1, -2, ends 3, 4 */
    const int64_t p[] = {1, -2, 3, 4}, ax[] = {2, -3};
    assert_int_equal(geom_pads_place(p, 4, ax, 2, 3, b, e, &m), ONYX_OK);
    assert_int_equal(b[0], -2);
    assert_int_equal(e[0], 4);
    assert_int_equal(b[1], 0);
    assert_int_equal(e[1], 0);
    assert_int_equal(b[2], 1);
    assert_int_equal(e[2], 3);
    /* no axes: every axis in order */
    const int64_t all[] = {1, 2, 3, 4};
    assert_int_equal(geom_pads_place(all, 4, NULL, 0, 2, b, e, &m), ONYX_OK);
    assert_int_equal(b[1], 2);
    assert_int_equal(e[0], 3);
    /* the count is checked before the axes */
    const int64_t dup[] = {0, 0};
    assert_int_equal(geom_pads_place(p, 3, dup, 2, 3, b, e, &m), ONYX_ERR_INVALID_MODEL);
    assert_non_null(strstr(m.text, "2 per axis"));
    assert_int_equal(geom_pads_place(p, 4, dup, 2, 3, b, e, &m), ONYX_ERR_INVALID_MODEL);
    assert_non_null(strstr(m.text, "repeats axis 0"));
    assert_int_equal(geom_pads_place(all, 4, NULL, 0, 3, b, e, &m), ONYX_ERR_INVALID_MODEL);
    int64_t o;
    assert_int_equal(geom_pad_dim(4, -1, 2, &o, &m), ONYX_OK);
    assert_int_equal(o, 5);
    assert_int_equal(geom_pad_dim(0, 0, 0, &o, &m), ONYX_OK);
    assert_int_equal(o, 0);
    assert_int_equal(geom_pad_dim(4, -5, 2, &o, &m), ONYX_ERR_SHAPE);
    assert_non_null(strstr(m.text, "negative size"));
    assert_int_equal(geom_pad_dim(4, INT64_MAX, 0, &o, &m), ONYX_ERR_SHAPE);
    int64_t at, crop, kept;
    geom_pad_interior(6, -2, 3, &at, &crop, &kept);
    assert_int_equal(at, 0);
    assert_int_equal(crop, 2);
    assert_int_equal(kept, 4);
    geom_pad_interior(6, 2, -6, &at, &crop, &kept);
    assert_int_equal(at, 2);
    assert_int_equal(kept, 0);
}

/* ---------------------------------------------------------------- depth/space, perms */

static void test_depth_space(void **state) {
    (void)state;
    geom_msg m;
    int64_t view[6], perm[6], out[4];
    const int64_t x[] = {1, 8, 2, 3};
    assert_int_equal(geom_depth_space(true, false, 2, x, view, perm, out, &m), ONYX_OK);
    const int64_t want_out[] = {1, 2, 4, 6}, want_view[] = {1, 2, 2, 2, 2, 3},
                  want_perm[] = {0, 3, 4, 1, 5, 2};
    for (int i = 0; i < 4; i++) assert_int_equal(out[i], want_out[i]);
    for (int i = 0; i < 6; i++) assert_int_equal(view[i], want_view[i]);
    for (int i = 0; i < 6; i++) assert_int_equal(perm[i], want_perm[i]);
    assert_int_equal(geom_depth_space(true, true, 2, x, view, perm, out, &m), ONYX_OK);
    assert_int_equal(perm[1], 1); /* CRD keeps the channel first */
    /* to depth: H and W must be multiples of the block */
    const int64_t y[] = {1, 3, 4, 6};
    assert_int_equal(geom_depth_space(false, false, 2, y, view, perm, out, &m), ONYX_OK);
    const int64_t want_y[] = {1, 12, 2, 3};
    for (int i = 0; i < 4; i++) assert_int_equal(out[i], want_y[i]);
    assert_int_equal(geom_depth_space(false, false, 4, y, view, perm, out, &m), ONYX_ERR_SHAPE);
    const int64_t c[] = {1, 6, 2, 2};
    assert_int_equal(geom_depth_space(true, false, 2, c, view, perm, out, &m), ONYX_ERR_SHAPE);
    assert_int_equal(geom_depth_space(true, false, 0, c, view, perm, out, &m),
                     ONYX_ERR_INVALID_MODEL);
    /* unknown dims give unknown output dims */
    const int64_t u[] = {-1, 8, -1, 3};
    assert_int_equal(geom_depth_space(true, false, 2, u, view, perm, out, &m), ONYX_OK);
    assert_int_equal(out[0], -1);
    assert_int_equal(out[2], -1);
    assert_int_equal(out[3], 6);
}

static void test_transpose_perm(void **state) {
    (void)state;
    geom_msg m;
    int64_t perm[4];
    assert_int_equal(geom_transpose_perm(false, NULL, 0, 3, perm, &m), ONYX_OK);
    assert_int_equal(perm[0], 2);
    assert_int_equal(perm[2], 0);
    const int64_t p[] = {0, 2, 1};
    assert_int_equal(geom_transpose_perm(true, p, 3, 3, perm, &m), ONYX_OK);
    assert_int_equal(perm[1], 2);
    /* present but of the wrong length (an empty list too), repeated, out of range */
    assert_int_equal(geom_transpose_perm(true, NULL, 0, 3, perm, &m), ONYX_ERR_SHAPE);
    assert_int_equal(geom_transpose_perm(true, p, 3, 4, perm, &m), ONYX_ERR_SHAPE);
    const int64_t rep[] = {0, 0, 1}, far[] = {0, 3, 1};
    assert_int_equal(geom_transpose_perm(true, rep, 3, 3, perm, &m), ONYX_ERR_INVALID_MODEL);
    assert_int_equal(geom_transpose_perm(true, far, 3, 3, perm, &m), ONYX_ERR_INVALID_MODEL);
    assert_non_null(strstr(m.text, "perm[1] = 3"));
}

static void test_perm_moves_channels(void **state) {
    (void)state;
    const int64_t last4[] = {0, 2, 3, 1}, first4[] = {0, 3, 1, 2}, other[] = {0, 3, 2, 1},
                  two[] = {0, 1};
    assert_true(geom_perm_moves_channels(last4, 4, true));
    assert_false(geom_perm_moves_channels(last4, 4, false));
    assert_true(geom_perm_moves_channels(first4, 4, false));
    assert_false(geom_perm_moves_channels(other, 4, true));
    assert_false(geom_perm_moves_channels(two, 2, true)); /* rank 3 or more */
}

/* The rules' rank bound is the core's. */
static void test_max_rank(void **state) {
    (void)state;
    assert_int_equal(GEOM_MAX_RANK, ONYX_MAX_RANK);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broadcast_dim),
        cmocka_unit_test(test_broadcast_shapes),
        cmocka_unit_test(test_broadcast_strides),
        cmocka_unit_test(test_matmul_dims),
        cmocka_unit_test(test_matmul_plan),
        cmocka_unit_test(test_auto_pad_parse),
        cmocka_unit_test(test_split_pad),
        cmocka_unit_test(test_window_out),
        cmocka_unit_test(test_transposed_window_out),
        cmocka_unit_test(test_axes),
        cmocka_unit_test(test_reduce_axes),
        cmocka_unit_test(test_slice_axis),
        cmocka_unit_test(test_pads),
        cmocka_unit_test(test_depth_space),
        cmocka_unit_test(test_transpose_perm),
        cmocka_unit_test(test_perm_moves_channels),
        cmocka_unit_test(test_max_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
