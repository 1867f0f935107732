/* Unit tests for kernels_cpu/contrib_nlp/kv_quant.c, GroupQueryAttention's quantized KV cache
 * rows: codes as onnxruntime's contract makes them (x times the scale's reciprocal, rounded half
 * to even, saturated; a zero scale taken as 1; NaN to the top code), int4 pairs +8 biased with
 * the even column in the low nibble, one scale or one per column, and dequantization as codes
 * times scales. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "kernels_cpu/contrib_nlp/kv_quant.h"

static void int8_rounds_half_to_even_and_saturates(void **state) {
    (void)state;
    const float x[8] = {0.5f, 1.5f, 2.5f, -2.5f, 300.0f, -300.0f, NAN, -0.49f};
    const float one = 1.0f;
    int8_t q[8];
    cnlp_kv_quantize_row(8, x, (uint8_t *)q, 8, &one, false);
    const int8_t want[8] = {0, 2, 2, -2, 127, -128, 127, 0};
    for (int i = 0; i < 8; i++) assert_int_equal(q[i], want[i]);
}

static void int8_per_column_scales_and_zero_scale(void **state) {
    (void)state;
    const float x[4] = {1.0f, 1.0f, 3.0f, -7.0f};
    const float scale[4] = {0.5f, 0.25f, 0.0f, 2.0f}; /* 0: taken as 1 */
    int8_t q[4];
    cnlp_kv_quantize_row(8, x, (uint8_t *)q, 4, scale, true);
    const int8_t want[4] = {2, 4, 3, -4}; /* -3.5 rounds to even: -4 */
    for (int i = 0; i < 4; i++) assert_int_equal(q[i], want[i]);
    float y[4];
    cnlp_kv_dequantize_row(8, (const uint8_t *)q, y, 4, scale, true);
    const float back[4] = {1.0f, 1.0f, 0.0f, -8.0f}; /* codes times the scales as given */
    for (int i = 0; i < 4; i++) assert_true(y[i] == back[i]);
}

static void int4_pairs_low_nibble_first(void **state) {
    (void)state;
    const float x[5] = {-8.0f, 7.0f, 20.0f, -20.0f, 1.0f};
    const float one = 1.0f;
    uint8_t q[3];
    cnlp_kv_quantize_row(4, x, q, 5, &one, false);
    /* codes -8, 7 | 7, -8 | 1 and an odd tail of 0, each +8 */
    assert_int_equal(q[0], 0x0 | (0xF << 4));
    assert_int_equal(q[1], 0xF | (0x0 << 4));
    assert_int_equal(q[2], 0x9 | (0x8 << 4));
    float y[5];
    cnlp_kv_dequantize_row(4, q, y, 5, &one, false);
    const float back[5] = {-8.0f, 7.0f, 7.0f, -8.0f, 1.0f};
    for (int i = 0; i < 5; i++) assert_true(y[i] == back[i]);
}

static void round_trips_within_half_a_step(void **state) {
    (void)state;
    for (int bits = 4; bits <= 8; bits += 4) {
        float x[64], scale[64], y[64];
        uint8_t q[64];
        for (int j = 0; j < 64; j++) {
            scale[j] = 0.01f * (float)(1 + j % 7);
            x[j] = scale[j] * (float)((j * 37 % 15) - 7) * 0.93f;
        }
        cnlp_kv_quantize_row(bits, x, q, 64, scale, true);
        cnlp_kv_dequantize_row(bits, q, y, 64, scale, true);
        for (int j = 0; j < 64; j++) assert_true(fabsf(y[j] - x[j]) <= 0.5f * scale[j] * 1.0001f);
        assert_int_equal(cnlp_kv_row_bytes(bits, 64), bits == 8 ? 64 : 32);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(int8_rounds_half_to_even_and_saturates),
        cmocka_unit_test(int8_per_column_scales_and_zero_scale),
        cmocka_unit_test(int4_pairs_low_nibble_first),
        cmocka_unit_test(round_trips_within_half_a_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
