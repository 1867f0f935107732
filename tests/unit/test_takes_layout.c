/* kernel.takes_chain asked about layouts (core/kernel.h): the fusion pass marks a tensor opaque
 * (core/fuse_blocked.c) only where the kernels of the steps around it say they take it, so each
 * query must answer as its kernel's prepare then does. For every CPU kernel flagged
 * KF_OPAQUE_LAYOUT, and the float Conv: yes for the layouts the pass makes (X and Y opaque
 * together, a global pooling's plain Y, a QuantizeLinear's opaque Y of a plain X, a Transpose
 * that moves the channels of an opaque X last or of a plain X first again, a conv's opaque X,
 * addend and Y), and its prepare then takes them;
 * no for what its prepare refuses (X or Y opaque alone, a wrong perm, a pooling oneDNN has no
 * channels-last kernel for, Indices, a chain of post-ops, an opaque X with pre-ops, a conv in
 * double). And every such kernel has the query: without it the pass keeps its tensors plain. */
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

enum { C = 16, HW = 8 };

static const kernel *cpu_kernel(const char *domain, const char *op) {
    size_t n;
    const kernel *t = cpu_kernel_table(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].domain, domain) && !strcmp(t[i].op_type, op)) return &t[i];
    return NULL;
}

/* A chain of layouts alone: X (input 0) and Y (output 0) opaque or not. */
static fuse_chain layouts(bool in0, bool out0) {
    fuse_chain c;
    memset(&c, 0, sizeof c);
    c.opaque_in0 = in0;
    c.opaque_out0 = out0;
    return c;
}

/* One node as a kernel's prepare sees it: up to 9 inputs (types, constant values) and up to 2
 * outputs, attributes, a window. */
typedef struct prep_case {
    graph_node node;
    int outputs[2];
    graph_attr attrs[2];
    type_info in[9], out[2];
    const type_info *in_ptr[9];
    const tensor *values[9];
    op_params params;
    kernel_prep prep;
} prep_case;

static void make_case(prep_case *pc, const char *domain, const char *op, int version, int n_in,
                      int n_out, const fuse_chain *chain) {
    memset(pc, 0, sizeof *pc);
    pc->node = (graph_node){.name = "n", .op_type = op, .domain = domain, .version = version,
                            .n_inputs = n_in, .n_outputs = n_out, .outputs = pc->outputs,
                            .attrs = pc->attrs};
    for (int i = 0; i < n_out; i++) pc->outputs[i] = i;
    for (int i = 0; i < n_in; i++) pc->in_ptr[i] = &pc->in[i];
    pc->prep = (kernel_prep){.node = &pc->node, .n_in = n_in, .n_out = n_out,
                             .in_type = pc->in_ptr, .in_value = pc->values, .out_type = pc->out,
                             .fused = chain, .params = &pc->params};
}

static void set_tensor(type_info *t, onyx_dtype dt, int64_t d0, int64_t d1, int64_t d2,
                       int64_t d3) {
    const int64_t dims[4] = {d0, d1, d2, d3};
    type_set_tensor(t, dt, 4, dims);
}

static void add_int(prep_case *pc, const char *name, int64_t v) {
    pc->attrs[pc->node.n_attrs++] = (graph_attr){.name = name, .type = ATTR_INT, .i = v};
}

static void add_ints(prep_case *pc, const char *name, const int64_t *v, size_t n) {
    pc->attrs[pc->node.n_attrs++] = (graph_attr){.name = name, .type = ATTR_INTS, .n = n,
                                                 .ints = v};
}

/* A 2-D window over [1, c, h, w]: kernel k, stride s, no pads, into m channels of out x out. */
static void set_window(prep_case *pc, int64_t c, int64_t m, int64_t h, int64_t k, int64_t s,
                       int64_t out) {
    geom_window *w = &pc->params.u.window;
    pc->params.kind = OP_PARAMS_WINDOW;
    w->nsp = 2;
    w->n = 1, w->c = c, w->m = m, w->group = 1;
    for (int i = 0; i < 2; i++) {
        w->in[i] = h, w->k[i] = k, w->out[i] = out;
        w->stride[i] = s, w->dil[i] = 1;
    }
}

/* The query on pc says `takes`, and the kernel's prepare agrees: it prepares after a yes, and
 * fails after a no. Returns the prepared state's presence (released). */
static bool expect(const kernel *k, prep_case *pc, bool takes) {
    assert_non_null(k);
    assert_non_null(k->takes_chain);
    assert_int_equal(k->takes_chain(&pc->prep), takes);
    void *state = NULL;
    onyx_status st = k->prepare(&pc->prep, &state);
    if (takes) {
        assert_int_equal(st, ONYX_OK);
    } else {
        assert_int_not_equal(st, ONYX_OK);
        assert_null(state);
    }
    bool prepared = state != NULL;
    if (state && k->release) k->release(state);
    return prepared;
}

/* ---- the kernels of cpu_opaque_prepare (a marker state where X is opaque) */

static const struct {
    const char *domain, *op;
    int version, n_in;
    onyx_dtype dt;
} elementwise[] = {
    {"", "Concat", 13, 2, ONYX_FLOAT},
    {"", "Mul", 13, 2, ONYX_FLOAT},
    {"com.microsoft", "QLinearAdd", 1, 8, ONYX_UINT8},
    {"com.microsoft", "QLinearMul", 1, 8, ONYX_UINT8},
    {"com.microsoft", "QLinearSigmoid", 1, 5, ONYX_UINT8},
    {"com.microsoft", "QLinearLeakyRelu", 1, 5, ONYX_UINT8},
    {"ai.onyx", "LookupTable", 1, 2, ONYX_UINT8},
    {"com.microsoft", "QLinearConcat", 1, 8, ONYX_UINT8},
    {"ai.onyx", "ChannelShuffle", 1, 1, ONYX_FLOAT},
};

static void make_same_shape(prep_case *pc, int i, const fuse_chain *c) {
    make_case(pc, elementwise[i].domain, elementwise[i].op, elementwise[i].version,
              elementwise[i].n_in, 1, c);
    for (int j = 0; j < elementwise[i].n_in; j++)
        set_tensor(&pc->in[j], elementwise[i].dt, 1, C, HW, HW);
    set_tensor(&pc->out[0], elementwise[i].dt, 1, C, HW, HW);
}

static void same_shape_steps_take_x_and_y_together(void **unused) {
    (void)unused;
    for (size_t i = 0; i < sizeof elementwise / sizeof *elementwise; i++) {
        const kernel *k = cpu_kernel(elementwise[i].domain, elementwise[i].op);
        prep_case pc;
        fuse_chain both = layouts(true, true), x = layouts(true, false), y = layouts(false, true);
        fuse_chain plain = layouts(false, false), post = layouts(true, true);
        post.ops[post.n++] = (fuse_op){.kind = FUSE_RELU};
        make_same_shape(&pc, (int)i, &both);
        assert_true(expect(k, &pc, true)); /* the channels-last path */
        make_same_shape(&pc, (int)i, &plain);
        assert_false(expect(k, &pc, true)); /* the plain one */
        make_same_shape(&pc, (int)i, &x);
        expect(k, &pc, false);
        make_same_shape(&pc, (int)i, &y);
        expect(k, &pc, false);
        make_same_shape(&pc, (int)i, &post); /* post-ops it does not apply */
        expect(k, &pc, false);
    }
}

/* A global pooling's Y [N, C, 1, 1] is stored the same either way: an opaque X alone will do. */
static void global_pools_take_an_opaque_x_alone(void **unused) {
    (void)unused;
    const struct {
        const char *domain, *op;
        int version, n_in;
        onyx_dtype dt;
    } pools[] = {{"", "GlobalAveragePool", 1, 1, ONYX_FLOAT},
                 {"", "GlobalMaxPool", 1, 1, ONYX_FLOAT},
                 {"com.microsoft", "QLinearGlobalAveragePool", 1, 5, ONYX_UINT8}};
    for (size_t i = 0; i < sizeof pools / sizeof *pools; i++) {
        const kernel *k = cpu_kernel(pools[i].domain, pools[i].op);
        fuse_chain x = layouts(true, false), both = layouts(true, true), y = layouts(false, true);
        const fuse_chain *chains[] = {&x, &both, &y};
        for (int j = 0; j < 3; j++) {
            prep_case pc;
            make_case(&pc, pools[i].domain, pools[i].op, pools[i].version, pools[i].n_in, 1,
                      chains[j]);
            for (int in = 0; in < pools[i].n_in; in++)
                set_tensor(&pc.in[in], pools[i].dt, 1, C, HW, HW);
            set_tensor(&pc.out[0], pools[i].dt, 1, C, 1, 1);
            expect(k, &pc, j < 2);
        }
    }
}

/* ---- QuantizeLinear: an opaque Y alone, from a plain float X by one scale into 8 bits */

/* X [1, C, HW, HW] of type xt by a scale of `scale_n` elements into Y of type yt. */
static void make_quantize(prep_case *pc, onyx_dtype xt, int64_t scale_n, onyx_dtype yt,
                          const fuse_chain *c) {
    make_case(pc, "", "QuantizeLinear", 21, 3, 1, c);
    set_tensor(&pc->in[0], xt, 1, C, HW, HW);
    const int64_t sdims[1] = {scale_n};
    type_set_tensor(&pc->in[1], xt, scale_n == 1 ? 0 : 1, sdims);
    type_set_tensor(&pc->in[2], yt, scale_n == 1 ? 0 : 1, sdims);
    set_tensor(&pc->out[0], yt, 1, C, HW, HW);
}

static void quantize_takes_an_opaque_y_alone(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("", "QuantizeLinear");
    prep_case pc;
    fuse_chain y = layouts(false, true), x = layouts(true, false), both = layouts(true, true);
    fuse_chain plain = layouts(false, false), post = layouts(false, true);
    post.ops[post.n++] = (fuse_op){.kind = FUSE_RELU};
    make_quantize(&pc, ONYX_FLOAT, 1, ONYX_UINT8, &y);
    assert_true(expect(k, &pc, true)); /* the channels-last path */
    make_quantize(&pc, ONYX_FLOAT, 1, ONYX_INT8, &y);
    assert_true(expect(k, &pc, true));
    make_quantize(&pc, ONYX_FLOAT, 1, ONYX_UINT8, &plain);
    assert_false(expect(k, &pc, true)); /* the plain one */
    make_quantize(&pc, ONYX_FLOAT, 1, ONYX_UINT8, &x); /* it reads no opaque X */
    expect(k, &pc, false);
    make_quantize(&pc, ONYX_FLOAT, 1, ONYX_UINT8, &both);
    expect(k, &pc, false);
    make_quantize(&pc, ONYX_FLOAT, C, ONYX_UINT8, &y); /* a scale per channel */
    expect(k, &pc, false);
    make_quantize(&pc, ONYX_FLOAT16, 1, ONYX_UINT8, &y); /* not the float fast path */
    expect(k, &pc, false);
    make_quantize(&pc, ONYX_FLOAT, 1, ONYX_INT16, &y); /* opaque tensors are of 8 bits */
    expect(k, &pc, false);
    make_quantize(&pc, ONYX_FLOAT, 1, ONYX_UINT8, &post); /* post-ops it does not apply */
    expect(k, &pc, false);
}

/* ---- Transpose: the same bytes read as the plain tensor channels last, or back */

static const int64_t to_last[] = {0, 2, 3, 1}, to_first[] = {0, 3, 1, 2};

static void make_transpose(prep_case *pc, const int64_t *perm, const fuse_chain *c) {
    make_case(pc, "", "Transpose", 13, 1, 1, c);
    set_tensor(&pc->in[0], ONYX_FLOAT, 1, C, HW, HW);
    set_tensor(&pc->out[0], ONYX_FLOAT, 1, HW, HW, C);
    add_ints(pc, "perm", perm, 4);
}

static void transpose_takes_what_moves_the_channels(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("", "Transpose");
    prep_case pc;
    fuse_chain x = layouts(true, false), y = layouts(false, true), both = layouts(true, true);
    make_transpose(&pc, to_last, &x);
    assert_true(expect(k, &pc, true));
    make_transpose(&pc, to_first, &y);
    assert_true(expect(k, &pc, true));
    make_transpose(&pc, to_first, &x); /* an opaque X whose channels go first */
    expect(k, &pc, false);
    make_transpose(&pc, to_last, &y);
    expect(k, &pc, false);
    make_transpose(&pc, to_last, &both);
    expect(k, &pc, false);
    static const int64_t not_a_perm[] = {0, 2, 2, 1};
    make_transpose(&pc, not_a_perm, &x);
    expect(k, &pc, false);
}

/* ---- MaxPool and AveragePool: oneDNN's channels-last pooling */

static void make_pool(prep_case *pc, const char *op, onyx_dtype dt, int64_t k, int64_t s,
                      int64_t out, const fuse_chain *c) {
    make_case(pc, "", op, 19, 1, 1, c);
    set_tensor(&pc->in[0], dt, 1, C, HW, HW);
    set_tensor(&pc->out[0], dt, 1, C, out, out);
    set_window(pc, C, C, HW, k, s, out);
}

static void pools_take_what_onednn_pools_channels_last(void **unused) {
    (void)unused;
    const kernel *max = cpu_kernel("", "MaxPool"), *avg = cpu_kernel("", "AveragePool");
    prep_case pc;
    fuse_chain both = layouts(true, true), x = layouts(true, false), y = layouts(false, true);
    make_pool(&pc, "MaxPool", ONYX_FLOAT, 2, 2, HW / 2, &both);
    expect(max, &pc, true);
    make_pool(&pc, "MaxPool", ONYX_UINT8, 2, 2, HW / 2, &both);
    expect(max, &pc, true);
    make_pool(&pc, "AveragePool", ONYX_FLOAT, 2, 2, HW / 2, &both);
    expect(avg, &pc, true);
    make_pool(&pc, "MaxPool", ONYX_FLOAT, 2, 2, HW / 2, &x);
    expect(max, &pc, false);
    make_pool(&pc, "MaxPool", ONYX_FLOAT, 2, 2, HW / 2, &y);
    expect(max, &pc, false);
    /* a ceil_mode output counting the pad it adds: oneDNN pools it no way */
    make_pool(&pc, "AveragePool", ONYX_FLOAT, 3, 2, HW / 2, &both);
    add_int(&pc, "count_include_pad", 1);
    expect(avg, &pc, false);
    /* the same without counting the pad: oneDNN pools it */
    make_pool(&pc, "AveragePool", ONYX_FLOAT, 3, 2, HW / 2, &both);
    expect(avg, &pc, true);
    /* Indices: the loops alone write them */
    make_pool(&pc, "MaxPool", ONYX_FLOAT, 2, 2, HW / 2, &both);
    pc.node.n_outputs = pc.prep.n_out = 2;
    set_tensor(&pc.out[1], ONYX_INT64, 1, C, HW / 2, HW / 2);
    expect(max, &pc, false);
}

/* ---- QLinearConv: a fast path (oneDNN's, or the AVX2 one) must take the node */

static uint8_t zero_u8;
static int8_t zero_s8, three_s8 = 3, weights[C * C * 9];
static float one_f = 1.f;
static const tensor scale = {.dtype = ONYX_FLOAT, .rank = 0, .numel = 1, .data = &one_f,
                             .nbytes = 4};
static const tensor x_zero = {.dtype = ONYX_UINT8, .rank = 0, .numel = 1, .data = &zero_u8,
                              .nbytes = 1};
static const tensor w_zero = {.dtype = ONYX_INT8, .rank = 0, .numel = 1, .data = &zero_s8,
                              .nbytes = 1};
static const tensor w_three = {.dtype = ONYX_INT8, .rank = 0, .numel = 1, .data = &three_s8,
                               .nbytes = 1};
static const tensor w = {.dtype = ONYX_INT8, .rank = 4, .dims = {C, C, 3, 3}, .numel = C * C * 9,
                         .data = weights, .nbytes = sizeof weights};

/* The rep's part a QLinearConv prepare uses: the shared cache its paths pack W into. */
static exec_env rep_env;

/* uint8 X [1, C, 8, 8] by int8 W [C, C, 3, 3] (zero point wz) into uint8 Y [1, C, 6, 6]. */
static void make_qconv(prep_case *pc, const tensor *wz, const fuse_chain *c) {
    make_case(pc, "", "QLinearConv", 10, 8, 1, c);
    pc->prep.env = &rep_env;
    const tensor *values[8] = {NULL, &scale, &x_zero, &w, &scale, wz, &scale, &x_zero};
    for (int i = 0; i < 8; i++) {
        pc->values[i] = values[i];
        if (values[i])
            type_set_tensor(&pc->in[i], values[i]->dtype, values[i]->rank, values[i]->dims);
    }
    set_tensor(&pc->in[0], ONYX_UINT8, 1, C, HW, HW);
    set_tensor(&pc->out[0], ONYX_UINT8, 1, C, HW - 2, HW - 2);
    set_window(pc, C, C, HW, 3, 1, HW - 2);
}

static void qlinearconv_takes_what_a_fast_path_takes(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("", "QLinearConv");
    prep_case pc;
    fuse_chain both = layouts(true, true), addend = layouts(true, true), plain = layouts(false, false);
    addend.opaque_addend = true;
    shared_cache *cache;
    assert_int_equal(shared_cache_create(&cache), ONYX_OK);
    rep_env.shared = cache;
    /* the answers depend on the CPU (VNNI, AVX2; ONYX_I8 forces a path): the query and the
     * prepare must agree */
    make_qconv(&pc, &w_zero, &both);
    bool fast = k->takes_chain(&pc.prep);
    expect(k, &pc, fast);
    /* W's zero point 3: not oneDNN's (int8 weights run with zero point 0) */
    make_qconv(&pc, &w_three, &both);
    expect(k, &pc, k->takes_chain(&pc.prep));
    make_qconv(&pc, &w_three, &plain); /* plain tensors: the reference takes anything */
    expect(k, &pc, true);
    make_qconv(&pc, &w_zero, &addend); /* input 3 is W: no addend */
    expect(k, &pc, false);
    rep_env.shared = NULL;
    shared_cache_free(cache);
}

/* ---- Conv: opaque X, addend and Y, float of rank 3 to 5, X not through pre-ops */

static void make_conv(prep_case *pc, onyx_dtype dt, const fuse_chain *c) {
    make_case(pc, "", "Conv", 11, 2, 1, c);
    set_tensor(&pc->in[0], dt, 1, C, HW, HW);
    set_tensor(&pc->in[1], dt, C, C, 3, 3);
    set_tensor(&pc->out[0], dt, 1, C, HW - 2, HW - 2);
    set_window(pc, C, C, HW, 3, 1, HW - 2);
}

static void conv_takes_opaque_float_tensors(void **unused) {
    (void)unused;
    const kernel *k = cpu_kernel("", "Conv");
    prep_case pc;
    fuse_chain both = layouts(true, true), y = layouts(false, true), pre = layouts(true, true);
    make_conv(&pc, ONYX_FLOAT, &both);
    expect(k, &pc, true);
    make_conv(&pc, ONYX_FLOAT, &y);
    expect(k, &pc, true);
    make_conv(&pc, ONYX_DOUBLE, &both); /* opaque tensors are float */
    expect(k, &pc, false);
    /* an opaque X read through pre-ops (DenseNet's BatchNorm and Relu): they run pixel by pixel */
    pre.pre[pre.n_pre++] = (fuse_op){.kind = FUSE_RELU};
    make_conv(&pc, ONYX_FLOAT, &pre);
    expect(k, &pc, true);
    pre.opaque_in0 = false; /* Y alone opaque */
    make_conv(&pc, ONYX_FLOAT, &pre);
    expect(k, &pc, true);
    /* but an X read through a Transpose from channels last takes no pre-ops */
    fuse_chain last = layouts(false, false);
    last.x_channels_last = true;
    last.pre[last.n_pre++] = (fuse_op){.kind = FUSE_RELU};
    make_conv(&pc, ONYX_FLOAT, &last);
    expect(k, &pc, false);
}

/* Every CPU kernel the pass may keep opaque tensors around answers the query. */
static void every_opaque_layout_kernel_answers(void **unused) {
    (void)unused;
    size_t n;
    const kernel *t = cpu_kernel_table(&n);
    int opaque_kernels = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(t[i].flags & KF_OPAQUE_LAYOUT)) continue;
        assert_non_null(t[i].takes_chain);
        assert_non_null(t[i].prepare);
        opaque_kernels++;
    }
    /* Transpose, Concat, QLinearConv, MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool,
     * Mul, QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, LookupTable,
     * QLinearGlobalAveragePool, QuantizeLinear, QLinearConcat, ChannelShuffle */
    assert_int_equal(opaque_kernels, 17);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_shape_steps_take_x_and_y_together),
        cmocka_unit_test(global_pools_take_an_opaque_x_alone),
        cmocka_unit_test(quantize_takes_an_opaque_y_alone),
        cmocka_unit_test(transpose_takes_what_moves_the_channels),
        cmocka_unit_test(pools_take_what_onednn_pools_channels_last),
        cmocka_unit_test(qlinearconv_takes_what_a_fast_path_takes),
        cmocka_unit_test(conv_takes_opaque_float_tensors),
        cmocka_unit_test(every_opaque_layout_kernel_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
