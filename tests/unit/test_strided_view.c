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
        int64_t off = v->offset;
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

static void test_regroup_packed_heads(void **state) {
    (void)state;
    /* torch's nn.MultiheadAttention export of q, k and v from one projection Y [B, S, 3E]:
     * Transpose (1,0,2) -> [S, B, 3E] -> [S, B, 3, E] -> [1, S, B, 3, E] -(3,1,2,0,4)-> [3, S, B,
     * 1, E] -> [3, S, B, E] -> Gather(0, i) [S, B, E] -> [S, B*H, D] -(1,0,2)-> [B*H, S, D] ->
     * [B, H, S, D] */
    enum { B = 2, S = 3, H = 2, D = 2, E = H * D, N = B * S * 3 * E };
    int src[N], t1[N], t2[N], t3[N / 3], got[N / 3];
    iota(src, N);
    const int64_t y[] = {B, S, 3 * E}, p1[] = {1, 0, 2}, s5[] = {1, S, B, 3, E},
                  p2[] = {3, 1, 2, 0, 4}, s4[] = {S, B, 3, E}, q4[] = {3, S, B, E},
                  heads[] = {S, B * H, D}, p3[] = {1, 0, 2}, folded[] = {B * H, S, D},
                  q[] = {B, H, S, D};
    transpose_copy(3, y, p1, src, t1);
    transpose_copy(5, s5, p2, t1, t2);
    for (int i = 0; i < 3; i++) {
        transpose_copy(3, heads, p3, t2 + i * S * B * E, t3);
        strided_view v, r;
        view_dense(&v, 3, y);
        view_transpose(&v, p1, &v);
        assert_true(view_reshape(&v, 4, s4, &v));
        assert_true(view_reshape(&v, 5, s5, &v));
        view_transpose(&v, p2, &v);
        assert_true(view_reshape(&v, 4, q4, &v));
        view_select(&v, 0, i, false, &v);
        assert_int_equal(v.offset, i * E);
        assert_false(view_reshape(&v, 3, heads, &r)); /* B and H are 3E and D apart */
        assert_true(view_regroup(&v, 3, heads, p3, 4, q, &r));
        read_view(&r, src, got);
        assert_memory_equal(got, t3, sizeof t3);
        /* the merged dims kept merged: no strides give [B*H, S, D] */
        assert_false(view_regroup(&v, 3, heads, p3, 3, folded, &r));
    }
}

static void test_regroup_dynamo_k(void **state) {
    (void)state;
    /* test_heads_merge_and_split's K with two batches: the merge view_reshape refuses */
    enum { B = 2, S = 5, H = 3, D = 4, N = B * S * H * D };
    int src[N], t1[N], t2[N], got[N];
    iota(src, N);
    const int64_t d4[] = {B, S, H, D}, p1[] = {0, 2, 1, 3}, d3[] = {B * H, S, D},
                  p2[] = {0, 2, 1}, dk[] = {B, H, D, S};
    transpose_copy(4, d4, p1, src, t1);
    transpose_copy(3, d3, p2, t1, t2);
    strided_view v, r;
    view_dense(&v, 4, d4);
    view_transpose(&v, p1, &v);
    assert_false(view_reshape(&v, 3, d3, &r));
    assert_true(view_regroup(&v, 3, d3, p2, 4, dk, &r));
    read_view(&r, src, got);
    assert_memory_equal(got, t2, sizeof t2);
    /* sizes whose boundaries do not nest: [6, 4] -(1,0)-> [4, 6] as [3, 8] */
    const int64_t a[] = {6, 4}, swap[] = {1, 0}, c[] = {3, 8};
    view_dense(&v, 2, a);
    assert_false(view_regroup(&v, 2, a, swap, 2, c, &r));
}

static void test_select_keeps_axis(void **state) {
    (void)state;
    int src[24], got[8];
    iota(src, 24);
    const int64_t dims[] = {2, 3, 4};
    strided_view v, r;
    view_dense(&v, 3, dims);
    view_select(&v, 1, 2, true, &r); /* [2, 1, 4] at index 2 of axis 1 */
    assert_int_equal(r.rank, 3);
    assert_int_equal(r.dims[1], 1);
    read_view(&r, src, got);
    const int want[] = {8, 9, 10, 11, 20, 21, 22, 23};
    assert_memory_equal(got, want, sizeof want);
    view_select(&v, 2, 3, false, &r); /* [2, 3], every fourth element from 3 */
    assert_int_equal(r.rank, 2);
    read_view(&r, src, got);
    const int last[] = {3, 7, 11, 15, 19, 23};
    assert_memory_equal(got, last, sizeof last);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose_then_split),
        cmocka_unit_test(test_heads_merge_and_split),
        cmocka_unit_test(test_refused_and_unit_dims),
        cmocka_unit_test(test_untranspose),
        cmocka_unit_test(test_regroup_packed_heads),
        cmocka_unit_test(test_regroup_dynamo_k),
        cmocka_unit_test(test_select_keeps_axis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
