/* The attention geometry the schemas resolve once per plan (core/op_params.h, geom_attention):
 * what ONNX Attention (4-D and 3-D packed, with a past), FlexAttention, com.microsoft Attention,
 * MultiHeadAttention and GroupQueryAttention hand out, known and unknown, GroupQueryAttention's
 * total length left to each run; and that the CPU kernels compute from those params (their nodes
 * here lose the head-count attributes the schemas read), refusing a run without them or with
 * params for another input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "op_params_fixture.h"

#define MS "com.microsoft"

/* Runs the schema's inference: the attention geometry it resolved, of form `form`. */
static const geom_attention *infer_attention(fixture *f, geom_att_form form) {
    infer_geometry(f);
    const geom_attention *g = op_params_attention(&f->params);
    assert_non_null(g);
    assert_int_equal(g->form, form);
    return g;
}

static void assert_sizes(const geom_attention *g, int64_t batch, int64_t q_heads,
                         int64_t kv_heads, int64_t q_len, int64_t kv_len, int64_t past_len,
                         int64_t total_len, int64_t head, int64_t v_head) {
    assert_int_equal(g->batch, batch);
    assert_int_equal(g->q_heads, q_heads);
    assert_int_equal(g->kv_heads, kv_heads);
    assert_int_equal(g->q_len, q_len);
    assert_int_equal(g->kv_len, kv_len);
    assert_int_equal(g->past_len, past_len);
    assert_int_equal(g->total_len, total_len);
    assert_int_equal(g->head, head);
    assert_int_equal(g->v_head, v_head);
}

/* ---------------------------------------------------------------- the schemas' geometry */

/* 4-D with grouped heads, V's own head size and a past of 4: total 4 + 5. */
static void onnx_attention_4d_with_past(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "", "Attention", 23, 6);
    const int64_t q[] = {2, 4, 3, 8}, k[] = {2, 2, 5, 8}, v[] = {2, 2, 5, 6},
                  pk[] = {2, 2, 4, 8}, pv[] = {2, 2, 4, 6};
    set_input(&f, 0, ONYX_FLOAT, 4, q);
    set_input(&f, 1, ONYX_FLOAT, 4, k);
    set_input(&f, 2, ONYX_FLOAT, 4, v);
    set_input(&f, 4, ONYX_FLOAT, 4, pk);
    set_input(&f, 5, ONYX_FLOAT, 4, pv);
    const geom_attention *g = infer_attention(&f, GEOM_ATT_ONNX);
    assert_sizes(g, 2, 4, 2, 3, 5, 4, 9, 8, 6);
    assert_false(g->packed);
    assert_true(op_params_known(&f.params));
    assert_int_equal(geom_attention_query_numel(g), 2 * 4 * 3 * 8);
    teardown(&f);
}

/* 3-D inputs split their hidden sizes by q_num_heads and kv_num_heads; an unknown batch is left
 * to each run. */
static void onnx_attention_3d_packed_and_unknown(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "", "Attention", 24, 3);
    const int64_t q[] = {1, 3, 16}, kv[] = {1, 5, 8};
    set_input(&f, 0, ONYX_FLOAT, 3, q);
    set_input(&f, 1, ONYX_FLOAT, 3, kv);
    set_input(&f, 2, ONYX_FLOAT, 3, kv);
    add_int(&f, "q_num_heads", 4);
    add_int(&f, "kv_num_heads", 2);
    const geom_attention *g = infer_attention(&f, GEOM_ATT_ONNX);
    assert_sizes(g, 1, 4, 2, 3, 5, 0, 5, 4, 4);
    assert_true(g->packed);
    assert_true(op_params_known(&f.params));
    teardown(&f);

    setup_node(&f, "", "Attention", 24, 3);
    const int64_t uq[] = {-1, 3, 16}, ukv[] = {-1, 5, 8};
    set_input(&f, 0, ONYX_FLOAT, 3, uq);
    set_input(&f, 1, ONYX_FLOAT, 3, ukv);
    set_input(&f, 2, ONYX_FLOAT, 3, ukv);
    add_int(&f, "q_num_heads", 4);
    add_int(&f, "kv_num_heads", 2);
    g = infer_attention(&f, GEOM_ATT_ONNX);
    assert_int_equal(g->batch, -1);
    assert_int_equal(g->head, 4);
    assert_false(op_params_known(&f.params));
    teardown(&f);

    setup_node(&f, "", "Attention", 24, 3); /* ranks unknown: none resolved, the run does */
    for (int i = 0; i < 3; i++) set_input(&f, i, ONYX_FLOAT, -1, NULL);
    infer_geometry(&f);
    assert_int_equal(f.params.kind, OP_PARAMS_NONE);
    teardown(&f);
}

static void flexattention_geometry(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "ai.onnx.preview", "FlexAttention", 1, 3);
    const int64_t q[] = {1, 2, 3, 4}, kv[] = {1, 2, 6, 4};
    for (int i = 0; i < 3; i++) set_input(&f, i, ONYX_FLOAT, 4, i ? kv : q);
    assert_sizes(infer_attention(&f, GEOM_ATT_ONNX), 1, 2, 2, 3, 6, 0, 6, 4, 4);
    teardown(&f);
}

/* com.microsoft.Attention: hidden 8 projected to 2 heads of 4 (Q, K, V of 8 columns each), a
 * mask of end positions and a past of 2. */
static void ms_attention_geometry(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, MS, "Attention", 1, 5);
    const int64_t x[] = {2, 3, 8}, w[] = {8, 24}, b[] = {24}, m[] = {2}, past[] = {2, 2, 2, 2, 4};
    set_input(&f, 0, ONYX_FLOAT, 3, x);
    set_input(&f, 1, ONYX_FLOAT, 2, w);
    set_input(&f, 2, ONYX_FLOAT, 1, b);
    set_input(&f, 3, ONYX_INT32, 1, m);
    set_input(&f, 4, ONYX_FLOAT, 5, past);
    add_int(&f, "num_heads", 2);
    const geom_attention *g = infer_attention(&f, GEOM_ATT_MS);
    assert_sizes(g, 2, 2, 2, 3, 3, 2, 5, 4, 4);
    assert_int_equal(g->in_hidden, 8);
    assert_int_equal(g->mask, GEOM_ATT_MASK_END);
    assert_true(op_params_known(&f.params));
    assert_int_equal(geom_attention_query_numel(g), 2 * 3 * 8);
    teardown(&f);

    setup_node(&f, MS, "Attention", 1, 4); /* a mask of unknown rank: each run decides */
    set_input(&f, 0, ONYX_FLOAT, 3, x);
    set_input(&f, 1, ONYX_FLOAT, 2, w);
    set_input(&f, 2, ONYX_FLOAT, 1, b);
    set_input(&f, 3, ONYX_INT32, -1, NULL);
    add_int(&f, "num_heads", 2);
    assert_int_equal(infer_attention(&f, GEOM_ATT_MS)->mask, GEOM_ATT_MASK_UNKNOWN);
    assert_false(op_params_known(&f.params));
    teardown(&f);
}

/* MultiHeadAttention: 3-D key and value of 5 rows and a [B, T] padding mask; 4-D (BNSH) ones. */
static void mha_geometry(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, MS, "MultiHeadAttention", 1, 5);
    const int64_t q[] = {2, 3, 8}, kv[] = {2, 5, 8}, m[] = {2, 5};
    set_input(&f, 0, ONYX_FLOAT, 3, q);
    set_input(&f, 1, ONYX_FLOAT, 3, kv);
    set_input(&f, 2, ONYX_FLOAT, 3, kv);
    set_input(&f, 4, ONYX_INT32, 2, m);
    add_int(&f, "num_heads", 2);
    const geom_attention *g = infer_attention(&f, GEOM_ATT_MHA);
    assert_sizes(g, 2, 2, 2, 3, 5, 0, 5, 4, 4);
    assert_false(g->kv_bnsh);
    assert_int_equal(g->mask, GEOM_ATT_MASK_2D);
    teardown(&f);

    setup_node(&f, MS, "MultiHeadAttention", 1, 3);
    const int64_t bnsh[] = {2, 2, 5, 4};
    set_input(&f, 0, ONYX_FLOAT, 3, q);
    set_input(&f, 1, ONYX_FLOAT, 4, bnsh);
    set_input(&f, 2, ONYX_FLOAT, 4, bnsh);
    add_int(&f, "num_heads", 2);
    g = infer_attention(&f, GEOM_ATT_MHA);
    assert_true(g->kv_bnsh);
    assert_int_equal(g->kv_len, 5);
    teardown(&f);
}

/* GroupQueryAttention: 4 query heads over 2 kv heads of 4, a past buffer of 6; the plan knows all
 * but the total length, which each run's total_sequence_length gives (the present buffers hold
 * max(total, 6) rows; a windowed cache keeps its capacity). */
static void gqa_geometry_and_each_runs_total(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, MS, "GroupQueryAttention", 1, 7);
    const int64_t q[] = {1, 2, 16}, kv[] = {1, 2, 8}, past[] = {1, 2, 6, 4}, one[] = {1};
    set_input(&f, 0, ONYX_FLOAT, 3, q);
    set_input(&f, 1, ONYX_FLOAT, 3, kv);
    set_input(&f, 2, ONYX_FLOAT, 3, kv);
    set_input(&f, 3, ONYX_FLOAT, 4, past);
    set_input(&f, 4, ONYX_FLOAT, 4, past);
    set_input(&f, 5, ONYX_INT32, 1, one);
    set_input(&f, 6, ONYX_INT32, 1, one); /* total_sequence_length: a graph input, no value */
    add_int(&f, "num_heads", 4);
    add_int(&f, "kv_num_heads", 2);
    const geom_attention *g = infer_attention(&f, GEOM_ATT_GQA);
    assert_sizes(g, 1, 4, 2, 2, 2, 6, -1, 4, 4);
    assert_false(g->qkv_packed);
    assert_int_equal(g->window_cache, 0);
    assert_true(op_params_known(&f.params)); /* the total is data of each run, not geometry */
    geom_attention run;
    geom_msg m;
    assert_int_equal(geom_attention_gqa_total(g, 9, &run, &m), ONYX_OK);
    assert_int_equal(run.total_len, 9);
    assert_int_equal(geom_attention_gqa_total(g, 4, &run, &m), ONYX_OK);
    assert_int_equal(run.total_len, 6);
    assert_int_equal(geom_attention_gqa_total(g, 1, &run, &m), ONYX_ERR_SHAPE); /* < 2 rows */
    teardown(&f);

    setup_node(&f, MS, "GroupQueryAttention", 1, 7); /* packed QKV, a window-sized cache */
    const int64_t packed[] = {1, 2, 32};
    set_input(&f, 0, ONYX_FLOAT, 3, packed);
    set_input(&f, 3, ONYX_FLOAT, 4, past);
    set_input(&f, 4, ONYX_FLOAT, 4, past);
    set_input(&f, 5, ONYX_INT32, 1, one);
    set_input(&f, 6, ONYX_INT32, 1, one);
    add_int(&f, "num_heads", 4);
    add_int(&f, "kv_num_heads", 2);
    add_int(&f, "local_window_size", 4);
    add_int(&f, "sliding_window_cache", 1);
    g = infer_attention(&f, GEOM_ATT_GQA);
    assert_true(g->qkv_packed);
    assert_int_equal(g->head, 4);
    assert_int_equal(g->window_cache, 4);
    assert_int_equal(geom_attention_query_numel(g), 1 * 2 * 32);
    assert_int_equal(geom_attention_gqa_total(g, 30, &run, &m), ONYX_OK);
    assert_int_equal(run.total_len, 6);
    teardown(&f);
}

/* ---------------------------------------------------------------- the CPU kernels */

static void alloc(onyx_value *v, onyx_dtype dt, int rank, const int64_t *dims) {
    assert_int_equal(value_alloc_tensor(v, dt, rank, dims), ONYX_OK);
    memset(v->t.data, 0, v->t.nbytes);
}

/* Means of thirds are not exact in float: within a few ulps of the values here. */
static void assert_floats(const onyx_value *v, const float *want, int n) {
    assert_int_equal(v->t.numel, n);
    const float *d = v->t.data;
    for (int i = 0; i < n; i++)
        assert_true(fabsf(d[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i])));
}

/* The node's inputs and outputs for a kernel run: in[i] NULL where input i is omitted. */
typedef struct run_io {
    onyx_value vals[FX_MAX_IN], outs[FX_MAX_OUT];
    onyx_value *in[FX_MAX_IN], *out[FX_MAX_OUT];
} run_io;

static void run_io_release(run_io *r) {
    for (int i = 0; i < FX_MAX_IN; i++) value_clear(&r->vals[i]);
    for (int o = 0; o < FX_MAX_OUT; o++) value_clear(&r->outs[o]);
}

/* Runs the CPU kernel of the fixture's op on its node stripped of every attribute (what the
 * kernel computes with comes from params alone, or its defaults) with `params`. */
static onyx_status run_stripped(const fixture *f, run_io *r, int n_out, const op_params *params) {
    const kernel *k = cpu_kernel(f->node.domain, f->node.op_type);
    assert_non_null(k);
    graph_node node = f->node;
    node.n_attrs = 0;
    node.n_outputs = n_out;
    return run_kernel_io(k, &node, f->node.n_inputs, r->in, n_out, r->out, params, NULL);
}

/* With Q zero every key scores alike: each output row is the mean of V's rows. Q [1, 2, 4] as 2
 * heads of 2 (q_num_heads, read by the schema only), V's 3 rows 0..3, 4..7, 8..11: 4, 5, 6, 7. */
static void onnx_attention_kernel_reads_the_params(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, "", "Attention", 23, 3);
    const int64_t q[] = {1, 2, 4}, kv[] = {1, 3, 4};
    set_input(&f, 0, ONYX_FLOAT, 3, q);
    set_input(&f, 1, ONYX_FLOAT, 3, kv);
    set_input(&f, 2, ONYX_FLOAT, 3, kv);
    add_int(&f, "q_num_heads", 2);
    add_int(&f, "kv_num_heads", 2);
    infer_geometry(&f);
    run_io r = {0};
    for (int i = 0; i < 3; i++) {
        alloc(&r.vals[i], ONYX_FLOAT, 3, i ? kv : q);
        r.in[i] = &r.vals[i];
    }
    for (int i = 0; i < 12; i++) ((float *)r.vals[2].t.data)[i] = (float)i;
    alloc(&r.outs[0], ONYX_FLOAT, 3, q);
    r.out[0] = &r.outs[0];
    assert_int_equal(run_stripped(&f, &r, 1, &f.params), ONYX_OK);
    const float want[] = {4, 5, 6, 7, 4, 5, 6, 7};
    assert_floats(&r.outs[0], want, 8);
    assert_int_equal(run_stripped(&f, &r, 1, NULL), ONYX_ERR_RUNTIME);
    op_params other = f.params; /* resolved for a query of another length */
    other.u.attention.q_len = 3;
    assert_int_equal(run_stripped(&f, &r, 1, &other), ONYX_ERR_RUNTIME);
    other = f.params; /* another op's geometry */
    other.u.attention.form = GEOM_ATT_MHA;
    assert_int_equal(run_stripped(&f, &r, 1, &other), ONYX_ERR_RUNTIME);
    run_io_release(&r);
    teardown(&f);
}

/* com.microsoft.Attention with zero weights: Q, K and V are the bias's parts, every key scores
 * alike, and each row is V's bias 8..11. */
static void ms_attention_kernel_reads_the_params(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, MS, "Attention", 1, 3);
    const int64_t x[] = {1, 2, 4}, w[] = {4, 12}, b[] = {12};
    set_input(&f, 0, ONYX_FLOAT, 3, x);
    set_input(&f, 1, ONYX_FLOAT, 2, w);
    set_input(&f, 2, ONYX_FLOAT, 1, b);
    add_int(&f, "num_heads", 2);
    infer_geometry(&f);
    run_io r = {0};
    alloc(&r.vals[0], ONYX_FLOAT, 3, x);
    alloc(&r.vals[1], ONYX_FLOAT, 2, w);
    alloc(&r.vals[2], ONYX_FLOAT, 1, b);
    for (int i = 0; i < 3; i++) r.in[i] = &r.vals[i];
    for (int i = 0; i < 12; i++) ((float *)r.vals[2].t.data)[i] = (float)i;
    alloc(&r.outs[0], ONYX_FLOAT, 3, x);
    r.out[0] = &r.outs[0];
    assert_int_equal(run_stripped(&f, &r, 1, &f.params), ONYX_OK);
    const float want[] = {8, 9, 10, 11, 8, 9, 10, 11};
    assert_floats(&r.outs[0], want, 8);
    assert_int_equal(run_stripped(&f, &r, 1, NULL), ONYX_ERR_RUNTIME);
    run_io_release(&r);
    teardown(&f);
}

/* MultiHeadAttention, query zero: the mean of value's rows per head. */
static void mha_kernel_reads_the_params(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, MS, "MultiHeadAttention", 1, 3);
    const int64_t q[] = {1, 2, 4}, kv[] = {1, 3, 4};
    set_input(&f, 0, ONYX_FLOAT, 3, q);
    set_input(&f, 1, ONYX_FLOAT, 3, kv);
    set_input(&f, 2, ONYX_FLOAT, 3, kv);
    add_int(&f, "num_heads", 2);
    infer_geometry(&f);
    run_io r = {0};
    for (int i = 0; i < 3; i++) {
        alloc(&r.vals[i], ONYX_FLOAT, 3, i ? kv : q);
        r.in[i] = &r.vals[i];
    }
    for (int i = 0; i < 12; i++) ((float *)r.vals[2].t.data)[i] = (float)i;
    alloc(&r.outs[0], ONYX_FLOAT, 3, q);
    r.out[0] = &r.outs[0];
    assert_int_equal(run_stripped(&f, &r, 1, &f.params), ONYX_OK);
    const float want[] = {4, 5, 6, 7, 4, 5, 6, 7};
    assert_floats(&r.outs[0], want, 8);
    assert_int_equal(run_stripped(&f, &r, 1, NULL), ONYX_ERR_RUNTIME);
    run_io_release(&r);
    teardown(&f);
}

/* GroupQueryAttention decoding one token over a past buffer of 2 rows (values (0, 1), (2, 3)),
 * 2 query heads of 2 over one kv head, the new value (10, 20): with the plan's geometry (which
 * has no total length) and this run's total_sequence_length 3, the present holds 3 rows and each
 * head's output is the mean of the 3 values, (4, 8). */
static void gqa_kernel_reads_the_params_and_the_runs_total(void **unused) {
    (void)unused;
    fixture f;
    setup_node(&f, MS, "GroupQueryAttention", 1, 7);
    const int64_t q[] = {1, 1, 4}, kv[] = {1, 1, 2}, past[] = {1, 1, 2, 2}, one[] = {1},
                  present[] = {1, 1, 3, 2};
    set_input(&f, 0, ONYX_FLOAT, 3, q);
    set_input(&f, 1, ONYX_FLOAT, 3, kv);
    set_input(&f, 2, ONYX_FLOAT, 3, kv);
    set_input(&f, 3, ONYX_FLOAT, 4, past);
    set_input(&f, 4, ONYX_FLOAT, 4, past);
    set_input(&f, 5, ONYX_INT32, 1, one);
    set_input(&f, 6, ONYX_INT32, 1, one);
    add_int(&f, "num_heads", 2);
    add_int(&f, "kv_num_heads", 1);
    f.node.n_outputs = 3;
    infer_geometry(&f);
    assert_int_equal(op_params_attention(&f.params)->total_len, -1);
    run_io r = {0};
    const int64_t *shapes[5] = {q, kv, kv, past, past};
    const int ranks[5] = {3, 3, 3, 4, 4};
    for (int i = 0; i < 5; i++) {
        alloc(&r.vals[i], ONYX_FLOAT, ranks[i], shapes[i]);
        r.in[i] = &r.vals[i];
    }
    ((float *)r.vals[2].t.data)[0] = 10;
    ((float *)r.vals[2].t.data)[1] = 20;
    for (int i = 0; i < 4; i++) ((float *)r.vals[4].t.data)[i] = (float)i;
    alloc(&r.vals[5], ONYX_INT32, 1, one);
    alloc(&r.vals[6], ONYX_INT32, 1, one);
    ((int32_t *)r.vals[5].t.data)[0] = 2; /* seqlens_k: total - 1 */
    ((int32_t *)r.vals[6].t.data)[0] = 3;
    r.in[5] = &r.vals[5];
    r.in[6] = &r.vals[6];
    alloc(&r.outs[0], ONYX_FLOAT, 3, q);
    alloc(&r.outs[1], ONYX_FLOAT, 4, present);
    alloc(&r.outs[2], ONYX_FLOAT, 4, present);
    for (int o = 0; o < 3; o++) r.out[o] = &r.outs[o];
    assert_int_equal(run_stripped(&f, &r, 3, &f.params), ONYX_OK);
    const float want[] = {4, 8, 4, 8}, want_v[] = {0, 1, 2, 3, 10, 20};
    assert_floats(&r.outs[0], want, 4);
    assert_floats(&r.outs[2], want_v, 6);
    assert_int_equal(run_stripped(&f, &r, 3, NULL), ONYX_ERR_RUNTIME);
    ((int32_t *)r.vals[6].t.data)[0] = 0; /* this run's total below its one new row */
    assert_int_equal(run_stripped(&f, &r, 3, &f.params), ONYX_ERR_SHAPE);
    ((int32_t *)r.vals[6].t.data)[0] = 3;
    value_clear(&r.vals[5]); /* seqlens_k of no row */
    const int64_t none[] = {0};
    alloc(&r.vals[5], ONYX_INT32, 1, none);
    assert_int_equal(run_stripped(&f, &r, 3, &f.params), ONYX_ERR_SHAPE);
    run_io_release(&r);
    teardown(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(onnx_attention_4d_with_past),
        cmocka_unit_test(onnx_attention_3d_packed_and_unknown),
        cmocka_unit_test(flexattention_geometry),
        cmocka_unit_test(ms_attention_geometry),
        cmocka_unit_test(mha_geometry),
        cmocka_unit_test(gqa_geometry_and_each_runs_total),
        cmocka_unit_test(onnx_attention_kernel_reads_the_params),
        cmocka_unit_test(ms_attention_kernel_reads_the_params),
        cmocka_unit_test(mha_kernel_reads_the_params),
        cmocka_unit_test(gqa_kernel_reads_the_params_and_the_runs_total),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
