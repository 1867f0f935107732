/* Unit test for kernels_cpu/contrib_nlp/nbits_i8.c's repacked MatMulNBits weight: unpacking gives
 * back the model's bytes exactly (the executor rebuilds an evicted weight from it, core/shared.h),
 * and a column dequantized from it is bit for bit the one dequantized from the bytes as stored
 * (a tied embedding's rows, ai.onyx GatherNBits), for N not a multiple of the 16-column groups,
 * K not of the block, and several block sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <stdlib.h>

#include "kernels_cpu/contrib_nlp/nbits_i8.h"

static void roundtrip(int64_t k, int64_t n, int64_t block, bool zp) {
    nb_weight w = {.k = k, .n = n, .bits = 4, .block = block};
    w.k_blocks = (k + block - 1) / block;
    w.blob = block / 2;
    size_t bytes = (size_t)(n * w.k_blocks * w.blob), tables = (size_t)(n * w.k_blocks);
    uint8_t *b = malloc(bytes), *back = malloc(bytes), *z = malloc(tables);
    float *scale = malloc(tables * sizeof *scale);
    srand((unsigned)(k * 31 + n));
    for (size_t i = 0; i < bytes; i++) b[i] = (uint8_t)rand();
    for (size_t i = 0; i < tables; i++) {
        scale[i] = (float)(i % 7) * 0.25f + 0.5f;
        z[i] = (uint8_t)(i % 16);
    }
    w.b = b;
    w.scale = scale;
    w.zp_u8 = zp ? z : NULL;
    assert_true(nbi8_fits(&w));
    nbi8_pack *p = NULL;
    assert_int_equal(nbi8_pack_make(&w, &p), ONYX_OK);
    memset(back, 0xAB, bytes);
    nbi8_unpack_codes(p, back);
    assert_memory_equal(back, b, bytes);
    float *want = malloc((size_t)k * sizeof *want), *got = malloc((size_t)k * sizeof *got);
    for (int64_t c = 0; c < n; c++) {
        nb_dequant_column(&w, c, want);
        memset(got, 0xAB, (size_t)k * sizeof *got);
        nbi8_dequant_column(p, c, got);
        assert_memory_equal(got, want, (size_t)k * sizeof *got);
    }
    free(want);
    free(got);
    nbi8_free(p);
    free(b);
    free(back);
    free(z);
    free(scale);
}

static void test_unpack_gives_the_bytes_and_columns_back(void **state) {
    (void)state;
    roundtrip(64, 16, 32, false);
    roundtrip(100, 33, 32, true);   /* K padded to the block, N past a group */
    roundtrip(256, 7, 16, true);
    roundtrip(520, 40, 64, false);
    roundtrip(896, 129, 128, true);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_unpack_gives_the_bytes_and_columns_back)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
