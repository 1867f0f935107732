/* The public API end to end on small models built here: prepare, run with changing batch sizes,
 * run_node, run_model, is_compatible, devices, and the errors a caller meets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "onyx.h"

/* ---- building models with protobuf-c (test-only, fixed small sizes) */

typedef struct builder {
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset, *opsets[1];
    Onnx__NodeProto nodes[4], *node_ptrs[4];
    char *node_io[4][2][3];
    Onnx__ValueInfoProto vis[6], *in_ptrs[3], *out_ptrs[3];
    Onnx__TypeProto types[6];
    Onnx__TypeProto__Tensor tensor_types[6];
    Onnx__TensorShapeProto shapes[6];
    Onnx__TensorShapeProto__Dimension dims[6][4], *dim_ptrs[6][4];
    int n_vis;
} builder;

static void builder_init(builder *b, int64_t opset) {
    memset(b, 0, sizeof *b);
    onnx__model_proto__init(&b->model);
    onnx__graph_proto__init(&b->graph);
    onnx__operator_set_id_proto__init(&b->opset);
    b->opset.domain = "";
    b->opset.has_version = 1;
    b->opset.version = opset;
    b->opsets[0] = &b->opset;
    b->model.has_ir_version = 1;
    b->model.ir_version = 8;
    b->model.n_opset_import = 1;
    b->model.opset_import = b->opsets;
    b->model.graph = &b->graph;
    b->graph.name = "g";
    b->graph.node = b->node_ptrs;
    b->graph.input = b->in_ptrs;
    b->graph.output = b->out_ptrs;
}

/* dims: -1 means the symbolic dim "batch" */
static Onnx__ValueInfoProto *value_info(builder *b, const char *name, int32_t dtype, int rank,
                                        const int64_t *dims) {
    int k = b->n_vis++;
    Onnx__ValueInfoProto *vi = &b->vis[k];
    onnx__value_info_proto__init(vi);
    onnx__type_proto__init(&b->types[k]);
    onnx__type_proto__tensor__init(&b->tensor_types[k]);
    onnx__tensor_shape_proto__init(&b->shapes[k]);
    vi->name = (char *)name;
    vi->type = &b->types[k];
    b->types[k].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    b->types[k].tensor_type = &b->tensor_types[k];
    b->tensor_types[k].has_elem_type = 1;
    b->tensor_types[k].elem_type = dtype;
    b->tensor_types[k].shape = &b->shapes[k];
    b->shapes[k].n_dim = (size_t)rank;
    b->shapes[k].dim = b->dim_ptrs[k];
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = &b->dims[k][i];
        onnx__tensor_shape_proto__dimension__init(d);
        if (dims[i] < 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = "batch";
        } else {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i];
        }
        b->dim_ptrs[k][i] = d;
    }
    return vi;
}

static void add_input(builder *b, const char *name, int32_t dtype, int rank, const int64_t *dims) {
    b->in_ptrs[b->graph.n_input++] = value_info(b, name, dtype, rank, dims);
}

static void add_output(builder *b, const char *name, int32_t dtype, int rank, const int64_t *dims) {
    b->out_ptrs[b->graph.n_output++] = value_info(b, name, dtype, rank, dims);
}

static Onnx__NodeProto *add_node(builder *b, const char *op, const char *in0, const char *in1,
                                 const char *out) {
    int k = (int)b->graph.n_node++;
    Onnx__NodeProto *n = &b->nodes[k];
    onnx__node_proto__init(n);
    n->op_type = (char *)op;
    n->name = (char *)out;
    b->node_io[k][0][0] = (char *)in0;
    b->node_io[k][0][1] = (char *)in1;
    n->n_input = in1 ? 2 : 1;
    n->input = b->node_io[k][0];
    b->node_io[k][1][0] = (char *)out;
    n->n_output = 1;
    n->output = b->node_io[k][1];
    b->node_ptrs[k] = n;
    return n;
}

static uint8_t *pack_model(builder *b, size_t *size) {
    *size = onnx__model_proto__get_packed_size(&b->model);
    uint8_t *buf = malloc(*size);
    assert_non_null(buf);
    onnx__model_proto__pack(&b->model, buf);
    return buf;
}

/* Z = Relu(X + Y) with X [batch, 3] and Y [3] */
static onyx_model *add_relu_model(void) {
    builder b;
    builder_init(&b, 17);
    const int64_t xd[2] = {-1, 3}, yd[1] = {3};
    add_input(&b, "X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, xd);
    add_input(&b, "Y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, yd);
    add_output(&b, "Z", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, xd);
    add_node(&b, "Add", "X", "Y", "S");
    add_node(&b, "Relu", "S", NULL, "Z");
    size_t size;
    uint8_t *bytes = pack_model(&b, &size);
    onyx_model *m = NULL;
    onyx_status st = onyx_model_load_buffer(bytes, size, NULL, &m);
    free(bytes);
    if (st != ONYX_OK) fail_msg("load: %s", onyx_last_error());
    return m;
}

static onyx_value *float_tensor(int rank, const int64_t *dims, const float *data, size_t n) {
    onyx_value *v = NULL;
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, (size_t)rank, dims, data, n * sizeof(float), &v),
                     ONYX_OK);
    return v;
}

/* runs the add+relu rep on a batch of `rows` and checks every element */
static void run_batch(onyx_rep *rep, int64_t rows) {
    float x[64], y[3] = {1.0f, -2.0f, 0.5f};
    for (int64_t i = 0; i < rows * 3; i++) x[i] = (float)i - 4.0f;
    const int64_t xd[2] = {rows, 3}, yd[1] = {3};
    onyx_value *in[2] = {float_tensor(2, xd, x, (size_t)(rows * 3)), float_tensor(1, yd, y, 3)};
    size_t n_out = 0;
    onyx_value **out = NULL;
    onyx_status st = onyx_rep_run(rep, 2, NULL, (const onyx_value *const *)in, &n_out, &out);
    if (st != ONYX_OK) fail_msg("run: %s", onyx_last_error());
    assert_int_equal(n_out, 1);
    assert_int_equal(onyx_tensor_rank(out[0]), 2);
    assert_int_equal(onyx_tensor_dims(out[0])[0], rows);
    const float *z = onyx_tensor_data(out[0]);
    for (int64_t i = 0; i < rows * 3; i++) {
        float want = x[i] + y[i % 3];
        assert_float_equal(z[i], want > 0 ? want : 0.0f, 0.0f);
    }
    onyx_values_free(out, n_out);
    onyx_value_free(in[0]);
    onyx_value_free(in[1]);
}

static void io_info_lists_symbolic_dims(void **state) {
    (void)state;
    onyx_model *m = add_relu_model();
    assert_int_equal(onyx_model_input_count(m), 2);
    assert_int_equal(onyx_model_output_count(m), 1);
    onyx_io_info info;
    assert_int_equal(onyx_model_input(m, 0, &info), ONYX_OK);
    assert_string_equal(info.name, "X");
    assert_int_equal(info.dtype, ONYX_FLOAT);
    assert_int_equal(info.rank, 2);
    assert_int_equal(info.dims[0], -1);
    assert_string_equal(info.dim_params[0], "batch");
    assert_int_equal(info.dims[1], 3);
    assert_int_equal(onyx_model_input(m, 2, &info), ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_model_opset(m, ""), 17);
    onyx_model_free(m);
}

static void runs_with_changing_batch(void **state) {
    (void)state;
    onyx_model *m = add_relu_model();
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_prepare_session(m, NULL, &rep), ONYX_OK);
    onyx_model_free(m); /* the rep keeps what it needs */
    run_batch(rep, 2);
    run_batch(rep, 5);
    run_batch(rep, 2);
    run_batch(rep, 0);
    onyx_rep_free(rep);
}

static void prepare_with_examples(void **state) {
    (void)state;
    onyx_model *m = add_relu_model();
    float x[12] = {0}, y[3] = {0};
    const int64_t xd[2] = {4, 3}, yd[1] = {3};
    onyx_value *ex[2] = {float_tensor(2, xd, x, 12), float_tensor(1, yd, y, 3)};
    onyx_session_options *opts = NULL;
    assert_int_equal(onyx_session_options_create(&opts), ONYX_OK);
    assert_int_equal(onyx_session_options_set_threads(opts, 1), ONYX_OK);
    /* NULL names: the graph inputs in order */
    assert_int_equal(onyx_session_options_add_example(opts, NULL, ex[0]), ONYX_OK);
    assert_int_equal(onyx_session_options_add_example(opts, NULL, ex[1]), ONYX_OK);
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_prepare_session(m, opts, &rep), ONYX_OK);
    onyx_session_options_free(opts);
    run_batch(rep, 4);
    run_batch(rep, 7);
    onyx_rep_free(rep);
    onyx_value_free(ex[0]);
    onyx_value_free(ex[1]);
    onyx_model_free(m);
}

static void wrong_inputs_are_refused(void **state) {
    (void)state;
    onyx_model *m = add_relu_model();
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_prepare_session(m, NULL, &rep), ONYX_OK);
    size_t n_out = 0;
    onyx_value **out = NULL;

    /* wrong dtype */
    int32_t xi[6] = {0};
    float y[3] = {0}, x4[8] = {0};
    const int64_t xd[2] = {2, 3}, yd[1] = {3}, bad_yd[1] = {4};
    onyx_value *xint = NULL;
    assert_int_equal(onyx_value_new_tensor(ONYX_INT32, 2, xd, xi, sizeof xi, &xint), ONYX_OK);
    onyx_value *yv = float_tensor(1, yd, y, 3);
    onyx_value *in[2] = {xint, yv};
    assert_int_equal(onyx_rep_run(rep, 2, NULL, (const onyx_value *const *)in, &n_out, &out),
                     ONYX_ERR_SHAPE);
    assert_non_null(strstr(onyx_last_error(), "input 'X'"));
    assert_null(out);

    /* wrong fixed dim */
    onyx_value *xv = float_tensor(2, xd, x4, 6);
    onyx_value *y4 = float_tensor(1, bad_yd, x4, 4);
    onyx_value *in2[2] = {xv, y4};
    assert_int_equal(onyx_rep_run(rep, 2, NULL, (const onyx_value *const *)in2, &n_out, &out),
                     ONYX_ERR_SHAPE);
    assert_non_null(strstr(onyx_last_error(), "input 'Y'"));

    /* missing and unknown names */
    const char *names[2] = {"X", "nope"};
    onyx_value *in3[2] = {xv, yv};
    assert_int_equal(onyx_rep_run(rep, 2, names, (const onyx_value *const *)in3, &n_out, &out),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(onyx_last_error(), "nope"));
    assert_int_equal(onyx_rep_run(rep, 1, NULL, (const onyx_value *const *)in3, &n_out, &out),
                     ONYX_ERR_INVALID_ARGUMENT);

    const char *twice[2] = {"X", "X"};
    assert_int_equal(onyx_rep_run(rep, 2, twice, (const onyx_value *const *)in3, &n_out, &out),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(onyx_last_error(), "twice"));

    /* by name, in another order, works */
    const char *names_ok[2] = {"Y", "X"};
    onyx_value *in4[2] = {yv, xv};
    assert_int_equal(onyx_rep_run(rep, 2, names_ok, (const onyx_value *const *)in4, &n_out, &out),
                     ONYX_OK);
    onyx_values_free(out, n_out);

    onyx_value_free(xint);
    onyx_value_free(yv);
    onyx_value_free(xv);
    onyx_value_free(y4);
    onyx_rep_free(rep);
    onyx_model_free(m);
}

static void devices(void **state) {
    (void)state;
    assert_true(onyx_supports_device("CPU"));
    assert_true(onyx_supports_device("cpu"));
    assert_false(onyx_supports_device("TPU"));
    assert_false(onyx_supports_device("CUDA:999"));
    assert_false(onyx_supports_device("CUDA:x"));
    onyx_model *m = add_relu_model();
    onyx_session_options *opts = NULL;
    assert_int_equal(onyx_session_options_create(&opts), ONYX_OK);
    assert_int_equal(onyx_session_options_set_devices(opts, "TPU"), ONYX_ERR_DEVICE);
    assert_non_null(strstr(onyx_last_error(), "TPU"));
    /* a name that parses but is not usable here is refused at prepare */
    assert_int_equal(onyx_session_options_set_devices(opts, "CUDA:999"), ONYX_OK);
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_prepare_session(m, opts, &rep), ONYX_ERR_DEVICE);
    assert_non_null(strstr(onyx_last_error(), "CUDA:999"));
    assert_null(rep);
    onyx_session_options_free(opts);
    assert_int_equal(onyx_is_compatible(m, "CPU"), ONYX_OK);
    onyx_model_free(m);
}

static void unknown_op_is_not_compatible(void **state) {
    (void)state;
    builder b;
    builder_init(&b, 17);
    const int64_t d[1] = {3};
    add_input(&b, "X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, d);
    add_output(&b, "Z", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, d);
    add_node(&b, "Relu", "X", NULL, "R");
    add_node(&b, "FrobnicateSideways", "R", NULL, "Z");
    size_t size;
    uint8_t *bytes = pack_model(&b, &size);
    onyx_model *m = NULL;
    assert_int_equal(onyx_model_load_buffer(bytes, size, NULL, &m), ONYX_OK);
    free(bytes);
    assert_int_equal(onyx_is_compatible(m, "CPU"), ONYX_ERR_UNSUPPORTED);
    assert_non_null(strstr(onyx_last_error(), "FrobnicateSideways"));
    onyx_rep *rep = NULL;
    assert_int_equal(onyx_prepare_session(m, NULL, &rep), ONYX_ERR_UNSUPPORTED);
    assert_non_null(strstr(onyx_last_error(), "FrobnicateSideways"));
    onyx_model_free(m);
}

static void run_node_and_run_model(void **state) {
    (void)state;
    Onnx__NodeProto node;
    onnx__node_proto__init(&node);
    char *ins[2] = {"a", "b"}, *outs[1] = {"c"};
    node.op_type = "Mul";
    node.n_input = 2;
    node.input = ins;
    node.n_output = 1;
    node.output = outs;
    uint8_t buf[256];
    size_t size = onnx__node_proto__pack(&node, buf);
    const int64_t d[2] = {2, 2}, d1[1] = {2};
    const float a[4] = {1, 2, 3, 4}, bb[2] = {10, -1};
    onyx_value *in[2] = {float_tensor(2, d, a, 4), float_tensor(1, d1, bb, 2)};
    size_t n_out = 0;
    onyx_value **out = NULL;
    onyx_status st = onyx_run_node(buf, size, 14, "CPU", 2, (const onyx_value *const *)in, 0, NULL,
                                   &n_out, &out);
    if (st != ONYX_OK) fail_msg("run_node: %s", onyx_last_error());
    assert_int_equal(n_out, 1);
    const float *c = onyx_tensor_data(out[0]);
    assert_float_equal(c[0], 10, 0);
    assert_float_equal(c[1], -2, 0);
    assert_float_equal(c[2], 30, 0);
    assert_float_equal(c[3], -4, 0);
    onyx_values_free(out, n_out);

    /* too few inputs is an error, not a crash */
    assert_int_equal(onyx_run_node(buf, size, 14, "CPU", 1, (const onyx_value *const *)in, 0, NULL,
                                   &n_out, &out),
                     ONYX_ERR_INVALID_ARGUMENT);
    /* garbage bytes */
    const uint8_t junk[3] = {0xff, 0xff, 0xff};
    assert_int_equal(onyx_run_node(junk, sizeof junk, 14, "CPU", 0, NULL, 0, NULL, &n_out, &out),
                     ONYX_ERR_INVALID_MODEL);

    /* run_model on the serialized add+relu model */
    builder b;
    builder_init(&b, 17);
    const int64_t xd[2] = {-1, 2}, yd[1] = {2};
    add_input(&b, "X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, xd);
    add_input(&b, "Y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, yd);
    add_output(&b, "Z", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, xd);
    add_node(&b, "Add", "X", "Y", "S");
    add_node(&b, "Relu", "S", NULL, "Z");
    uint8_t *bytes = pack_model(&b, &size);
    /* run_model prepares under the session options it is given */
    onyx_session_options *so = NULL;
    assert_int_equal(onyx_session_options_create(&so), ONYX_OK);
    assert_int_equal(onyx_session_options_set_devices(so, "CUDA:999"), ONYX_OK);
    out = NULL;
    assert_int_equal(onyx_run_model(bytes, size, so, 2, (const onyx_value *const *)in, &n_out, &out),
                     ONYX_ERR_DEVICE);
    assert_null(out);
    onyx_session_options_free(so);
    st = onyx_run_model(bytes, size, NULL, 2, (const onyx_value *const *)in, &n_out, &out);
    free(bytes);
    if (st != ONYX_OK) fail_msg("run_model: %s", onyx_last_error());
    c = onyx_tensor_data(out[0]);
    assert_float_equal(c[0], 11, 0);
    assert_float_equal(c[1], 1, 0);
    assert_float_equal(c[3], 3, 0);
    onyx_values_free(out, n_out);
    onyx_value_free(in[0]);
    onyx_value_free(in[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(io_info_lists_symbolic_dims),
        cmocka_unit_test(runs_with_changing_batch),
        cmocka_unit_test(prepare_with_examples),
        cmocka_unit_test(wrong_inputs_are_refused),
        cmocka_unit_test(devices),
        cmocka_unit_test(unknown_op_is_not_compatible),
        cmocka_unit_test(run_node_and_run_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
