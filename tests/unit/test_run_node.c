/* onyx_run_node on single nodes across the op families (arith with broadcast, casts, reductions,
 * gathers, TopK, Einsum, Slice, Where on strings, Det), checking every output value, and the
 * error a bad index gives. Nodes are built with protobuf-c and serialized as a caller would. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "onyx.h"
#include "tests/unit/proto_alloc.h"

/* ---- a NodeProto with tracked storage */

static Onnx__NodeProto *node_new(const char *op, const char *name, int n_in, int n_out) {
    Onnx__NodeProto *n = zalloc(sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = (char *)op;
    n->name = (char *)name;
    static const char *in_names[] = {"i0", "i1", "i2", "i3", "i4"};
    static const char *out_names[] = {"o0", "o1", "o2"};
    for (int i = 0; i < n_in; i++) PUSH(n->input, n->n_input, (char *)in_names[i]);
    for (int i = 0; i < n_out; i++) PUSH(n->output, n->n_output, (char *)out_names[i]);
    return n;
}

static Onnx__AttributeProto *attr_new(Onnx__NodeProto *n, const char *name,
                                      Onnx__AttributeProto__AttributeType type) {
    Onnx__AttributeProto *a = zalloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = type;
    PUSH(n->attribute, n->n_attribute, a);
    return a;
}

static void attr_i(Onnx__NodeProto *n, const char *name, int64_t v) {
    Onnx__AttributeProto *a = attr_new(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}

static void attr_s(Onnx__NodeProto *n, const char *name, const char *v) {
    Onnx__AttributeProto *a = attr_new(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.data = (uint8_t *)v;
    a->s.len = strlen(v);
}

static onyx_value *tensor(onyx_dtype dt, int rank, const int64_t *dims, const void *data,
                          size_t nbytes) {
    onyx_value *v = NULL;
    assert_int_equal(onyx_value_new_tensor(dt, (size_t)rank, dims, data, nbytes, &v), ONYX_OK);
    return v;
}

/* Runs n on the inputs (freed here); returns the status, outputs in *out. */
static onyx_status run(Onnx__NodeProto *n, int64_t opset, size_t n_in, onyx_value **in,
                       size_t *n_out, onyx_value ***out) {
    size_t size = onnx__node_proto__get_packed_size(n);
    uint8_t *buf = zalloc(size);
    onnx__node_proto__pack(n, buf);
    *n_out = 0;
    *out = NULL;
    onyx_status st = onyx_run_node(buf, size, opset, "CPU", n_in, (const onyx_value *const *)in, 0,
                                   NULL, n_out, out);
    for (size_t i = 0; i < n_in; i++) onyx_value_free(in[i]);
    return st;
}

static void run_ok(Onnx__NodeProto *n, int64_t opset, size_t n_in, onyx_value **in, size_t want_out,
                   onyx_value ***out) {
    size_t n_out;
    onyx_status st = run(n, opset, n_in, in, &n_out, out);
    if (st != ONYX_OK) fail_msg("%s: %s", n->op_type, onyx_last_error());
    assert_int_equal(n_out, want_out);
}

static void check_shape(const onyx_value *v, onyx_dtype dt, size_t rank, const int64_t *dims) {
    assert_int_equal(onyx_tensor_dtype(v), dt);
    assert_int_equal(onyx_tensor_rank(v), rank);
    for (size_t i = 0; i < rank; i++) assert_int_equal(onyx_tensor_dims(v)[i], dims[i]);
}

/* ---- the cases */

static void add_int32_broadcast(void **state) {
    (void)state;
    const int64_t da[2] = {2, 3}, db[1] = {3};
    const int32_t a[6] = {1, 2, 3, INT32_MAX, -5, 0}, b[3] = {10, -20, 30};
    onyx_value *in[2] = {tensor(ONYX_INT32, 2, da, a, sizeof a),
                         tensor(ONYX_INT32, 1, db, b, sizeof b)};
    onyx_value **out;
    run_ok(node_new("Add", "add", 2, 1), 14, 2, in, 1, &out);
    check_shape(out[0], ONYX_INT32, 2, da);
    const int32_t *c = onyx_tensor_data(out[0]);
    /* ONNX integer Add wraps around */
    const int32_t want[6] = {11, -18, 33, INT32_MIN + 9, -25, 30};
    for (int i = 0; i < 6; i++) assert_int_equal(c[i], want[i]);
    onyx_values_free(out, 1);
}

/* An output far larger than the caches takes the streaming-store path (kernels_cpu/common/cpu_types.h):
 * an odd length so that blocks, alignment heads and tails all occur, double so the lengths in
 * bytes differ from the float path's. */
static void add_huge_streams(void **state) {
    (void)state;
    const int64_t n = (16 << 20) / (int64_t)sizeof(double) + 37;
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    for (int64_t i = 0; i < n; i++) {
        a[i] = (double)i;
        b[i] = 0.5 - (double)(i % 7);
    }
    onyx_value *in[2] = {tensor(ONYX_DOUBLE, 1, &n, a, (size_t)n * sizeof *a),
                         tensor(ONYX_DOUBLE, 1, &n, b, (size_t)n * sizeof *b)};
    onyx_value **out;
    run_ok(node_new("Sub", "sub", 2, 1), 14, 2, in, 1, &out);
    check_shape(out[0], ONYX_DOUBLE, 1, &n);
    const double *c = onyx_tensor_data(out[0]);
    for (int64_t i = 0; i < n; i++)
        if (c[i] != a[i] - b[i]) fail_msg("element %lld: %g, expected %g", (long long)i, c[i], a[i] - b[i]);
    onyx_values_free(out, 1);
    free(a);
    free(b);
}

static void cast_float_to_half(void **state) {
    (void)state;
    const int64_t d[1] = {6};
    const float x[6] = {1.0f, 0.1f, -2.5f, 65520.0f, 1e-8f, 0.0f};
    onyx_value *in[1] = {tensor(ONYX_FLOAT, 1, d, x, sizeof x)};
    Onnx__NodeProto *n = node_new("Cast", "cast", 1, 1);
    attr_i(n, "to", ONYX_FLOAT16);
    onyx_value **out;
    run_ok(n, 19, 1, in, 1, &out);
    check_shape(out[0], ONYX_FLOAT16, 1, d);
    const uint16_t *h = onyx_tensor_data(out[0]);
    /* 65520 rounds past the largest half (65504) to infinity; 1e-8 underflows to zero */
    const uint16_t want[6] = {0x3c00, 0x2e66, 0xc100, 0x7c00, 0x0000, 0x0000};
    for (int i = 0; i < 6; i++) assert_int_equal(h[i], want[i]);
    onyx_values_free(out, 1);
}

static void cast_string_to_float(void **state) {
    (void)state;
    const int64_t d[1] = {4};
    const char *s[4] = {"1.5", "-2", "1e3", "0.25"};
    onyx_value *in[1] = {NULL};
    assert_int_equal(onyx_value_new_string_tensor(1, d, s, &in[0]), ONYX_OK);
    Onnx__NodeProto *n = node_new("Cast", "cast_s", 1, 1);
    attr_i(n, "to", ONYX_FLOAT);
    onyx_value **out;
    run_ok(n, 19, 1, in, 1, &out);
    check_shape(out[0], ONYX_FLOAT, 1, d);
    const float *f = onyx_tensor_data(out[0]);
    const float want[4] = {1.5f, -2.0f, 1000.0f, 0.25f};
    for (int i = 0; i < 4; i++) assert_float_equal(f[i], want[i], 0);
    onyx_values_free(out, 1);
}

static void reduce_sum_axes_input(void **state) {
    (void)state;
    const int64_t dx[3] = {2, 3, 2}, da[1] = {1};
    float x[12];
    for (int i = 0; i < 12; i++) x[i] = (float)i;
    const int64_t axes[1] = {-2};
    onyx_value *in[2] = {tensor(ONYX_FLOAT, 3, dx, x, sizeof x),
                         tensor(ONYX_INT64, 1, da, axes, sizeof axes)};
    Onnx__NodeProto *n = node_new("ReduceSum", "rs", 2, 1);
    attr_i(n, "keepdims", 0);
    onyx_value **out;
    run_ok(n, 13, 2, in, 1, &out);
    const int64_t dy[2] = {2, 2};
    check_shape(out[0], ONYX_FLOAT, 2, dy);
    const float *y = onyx_tensor_data(out[0]);
    /* sums over the middle axis: [0+2+4, 1+3+5, 6+8+10, 7+9+11] */
    const float want[4] = {6, 9, 24, 27};
    for (int i = 0; i < 4; i++) assert_float_equal(y[i], want[i], 0);
    onyx_values_free(out, 1);
}

static void gather_negative_and_bad_index(void **state) {
    (void)state;
    const int64_t dd[2] = {3, 2}, di[1] = {3};
    const double data[6] = {0.5, 1.5, 2.5, 3.5, 4.5, 5.5};
    const int64_t idx[3] = {-1, 0, -3};
    onyx_value *in[2] = {tensor(ONYX_DOUBLE, 2, dd, data, sizeof data),
                         tensor(ONYX_INT64, 1, di, idx, sizeof idx)};
    onyx_value **out;
    run_ok(node_new("Gather", "gather_ok", 2, 1), 13, 2, in, 1, &out);
    const int64_t dy[2] = {3, 2};
    check_shape(out[0], ONYX_DOUBLE, 2, dy);
    const double *y = onyx_tensor_data(out[0]);
    const double want[6] = {4.5, 5.5, 0.5, 1.5, 0.5, 1.5};
    for (int i = 0; i < 6; i++) assert_float_equal(y[i], want[i], 0);
    onyx_values_free(out, 1);

    /* index 3 on an axis of 3: an error that names the node, not a read past the data */
    const int64_t bad[3] = {0, 3, 1};
    onyx_value *in2[2] = {tensor(ONYX_DOUBLE, 2, dd, data, sizeof data),
                          tensor(ONYX_INT64, 1, di, bad, sizeof bad)};
    size_t n_out;
    onyx_status st = run(node_new("Gather", "gather_bad", 2, 1), 13, 2, in2, &n_out, &out);
    assert_int_not_equal(st, ONYX_OK);
    assert_null(out);
    assert_non_null(strstr(onyx_last_error(), "gather_bad"));
}

static void topk_largest(void **state) {
    (void)state;
    const int64_t dx[2] = {2, 5}, dk[1] = {1};
    const float x[10] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
    const int64_t k[1] = {3};
    onyx_value *in[2] = {tensor(ONYX_FLOAT, 2, dx, x, sizeof x),
                         tensor(ONYX_INT64, 1, dk, k, sizeof k)};
    onyx_value **out;
    run_ok(node_new("TopK", "topk", 2, 2), 11, 2, in, 2, &out);
    const int64_t dy[2] = {2, 3};
    check_shape(out[0], ONYX_FLOAT, 2, dy);
    check_shape(out[1], ONYX_INT64, 2, dy);
    const float *v = onyx_tensor_data(out[0]);
    const int64_t *ix = onyx_tensor_data(out[1]);
    const float wv[6] = {5, 4, 3, 9, 6, 5};
    const int64_t wi[6] = {4, 2, 0, 0, 2, 3};
    for (int i = 0; i < 6; i++) {
        assert_float_equal(v[i], wv[i], 0);
        assert_int_equal(ix[i], wi[i]);
    }
    onyx_values_free(out, 2);
}

static void einsum_matmul(void **state) {
    (void)state;
    const int64_t da[2] = {2, 3}, db[2] = {3, 2};
    const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 2, -1};
    onyx_value *in[2] = {tensor(ONYX_FLOAT, 2, da, a, sizeof a),
                         tensor(ONYX_FLOAT, 2, db, b, sizeof b)};
    Onnx__NodeProto *n = node_new("Einsum", "es", 2, 1);
    attr_s(n, "equation", "ij,jk->ik");
    onyx_value **out;
    run_ok(n, 12, 2, in, 1, &out);
    const int64_t dy[2] = {2, 2};
    check_shape(out[0], ONYX_FLOAT, 2, dy);
    const float *y = onyx_tensor_data(out[0]);
    const float want[4] = {7, -1, 16, -1};
    for (int i = 0; i < 4; i++) assert_float_equal(y[i], want[i], 1e-6);
    onyx_values_free(out, 1);
}

static void slice_negative_step(void **state) {
    (void)state;
    const int64_t dx[2] = {2, 5}, d1[1] = {1};
    int32_t x[10];
    for (int i = 0; i < 10; i++) x[i] = i;
    const int64_t starts[1] = {-1}, ends[1] = {INT64_MIN}, axes[1] = {1}, steps[1] = {-2};
    onyx_value *in[5] = {tensor(ONYX_INT32, 2, dx, x, sizeof x),
                         tensor(ONYX_INT64, 1, d1, starts, 8), tensor(ONYX_INT64, 1, d1, ends, 8),
                         tensor(ONYX_INT64, 1, d1, axes, 8), tensor(ONYX_INT64, 1, d1, steps, 8)};
    onyx_value **out;
    run_ok(node_new("Slice", "sl", 5, 1), 13, 5, in, 1, &out);
    const int64_t dy[2] = {2, 3};
    check_shape(out[0], ONYX_INT32, 2, dy);
    const int32_t *y = onyx_tensor_data(out[0]);
    const int32_t want[6] = {4, 2, 0, 9, 7, 5};
    for (int i = 0; i < 6; i++) assert_int_equal(y[i], want[i]);
    onyx_values_free(out, 1);
}

static void where_strings(void **state) {
    (void)state;
    const int64_t dc[2] = {2, 2}, dx[1] = {2};
    const bool cond[4] = {true, false, false, true};
    const char *xs[2] = {"left", "x"}, *ys[4] = {"a", "bb", "", "dddd"};
    onyx_value *in[3] = {tensor(ONYX_BOOL, 2, dc, cond, sizeof cond), NULL, NULL};
    assert_int_equal(onyx_value_new_string_tensor(1, dx, xs, &in[1]), ONYX_OK);
    assert_int_equal(onyx_value_new_string_tensor(2, dc, ys, &in[2]), ONYX_OK);
    onyx_value **out;
    run_ok(node_new("Where", "wh", 3, 1), 16, 3, in, 1, &out);
    check_shape(out[0], ONYX_STRING, 2, dc);
    char **s = onyx_tensor_data(out[0]);
    assert_string_equal(s[0], "left");
    assert_string_equal(s[1], "bb");
    assert_string_equal(s[2], "");
    assert_string_equal(s[3], "x");
    onyx_values_free(out, 1);
}

static void det_batched(void **state) {
    (void)state;
    const int64_t dx[3] = {3, 2, 2};
    /* det = -2, a singular matrix, and one that needs a row swap */
    const float x[12] = {1, 2, 3, 4, 2, 4, 1, 2, 0, 3, 5, 1};
    onyx_value *in[1] = {tensor(ONYX_FLOAT, 3, dx, x, sizeof x)};
    onyx_value **out;
    run_ok(node_new("Det", "det", 1, 1), 11, 1, in, 1, &out);
    const int64_t dy[1] = {3};
    check_shape(out[0], ONYX_FLOAT, 1, dy);
    const float *y = onyx_tensor_data(out[0]);
    assert_float_equal(y[0], -2.0f, 1e-6);
    assert_float_equal(y[1], 0.0f, 1e-6);
    assert_float_equal(y[2], -15.0f, 1e-6);
    onyx_values_free(out, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(add_int32_broadcast, free_all),
        cmocka_unit_test_teardown(add_huge_streams, free_all),
        cmocka_unit_test_teardown(cast_float_to_half, free_all),
        cmocka_unit_test_teardown(cast_string_to_float, free_all),
        cmocka_unit_test_teardown(reduce_sum_axes_input, free_all),
        cmocka_unit_test_teardown(gather_negative_and_bad_index, free_all),
        cmocka_unit_test_teardown(topk_largest, free_all),
        cmocka_unit_test_teardown(einsum_matmul, free_all),
        cmocka_unit_test_teardown(slice_negative_step, free_all),
        cmocka_unit_test_teardown(where_strings, free_all),
        cmocka_unit_test_teardown(det_batched, free_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
