/* Type and shape inference through the schema registry: exact shapes when inputs are known,
 * unknown dims kept unknown, and clear errors for shapes that cannot fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "ops/schema.h"

typedef struct fixture {
    graph_node node;
    graph_attr attrs[4];
    type_info in[4];
    const type_info *in_ptrs[4];
    const tensor *values[4];
    type_info out[2];
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
    for (int i = 0; i < 4; i++) type_init(&f->in[i]);
    for (int i = 0; i < 2; i++) type_init(&f->out[i]);
}

static void set_input(fixture *f, int i, onyx_dtype dt, int rank, const int64_t *dims) {
    type_set_tensor(&f->in[i], dt, rank, dims);
    f->in_ptrs[i] = &f->in[i];
}

static void add_ints_attr(fixture *f, const char *name, const int64_t *v, size_t n) {
    graph_attr *a = &f->attrs[f->node.n_attrs++];
    a->name = name;
    a->type = ATTR_INTS;
    a->ints = v;
    a->n = n;
}

static void add_int_attr(fixture *f, const char *name, int64_t v) {
    graph_attr *a = &f->attrs[f->node.n_attrs++];
    a->name = name;
    a->type = ATTR_INT;
    a->i = v;
}

static onyx_status infer(fixture *f) {
    infer_ctx ctx = {
        .node = &f->node,
        .n_in = f->node.n_inputs,
        .n_out = f->node.n_outputs,
        .in = f->in_ptrs,
        .in_value = f->values,
        .out = f->out,
    };
    return f->node.schema->infer(&ctx);
}

static void assert_shape(const type_info *t, onyx_dtype dt, int rank, const int64_t *dims) {
    assert_int_equal(t->kind, ONYX_VALUE_TENSOR);
    assert_int_equal(t->dtype, dt);
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++) assert_int_equal(t->dims[i], dims[i]);
}

static void teardown(fixture *f) {
    for (int i = 0; i < 4; i++) type_release(&f->in[i]);
    for (int i = 0; i < 2; i++) type_release(&f->out[i]);
}

static void broadcast_add(void **state) {
    (void)state;
    fixture f;
    setup_node(&f, "Add", 14, 2);
    const int64_t a[3] = {2, 1, 4}, b[2] = {3, 1}, want[3] = {2, 3, 4};
    set_input(&f, 0, ONYX_FLOAT, 3, a);
    set_input(&f, 1, ONYX_FLOAT, 2, b);
    assert_int_equal(infer(&f), ONYX_OK);
    assert_shape(&f.out[0], ONYX_FLOAT, 3, want);
    teardown(&f);
}

static void broadcast_keeps_unknown_dims(void **state) {
    (void)state;
    fixture f;
    setup_node(&f, "Mul", 14, 2);
    const int64_t a[2] = {-1, 4}, b[1] = {4}, want[2] = {-1, 4};
    set_input(&f, 0, ONYX_DOUBLE, 2, a);
    set_input(&f, 1, ONYX_DOUBLE, 1, b);
    assert_int_equal(infer(&f), ONYX_OK);
    assert_shape(&f.out[0], ONYX_DOUBLE, 2, want);
    teardown(&f);
}

static void broadcast_mismatch_is_an_error(void **state) {
    (void)state;
    fixture f;
    setup_node(&f, "Sub", 14, 2);
    const int64_t a[2] = {2, 3}, b[2] = {2, 4};
    set_input(&f, 0, ONYX_FLOAT, 2, a);
    set_input(&f, 1, ONYX_FLOAT, 2, b);
    assert_int_equal(infer(&f), ONYX_ERR_SHAPE);
    assert_true(strlen(onyx_last_error()) > 0);
    teardown(&f);
}

static void reshape_with_known_shape_value(void **state) {
    (void)state;
    fixture f;
    setup_node(&f, "Reshape", 14, 2);
    const int64_t x[3] = {2, 3, 4}, s[1] = {3}, want[3] = {4, 3, 2};
    set_input(&f, 0, ONYX_FLOAT, 3, x);
    set_input(&f, 1, ONYX_INT64, 1, s);
    int64_t shape_data[3] = {4, -1, 2};
    tensor shape = {0};
    assert_int_equal(tensor_set_shape(&shape, ONYX_INT64, 1, s), ONYX_OK);
    shape.data = shape_data;
    f.values[1] = &shape;
    assert_int_equal(infer(&f), ONYX_OK);
    assert_shape(&f.out[0], ONYX_FLOAT, 3, want);

    /* without the value only the rank is known */
    type_release(&f.out[0]);
    type_init(&f.out[0]);
    f.values[1] = NULL;
    assert_int_equal(infer(&f), ONYX_OK);
    assert_int_equal(f.out[0].kind, ONYX_VALUE_TENSOR);
    assert_int_equal(f.out[0].dtype, ONYX_FLOAT);
    assert_true(f.out[0].rank == 3 || f.out[0].rank == -1);
    if (f.out[0].rank == 3) assert_int_equal(f.out[0].dims[0], -1);

    /* element counts that cannot match */
    type_release(&f.out[0]);
    type_init(&f.out[0]);
    shape_data[1] = 5;
    f.values[1] = &shape;
    assert_int_equal(infer(&f), ONYX_ERR_SHAPE);
    teardown(&f);
}

static void matmul_batches(void **state) {
    (void)state;
    fixture f;
    setup_node(&f, "MatMul", 13, 2);
    const int64_t a[3] = {5, 2, 3}, b[2] = {3, 7}, want[3] = {5, 2, 7};
    set_input(&f, 0, ONYX_FLOAT, 3, a);
    set_input(&f, 1, ONYX_FLOAT, 2, b);
    assert_int_equal(infer(&f), ONYX_OK);
    assert_shape(&f.out[0], ONYX_FLOAT, 3, want);
    teardown(&f);

    setup_node(&f, "MatMul", 13, 2);
    const int64_t bad[2] = {4, 7};
    set_input(&f, 0, ONYX_FLOAT, 3, a);
    set_input(&f, 1, ONYX_FLOAT, 2, bad);
    assert_int_equal(infer(&f), ONYX_ERR_SHAPE);
    teardown(&f);
}

static void transpose_and_concat(void **state) {
    (void)state;
    fixture f;
    setup_node(&f, "Transpose", 13, 1);
    const int64_t x[3] = {2, 3, 4}, perm[3] = {2, 0, 1}, want[3] = {4, 2, 3};
    set_input(&f, 0, ONYX_INT32, 3, x);
    add_ints_attr(&f, "perm", perm, 3);
    assert_int_equal(infer(&f), ONYX_OK);
    assert_shape(&f.out[0], ONYX_INT32, 3, want);
    teardown(&f);

    setup_node(&f, "Concat", 13, 2);
    const int64_t a[2] = {2, 3}, b[2] = {2, 5}, cat[2] = {2, 8};
    set_input(&f, 0, ONYX_FLOAT, 2, a);
    set_input(&f, 1, ONYX_FLOAT, 2, b);
    add_int_attr(&f, "axis", -1);
    assert_int_equal(infer(&f), ONYX_OK);
    assert_shape(&f.out[0], ONYX_FLOAT, 2, cat);
    teardown(&f);

    setup_node(&f, "Concat", 13, 2);
    set_input(&f, 0, ONYX_FLOAT, 2, a);
    set_input(&f, 1, ONYX_FLOAT, 2, b);
    add_int_attr(&f, "axis", 2); /* out of range */
    assert_int_equal(infer(&f), ONYX_ERR_SHAPE);
    teardown(&f);
}

static void shape_and_reduce(void **state) {
    (void)state;
    fixture f;
    setup_node(&f, "Shape", 15, 1);
    const int64_t x[4] = {1, -1, 8, 8}, four[1] = {4};
    set_input(&f, 0, ONYX_FLOAT, 4, x);
    assert_int_equal(infer(&f), ONYX_OK);
    assert_shape(&f.out[0], ONYX_INT64, 1, four);
    teardown(&f);

    setup_node(&f, "ReduceMean", 13, 1);
    const int64_t axes[2] = {2, 3}, want[4] = {1, -1, 1, 1};
    set_input(&f, 0, ONYX_FLOAT, 4, x);
    add_ints_attr(&f, "axes", axes, 2);
    assert_int_equal(infer(&f), ONYX_OK);
    assert_shape(&f.out[0], ONYX_FLOAT, 4, want);
    teardown(&f);
}

static void versions_resolve_from_opset(void **state) {
    (void)state;
    const op_schema *s = schema_lookup("", "Add", 12);
    assert_non_null(s);
    assert_int_equal(s->since_version, 7);
    s = schema_lookup("", "Add", 13);
    assert_int_equal(s->since_version, 13);
    s = schema_lookup("ai.onnx", "Softmax", 12);
    assert_int_equal(s->since_version, 11);
    assert_null(schema_lookup("", "NoSuchOp", 13));
    assert_non_null(strstr(onyx_last_error(), "NoSuchOp"));
}

/* Resize with antialias widens its filter by 1/scale: a tiny scale used to reach a float-to-int
 * conversion out of range (UBSan). Dims are only numbers here, so a huge axis costs nothing. */
static void resize_antialias_tiny_scale(void **state) {
    (void)state;
    static const float tiny[][3] = {{1, 1, 1e-12f}, {1, 1, 1e-40f}, {1, 1, 0.5f}};
    const int64_t x_dims[3] = {1, 1, (int64_t)1 << 42}, three = 3;
    for (int k = 0; k < 3; k++) {
        fixture f;
        setup_node(&f, "Resize", 19, 3);
        graph_attr *a = &f.attrs[f.node.n_attrs++];
        a->name = "mode";
        a->type = ATTR_STRING;
        a->s = "linear";
        a->s_len = 6;
        add_int_attr(&f, "antialias", 1);
        set_input(&f, 0, ONYX_FLOAT, 3, x_dims);
        set_input(&f, 2, ONYX_FLOAT, 1, &three);
        tensor scales = {0};
        assert_int_equal(tensor_set_shape(&scales, ONYX_FLOAT, 1, &three), ONYX_OK);
        scales.data = (void *)tiny[k];
        f.values[2] = &scales;
        onyx_status st = infer(&f);
        if (k == 0) {
            /* 2^42 * 1e-12 = 4 outputs, each averaging 2e12 inputs */
            assert_int_equal(st, ONYX_ERR_INVALID_MODEL);
            assert_non_null(strstr(onyx_last_error(), "is too small for antialias"));
        } else {
            /* a subnormal scale leaves the axis empty: nothing to filter */
            assert_int_equal(st, ONYX_OK);
            assert_int_equal(f.out[0].dims[2], k == 1 ? 0 : (int64_t)1 << 41);
        }
        teardown(&f);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(broadcast_add),
        cmocka_unit_test(broadcast_keeps_unknown_dims),
        cmocka_unit_test(broadcast_mismatch_is_an_error),
        cmocka_unit_test(reshape_with_known_shape_value),
        cmocka_unit_test(matmul_batches),
        cmocka_unit_test(transpose_and_concat),
        cmocka_unit_test(shape_and_reduce),
        cmocka_unit_test(versions_resolve_from_opset),
        cmocka_unit_test(resize_antialias_tiny_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
