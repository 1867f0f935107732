/* Regressions for what fuzzing (tests/fuzz/) found: each test builds the smallest model or bytes
 * that once crashed, leaked or tripped a sanitizer, and checks that it now gives the right
 * status and a message saying what is wrong (or runs, where the input was valid). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "onnx.pb-c.h"
#include "onyx.h"

/* ------------------------------------------------------------------ building models */

#include "tests/unit/proto_alloc.h"

static Onnx__ModelProto *model_new(int64_t opset) {
    Onnx__ModelProto *m = zalloc(sizeof *m);
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = 8;
    Onnx__OperatorSetIdProto *o = zalloc(sizeof *o);
    onnx__operator_set_id_proto__init(o);
    o->domain = "";
    o->has_version = 1;
    o->version = opset;
    PUSH(m->opset_import, m->n_opset_import, o);
    m->graph = zalloc(sizeof *m->graph);
    onnx__graph_proto__init(m->graph);
    m->graph->name = "g";
    return m;
}

/* Splits "a,,b" into names ("" is an omitted slot). */
static void name_list(const char *s, char ***arr, size_t *n) {
    if (!s) return;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char *copy = zalloc(len + 1);
        memcpy(copy, s, len);
        PUSH(*arr, *n, copy);
        if (!e) return;
        s = e + 1;
    }
}

static Onnx__NodeProto *node_new(const char *op, const char *ins, const char *outs) {
    Onnx__NodeProto *n = zalloc(sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = (char *)op;
    name_list(ins, &n->input, &n->n_input);
    name_list(outs, &n->output, &n->n_output);
    return n;
}

static Onnx__NodeProto *add_node(Onnx__ModelProto *m, const char *op, const char *ins,
                                 const char *outs) {
    Onnx__NodeProto *n = node_new(op, ins, outs);
    PUSH(m->graph->node, m->graph->n_node, n);
    return n;
}

static void attr_int(Onnx__NodeProto *n, const char *name, int64_t v) {
    Onnx__AttributeProto *a = zalloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = v;
    PUSH(n->attribute, n->n_attribute, a);
}

static void attr_ints(Onnx__NodeProto *n, const char *name, size_t count, const int64_t *v) {
    Onnx__AttributeProto *a = zalloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->n_ints = count;
    a->ints = zalloc(count * sizeof *v);
    memcpy(a->ints, v, count * sizeof *v);
    PUSH(n->attribute, n->n_attribute, a);
}

/* A tensor type of known dims; rank < 0: no shape. */
static Onnx__ValueInfoProto *tensor_vi(const char *name, int dtype, int rank, const int64_t *dims) {
    Onnx__ValueInfoProto *v = zalloc(sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = (char *)name;
    Onnx__TypeProto *t = zalloc(sizeof *t);
    onnx__type_proto__init(t);
    Onnx__TypeProto__Tensor *tt = zalloc(sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = dtype;
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    if (rank >= 0) {
        Onnx__TensorShapeProto *sh = zalloc(sizeof *sh);
        onnx__tensor_shape_proto__init(sh);
        for (int i = 0; i < rank; i++) {
            Onnx__TensorShapeProto__Dimension *d = zalloc(sizeof *d);
            onnx__tensor_shape_proto__dimension__init(d);
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i];
            PUSH(sh->dim, sh->n_dim, d);
        }
        tt->shape = sh;
    }
    v->type = t;
    return v;
}

static void add_input(Onnx__ModelProto *m, const char *name, int dtype, int rank,
                      const int64_t *dims) {
    PUSH(m->graph->input, m->graph->n_input, tensor_vi(name, dtype, rank, dims));
}

static void add_output(Onnx__ModelProto *m, const char *name, int dtype) {
    PUSH(m->graph->output, m->graph->n_output, tensor_vi(name, dtype, -1, NULL));
}

static void add_init_i64(Onnx__ModelProto *m, const char *name, int rank, const int64_t *dims,
                         size_t n, const int64_t *vals) {
    Onnx__TensorProto *t = zalloc(sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->has_data_type = 1;
    t->data_type = ONYX_INT64;
    t->n_dims = (size_t)rank;
    t->dims = zalloc((size_t)rank * sizeof(int64_t));
    if (rank) memcpy(t->dims, dims, (size_t)rank * sizeof(int64_t));
    t->n_int64_data = n;
    t->int64_data = zalloc(n * sizeof(int64_t));
    if (n) memcpy(t->int64_data, vals, n * sizeof(int64_t));
    PUSH(m->graph->initializer, m->graph->n_initializer, t);
}

static onyx_status load(const Onnx__ModelProto *m, onyx_model **out) {
    size_t n = onnx__model_proto__get_packed_size(m);
    uint8_t *b = zalloc(n);
    onnx__model_proto__pack(m, b);
    *out = NULL;
    return onyx_model_load_buffer(b, n, NULL, out);
}

/* Loads, prepares (one thread) and runs `m` on `inputs` (freed). Output 0 goes to *out0 when
 * it is not NULL (caller frees); the rest is freed. */
static onyx_status load_and_run(const Onnx__ModelProto *m, size_t n_in, onyx_value **inputs,
                                onyx_value **out0) {
    onyx_model *model = NULL;
    onyx_rep *rep = NULL;
    onyx_value **outs = NULL;
    size_t n_out = 0;
    onyx_session_options *opts = NULL;
    onyx_status st = onyx_session_options_create(&opts);
    if (st == ONYX_OK) st = onyx_session_options_set_threads(opts, 1);
    if (st == ONYX_OK) st = load(m, &model);
    if (st == ONYX_OK) st = onyx_prepare_session(model, opts, &rep);
    onyx_session_options_free(opts);
    if (st == ONYX_OK)
        st = onyx_rep_run(rep, n_in, NULL, (const onyx_value *const *)inputs, &n_out, &outs);
    if (st == ONYX_OK && out0 && n_out > 0) {
        *out0 = outs[0];
        outs[0] = NULL;
    }
    onyx_values_free(outs, n_out);
    onyx_rep_free(rep);
    onyx_model_free(model);
    for (size_t i = 0; i < n_in; i++) onyx_value_free(inputs[i]);
    return st;
}

static onyx_value *float_tensor(int rank, const int64_t *dims, const float *data, size_t n) {
    onyx_value *v = NULL;
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, (size_t)rank, dims, data,
                                           n * sizeof(float), &v),
                     ONYX_OK);
    return v;
}

static void assert_error(onyx_status got, onyx_status want, const char *needle) {
    if (got != want)
        fail_msg("got %s (%s), expected %s", onyx_status_name(got), onyx_last_error(),
                 onyx_status_name(want));
    if (!strstr(onyx_last_error(), needle))
        fail_msg("error message '%s' does not mention '%s'", onyx_last_error(), needle);
}

/* ------------------------------------------------------------------ tests */

/* A plan whose every intermediate is empty has an arena of 0 bytes; it used to stay NULL, and
 * kernels offsetting an empty tensor's NULL data pointer is undefined behaviour (clang UBSan:
 * "applying zero offset to null pointer" in core/plan_build.c and the reduce kernels). */
static void empty_intermediates_run(void **state) {
    (void)state;
    Onnx__ModelProto *m = model_new(18);
    static const int64_t xd[] = {2, 0, 4}, ad[] = {1}, axes[] = {1};
    add_input(m, "X", ONYX_FLOAT, 3, xd);
    add_init_i64(m, "axes", 1, ad, 1, axes);
    add_node(m, "Abs", "X", "A");
    attr_int(add_node(m, "ReduceSum", "A,axes", "Y"), "keepdims", 1);
    add_output(m, "Y", ONYX_FLOAT);
    onyx_value *in[] = {float_tensor(3, xd, NULL, 0)};
    assert_int_equal(load_and_run(m, 1, in, NULL), ONYX_OK);
}

/* MatMulInteger with an empty inner dimension (A [2,1,0] x B [0,1]) and a zero point per
 * matrix: the kernel found each row's matrix by dividing its offset by m * k = 0 (SIGFPE). The
 * products are 0. */
static void matmul_integer_empty_inner_dim(void **state) {
    (void)state;
    Onnx__ModelProto *m = model_new(10);
    static const int64_t ad[] = {2, 1, 0}, bd[] = {0, 1}, zd[] = {2, 1};
    static const uint8_t zero_points[2] = {3, 4};
    add_input(m, "A", ONYX_UINT8, 3, ad);
    add_input(m, "B", ONYX_UINT8, 2, bd);
    add_input(m, "za", ONYX_UINT8, 2, zd);
    add_node(m, "MatMulInteger", "A,B,za", "Y");
    add_output(m, "Y", ONYX_INT32);
    onyx_value *in[3] = {NULL}, *y = NULL;
    assert_int_equal(onyx_value_new_tensor(ONYX_UINT8, 3, ad, NULL, 0, &in[0]), ONYX_OK);
    assert_int_equal(onyx_value_new_tensor(ONYX_UINT8, 2, bd, NULL, 0, &in[1]), ONYX_OK);
    assert_int_equal(onyx_value_new_tensor(ONYX_UINT8, 2, zd, zero_points, 2, &in[2]), ONYX_OK);
    assert_int_equal(load_and_run(m, 3, in, &y), ONYX_OK);
    assert_int_equal(onyx_tensor_numel(y), 2);
    const int32_t *yv = onyx_tensor_data(y);
    assert_int_equal(yv[0], 0);
    assert_int_equal(yv[1], 0);
    onyx_value_free(y);
}

/* A tensor of shape [0, 2^40, 2^40] has no elements, but kernels take partial products of its
 * dims (strides, outer and inner sizes), which overflowed (UBSan: kernels_cpu/common/move.c,
 * broadcast.c, ...). As numpy does, such shapes are refused: here made by ConstantOfShape and
 * fed to Transpose. */
static void empty_tensor_with_huge_dims_is_refused(void **state) {
    (void)state;
    Onnx__ModelProto *m = model_new(13);
    static const int64_t sd[] = {3}, shape[] = {0, (int64_t)1 << 40, (int64_t)1 << 40};
    add_init_i64(m, "shape", 1, sd, 3, shape);
    add_node(m, "ConstantOfShape", "shape", "E");
    add_node(m, "Transpose", "E", "Y");
    add_output(m, "Y", ONYX_FLOAT);
    assert_error(load_and_run(m, 0, NULL, NULL), ONYX_ERR_NO_MEMORY,
                 "its nonzero dims multiply past");
}

/* Constant-9 knows only `value`; a value_floats attribute (given as ints, so its float list was
 * NULL) was once taken by inference and the kernel copied from NULL. An attribute a version does
 * not have is refused as the model loads, naming it. */
static void constant_ignores_forms_of_later_versions(void **state) {
    (void)state;
    Onnx__ModelProto *m = model_new(9);
    static const int64_t v[] = {1, 2};
    attr_ints(add_node(m, "Constant", NULL, "Y"), "value_floats", 2, v);
    add_output(m, "Y", ONYX_FLOAT);
    assert_error(load_and_run(m, 0, NULL, NULL), ONYX_ERR_UNSUPPORTED,
                 "Constant-9 has no attribute 'value_floats'");
}

/* Add-6 with broadcast=1 and axis = INT64_MAX: checking that input 1 fits from `axis` on
 * computed axis + rank (signed overflow, UBSan in ops/elementwise/infer_elementwise.c). */
static void legacy_broadcast_huge_axis_is_refused(void **state) {
    (void)state;
    Onnx__ModelProto *m = model_new(6);
    static const int64_t ad[] = {2, 3}, bd[] = {2, 1};
    add_input(m, "A", ONYX_DOUBLE, 2, ad);
    add_input(m, "B", ONYX_DOUBLE, 2, bd);
    Onnx__NodeProto *n = add_node(m, "Add", "A,B", "Y");
    attr_int(n, "broadcast", 1);
    attr_int(n, "axis", INT64_MAX);
    add_output(m, "Y", ONYX_DOUBLE);
    onyx_model *model = NULL;
    onyx_rep *rep = NULL;
    assert_int_equal(load(m, &model), ONYX_OK);
    assert_error(onyx_prepare_session(model, NULL, &rep), ONYX_ERR_INVALID_MODEL,
                 "does not place input 1 (rank 2) inside input 0");
    onyx_model_free(model);
}

/* Slice with a negative step over an empty axis: clamping the start into [0, d - 1] = [0, -1]
 * gave 0, so the slice had one element of an axis that has none (heap overflow reading X). */
static void slice_negative_step_on_empty_axis(void **state) {
    (void)state;
    Onnx__ModelProto *m = model_new(13);
    static const int64_t xd[] = {0, 3}, one[] = {1}, minus2[] = {-2};
    add_input(m, "X", ONYX_FLOAT, 2, xd);
    add_init_i64(m, "s", 1, one, 1, minus2);
    add_node(m, "Slice", "X,s,s,,s", "Y");
    add_output(m, "Y", ONYX_FLOAT);
    onyx_value *in[] = {float_tensor(2, xd, NULL, 0)}, *y = NULL;
    assert_int_equal(load_and_run(m, 1, in, &y), ONYX_OK);
    assert_int_equal(onyx_tensor_rank(y), 2);
    assert_int_equal(onyx_tensor_dims(y)[0], 0);
    assert_int_equal(onyx_tensor_dims(y)[1], 3);
    onyx_value_free(y);
}

/* ArgMax with its only output named "" (omitted): the kernel wrote through a NULL output. */
static void omitted_required_output_is_refused(void **state) {
    (void)state;
    Onnx__ModelProto *m = model_new(13);
    static const int64_t xd[] = {2, 3};
    add_input(m, "X", ONYX_FLOAT, 2, xd);
    add_node(m, "ArgMax", "X", "");
    add_output(m, "X", ONYX_FLOAT);
    onyx_model *model = NULL;
    assert_error(load(m, &model), ONYX_ERR_INVALID_MODEL, "output 0 is required but has no name");
    assert_null(model);
}

/* run_node unpacked its NodeProto with protobuf-c directly, which recurses once per nested
 * attribute graph: deep nesting overflowed the stack. */
static void run_node_refuses_deep_nesting(void **state) {
    (void)state;
    /* NodeProto.attribute (5) > AttributeProto.g (6) > GraphProto.node (1) > NodeProto ..., each
     * message one length-delimited field of its parent. size[i]: bytes of the message i levels
     * above the innermost (empty) NodeProto. */
    enum { LEVELS = 3 * 100000 };
    static const uint8_t tags[3] = {(1 << 3) | 2, (6 << 3) | 2, (5 << 3) | 2};
    size_t *size = zalloc((LEVELS + 1) * sizeof *size);
    for (int i = 0; i < LEVELS; i++) {
        size_t varint = 1;
        for (size_t v = size[i]; v >= 0x80; v >>= 7) varint++;
        size[i + 1] = size[i] + 1 + varint;
    }
    size_t len = size[LEVELS], at = 0;
    uint8_t *buf = zalloc(len);
    for (int i = LEVELS - 1; i >= 0; i--) {
        buf[at++] = tags[i % 3];
        for (size_t v = size[i];; v >>= 7) {
            buf[at++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
            if (v < 0x80) break;
        }
    }
    assert_int_equal(at, len);
    size_t n_out = 0;
    onyx_value **outs = NULL;
    assert_error(onyx_run_node(buf, len, 0, "CPU", 0, NULL, 0, NULL, &n_out, &outs),
                 ONYX_ERR_INVALID_MODEL, "nests deeper");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(empty_intermediates_run, free_all),
        cmocka_unit_test_teardown(matmul_integer_empty_inner_dim, free_all),
        cmocka_unit_test_teardown(empty_tensor_with_huge_dims_is_refused, free_all),
        cmocka_unit_test_teardown(constant_ignores_forms_of_later_versions, free_all),
        cmocka_unit_test_teardown(legacy_broadcast_huge_axis_is_refused, free_all),
        cmocka_unit_test_teardown(slice_negative_step_on_empty_axis, free_all),
        cmocka_unit_test_teardown(omitted_required_output_is_refused, free_all),
        cmocka_unit_test_teardown(run_node_refuses_deep_nesting, free_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
