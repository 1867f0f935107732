/* Unit tests for geometry/attention: the sizes of ONNX Attention (3-D and 4-D, grouped heads,
 * past caches, unknown dims), its attn_mask check, and com.microsoft Attention,
 * MultiHeadAttention and GroupQueryAttention, with their refusals and the words they use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "geometry/attention.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
/* a shape of known rank from an array */
#define SHAPE(a) ((geom_att_shape){N(a), (a)})

static const geom_att_shape unknown_rank = {-1, NULL};

static void assert_says(onyx_status got, onyx_status want, const geom_msg *m, const char *words) {
    assert_int_equal(got, want);
    if (!strstr(m->text, words)) fail_msg("message '%s' lacks '%s'", m->text, words);
}

/* ---------------------------------------------------------------- ONNX Attention */

static void test_onnx_4d_grouped(void **state) {
    (void)state;
    const int64_t q[] = {2, 8, 5, 64}, k[] = {2, 2, 7, 64}, v[] = {2, 2, 7, 32};
    geom_att_shape sq = SHAPE(q), sk = SHAPE(k), sv = SHAPE(v);
    geom_attention d;
    geom_msg m;
    /* 4-D inputs do not read the head-count attributes */
    assert_int_equal(geom_attention_onnx(&sq, &sk, &sv, NULL, NULL, 0, 0, &d, &m), ONYX_OK);
    assert_false(d.packed);
    assert_int_equal(d.batch, 2);
    assert_int_equal(d.q_heads, 8);
    assert_int_equal(d.kv_heads, 2);
    assert_int_equal(d.q_len, 5);
    assert_int_equal(d.kv_len, 7);
    assert_int_equal(d.past_len, 0);
    assert_int_equal(d.total_len, 7);
    assert_int_equal(d.head, 64);
    assert_int_equal(d.v_head, 32);
}

static void test_onnx_3d_and_past(void **state) {
    (void)state;
    const int64_t q[] = {2, 5, 96}, k[] = {2, 7, 48}, v[] = {2, 7, 40};
    const int64_t pk[] = {2, 2, 3, 24}, pv[] = {2, 2, 3, 20};
    geom_att_shape sq = SHAPE(q), sk = SHAPE(k), sv = SHAPE(v), spk = SHAPE(pk), spv = SHAPE(pv);
    geom_attention d;
    geom_msg m;
    assert_int_equal(geom_attention_onnx(&sq, &sk, &sv, &spk, &spv, 4, 2, &d, &m), ONYX_OK);
    assert_true(d.packed);
    assert_int_equal(d.q_heads, 4);
    assert_int_equal(d.kv_heads, 2);
    assert_int_equal(d.head, 24);
    assert_int_equal(d.v_head, 20);
    assert_int_equal(d.q_len, 5);
    assert_int_equal(d.kv_len, 7);
    assert_int_equal(d.past_len, 3);
    assert_int_equal(d.total_len, 10);

    /* 3-D inputs need both head counts */
    assert_says(geom_attention_onnx(&sq, &sk, &sv, NULL, NULL, 4, 0, &d, &m),
                ONYX_ERR_INVALID_MODEL, &m, "q_num_heads and kv_num_heads > 0, got 4 and 0");
    /* 96 into 5 heads */
    assert_says(geom_attention_onnx(&sq, &sk, &sv, NULL, NULL, 5, 2, &d, &m), ONYX_ERR_SHAPE, &m,
                "Q hidden size 96 is not a multiple of its 5 heads");
    /* Q's head 96/4 = 24 against K's 48/4 = 12 */
    assert_says(geom_attention_onnx(&sq, &sk, &sv, NULL, NULL, 4, 4, &d, &m), ONYX_ERR_SHAPE, &m,
                "Q's head size 24 differs from K's 12");
    /* one past without the other */
    assert_says(geom_attention_onnx(&sq, &sk, &sv, &spk, NULL, 4, 2, &d, &m),
                ONYX_ERR_INVALID_MODEL, &m, "given together");
    /* past lengths that differ */
    const int64_t pv4[] = {2, 2, 4, 20};
    geom_att_shape spv4 = SHAPE(pv4);
    assert_says(geom_attention_onnx(&sq, &sk, &sv, &spk, &spv4, 4, 2, &d, &m), ONYX_ERR_SHAPE,
                &m, "past_value has shape [2,2,4,20]");
}

static void test_onnx_unknown_dims(void **state) {
    (void)state;
    const int64_t k[] = {-1, 2, -1, 64};
    geom_att_shape sk = SHAPE(k);
    geom_attention d;
    geom_msg m;
    /* the rank comes from K; what is unknown stays unknown, what K knows is taken */
    assert_int_equal(geom_attention_onnx(&unknown_rank, &sk, &unknown_rank, NULL, NULL, 0, 0, &d,
                                         &m),
                     ONYX_OK);
    assert_false(d.packed);
    assert_int_equal(d.batch, -1);
    assert_int_equal(d.q_heads, -1);
    assert_int_equal(d.kv_heads, 2);
    assert_int_equal(d.head, 64);
    assert_int_equal(d.v_head, -1);
    assert_int_equal(d.total_len, -1);
    assert_says(geom_attention_onnx(&unknown_rank, &unknown_rank, &unknown_rank, NULL, NULL, 0, 0,
                                    &d, &m),
                ONYX_ERR_SHAPE, &m, "ranks of Q, K and V are unknown");
}

static void test_onnx_refusals(void **state) {
    (void)state;
    geom_attention d;
    geom_msg m;
    const int64_t q5[] = {1, 1, 1, 1, 1}, q[] = {1, 6, 2, 8}, k[] = {1, 4, 3, 8}, v3[] = {1, 3, 8};
    geom_att_shape sq5 = SHAPE(q5), sq = SHAPE(q), sk = SHAPE(k), sv3 = SHAPE(v3);
    assert_says(geom_attention_onnx(&sq5, &sk, &sk, NULL, NULL, 0, 0, &d, &m), ONYX_ERR_SHAPE, &m,
                "Q has rank 5, expected 3 or 4");
    assert_says(geom_attention_onnx(&sq, &sk, &sv3, NULL, NULL, 0, 0, &d, &m), ONYX_ERR_SHAPE, &m,
                "ranks 4, 4 and 3");
    /* 6 query heads over 4 key/value heads */
    assert_says(geom_attention_onnx(&sq, &sk, &sk, NULL, NULL, 0, 0, &d, &m), ONYX_ERR_SHAPE, &m,
                "Q has 6 heads, not a multiple of K/V's 4");
    const int64_t q0[] = {1, 0, 2, 8};
    geom_att_shape sq0 = SHAPE(q0);
    assert_says(geom_attention_onnx(&sq0, &sk, &sk, NULL, NULL, 0, 0, &d, &m), ONYX_ERR_SHAPE,
                &m, "expected at least one");
    const int64_t k2[] = {2, 4, 3, 8};
    geom_att_shape sk2 = SHAPE(k2);
    assert_says(geom_attention_onnx(&sk, &sk2, &sk2, NULL, NULL, 0, 0, &d, &m), ONYX_ERR_SHAPE,
                &m, "batch sizes 1, 2 and 2");
    /* no keys at all is a geometry (the kernels write zeros) */
    const int64_t k0[] = {1, 4, 0, 8};
    geom_att_shape sk0 = SHAPE(k0);
    assert_int_equal(geom_attention_onnx(&sk, &sk0, &sk0, NULL, NULL, 0, 0, &d, &m), ONYX_OK);
    assert_int_equal(d.total_len, 0);
}

static void test_onnx_mask(void **state) {
    (void)state;
    const geom_attention d = {.batch = 2, .q_heads = 8, .q_len = 5, .total_len = 7};
    geom_msg m;
    const int64_t st[] = {5, 7}, short_last[] = {1, 8, 5, 3}, too_long[] = {2, 1, 5, 9},
                  wrong[] = {3, 5, 7}, five[] = {1, 1, 1, 1, 1}, unknown_dims[] = {-1, 8, -1, -1};
    geom_att_shape s;
    s = SHAPE(st);
    assert_int_equal(geom_attention_mask(&s, &d, &m), ONYX_OK);
    s = SHAPE(short_last); /* padded with -inf */
    assert_int_equal(geom_attention_mask(&s, &d, &m), ONYX_OK);
    s = SHAPE(unknown_dims);
    assert_int_equal(geom_attention_mask(&s, &d, &m), ONYX_OK);
    assert_int_equal(geom_attention_mask(&unknown_rank, &d, &m), ONYX_OK);
    s = SHAPE(too_long);
    assert_says(geom_attention_mask(&s, &d, &m), ONYX_ERR_SHAPE, &m,
                "last dim is 9, expected at most 7");
    s = SHAPE(wrong);
    assert_says(geom_attention_mask(&s, &d, &m), ONYX_ERR_SHAPE, &m,
                "attn_mask [3,5,7] does not broadcast to [2,8,5,7]");
    s = SHAPE(five);
    assert_says(geom_attention_mask(&s, &d, &m), ONYX_ERR_SHAPE, &m, "rank 5, expected 1 to 4");
}

/* ---------------------------------------------------------------- com.microsoft */

static void test_ms_attention(void **state) {
    (void)state;
    const int64_t x[] = {2, 5, 16}, w[] = {16, 48}, b[] = {48}, past[] = {2, 2, 4, 3, 4};
    geom_att_shape sx = SHAPE(x), sw = SHAPE(w), sb = SHAPE(b), sp = SHAPE(past);
    geom_attention d;
    geom_msg m;
    assert_int_equal(geom_attention_ms(&sx, &sw, &sb, &sp, 4, NULL, 0, &d, &m), ONYX_OK);
    assert_int_equal(d.batch, 2);
    assert_int_equal(d.in_hidden, 16);
    assert_int_equal(d.q_heads, 4);
    assert_int_equal(d.kv_heads, 4);
    assert_int_equal(d.head, 4);
    assert_int_equal(d.v_head, 4);
    assert_int_equal(d.q_len, 5);
    assert_int_equal(d.kv_len, 5);
    assert_int_equal(d.past_len, 3);
    assert_int_equal(d.total_len, 8);

    const int64_t sizes[] = {16, 16, 8}, w40[] = {16, 40};
    geom_att_shape sw40 = SHAPE(w40);
    assert_int_equal(geom_attention_ms(&sx, &sw40, NULL, NULL, 4, sizes, 3, &d, &m), ONYX_OK);
    assert_int_equal(d.head, 4);
    assert_int_equal(d.v_head, 2);
    assert_int_equal(d.total_len, 5);
    assert_says(geom_attention_ms(&sx, &sw, NULL, NULL, 4, sizes, 3, &d, &m), ONYX_ERR_SHAPE, &m,
                "qkv_hidden_sizes add up to 40, but the weights have 48 columns");
    assert_says(geom_attention_ms(&sx, &sw40, NULL, NULL, 4, sizes, 2, &d, &m),
                ONYX_ERR_INVALID_MODEL, &m, "3 positive sizes");
    assert_says(geom_attention_ms(&sx, &sw40, NULL, NULL, 4, NULL, 0, &d, &m), ONYX_ERR_SHAPE,
                &m, "not 3 equal parts");
    assert_says(geom_attention_ms(&sx, &sw, &sb, NULL, 0, NULL, 0, &d, &m),
                ONYX_ERR_INVALID_MODEL, &m, "num_heads is 0");
    /* a past needs equal K and V widths */
    assert_says(geom_attention_ms(&sx, &sw40, NULL, &sp, 4, sizes, 3, &d, &m), ONYX_ERR_SHAPE,
                &m, "past needs equal K and V hidden sizes");
}

static void test_mha(void **state) {
    (void)state;
    const int64_t q[] = {2, 5, 16}, k[] = {2, 7, 16}, v[] = {2, 7, 8}, bias[] = {40},
                  pk[] = {2, 4, 3, 4}, pv[] = {2, 4, 3, 2};
    geom_att_shape sq = SHAPE(q), sk = SHAPE(k), sv = SHAPE(v), sb = SHAPE(bias), spk = SHAPE(pk),
                   spv = SHAPE(pv);
    geom_attention d;
    geom_msg m;
    assert_int_equal(geom_attention_mha(&sq, &sk, &sv, &sb, &spk, &spv, 4, &d, &m), ONYX_OK);
    assert_false(d.kv_bnsh);
    assert_int_equal(d.head, 4);
    assert_int_equal(d.v_head, 2);
    assert_int_equal(d.kv_len, 7);
    assert_int_equal(d.past_len, 3);
    assert_int_equal(d.total_len, 10);

    const int64_t kb[] = {2, 4, 7, 4}, vb[] = {2, 4, 7, 6};
    geom_att_shape skb = SHAPE(kb), svb = SHAPE(vb);
    assert_int_equal(geom_attention_mha(&sq, &skb, &svb, NULL, NULL, NULL, 4, &d, &m), ONYX_OK);
    assert_true(d.kv_bnsh);
    assert_int_equal(d.kv_len, 7);
    assert_int_equal(d.v_head, 6);
    assert_int_equal(d.total_len, 7);
    assert_says(geom_attention_mha(&sq, &skb, &svb, NULL, &spk, &spv, 4, &d, &m), ONYX_ERR_SHAPE,
                &m, "go with a 3-D key");

    const int64_t bias41[] = {41}, k12[] = {2, 7, 12};
    geom_att_shape sb41 = SHAPE(bias41), sk12 = SHAPE(k12);
    assert_says(geom_attention_mha(&sq, &sk, &sv, &sb41, NULL, NULL, 4, &d, &m), ONYX_ERR_SHAPE,
                &m, "dim 0 is 41, expected 40");
    assert_says(geom_attention_mha(&sq, &sk12, &sv, NULL, NULL, NULL, 4, &d, &m), ONYX_ERR_SHAPE,
                &m, "the query's hidden size");
    assert_says(geom_attention_mha(&sq, NULL, NULL, NULL, NULL, NULL, 4, &d, &m),
                ONYX_ERR_UNSUPPORTED, &m, "key and value are required");
    assert_says(geom_attention_mha(&sq, &sk, &sv, NULL, &spk, NULL, 4, &d, &m),
                ONYX_ERR_INVALID_MODEL, &m, "go together");
}

static void test_gqa(void **state) {
    (void)state;
    const int64_t q[] = {1, 3, 32}, k[] = {1, 3, 16}, past[] = {1, 2, 6, 8};
    geom_att_shape sq = SHAPE(q), sk = SHAPE(k), sp = SHAPE(past);
    geom_attention d;
    geom_msg m;
    assert_int_equal(geom_attention_gqa(&sq, &sk, &sk, &sp, &sp, 4, 2, 9, 0, &d, &m), ONYX_OK);
    assert_false(d.qkv_packed);
    assert_int_equal(d.q_heads, 4);
    assert_int_equal(d.kv_heads, 2);
    assert_int_equal(d.head, 8);
    assert_int_equal(d.v_head, 8);
    assert_int_equal(d.q_len, 3);
    assert_int_equal(d.past_len, 6);
    assert_int_equal(d.total_len, 9);
    /* the present buffers keep the past's length where total is shorter */
    assert_int_equal(geom_attention_gqa(&sq, &sk, &sk, &sp, &sp, 4, 2, 4, 0, &d, &m), ONYX_OK);
    assert_int_equal(d.total_len, 6);
    /* total unknown */
    assert_int_equal(geom_attention_gqa(&sq, &sk, &sk, &sp, &sp, 4, 2, -1, 0, &d, &m), ONYX_OK);
    assert_int_equal(d.total_len, -1);
    assert_says(geom_attention_gqa(&sq, &sk, &sk, &sp, &sp, 4, 2, 2, 0, &d, &m), ONYX_ERR_SHAPE,
                &m, "total_sequence_length 2 is less than the sequence length 3");
    /* window-sized caches: the past's capacity is the present's length */
    assert_int_equal(geom_attention_gqa(&sq, &sk, &sk, &sp, &sp, 4, 2, 9, 4, &d, &m), ONYX_OK);
    assert_int_equal(d.total_len, 6);
    assert_says(geom_attention_gqa(&sq, &sk, &sk, &sp, &sp, 4, 2, 9, 8, &d, &m), ONYX_ERR_SHAPE,
                &m, "capacity 6 is less than local_window_size 8");
    assert_says(geom_attention_gqa(&sq, &sk, &sk, NULL, NULL, 4, 2, 9, 4, &d, &m),
                ONYX_ERR_INVALID_MODEL, &m, "needs past_key and past_value");

    /* packed QKV: (4 + 2*2) heads of 8 */
    const int64_t qkv[] = {1, 3, 64}, qkv_odd[] = {1, 3, 60};
    geom_att_shape sqkv = SHAPE(qkv), sodd = SHAPE(qkv_odd);
    assert_int_equal(geom_attention_gqa(&sqkv, NULL, NULL, NULL, NULL, 4, 2, 3, 0, &d, &m),
                     ONYX_OK);
    assert_true(d.qkv_packed);
    assert_int_equal(d.head, 8);
    assert_int_equal(d.past_len, 0);
    assert_int_equal(d.total_len, 3);
    assert_says(geom_attention_gqa(&sodd, NULL, NULL, NULL, NULL, 4, 2, 3, 0, &d, &m),
                ONYX_ERR_SHAPE, &m, "packed QKV width 60 is not a multiple of");
    assert_says(geom_attention_gqa(&sqkv, NULL, &sk, NULL, NULL, 4, 2, 3, 0, &d, &m),
                ONYX_ERR_INVALID_MODEL, &m, "value without key");
    /* head counts past int64's thirds saturate rather than overflow */
    assert_says(geom_attention_gqa(&sqkv, NULL, NULL, NULL, NULL, INT64_MAX, 1, 3, 0, &d, &m),
                ONYX_ERR_SHAPE, &m, "is not a multiple of");

    assert_says(geom_attention_gqa(&sq, &sk, &sk, NULL, NULL, 4, 3, 3, 0, &d, &m),
                ONYX_ERR_INVALID_MODEL, &m, "num_heads 4 is not a multiple of kv_num_heads 3");
    const int64_t k_wide[] = {1, 3, 24};
    geom_att_shape skw = SHAPE(k_wide);
    assert_says(geom_attention_gqa(&sq, &skw, &sk, NULL, NULL, 4, 2, 3, 0, &d, &m),
                ONYX_ERR_SHAPE, &m, "kv_num_heads * head size");
    const int64_t past_heads[] = {1, 4, 6, 8};
    geom_att_shape sph = SHAPE(past_heads);
    assert_says(geom_attention_gqa(&sq, &sk, &sk, &sph, &sph, 4, 2, 9, 0, &d, &m),
                ONYX_ERR_SHAPE, &m, "dim 1 is 4, expected 2 (kv_num_heads)");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_onnx_4d_grouped), cmocka_unit_test(test_onnx_3d_and_past),
        cmocka_unit_test(test_onnx_unknown_dims), cmocka_unit_test(test_onnx_refusals),
        cmocka_unit_test(test_onnx_mask),        cmocka_unit_test(test_ms_attention),
        cmocka_unit_test(test_mha),              cmocka_unit_test(test_gqa),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
