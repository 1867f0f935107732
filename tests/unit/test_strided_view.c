/* Unit tests for core/strided_view.c: every view it builds must read, element by element, what
 * the same Transposes and Reshapes would have copied out; views it cannot build are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/strided_view.h"

enum { MAX_ELEMS = 256 };

/* Reads v over src into out, in v's row-major order. */
static void read_view(const strided_view *v, const int *src, int *out) {
    int64_t n = 1, idx[ONYX_MAX_RANK] = {0};
    for (int i = 0; i < v->rank; i++) n *= v->dims[i];
    for (int64_t e = 0; e < n; e++) {
        int64_t off = 0;
        for (int i = 0; i < v->rank; i++) off += idx[i] * v->strides[i];
        out[e] = src[off];
        for (int i = v->rank - 1; i >= 0 && ++idx[i] == v->dims[i]; i--) idx[i] = 0;
    }
}

/* Copies a dense tensor transposed by perm (what a Transpose node makes). */
static void transpose_copy(int rank, const int64_t *dims, const int64_t *perm, const int *src,
                           int *out) {
    strided_view d, t;
    view_dense(&d, rank, dims);
    view_transpose(&d, perm, &t);
    read_view(&t, src, out);
}

static void iota(int *a, int n) {
    for (int i = 0; i < n; i++) a[i] = i;
}

static void test_transpose_then_split(void **state) {
    (void)state;
    int src[24], want[24], got[24];
    iota(src, 24);
    const int64_t dims[] = {2, 3, 4}, perm[] = {0, 2, 1}, split[] = {2, 2, 2, 3};
    transpose_copy(3, dims, perm, src, want); /* a Reshape keeps the flat order */
    strided_view v, r;
    view_dense(&v, 3, dims);
    view_transpose(&v, perm, &v);
    assert_true(view_reshape(&v, 4, split, &r));
    read_view(&r, src, got);
    assert_memory_equal(got, want, sizeof want);
}

static void test_heads_merge_and_split(void **state) {
    (void)state;
    /* the dynamo exporter's K: [B,S,H,D] -(0,2,1,3)-> [B,H,S,D] -> [B*H,S,D] -(0,2,1)-> [B*H,D,S]
     * -> [B,H,D,S]: with B = 1 the heads merge, with B = 2 they cannot */
    for (int64_t b = 1; b <= 2; b++) {
        int64_t S = 5, H = 3, D = 4, n = b * S * H * D;
        int src[MAX_ELEMS], t1[MAX_ELEMS], t2[MAX_ELEMS], got[MAX_ELEMS];
        iota(src, (int)n);
        const int64_t d4[] = {b, S, H, D}, p1[] = {0, 2, 1, 3}, d3[] = {b * H, S, D}, p2[] = {0, 2, 1},
                      dk[] = {b, H, D, S};
        transpose_copy(4, d4, p1, src, t1);
        transpose_copy(3, d3, p2, t1, t2);
        strided_view v;
        view_dense(&v, 4, d4);
        view_transpose(&v, p1, &v);
        bool merged = view_reshape(&v, 3, d3, &v);
        assert_int_equal(merged, b == 1);
        if (!merged) continue;
        view_transpose(&v, p2, &v);
        assert_true(view_reshape(&v, 4, dk, &v));
        read_view(&v, src, got);
        assert_memory_equal(got, t2, (size_t)n * sizeof(int));
    }
}

static void test_refused_and_unit_dims(void **state) {
    (void)state;
    int src[20], want[20], got[20];
    iota(src, 20);
    strided_view v, r;
    const int64_t dims[] = {3, 2, 4}, perm[] = {1, 0, 2}, flat[] = {2, 12}, bad[] = {6, 4};
    view_dense(&v, 3, dims);
    view_transpose(&v, perm, &v);             /* [2,3,4], strides (4,8,1) */
    assert_false(view_reshape(&v, 2, bad, &r)); /* 2 and 3 are not contiguous */
    assert_false(view_reshape(&v, 2, flat, &r));
    const int64_t u[] = {1, 5, 1, 4}, up[] = {2, 1, 0, 3}, to[] = {5, 4}, wrong[] = {4, 4};
    transpose_copy(4, u, up, src, want);
    view_dense(&v, 4, u);
    view_transpose(&v, up, &v); /* only unit dims move */
    assert_true(view_reshape(&v, 2, to, &r));
    read_view(&r, src, got);
    assert_memory_equal(got, want, sizeof want);
    assert_false(view_reshape(&v, 2, wrong, &r)); /* another element count */
}

static void test_untranspose(void **state) {
    (void)state;
    /* a result written through Transpose(Y, perm) into a dense tensor: Y's view */
    int src[24], y[24], back[24];
    iota(src, 24);
    const int64_t ydims[] = {2, 3, 4}, perm[] = {2, 0, 1}, tdims[] = {4, 2, 3};
    transpose_copy(3, ydims, perm, src, y); /* T = Transpose(Y): T dense holds y */
    strided_view t, v;
    view_dense(&t, 3, tdims);
    view_untranspose(&t, perm, &v);
    assert_int_equal(v.dims[0], 2);
    assert_int_equal(v.dims[1], 3);
    assert_int_equal(v.dims[2], 4);
    read_view(&v, y, back); /* reading Y's elements where T keeps them gives Y again */
    assert_memory_equal(back, src, sizeof src);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose_then_split),
        cmocka_unit_test(test_heads_merge_and_split),
        cmocka_unit_test(test_refused_and_unit_dims),
        cmocka_unit_test(test_untranspose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
