/* kernel.takes_chain (core/kernel.h): the CPU's Attention kernel answers the fusion pass's query
 * as its prepare would: yes for a chain of views that make an attention (and then its prepare
 * takes it), no for one that does not (where its prepare refuses) or a chain that is not an
 * attention. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/fuse.h"
#include "kernels_cpu/cpu_kernels.h"

enum { B = 1, H = 2, S = 4, T = 6, D = 8 };

static const kernel *cpu_attention(void) {
    size_t n;
    const kernel *t = cpu_kernel_table(&n);
    for (size_t i = 0; i < n; i++)
        if (!*t[i].domain && !strcmp(t[i].op_type, "Attention")) return &t[i];
    return NULL;
}

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
    c.view_dims[1][2] = D - 1; /* K^T's rows are not Q's columns */
    expect(&c, false);
    c = attention_chain();
    c.view_strides[0][3] = 2; /* Q's rows not contiguous */
    expect(&c, false);
}

static void refuses_a_chain_that_is_not_an_attention(void **unused) {
    (void)unused;
    fuse_chain c = attention_chain();
    c.attention = false;
    expect(&c, false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(takes_an_attention),
        cmocka_unit_test(refuses_views_of_other_ranks),
        cmocka_unit_test(refuses_views_that_do_not_make_an_attention),
        cmocka_unit_test(refuses_a_chain_that_is_not_an_attention),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
