/* Unit tests for the model loader (core/loader*.c, core/graph.c, backend/api_model.c): models
 * built in C with the protobuf-c structs (or as raw bytes), each loaded right or refused with
 * the right status and a message naming what is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/loader.h"
#include "core/loader_wire.h"
#include "ops/schema.h"

static void assert_error_mentions(const char *needle) {
    const char *msg = onyx_last_error();
    if (!strstr(msg, needle)) fail_msg("error message '%s' does not mention '%s'", msg, needle);
}

/* ------------------------------------------------------------------ building models */

#include "tests/unit/proto_alloc.h"

static Onnx__NodeProto *node(const char *op, const char *name, const char *ins, const char *outs) {
    Onnx__NodeProto *n = zalloc(sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = (char *)op;
    n->name = (char *)name;
    /* ins/outs: comma-separated names; "" entries are omitted optional slots */
    const char *lists[2] = {ins, outs};
    for (int k = 0; k < 2; k++) {
        if (!lists[k]) continue;
        const char *s = lists[k];
        for (;;) {
            const char *e = strchr(s, ',');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            char *name_copy = zalloc(len + 1);
            memcpy(name_copy, s, len);
            if (k == 0)
                PUSH(n->input, n->n_input, name_copy);
            else
                PUSH(n->output, n->n_output, name_copy);
            if (!e) break;
            s = e + 1;
        }
    }
    return n;
}

static Onnx__AttributeProto *attr(Onnx__NodeProto *n, const char *name, int type) {
    Onnx__AttributeProto *a = zalloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = (Onnx__AttributeProto__AttributeType)type;
    /* proto2 optional scalars are written only when flagged: flag the one this type uses */
    a->has_f = type == ATTR_FLOAT;
    a->has_i = type == ATTR_INT;
    a->has_s = type == ATTR_STRING;
    PUSH(n->attribute, n->n_attribute, a);
    return a;
}

/* A tensor type; dims < 0 become dim_param "N<i>"; rank < 0: no shape. */
static Onnx__TypeProto *tensor_type(int elem, int rank, const int64_t *dims) {
    Onnx__TypeProto *t = zalloc(sizeof *t);
    onnx__type_proto__init(t);
    Onnx__TypeProto__Tensor *tt = zalloc(sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    if (rank >= 0) {
        Onnx__TensorShapeProto *sh = zalloc(sizeof *sh);
        onnx__tensor_shape_proto__init(sh);
        for (int i = 0; i < rank; i++) {
            Onnx__TensorShapeProto__Dimension *d = zalloc(sizeof *d);
            onnx__tensor_shape_proto__dimension__init(d);
            if (dims[i] >= 0) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                d->dim_value = dims[i];
            } else {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                static const char *const params[] = {"N0", "N1", "N2", "N3", "N4", "N5"};
                assert_true(i < 6);
                d->dim_param = (char *)params[i];
            }
            PUSH(sh->dim, sh->n_dim, d);
        }
        tt->shape = sh;
    }
    return t;
}

static Onnx__ValueInfoProto *vinfo(const char *name, Onnx__TypeProto *type) {
    Onnx__ValueInfoProto *v = zalloc(sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = (char *)name;
    v->type = type;
    return v;
}

static Onnx__ValueInfoProto *float_vi(const char *name) {
    static const int64_t d[] = {2};
    return vinfo(name, tensor_type(ONYX_FLOAT, 1, d));
}

static Onnx__GraphProto *graph_new(const char *name) {
    Onnx__GraphProto *g = zalloc(sizeof *g);
    onnx__graph_proto__init(g);
    g->name = (char *)name;
    return g;
}

static void add_node(Onnx__GraphProto *g, Onnx__NodeProto *n) { PUSH(g->node, g->n_node, n); }
static void add_input(Onnx__GraphProto *g, const char *name) {
    PUSH(g->input, g->n_input, float_vi(name));
}
static void add_output(Onnx__GraphProto *g, const char *name) {
    PUSH(g->output, g->n_output, float_vi(name));
}

static Onnx__TensorProto *float_init(Onnx__GraphProto *g, const char *name, size_t n,
                                     const float *vals) {
    Onnx__TensorProto *t = zalloc(sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->has_data_type = 1;
    t->data_type = ONYX_FLOAT;
    t->n_dims = 1;
    t->dims = zalloc(sizeof(int64_t));
    t->dims[0] = (int64_t)n;
    t->has_raw_data = 1;
    t->raw_data.len = n * sizeof(float);
    t->raw_data.data = zalloc(t->raw_data.len);
    memcpy(t->raw_data.data, vals, t->raw_data.len);
    if (g) PUSH(g->initializer, g->n_initializer, t);
    return t;
}

static Onnx__ModelProto *model_new(Onnx__GraphProto *g, int64_t opset) {
    Onnx__ModelProto *m = zalloc(sizeof *m);
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = 8;
    m->graph = g;
    if (opset) {
        Onnx__OperatorSetIdProto *o = zalloc(sizeof *o);
        onnx__operator_set_id_proto__init(o);
        o->domain = "";
        o->has_version = 1;
        o->version = opset;
        PUSH(m->opset_import, m->n_opset_import, o);
    }
    return m;
}

static void add_opset(Onnx__ModelProto *m, const char *domain, int64_t version) {
    Onnx__OperatorSetIdProto *o = zalloc(sizeof *o);
    onnx__operator_set_id_proto__init(o);
    o->domain = (char *)domain;
    o->has_version = 1;
    o->version = version;
    PUSH(m->opset_import, m->n_opset_import, o);
}

static uint8_t *pack_model(const Onnx__ModelProto *m, size_t *n) {
    *n = onnx__model_proto__get_packed_size(m);
    uint8_t *b = zalloc(*n);
    onnx__model_proto__pack(m, b);
    return b;
}

/* Packs and loads (the bytes path, as a file would). */
static onyx_status load(const Onnx__ModelProto *mp, model **out) {
    size_t n;
    uint8_t *b = pack_model(mp, &n);
    *out = NULL;
    return model_load_bytes(&ops_registry, b, n, NULL, out);
}

/* X -> Foo -> Y: the smallest model, with an op onyx does not know. */
static Onnx__ModelProto *tiny(void) {
    Onnx__GraphProto *g = graph_new("tiny");
    add_input(g, "X");
    add_node(g, node("NoSuchOpAnywhere", "foo", "X", "Y"));
    add_output(g, "Y");
    return model_new(g, 13);
}

/* ------------------------------------------------------------------ tests: loads */

static void test_load_basic(void **state) {
    (void)state;
    Onnx__GraphProto *g = graph_new("main");
    static const int64_t xd[] = {-1, 3};
    PUSH(g->input, g->n_input, vinfo("X", tensor_type(ONYX_FLOAT, 2, xd)));
    /* old IR style: the weight is listed as an input too */
    PUSH(g->input, g->n_input, float_vi("W"));
    const float w[] = {1, 2, 3};
    float_init(g, "W", 3, w);
    add_node(g, node("NoSuchOpAnywhere", "foo", "X,,W", "Y,"));
    add_output(g, "Y");
    Onnx__ModelProto *mp = model_new(g, 13);
    add_opset(mp, "ai.onnx.ml", 3);

    model *m;
    assert_int_equal(load(mp, &m), ONYX_OK);
    assert_int_equal(m->refs, 1);
    assert_int_equal(m->ir_version, 8);
    assert_int_equal(model_opset(m, ""), 13);
    assert_int_equal(model_opset(m, "ai.onnx"), 13);
    assert_int_equal(model_opset(m, "ai.onnx.ml"), 3);
    assert_int_equal(model_opset(m, "com.example"), 0);
    const graph *mg = m->main;
    assert_string_equal(mg->name, "main");
    assert_null(mg->parent);
    assert_ptr_equal(mg->model, m);
    assert_int_equal(mg->n_inputs, 1);
    const graph_value *x = &mg->values[mg->inputs[0]];
    assert_string_equal(x->name, "X");
    assert_true(x->flags & GV_INPUT);
    assert_int_equal(x->type.kind, ONYX_VALUE_TENSOR);
    assert_int_equal(x->type.dtype, ONYX_FLOAT);
    assert_int_equal(x->type.rank, 2);
    assert_int_equal(x->type.dims[0], -1);
    assert_int_equal(x->type.dims[1], 3);
    assert_string_equal(x->dim_params[0], "N0");
    assert_null(x->dim_params[1]);
    int wi = graph_find_value(mg, "W");
    assert_true(wi >= 0);
    assert_int_equal(mg->values[wi].flags, GV_INITIALIZER);
    assert_memory_equal(mg->values[wi].init->data, w, sizeof w);
    assert_int_equal(mg->values[wi].type.dims[0], 3);
    assert_int_equal(mg->n_nodes, 1);
    const graph_node *n = &mg->nodes[0];
    assert_null(n->schema); /* unknown ops load; is_compatible refuses them later */
    assert_int_equal(n->version, 0);
    assert_string_equal(n->domain, "");
    assert_int_equal(n->n_inputs, 3);
    assert_int_equal(n->inputs[0], mg->inputs[0]);
    assert_int_equal(n->inputs[1], -1);
    assert_int_equal(n->inputs[2], wi);
    assert_int_equal(n->n_outputs, 2);
    assert_int_equal(n->outputs[1], -1);
    assert_int_equal(mg->values[n->outputs[0]].producer, 0);
    assert_int_equal(mg->n_outputs, 1);
    assert_int_equal(mg->outputs[0], n->outputs[0]);
    assert_true(mg->values[mg->outputs[0]].flags & GV_OUTPUT);
    assert_int_equal(graph_find_value(mg, "nope"), -1);
    char lab[128];
    assert_string_equal(node_label(n, lab, sizeof lab), "node 'foo' (NoSuchOpAnywhere)");
    model_retain(m);
    model_release(m);
    model_release(m);
}

static void test_public_api(void **state) {
    (void)state;
    Onnx__GraphProto *g = graph_new("main");
    static const int64_t xd[] = {-1, 3};
    PUSH(g->input, g->n_input, vinfo("X", tensor_type(ONYX_FLOAT16, 2, xd)));
    /* an input of type seq(tensor(int64)) */
    Onnx__TypeProto *seq = zalloc(sizeof *seq);
    onnx__type_proto__init(seq);
    Onnx__TypeProto__Sequence *st = zalloc(sizeof *st);
    onnx__type_proto__sequence__init(st);
    st->elem_type = tensor_type(ONYX_INT64, -1, NULL);
    seq->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    seq->sequence_type = st;
    PUSH(g->input, g->n_input, vinfo("S", seq));
    add_node(g, node("NoSuchOpAnywhere", "", "X,S", "Y"));
    add_output(g, "Y");
    size_t n;
    uint8_t *b = pack_model(model_new(g, 17), &n);
    onyx_model *om;
    assert_int_equal(onyx_model_load_buffer(b, n, NULL, &om), ONYX_OK);
    assert_int_equal(onyx_model_ir_version(om), 8);
    assert_int_equal(onyx_model_opset(om, ""), 17);
    assert_int_equal(onyx_model_opset(om, "ai.onnx.ml"), 0);
    assert_int_equal(onyx_model_input_count(om), 2);
    assert_int_equal(onyx_model_output_count(om), 1);
    onyx_io_info io;
    assert_int_equal(onyx_model_input(om, 0, &io), ONYX_OK);
    assert_string_equal(io.name, "X");
    assert_int_equal(io.kind, ONYX_VALUE_TENSOR);
    assert_int_equal(io.dtype, ONYX_FLOAT16);
    assert_int_equal(io.rank, 2);
    assert_int_equal(io.dims[0], -1);
    assert_int_equal(io.dims[1], 3);
    assert_string_equal(io.dim_params[0], "N0");
    assert_null(io.dim_params[1]);
    assert_int_equal(onyx_model_input(om, 1, &io), ONYX_OK);
    assert_int_equal(io.kind, ONYX_VALUE_SEQUENCE);
    assert_int_equal(io.dtype, ONYX_INT64);
    assert_int_equal(io.rank, -1);
    assert_int_equal(onyx_model_output(om, 0, &io), ONYX_OK);
    assert_string_equal(io.name, "Y");
    assert_int_equal(onyx_model_input(om, 2, &io), ONYX_ERR_INVALID_ARGUMENT);
    assert_error_mentions("out of range");
    onyx_model_free(om);
    onyx_model_free(NULL);

    assert_int_equal(onyx_model_load_file("/nonexistent/model.onnx", &om), ONYX_ERR_IO);
    assert_error_mentions("/nonexistent/model.onnx");
}

static void test_unsorted_nodes_are_sorted(void **state) {
    (void)state;
    Onnx__GraphProto *g = graph_new("g");
    add_input(g, "X");
    add_node(g, node("Op", "c", "b,a", "c"));
    add_node(g, node("Op", "b", "a", "b"));
    add_node(g, node("Op", "a", "X", "a"));
    add_output(g, "c");
    model *m;
    assert_int_equal(load(model_new(g, 13), &m), ONYX_OK);
    const graph *mg = m->main;
    assert_string_equal(mg->nodes[0].name, "a");
    assert_string_equal(mg->nodes[1].name, "b");
    assert_string_equal(mg->nodes[2].name, "c");
    for (int i = 0; i < mg->n_nodes; i++)
        assert_int_equal(mg->values[mg->nodes[i].outputs[0]].producer, i);
    model_release(m);
}

/* main: X -> Outer{ G1: Mid{ G2: Leaf(X) } } and an If whose branches read X and T, where T is
 * produced by a node listed after the If. */
static void test_subgraph_captures(void **state) {
    (void)state;
    Onnx__GraphProto *g2 = graph_new("g2");
    add_node(g2, node("Leaf", "leaf", "X", "z"));
    add_output(g2, "z");
    Onnx__GraphProto *g1 = graph_new("g1");
    Onnx__NodeProto *mid = node("Mid", "mid", NULL, "y");
    attr(mid, "body", ATTR_GRAPH)->g = g2;
    add_node(g1, mid);
    add_output(g1, "y");
    Onnx__GraphProto *g = graph_new("main");
    add_input(g, "X");
    add_input(g, "C");
    Onnx__NodeProto *outer = node("Outer", "outer", NULL, "O");
    attr(outer, "body", ATTR_GRAPH)->g = g1;
    add_node(g, outer);
    /* an If reading T (made later in the file) in one branch and X in the other */
    Onnx__GraphProto *then_g = graph_new("then");
    add_output(then_g, "T");
    Onnx__GraphProto *else_g = graph_new("else");
    add_node(else_g, node("Leaf", "e", "X", "e_out"));
    add_output(else_g, "e_out");
    Onnx__NodeProto *iff = node("If", "if", "C", "I");
    attr(iff, "then_branch", ATTR_GRAPH)->g = then_g;
    attr(iff, "else_branch", ATTR_GRAPH)->g = else_g;
    add_node(g, iff);
    add_node(g, node("Leaf", "t", "X", "T"));
    add_output(g, "O");
    add_output(g, "I");

    model *m;
    assert_int_equal(load(model_new(g, 13), &m), ONYX_OK);
    const graph *mg = m->main;
    int xi = graph_find_value(mg, "X");
    int ti = graph_find_value(mg, "T");
    /* the producer of T now comes before the If */
    int pos_t = -1, pos_if = -1, pos_outer = -1;
    for (int i = 0; i < mg->n_nodes; i++) {
        if (strcmp(mg->nodes[i].name, "t") == 0) pos_t = i;
        if (strcmp(mg->nodes[i].name, "if") == 0) pos_if = i;
        if (strcmp(mg->nodes[i].name, "outer") == 0) pos_outer = i;
    }
    assert_true(pos_t >= 0 && pos_t < pos_if);
    const graph_node *on = &mg->nodes[pos_outer];
    assert_int_equal(on->n_captures, 1);
    assert_int_equal(on->captures[0], xi);
    const graph *lg1 = attr_graph(on, "body");
    assert_non_null(lg1);
    assert_ptr_equal(lg1->parent, mg);
    int x1 = graph_find_value(lg1, "X");
    assert_true(x1 >= 0);
    assert_true(lg1->values[x1].flags & GV_CAPTURED);
    assert_int_equal(lg1->values[x1].outer, xi);
    assert_int_equal(lg1->values[x1].producer, -1);
    const graph_node *mn = &lg1->nodes[0];
    assert_int_equal(mn->n_captures, 1);
    assert_int_equal(mn->captures[0], x1);
    const graph *lg2 = attr_graph(mn, "body");
    assert_ptr_equal(lg2->parent, lg1);
    int x2 = graph_find_value(lg2, "X");
    assert_true(lg2->values[x2].flags & GV_CAPTURED);
    assert_int_equal(lg2->values[x2].outer, x1);
    assert_int_equal(lg2->nodes[0].inputs[0], x2);

    const graph_node *in = &mg->nodes[pos_if];
    assert_int_equal(in->n_captures, 2);
    bool has_t = false, has_x = false;
    for (int k = 0; k < in->n_captures; k++) {
        has_t |= in->captures[k] == ti;
        has_x |= in->captures[k] == xi;
    }
    assert_true(has_t && has_x);
    const graph *then_l = attr_graph(in, "then_branch");
    int tt = then_l->outputs[0];
    assert_int_equal(then_l->values[tt].flags, GV_CAPTURED | GV_OUTPUT);
    assert_int_equal(then_l->values[tt].outer, ti);
    model_release(m);
}

static void test_deep_but_allowed_nesting(void **state) {
    (void)state;
    /* 20 graph levels (60 message levels) load */
    Onnx__GraphProto *inner = graph_new("leaf");
    add_node(inner, node("Leaf", "l", "X", "o"));
    add_output(inner, "o");
    for (int i = 0; i < 20; i++) {
        Onnx__GraphProto *g = graph_new("level");
        Onnx__NodeProto *n = node("Wrap", "w", NULL, "o");
        attr(n, "body", ATTR_GRAPH)->g = inner;
        add_node(g, n);
        add_output(g, "o");
        inner = g;
    }
    add_input(inner, "X");
    model *m;
    assert_int_equal(load(model_new(inner, 13), &m), ONYX_OK);
    model_release(m);
}

static void test_attributes(void **state) {
    (void)state;
    Onnx__GraphProto *g = graph_new("g");
    add_input(g, "X");
    Onnx__NodeProto *n = node("Whatever", "n", "X", "Y");
    attr(n, "f", ATTR_FLOAT)->f = 2.5f;
    attr(n, "i", ATTR_INT)->i = -7;
    Onnx__AttributeProto *a = attr(n, "s", ATTR_STRING);
    a->s.data = (uint8_t *)"abc";
    a->s.len = 3;
    a = attr(n, "ints", ATTR_INTS);
    int64_t iv[] = {1, 2, 3};
    a->ints = iv;
    a->n_ints = 3;
    a = attr(n, "floats", ATTR_FLOATS);
    float fv[] = {0.5f};
    a->floats = fv;
    a->n_floats = 1;
    a = attr(n, "strings", ATTR_STRINGS);
    ProtobufCBinaryData sv[] = {{1, (uint8_t *)"a"}, {2, (uint8_t *)"bc"}};
    a->strings = sv;
    a->n_strings = 2;
    const float tv[] = {4, 5};
    attr(n, "t", ATTR_TENSOR)->t = float_init(NULL, "tv", 2, tv);
    a = attr(n, "sp", ATTR_SPARSE_TENSOR);
    Onnx__SparseTensorProto *sp = zalloc(sizeof *sp);
    onnx__sparse_tensor_proto__init(sp);
    const float one[] = {7};
    sp->values = float_init(NULL, "spv", 1, one);
    Onnx__TensorProto *ix = zalloc(sizeof *ix);
    onnx__tensor_proto__init(ix);
    ix->has_data_type = 1;
    ix->data_type = ONYX_INT64;
    ix->n_dims = 1;
    ix->dims = zalloc(sizeof(int64_t));
    ix->dims[0] = 1;
    ix->n_int64_data = 1;
    ix->int64_data = zalloc(sizeof(int64_t));
    ix->int64_data[0] = 2;
    sp->indices = ix;
    sp->n_dims = 1;
    sp->dims = zalloc(sizeof(int64_t));
    sp->dims[0] = 4;
    a->sparse_tensor = sp;
    a = attr(n, "tp", ATTR_TYPE_PROTO);
    static const int64_t td[] = {5};
    a->tp = tensor_type(ONYX_INT32, 1, td);
    /* an old-style attribute without a type */
    a = attr(n, "untyped", ATTR_UNDEFINED);
    a->has_type = 0;
    a->has_i = 1;
    a->i = 9;
    add_node(g, n);
    add_output(g, "Y");
    /* a sparse initializer is a (dense) initializer */
    PUSH(g->sparse_initializer, g->n_sparse_initializer, sp);

    model *m;
    assert_int_equal(load(model_new(g, 13), &m), ONYX_OK);
    const graph_node *gn = &m->main->nodes[0];
    assert_true(attr_float(gn, "f", 0) == 2.5f);
    assert_int_equal(attr_int(gn, "i", 0), -7);
    assert_int_equal(attr_int(gn, "missing", 42), 42);
    assert_int_equal(attr_int(gn, "f", 42), 42); /* wrong type reads as absent */
    assert_string_equal(attr_string(gn, "s", NULL), "abc");
    assert_int_equal(node_attr(gn, "s")->s_len, 3);
    const int64_t *ints;
    assert_int_equal(attr_ints(gn, "ints", &ints), 3);
    assert_int_equal(ints[2], 3);
    const float *floats;
    assert_int_equal(attr_floats(gn, "floats", &floats), 1);
    assert_true(floats[0] == 0.5f);
    assert_int_equal(attr_ints(gn, "nope", &ints), 0);
    assert_null(ints);
    const graph_attr *sa = node_attr(gn, "strings");
    assert_int_equal(sa->n, 2);
    assert_string_equal(sa->strings[1], "bc");
    const tensor *t = attr_tensor(gn, "t");
    assert_int_equal(t->numel, 2);
    assert_true(((float *)t->data)[1] == 5);
    const tensor *dense = attr_tensor(gn, "sp");
    const float want[4] = {0, 0, 7, 0};
    assert_memory_equal(dense->data, want, sizeof want);
    const graph_attr *tpa = node_attr(gn, "tp");
    assert_int_equal(tpa->tp->kind, ONYX_VALUE_TENSOR);
    assert_int_equal(tpa->tp->dtype, ONYX_INT32);
    assert_int_equal(tpa->tp->dims[0], 5);
    assert_int_equal(attr_int(gn, "untyped", 0), 9);
    int spi = graph_find_value(m->main, "spv");
    assert_true(spi >= 0);
    assert_int_equal(m->main->values[spi].flags, GV_INITIALIZER);
    assert_memory_equal(m->main->values[spi].init->data, want, sizeof want);
    model_release(m);
}

static void test_old_ir_without_opsets(void **state) {
    (void)state;
    Onnx__ModelProto *mp = tiny();
    mp->n_opset_import = 0;
    mp->ir_version = 2;
    model *m;
    assert_int_equal(load(mp, &m), ONYX_OK);
    assert_int_equal(model_opset(m, ""), 1);
    model_release(m);

    mp->ir_version = 8;
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("no opset_import");

    /* a model importing only another domain loads; its ai.onnx nodes are refused by domain */
    add_opset(mp, "ai.onnx.ml", 3);
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("domain 'ai.onnx' is not imported");
    mp->graph->node[0]->domain = "ai.onnx.ml";
    assert_int_equal(load(mp, &m), ONYX_OK);
    assert_string_equal(m->main->nodes[0].domain, "ai.onnx.ml");
    model_release(m);
}

/* ------------------------------------------------------------------ tests: refusals */

static void test_truncated_and_garbage(void **state) {
    (void)state;
    size_t n;
    uint8_t *b = pack_model(tiny(), &n);
    model *m = NULL;
    for (size_t cut = 1; cut < n; cut += 3) {
        assert_int_equal(model_load_bytes(&ops_registry, b, n - cut, NULL, &m), ONYX_ERR_INVALID_MODEL);
        assert_null(m);
    }
    assert_int_equal(model_load_bytes(&ops_registry, b, n / 2, NULL, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("truncated or corrupt");
    uint8_t garbage[64];
    for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (uint8_t)(i * 37 + 255);
    assert_int_equal(model_load_bytes(&ops_registry, garbage, sizeof garbage, NULL, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("not a valid ONNX ModelProto");
    /* a length-delimited field whose length runs past the end */
    const uint8_t bad_len[] = {0x3a, 0x7f, 0x00};
    assert_int_equal(model_load_bytes(&ops_registry, bad_len, sizeof bad_len, NULL, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("truncated or corrupt");
    /* right framing, wrong wire type for ir_version (a string where a varint belongs) */
    const uint8_t bad_wt[] = {0x0a, 0x01, 0x41};
    assert_int_equal(model_load_bytes(&ops_registry, bad_wt, sizeof bad_wt, NULL, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("not a valid ONNX ModelProto");
    assert_int_equal(model_load_bytes(&ops_registry, NULL, 0, NULL, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("ir_version");
    /* owned bytes are freed whatever happens (ASan would report a leak or a double free) */
    uint8_t *owned = malloc(sizeof garbage);
    assert_non_null(owned);
    memcpy(owned, garbage, sizeof garbage);
    assert_int_equal(model_load_owned_bytes(&ops_registry, owned, sizeof garbage, NULL, &m), ONYX_ERR_INVALID_MODEL);
    assert_null(m);
    owned = malloc(n);
    assert_non_null(owned);
    memcpy(owned, b, n);
    assert_int_equal(model_load_owned_bytes(&ops_registry, owned, n, NULL, &m), ONYX_OK);
    model_release(m);
}

/* Prepends bytes to a buffer filled from its end. */
typedef struct back_buf {
    uint8_t *b;
    size_t cap, pos; /* data is b[pos, cap) */
} back_buf;

static void put(back_buf *w, const void *p, size_t n) {
    assert_true(w->pos >= n);
    w->pos -= n;
    memcpy(w->b + w->pos, p, n);
}

static void put_varint(back_buf *w, uint64_t v) {
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) tmp[n] |= 0x80;
        n++;
    } while (v);
    put(w, tmp, n);
}

/* Makes everything written so far the body of length-delimited field `field`. */
static void wrap(back_buf *w, unsigned field) {
    put_varint(w, (uint64_t)(w->cap - w->pos));
    put_varint(w, (uint64_t)field << 3 | 2);
}

static void test_deep_nesting_refused(void **state) {
    (void)state;
    const int levels = 100000;
    back_buf w = {NULL, (size_t)levels * 40 + 256, 0};
    w.b = malloc(w.cap);
    assert_non_null(w.b);
    w.pos = w.cap;
    /* innermost graph is empty; each level: Graph{node: Node{op_type, attribute: Attr{name,
     * type GRAPH, g: <graph>}}} built inside out */
    for (int i = 0; i < levels; i++) {
        wrap(&w, 6); /* AttributeProto.g */
        const uint8_t type_graph[] = {0xa0, 0x01, 0x05}; /* field 20 varint 5 */
        put(&w, type_graph, sizeof type_graph);
        const uint8_t name[] = {0x0a, 0x01, 'g'};
        put(&w, name, sizeof name);
        wrap(&w, 5); /* NodeProto.attribute */
        const uint8_t op[] = {0x22, 0x01, 'W'};
        put(&w, op, sizeof op);
        wrap(&w, 1); /* GraphProto.node */
    }
    wrap(&w, 7); /* ModelProto.graph */
    const uint8_t opset[] = {0x42, 0x02, 0x10, 0x0d}; /* opset_import { version: 13 } */
    put(&w, opset, sizeof opset);
    const uint8_t ir[] = {0x08, 0x08};
    put(&w, ir, sizeof ir);
    model *m = NULL;
    assert_int_equal(model_load_bytes(&ops_registry, w.b + w.pos, w.cap - w.pos, NULL, &m),
                     ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("nests deeper than");
    assert_null(m);
    free(w.b);
}

static void test_undefined_input(void **state) {
    (void)state;
    Onnx__ModelProto *mp = tiny();
    mp->graph->node[0]->input[0] = "nowhere";
    model *m;
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("node 'foo'");
    assert_error_mentions("input 0 'nowhere' is not defined");

    /* in a subgraph the message says the enclosing graphs were searched too */
    Onnx__GraphProto *sub = graph_new("sub");
    add_node(sub, node("Leaf", "leaf", "ghost", "s"));
    add_output(sub, "s");
    Onnx__GraphProto *g = graph_new("g");
    Onnx__NodeProto *n = node("Wrap", "wrap", NULL, "o");
    attr(n, "body", ATTR_GRAPH)->g = sub;
    add_node(g, n);
    add_output(g, "o");
    assert_int_equal(load(model_new(g, 13), &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("node 'wrap' (Wrap): attribute 'body': node 'leaf' (Leaf): input 0 "
                          "'ghost' is not defined");
    assert_error_mentions("enclosing graph");

    Onnx__ModelProto *mp2 = tiny();
    mp2->graph->output[0]->name = "unmade";
    assert_int_equal(load(mp2, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("graph output 'unmade' is not produced");
}

static void test_cycle(void **state) {
    (void)state;
    Onnx__GraphProto *g = graph_new("cyc");
    add_input(g, "X");
    add_node(g, node("Op", "a", "X,b", "a"));
    add_node(g, node("Op", "b", "a", "b"));
    add_output(g, "b");
    model *m;
    assert_int_equal(load(model_new(g, 13), &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("cycle");
    assert_error_mentions("node 'a' (Op) reads 'b'");

    /* a node whose subgraph reads the node's own output */
    Onnx__GraphProto *sub = graph_new("sub");
    add_output(sub, "self");
    Onnx__GraphProto *g2 = graph_new("g2");
    Onnx__NodeProto *n = node("Wrap", "wrap", NULL, "self");
    attr(n, "body", ATTR_GRAPH)->g = sub;
    add_node(g2, n);
    add_output(g2, "self");
    assert_int_equal(load(model_new(g2, 13), &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("captures 'self'");
}

static void test_duplicate_names(void **state) {
    (void)state;
    Onnx__GraphProto *g = graph_new("g");
    add_input(g, "X");
    add_node(g, node("Op", "first", "X", "y"));
    add_node(g, node("Op", "second", "X", "y"));
    add_output(g, "y");
    model *m;
    assert_int_equal(load(model_new(g, 13), &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("node 'second' (Op): output 0 'y' is assigned twice");
    assert_error_mentions("node 'first'");

    Onnx__ModelProto *mp = tiny();
    mp->graph->node[0]->output[0] = "X";
    mp->graph->output[0]->name = "X";
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("already a graph input");

    mp = tiny();
    const float w[] = {1};
    float_init(mp->graph, "Y", 1, w);
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("already an initializer");

    mp = tiny();
    float_init(mp->graph, "W", 1, w);
    float_init(mp->graph, "W", 1, w);
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("initializer 'W' is given twice");

    mp = tiny();
    add_input(mp->graph, "X");
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("graph input 'X' is listed twice");

    mp = tiny();
    Onnx__AttributeProto *a = attr(mp->graph->node[0], "k", ATTR_INT);
    a->i = 1;
    attr(mp->graph->node[0], "k", ATTR_INT);
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("attribute 'k' is given twice");
}

static void test_bad_initializer(void **state) {
    (void)state;
    Onnx__ModelProto *mp = tiny();
    const float w[] = {1, 2, 3};
    Onnx__TensorProto *t = float_init(mp->graph, "W", 3, w);
    t->raw_data.len = 10;
    model *m;
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("tensor 'W': raw_data has 10 bytes, expected 12");
    t->raw_data.len = 12;
    t->dims[0] = -3;
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("negative dim");
    int64_t big[] = {INT64_MAX, 2};
    t->dims = big;
    t->n_dims = 2;
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("overflows");

    /* external data cannot be read from a model given as bytes without a folder */
    mp = tiny();
    t = float_init(mp->graph, "E", 3, w);
    t->has_raw_data = 0;
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    Onnx__StringStringEntryProto *e = zalloc(sizeof *e);
    onnx__string_string_entry_proto__init(e);
    e->key = "location";
    e->value = "../../etc/passwd";
    PUSH(t->external_data, t->n_external_data, e);
    size_t n;
    uint8_t *b = pack_model(mp, &n);
    assert_int_equal(model_load_bytes(&ops_registry, b, n, NULL, &m), ONYX_ERR_IO);
    assert_error_mentions("tensor 'E'");
    assert_int_equal(model_load_bytes(&ops_registry, b, n, "/tmp", &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("contains '..'");
}

/* ------------------------------------------------------------------ tests: split loading */

/* a followed by b. */
static uint8_t *cat(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, size_t *n) {
    *n = na + nb;
    uint8_t *out = zalloc(*n);
    memcpy(out, a, na);
    if (nb) memcpy(out + na, b, nb);
    return out;
}

/* A length-delimited field's tag and length (the payload follows). */
static size_t field_head(uint8_t *dst, unsigned field, size_t len) {
    size_t n = 0;
    for (uint64_t v = (uint64_t)field << 3 | 2;; v >>= 7) {
        dst[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
        if (v <= 0x7f) break;
    }
    for (uint64_t v = len;; v >>= 7) {
        dst[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
        if (v <= 0x7f) break;
    }
    return n;
}

/* `bytes` + field `field` holding `payload`. */
static uint8_t *add_field(const uint8_t *bytes, size_t n, unsigned field, const uint8_t *payload,
                          size_t len, size_t *out_n) {
    uint8_t head[24];
    size_t h = field_head(head, field, len);
    size_t n1;
    uint8_t *with_head = cat(bytes, n, head, h, &n1);
    return cat(with_head, n1, payload, len, out_n);
}

/* The model the bytes path gives (main graph's initializers split off and read in place) against
 * the one protobuf-c's whole unpack gives: the same initializers, in the same order, with the same
 * bytes. */
static void assert_same_initializers(const uint8_t *b, size_t n) {
    model *split = NULL, *whole = NULL;
    assert_int_equal(model_load_bytes(&ops_registry, b, n, NULL, &split), ONYX_OK);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, n, b);
    assert_non_null(mp);
    assert_int_equal(model_from_proto(&ops_registry, mp, NULL, &whole), ONYX_OK);
    onnx__model_proto__free_unpacked(mp, NULL);
    const graph *gs = split->main, *gw = whole->main;
    assert_int_equal(gs->n_values, gw->n_values);
    for (int v = 0; v < gs->n_values; v++) {
        assert_string_equal(gs->values[v].name, gw->values[v].name);
        assert_int_equal(gs->values[v].flags, gw->values[v].flags);
        const tensor *a = gs->values[v].init, *c = gw->values[v].init;
        assert_int_equal(a == NULL, c == NULL);
        if (!a) continue;
        assert_int_equal(a->dtype, c->dtype);
        assert_int_equal(a->numel, c->numel);
        assert_memory_equal(a->data, c->data, (size_t)a->numel * dtype_size(a->dtype));
    }
    model_release(split);
    model_release(whole);
}

static void test_split_initializers(void **state) {
    (void)state;
    /* raw and typed initializers interleaved */
    Onnx__ModelProto *mp = tiny();
    const float a[] = {1, 2, 3}, c[] = {-1, 0.5f};
    float_init(mp->graph, "A", 3, a);
    Onnx__TensorProto *typed = float_init(mp->graph, "B", 2, c);
    typed->has_raw_data = 0;
    typed->n_float_data = 2;
    typed->float_data = (float *)c;
    float_init(mp->graph, "C", 2, c);
    size_t n;
    uint8_t *b = pack_model(mp, &n);
    assert_same_initializers(b, n);
    loader_split sp;
    assert_int_equal(loader_split_model(b, n, &sp), ONYX_OK);
    assert_int_equal(sp.n_inits, 3);
    assert_true(sp.skeleton_size < n);
    loader_split_free(&sp);

    /* raw_data twice in one initializer: the last one counts, as in protobuf */
    Onnx__ModelProto *bare = tiny();
    uint8_t *base = pack_model(bare, &n);
    Onnx__TensorProto *t = float_init(NULL, "W", 2, c);
    size_t tn = onnx__tensor_proto__get_packed_size(t), tn2;
    uint8_t *tb = zalloc(tn);
    onnx__tensor_proto__pack(t, tb);
    const float later[] = {7, 8};
    uint8_t *twice = add_field(tb, tn, 9, (const uint8_t *)later, sizeof later, &tn2);
    /* the initializer goes into a second graph field: protobuf merges it into the first, and
     * the split refuses to guess (the whole unpack loads it) */
    Onnx__GraphProto *gi = graph_new("second"); /* a name, and the initializer below */
    size_t gn = onnx__graph_proto__get_packed_size(gi), gn2, n2;
    uint8_t *gb = zalloc(gn);
    onnx__graph_proto__pack(gi, gb);
    uint8_t *graph_with_init = add_field(gb, gn, 5, twice, tn2, &gn2);
    uint8_t *merged = add_field(base, n, 7, graph_with_init, gn2, &n2);
    assert_int_equal(loader_split_model(merged, n2, &sp), ONYX_OK);
    assert_int_equal(sp.n_inits, 0);
    assert_same_initializers(merged, n2);

    /* the same initializer in the one graph field: split, and the last raw_data wins */
    mp = tiny();
    Onnx__GraphProto *g = mp->graph;
    mp->graph = NULL;
    size_t mn, g1n, one_n;
    uint8_t *mb = pack_model(mp, &mn);
    size_t g0 = onnx__graph_proto__get_packed_size(g);
    uint8_t *g0b = zalloc(g0);
    onnx__graph_proto__pack(g, g0b);
    uint8_t *g1 = add_field(g0b, g0, 5, twice, tn2, &g1n);
    uint8_t *one = add_field(mb, mn, 7, g1, g1n, &one_n);
    assert_same_initializers(one, one_n);
    model *m;
    assert_int_equal(model_load_bytes(&ops_registry, one, one_n, NULL, &m), ONYX_OK);
    const graph *mg = m->main;
    bool found = false;
    for (int v = 0; v < mg->n_values; v++) {
        if (strcmp(mg->values[v].name, "W")) continue;
        found = true;
        assert_memory_equal(mg->values[v].init->data, later, sizeof later);
    }
    assert_true(found);
    model_release(m);

    /* an initializer protobuf-c refuses (data_type as a length-delimited field): named */
    const uint8_t bad_type[] = {0x01};
    size_t bad_n, gbad_n, mbad_n;
    uint8_t *bad = add_field(tb, tn, 2, bad_type, sizeof bad_type, &bad_n);
    uint8_t *gbad = add_field(g0b, g0, 5, bad, bad_n, &gbad_n);
    uint8_t *mbad = add_field(mb, mn, 7, gbad, gbad_n, &mbad_n);
    assert_int_equal(model_load_bytes(&ops_registry, mbad, mbad_n, NULL, &m),
                     ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("initializer 0: not a valid ONNX TensorProto");
}

/* model.onnx + weights.bin in one folder, loaded by path: external data is found beside it */
static void test_external_data_by_path(void **state) {
    (void)state;
    char dir[] = "/tmp/onyx_loader_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char wpath[128], mpath[128];
    snprintf(wpath, sizeof wpath, "%s/weights.bin", dir);
    snprintf(mpath, sizeof mpath, "%s/model.onnx", dir);
    const float w[3] = {1.5f, 2.5f, 3.5f};
    FILE *f = fopen(wpath, "wb");
    assert_non_null(f);
    const uint32_t pad = 0;
    fwrite(&pad, sizeof pad, 1, f);
    fwrite(w, sizeof w, 1, f);
    fclose(f);

    Onnx__ModelProto *mp = tiny();
    Onnx__TensorProto *t = float_init(mp->graph, "W", 3, w);
    t->has_raw_data = 0;
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    const char *kv[][2] = {{"location", "weights.bin"}, {"offset", "4"}, {"length", "12"}};
    for (int i = 0; i < 3; i++) {
        Onnx__StringStringEntryProto *e = zalloc(sizeof *e);
        onnx__string_string_entry_proto__init(e);
        e->key = (char *)kv[i][0];
        e->value = (char *)kv[i][1];
        PUSH(t->external_data, t->n_external_data, e);
    }
    size_t n;
    uint8_t *b = pack_model(mp, &n);
    f = fopen(mpath, "wb");
    assert_non_null(f);
    fwrite(b, 1, n, f);
    fclose(f);

    onyx_model *om;
    onyx_status st = onyx_model_load_file(mpath, &om);
    unlink(wpath);
    unlink(mpath);
    rmdir(dir);
    assert_int_equal(st, ONYX_OK);
    const model *m = (const model *)om;
    const graph_value *v = &m->main->values[graph_find_value(m->main, "W")];
    assert_memory_equal(v->init->data, w, sizeof w);
    onyx_model_free(om);
}

static void test_opset_ranges(void **state) {
    (void)state;
    model *m;
    const int64_t bad[] = {-1, 0, 1001, INT64_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        Onnx__ModelProto *mp = tiny();
        mp->opset_import[0]->version = bad[i];
        assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
        assert_error_mentions("expected 1 to 1000");
    }
    Onnx__ModelProto *mp = tiny();
    add_opset(mp, "ai.onnx", 12);
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("lists domain 'ai.onnx' twice with different versions (13 and 12)");

    /* skl2onnx writes a domain twice at one version: onnx's checker and onnxruntime accept it. */
    mp = tiny();
    add_opset(mp, "", 13);
    add_opset(mp, "ai.onnx.ml", 3);
    add_opset(mp, "ai.onnx.ml", 3);
    add_opset(mp, "ai.onnx", 13);
    assert_int_equal(load(mp, &m), ONYX_OK);
    assert_int_equal(m->n_opsets, 2);
    assert_int_equal(model_opset(m, ""), 13);
    assert_int_equal(model_opset(m, "ai.onnx.ml"), 3);
    model_release(m);

    mp = tiny();
    mp->graph->node[0]->domain = "com.example";
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("domain 'com.example' is not imported");
    add_opset(mp, "com.example", 1);
    assert_int_equal(load(mp, &m), ONYX_OK);
    assert_null(m->main->nodes[0].schema);
    model_release(m);

    mp = tiny();
    mp->has_ir_version = 0;
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("ir_version");
    mp = tiny();
    mp->graph = NULL;
    assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("no graph");
}

/* Schema-driven checks use whatever ops are registered, so they do not depend on one op file. */
typedef struct schema_pick {
    const op_schema *late;     /* a default-domain op whose first version is above 1 */
    const op_schema *int_attr; /* an op with an INT attribute in its spec */
    const char *attr_name;
    const op_schema *bounded;  /* an op with a fixed maximum of inputs */
    const char *prev_op;
} schema_pick;

static void pick(const op_schema *s, void *arg) {
    schema_pick *p = arg;
    bool first = !p->prev_op || strcmp(p->prev_op, s->op_type) != 0;
    p->prev_op = s->op_type;
    if (s->domain[0]) return;
    if (first && s->since_version > 1 && !p->late) p->late = s;
    if (!p->int_attr && s->attrs)
        for (const attr_spec *a = s->attrs; a->name; a++)
            if (a->type == ATTR_INT) {
                p->int_attr = s;
                p->attr_name = a->name;
                break;
            }
    if (!p->bounded && s->max_inputs < ONYX_VARIADIC && s->max_inputs < 8) p->bounded = s;
}

/* A model with one node of `s`'s op at its since_version, with n_in inputs and n_out outputs. */
static Onnx__ModelProto *model_for(const op_schema *s, int n_in, int n_out, int64_t opset) {
    static const char *const names[] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8",
                                        "i9", "i10", "i11", "i12", "i13", "i14", "i15"};
    static const char *const outs[] = {"o0", "o0,o1", "o0,o1,o2", "o0,o1,o2,o3"};
    assert_true(n_in <= 16 && n_out >= 1 && n_out <= 4);
    Onnx__GraphProto *g = graph_new("g");
    char *ins = zalloc(16 * 4);
    for (int i = 0; i < n_in; i++) {
        add_input(g, names[i]);
        if (i) strcat(ins, ",");
        strcat(ins, names[i]);
    }
    add_node(g, node(s->op_type, "subject", n_in ? ins : NULL, outs[n_out - 1]));
    add_output(g, "o0");
    return model_new(g, opset ? opset : s->since_version);
}

static void test_schema_checks(void **state) {
    (void)state;
    schema_pick p = {0};
    schema_foreach(pick, &p);
    model *m;
    if (p.int_attr) {
        Onnx__ModelProto *mp = model_for(p.int_attr, p.int_attr->min_inputs,
                                         p.int_attr->min_outputs ? p.int_attr->min_outputs : 1, 0);
        attr(mp->graph->node[0], p.attr_name, ATTR_FLOAT)->f = 1.0f;
        assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
        char want[128];
        snprintf(want, sizeof want, "attribute '%s' is FLOAT, expected INT", p.attr_name);
        assert_error_mentions(want);
        assert_error_mentions("node 'subject'");
    } else {
        skip(); /* no op with an INT attribute is registered yet */
    }
    if (p.late) {
        Onnx__ModelProto *mp = model_for(p.late, p.late->min_inputs,
                                         p.late->min_outputs ? p.late->min_outputs : 1,
                                         p.late->since_version - 1);
        assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
        assert_error_mentions("no version at or below opset");
        mp = model_for(p.late, p.late->min_inputs, p.late->min_outputs ? p.late->min_outputs : 1,
                       0);
        assert_int_equal(load(mp, &m), ONYX_OK);
        assert_ptr_equal(m->main->nodes[0].schema, p.late);
        assert_int_equal(m->main->nodes[0].version, p.late->since_version);
        model_release(m);
    }
    if (p.bounded) {
        Onnx__ModelProto *mp = model_for(p.bounded, p.bounded->max_inputs + 1,
                                         p.bounded->min_outputs ? p.bounded->min_outputs : 1, 0);
        assert_int_equal(load(mp, &m), ONYX_ERR_INVALID_MODEL);
        char want[64];
        snprintf(want, sizeof want, "has %d inputs, expected", p.bounded->max_inputs + 1);
        assert_error_mentions(want);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_load_basic, free_all),
        cmocka_unit_test_teardown(test_public_api, free_all),
        cmocka_unit_test_teardown(test_unsorted_nodes_are_sorted, free_all),
        cmocka_unit_test_teardown(test_subgraph_captures, free_all),
        cmocka_unit_test_teardown(test_deep_but_allowed_nesting, free_all),
        cmocka_unit_test_teardown(test_attributes, free_all),
        cmocka_unit_test_teardown(test_old_ir_without_opsets, free_all),
        cmocka_unit_test_teardown(test_truncated_and_garbage, free_all),
        cmocka_unit_test_teardown(test_deep_nesting_refused, free_all),
        cmocka_unit_test_teardown(test_undefined_input, free_all),
        cmocka_unit_test_teardown(test_cycle, free_all),
        cmocka_unit_test_teardown(test_duplicate_names, free_all),
        cmocka_unit_test_teardown(test_split_initializers, free_all),
        cmocka_unit_test_teardown(test_bad_initializer, free_all),
        cmocka_unit_test_teardown(test_external_data_by_path, free_all),
        cmocka_unit_test_teardown(test_opset_ranges, free_all),
        cmocka_unit_test_teardown(test_schema_checks, free_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
