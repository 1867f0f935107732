/* kernel.takes_chain (core/kernel.h): the CPU's kernels that take chains answer the fusion
 * passes' query as their prepare would. Attention: yes for a chain of views that make an
 * attention, with the geometry the fusion pass resolves from them (geom_attention_chain; then its
 * prepare takes it), no for one whose views do not (where the rule refuses them and its prepare
 * refuses), for geometry resolved for other views, or a chain that is not an attention. MatMul,
 * Gemm and Conv: yes for the post-ops their prepare applies (a MatMul's also over rows known only
 * at run, by a constant B), no (and their prepare fails) for a bias that is not first, a Gemm's
 * bias besides its C, an addend or views over rows known only at run, a chain on integers, a
 * per-channel step after an activation, a scale on X without its input. And every CPU kernel
 * flagged KF_POST_OPS has the query. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/exec_env.h"
#include "core/fuse_chain.h"
#include "core/shared.h"
#include "kernels_cpu/cpu_kernels.h"

enum { B = 1, H = 2, S = 4, T = 6, D = 8 };

static const kernel *cpu_kernel(const char *op) {
    size_t n;
    const kernel *t = cpu_kernel_table(&n);
    for (size_t i = 0; i < n; i++)
        if (!*t[i].domain && !strcmp(t[i].op_type, op)) return &t[i];
    return NULL;
}

static const kernel *cpu_attention(void) { return cpu_kernel("Attention"); }

static void set_view(fuse_chain *c, int v, int64_t d0, int64_t d1, int64_t d2, int64_t d3,
                     int64_t s0, int64_t s1, int64_t s2, int64_t s3) {
    const int64_t dims[4] = {d0, d1, d2, d3}, strides[4] = {s0, s1, s2, s3};
    c->view_rank[v] = 4;
    memcpy(c->view_dims[v], dims, sizeof dims);
    memcpy(c->view_strides[v], strides, sizeof strides);
}

/* Q [B, H, S, D], K^T [B, H, D, T] read from K [B, H, T, D], Y [B, H, S, D], V [B, H, T, D]. */
static fuse_chain attention_chain(void) {
    fuse_chain c;
    memset(&c, 0, sizeof c);
    c.attention = true;
    c.has_in_scale = true;
    c.in_scale = 0.25f;
    set_view(&c, 0, B, H, S, D, H * S * D, S * D, D, 1);
    set_view(&c, 1, B, H, D, T, H * T * D, T * D, 1, D);
    set_view(&c, 2, B, H, S, D, H * S * D, S * D, D, 1);
    set_view(&c, 3, B, H, T, D, H * T * D, T * D, D, 1);
    return c;
}

typedef struct prep_case {
    graph_node node;
    type_info in[3], out;
    const type_info *in_ptr[3];
    const tensor *values[3];
    op_params params; /* the window a Conv's schema resolves, or the geometry the fusion pass
                         resolves for an attention chain (core/op_params.h) */
    kernel_prep prep;
} prep_case;

static void make_case(prep_case *pc, const fuse_chain *chain) {
    memset(pc, 0, sizeof *pc);
    pc->node.op_type = "Attention";
    pc->node.domain = "";
    pc->node.version = 23;
    pc->node.n_inputs = 3;
    pc->node.n_outputs = 1;
    const int64_t q[4] = {B, H, S, D}, kv[4] = {B, H, T, D};
    for (int i = 0; i < 3; i++) {
        type_set_tensor(&pc->in[i], ONYX_FLOAT, 4, i ? kv : q);
        pc->in_ptr[i] = &pc->in[i];
    }
    type_set_tensor(&pc->out, ONYX_FLOAT, 4, q);
    pc->prep = (kernel_prep){.node = &pc->node, .n_in = 3, .n_out = 1, .in_type = pc->in_ptr,
                             .in_value = pc->values, .out_type = &pc->out, .fused = chain};
    /* the geometry, as the fusion pass resolves it for views of one rank that make one */
    pc->params.kind = OP_PARAMS_ATTENTION;
    geom_msg m;
    bool one_rank = true;
    for (int v = 1; v < 4; v++) one_rank &= chain->view_rank[v] == chain->view_rank[0];
    if (one_rank && geom_attention_chain(chain->view_rank[0], chain->view_dims[0],
                                         chain->view_dims[1], chain->view_dims[3],
                                         chain->view_dims[2], &pc->params.u.attention,
                                         &m) == ONYX_OK)
        pc->prep.params = &pc->params;
}

/* The query's answer and the prepare's result agree. */
static void expect(const fuse_chain *chain, bool takes) {
    const kernel *k = cpu_attention();
    assert_non_null(k);
    assert_non_null(k->takes_chain);
    prep_case pc;
    make_case(&pc, chain);
    assert_int_equal(k->takes_chain(&pc.prep), takes);
    void *state = NULL;
    onyx_status st = k->prepare(&pc.prep, &state);
    if (takes) {
        assert_int_equal(st, ONYX_OK);
        assert_non_null(state); /* the chain is applied, not ignored */
    } else if (chain->attention) {
        assert_int_equal(st, ONYX_ERR_UNSUPPORTED);
    } else {
        assert_null(state); /* not an attention: the kernel's prepare applies nothing of it */
    }
    if (state) k->release(state);
}

static void takes_an_attention(void **unused) {
    (void)unused;
    fuse_chain c = attention_chain();
    expect(&c, true);
}

static void refuses_views_of_other_ranks(void **unused) {
    (void)unused;
    fuse_chain c = attention_chain();
    c.view_rank[3] = 3;
    expect(&c, false);
}

static void refuses_views_that_do_not_make_an_attention(void **unused) {
    (void)unused;
    fuse_chain c = attention_chain();
    c.view_dims[1][2] = D - 1; /* K^T's rows are not Q's columns: the rule refuses them */
    geom_attention g;
    geom_msg m;
    assert_int_equal(geom_attention_chain(4, c.view_dims[0], c.view_dims[1], c.view_dims[3],
                                          c.view_dims[2], &g, &m), ONYX_ERR_SHAPE);
    expect(&c, false);
    c = attention_chain();
    c.view_strides[0][3] = 2; /* Q's rows not contiguous */
    expect(&c, false);
}

/* The geometry of a chain of rank-4 views, resolved for them, and none for other views. */
static void reads_the_geometry_resolved_for_its_views(void **unused) {
    (void)unused;
    fuse_chain c = attention_chain();
    prep_case pc;
    make_case(&pc, &c);
    const geom_attention *g = op_params_attention(pc.prep.params);
    assert_non_null(g);
    assert_int_equal(g->form, GEOM_ATT_CHAIN);
    assert_int_equal(g->batch, B);
    assert_int_equal(g->q_heads, H);
    assert_int_equal(g->kv_heads, H);
    assert_int_equal(g->q_len, S);
    assert_int_equal(g->kv_len, T);
    assert_int_equal(g->total_len, T);
    assert_int_equal(g->past_len, 0);
    assert_int_equal(g->head, D);
    assert_int_equal(g->v_head, D);
    assert_true(geom_attention_known(g));
    const kernel *k = cpu_attention();
    assert_true(k->takes_chain(&pc.prep));
    pc.params.u.attention.total_len = T + 1; /* resolved for other views */
    assert_false(k->takes_chain(&pc.prep));
    pc.prep.params = NULL; /* none */
    assert_false(k->takes_chain(&pc.prep));
    void *state = NULL;
    assert_int_equal(k->prepare(&pc.prep, &state), ONYX_ERR_UNSUPPORTED);
    assert_null(state);
}

static void refuses_a_chain_that_is_not_an_attention(void **unused) {
    (void)unused;
    fuse_chain c = attention_chain();
    c.attention = false;
    expect(&c, false);
}

/* ---- the post-op kernels: MatMul and Gemm (A [M, K] by B [K, N]) and Conv (X [1, C, 8, 8] by
 * W [M, C, 3, 3]), operands computed (no constant to pack), in float unless said */
enum { M = 4, K = 8, N = 16, C = 16, F = 32 };

static float bias_values[N];
static const tensor bias = {.dtype = ONYX_FLOAT, .rank = 1, .dims = {N}, .numel = N,
                            .data = bias_values, .nbytes = sizeof bias_values};

static fuse_op op_of(fuse_kind kind) {
    fuse_op op;
    memset(&op, 0, sizeof op);
    op.kind = kind;
    if (kind == FUSE_SHIFT) {
        op.bias = &bias;
        op.input = 2;
    }
    return op;
}

/* A chain of post-ops of the given kinds. */
static fuse_chain post_ops(int n, const fuse_kind *kinds) {
    fuse_chain c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < n; i++) c.ops[c.n++] = op_of(kinds[i]);
    return c;
}

static void make_product(prep_case *pc, const char *op, onyx_dtype dtype, const fuse_chain *c) {
    memset(pc, 0, sizeof *pc);
    pc->node.op_type = op;
    pc->node.domain = "";
    pc->node.version = 13;
    pc->node.n_inputs = 2;
    pc->node.n_outputs = 1;
    const int64_t a[2] = {M, K}, b[2] = {K, N}, y[2] = {M, N};
    type_set_tensor(&pc->in[0], dtype, 2, a);
    type_set_tensor(&pc->in[1], dtype, 2, b);
    for (int i = 0; i < 2; i++) pc->in_ptr[i] = &pc->in[i];
    type_set_tensor(&pc->out, dtype, 2, y);
    pc->prep = (kernel_prep){.node = &pc->node, .n_in = 2, .n_out = 1, .in_type = pc->in_ptr,
                             .in_value = pc->values, .out_type = &pc->out, .fused = c};
}

static void make_conv(prep_case *pc, const fuse_chain *c) {
    memset(pc, 0, sizeof *pc);
    pc->node.op_type = "Conv";
    pc->node.domain = "";
    pc->node.version = 11;
    pc->node.n_inputs = 2;
    pc->node.n_outputs = 1;
    const int64_t x[4] = {1, C, 8, 8}, w[4] = {F, C, 3, 3}, y[4] = {1, F, 6, 6};
    type_set_tensor(&pc->in[0], ONYX_FLOAT, 4, x);
    type_set_tensor(&pc->in[1], ONYX_FLOAT, 4, w);
    for (int i = 0; i < 2; i++) pc->in_ptr[i] = &pc->in[i];
    type_set_tensor(&pc->out, ONYX_FLOAT, 4, y);
    geom_window *win = &pc->params.u.window;
    pc->params.kind = OP_PARAMS_WINDOW;
    win->nsp = 2;
    win->n = 1, win->c = C, win->m = F, win->group = 1;
    for (int i = 0; i < 2; i++) {
        win->in[i] = 8, win->k[i] = 3, win->out[i] = 6;
        win->stride[i] = 1, win->dil[i] = 1;
    }
    pc->prep = (kernel_prep){.node = &pc->node, .n_in = 2, .n_out = 1, .in_type = pc->in_ptr,
                             .in_value = pc->values, .out_type = &pc->out, .fused = c,
                             .params = &pc->params};
}

/* Kernel `op`'s query on pc says `takes`, and its prepare agrees: it prepares (a state that
 * applies the chain) after a yes, and fails after a no. */
static void expect_kernel(const char *op, prep_case *pc, bool takes) {
    const kernel *k = cpu_kernel(op);
    assert_non_null(k);
    assert_true(k->flags & KF_POST_OPS);
    assert_non_null(k->takes_chain);
    assert_int_equal(k->takes_chain(&pc->prep), takes);
    void *state = NULL;
    onyx_status st = k->prepare(&pc->prep, &state);
    if (takes) {
        assert_int_equal(st, ONYX_OK);
        assert_non_null(state);
    } else {
        assert_int_not_equal(st, ONYX_OK);
        assert_null(state);
    }
    if (state) k->release(state);
}

static void matmul_takes_its_post_ops(void **unused) {
    (void)unused;
    prep_case pc;
    const fuse_kind relu[] = {FUSE_RELU}, bias_gelu_sum[] = {FUSE_SHIFT, FUSE_GELU, FUSE_SUM};
    fuse_chain c = post_ops(1, relu);
    make_product(&pc, "MatMul", ONYX_FLOAT, &c);
    expect_kernel("MatMul", &pc, true);
    c = post_ops(3, bias_gelu_sum);
    make_product(&pc, "MatMul", ONYX_FLOAT, &c);
    expect_kernel("MatMul", &pc, true);
    c = post_ops(1, relu);
    make_product(&pc, "Gemm", ONYX_FLOAT, &c);
    expect_kernel("Gemm", &pc, true);
}

static void matmul_refuses_what_its_prepare_refuses(void **unused) {
    (void)unused;
    prep_case pc;
    const fuse_kind relu_bias[] = {FUSE_RELU, FUSE_SHIFT}, bias[] = {FUSE_SHIFT},
                    relu[] = {FUSE_RELU};
    fuse_chain c = post_ops(2, relu_bias); /* the bias not first */
    make_product(&pc, "MatMul", ONYX_FLOAT, &c);
    expect_kernel("MatMul", &pc, false);
    c = post_ops(1, bias); /* a Gemm's bias is its C */
    make_product(&pc, "Gemm", ONYX_FLOAT, &c);
    expect_kernel("Gemm", &pc, false);
    c = post_ops(1, relu); /* integers have no primitive */
    make_product(&pc, "MatMul", ONYX_INT32, &c);
    expect_kernel("MatMul", &pc, false);
}

/* A MatMul of a generic plan: A [?, K] (its rows known only at run) by a constant B [K, N]. */
static float weight_values[K * N];
static const tensor weight = {.dtype = ONYX_FLOAT, .rank = 2, .dims = {K, N}, .numel = K * N,
                              .data = weight_values, .nbytes = sizeof weight_values};

/* The rep's part such a prepare uses: the shared cache it packs B into. */
static exec_env rep_env;

static int make_cache(void **unused) {
    (void)unused;
    shared_cache *cache;
    if (shared_cache_create(&cache) != ONYX_OK) return -1;
    rep_env.shared = cache;
    return 0;
}

static int free_cache(void **unused) {
    (void)unused;
    shared_cache_free(rep_env.shared);
    rep_env.shared = NULL;
    return 0;
}

static void make_rows_product(prep_case *pc, const fuse_chain *c) {
    make_product(pc, "MatMul", ONYX_FLOAT, c);
    pc->in[0].dims[0] = -1;
    pc->out.dims[0] = -1;
    pc->values[1] = &weight;
    pc->prep.env = &rep_env;
}

static void matmul_over_unknown_rows_takes_its_post_ops(void **unused) {
    (void)unused;
    prep_case pc;
    const fuse_kind bias_swish[] = {FUSE_SHIFT, FUSE_SWISH}, linear_tanh[] = {FUSE_LINEAR,
                                                                             FUSE_TANH};
    fuse_chain c = post_ops(2, bias_swish);
    make_rows_product(&pc, &c);
    expect_kernel("MatMul", &pc, true);
    c = post_ops(2, linear_tanh);
    make_rows_product(&pc, &c);
    expect_kernel("MatMul", &pc, true);
}

static void matmul_over_unknown_rows_refuses_an_addend_and_views(void **unused) {
    (void)unused;
    prep_case pc;
    const fuse_kind relu_sum[] = {FUSE_RELU, FUSE_SUM}, relu[] = {FUSE_RELU},
                    relu_bias[] = {FUSE_RELU, FUSE_SHIFT};
    fuse_chain c = post_ops(2, relu_sum); /* the addend's shape could differ at run */
    make_rows_product(&pc, &c);
    expect_kernel("MatMul", &pc, false);
    c = post_ops(1, relu);
    c.view_rank[2] = 2;
    make_rows_product(&pc, &c);
    expect_kernel("MatMul", &pc, false);
    c = post_ops(2, relu_bias); /* the bias not first, as with known rows */
    make_rows_product(&pc, &c);
    expect_kernel("MatMul", &pc, false);
    c = post_ops(1, relu); /* B computed: no packed B to run the rows over */
    make_rows_product(&pc, &c);
    pc.values[1] = NULL;
    expect_kernel("MatMul", &pc, false);
}

static void conv_takes_its_post_ops(void **unused) {
    (void)unused;
    prep_case pc;
    const fuse_kind relu[] = {FUSE_RELU}, swish_sum[] = {FUSE_SWISH, FUSE_SUM};
    fuse_chain c = post_ops(1, relu);
    make_conv(&pc, &c);
    expect_kernel("Conv", &pc, true);
    c = post_ops(2, swish_sum);
    make_conv(&pc, &c);
    expect_kernel("Conv", &pc, true);
    c = post_ops(1, relu);
    c.y_channels_last = true;
    make_conv(&pc, &c);
    expect_kernel("Conv", &pc, true);
}

static void conv_refuses_what_its_prepare_refuses(void **unused) {
    (void)unused;
    prep_case pc;
    const fuse_kind relu_shift[] = {FUSE_RELU, FUSE_SHIFT};
    fuse_chain c = post_ops(2, relu_shift); /* a per-channel step after an activation */
    make_conv(&pc, &c);
    expect_kernel("Conv", &pc, false);
    memset(&c, 0, sizeof c);
    c.x_scale = true; /* without its input 4 and constant weights */
    make_conv(&pc, &c);
    expect_kernel("Conv", &pc, false);
}

/* Every CPU kernel the fusion pass may hand a chain (KF_POST_OPS) answers the query: without
 * it the pass would fuse nothing into its steps. */
static void every_post_op_kernel_answers(void **unused) {
    (void)unused;
    size_t n;
    const kernel *t = cpu_kernel_table(&n);
    int post_op_kernels = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(t[i].flags & KF_POST_OPS)) continue;
        assert_non_null(t[i].takes_chain);
        post_op_kernels++;
    }
    assert_int_equal(post_op_kernels, 3); /* Conv, MatMul, Gemm */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(takes_an_attention),
        cmocka_unit_test(reads_the_geometry_resolved_for_its_views),
        cmocka_unit_test(refuses_views_of_other_ranks),
        cmocka_unit_test(refuses_views_that_do_not_make_an_attention),
        cmocka_unit_test(refuses_a_chain_that_is_not_an_attention),
        cmocka_unit_test(matmul_takes_its_post_ops),
        cmocka_unit_test(matmul_refuses_what_its_prepare_refuses),
        cmocka_unit_test_setup_teardown(matmul_over_unknown_rows_takes_its_post_ops, make_cache,
                                        free_cache),
        cmocka_unit_test_setup_teardown(matmul_over_unknown_rows_refuses_an_addend_and_views,
                                        make_cache, free_cache),
        cmocka_unit_test(conv_takes_its_post_ops),
        cmocka_unit_test(conv_refuses_what_its_prepare_refuses),
        cmocka_unit_test(every_post_op_kernel_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
