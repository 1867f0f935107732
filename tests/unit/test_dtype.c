/* Unit tests for core/dtype.c: element sizes, packed storage sizes and the float16/bfloat16
 * conversions, checked against known bit patterns (ties to even, subnormals, inf, NaN). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/dtype.h"

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void test_sizes(void **state) {
    (void)state;
    assert_int_equal(dtype_size(ONYX_FLOAT), 4);
    assert_int_equal(dtype_size(ONYX_BOOL), 1);
    assert_int_equal(dtype_size(ONYX_FLOAT16), 2);
    assert_int_equal(dtype_size(ONYX_COMPLEX128), 16);
    assert_int_equal(dtype_size(ONYX_STRING), sizeof(char *));
    assert_int_equal(dtype_size(ONYX_INT4), 0);
    assert_int_equal(dtype_size(ONYX_UNDEFINED), 0);
    assert_int_equal(dtype_per_byte(ONYX_INT4), 2);
    assert_int_equal(dtype_per_byte(ONYX_UINT2), 4);
    assert_int_equal(dtype_per_byte(ONYX_FLOAT), 0);
    assert_true(dtype_valid(1));
    assert_true(dtype_valid(26));
    assert_false(dtype_valid(0));
    assert_false(dtype_valid(27));
    assert_false(dtype_valid(-1));
    assert_string_equal(onyx_dtype_name(ONYX_FLOAT8E4M3FN), "float8e4m3fn");
    assert_string_equal(onyx_dtype_name((onyx_dtype)99), "undefined");
    assert_int_equal(onyx_dtype_bits(ONYX_UINT2), 2);
    assert_int_equal(onyx_dtype_bits((onyx_dtype)-3), 0);
    assert_true(dtype_in(ONYX_BFLOAT16, DT_FLOATS));
    assert_false(dtype_in(ONYX_BOOL, DT_NUMERIC));
    assert_true(dtype_is_signed_int(ONYX_INT8));
    assert_false(dtype_is_signed_int(ONYX_UINT8));
}

static void test_storage_size(void **state) {
    (void)state;
    size_t n = 123;
    assert_true(dtype_storage_size(ONYX_FLOAT, 6, &n));
    assert_int_equal(n, 24);
    assert_true(dtype_storage_size(ONYX_INT4, 5, &n));
    assert_int_equal(n, 3);
    assert_true(dtype_storage_size(ONYX_UINT2, 5, &n));
    assert_int_equal(n, 2);
    assert_true(dtype_storage_size(ONYX_FLOAT4E2M1, 0, &n));
    assert_int_equal(n, 0);
    assert_true(dtype_storage_size(ONYX_INT2, INT64_MAX, &n));
    assert_true(dtype_storage_size(ONYX_DOUBLE, 0, &n));
    assert_int_equal(n, 0);
    assert_true(dtype_storage_size(ONYX_DOUBLE, INT64_MAX / 8, &n));
    assert_false(dtype_storage_size(ONYX_DOUBLE, INT64_MAX / 4 + 1, &n));
    assert_false(dtype_storage_size(ONYX_DOUBLE, INT64_MAX / 2, &n));
    assert_false(dtype_storage_size(ONYX_COMPLEX128, INT64_MAX / 4, &n));
    assert_false(dtype_storage_size(ONYX_FLOAT, -1, &n));
    assert_false(dtype_storage_size(ONYX_UNDEFINED, 1, &n));
}

static void test_fp16_from_float(void **state) {
    (void)state;
    assert_int_equal(float_to_fp16(0.0f), 0x0000);
    assert_int_equal(float_to_fp16(-0.0f), 0x8000);
    assert_int_equal(float_to_fp16(1.0f), 0x3c00);
    assert_int_equal(float_to_fp16(-2.0f), 0xc000);
    assert_int_equal(float_to_fp16(0.5f), 0x3800);
    assert_int_equal(float_to_fp16(0.333333333f), 0x3555);
    /* largest finite, and the overflow boundary: 65520 is the tie between 65504 and 2^16 */
    assert_int_equal(float_to_fp16(65504.0f), 0x7bff);
    assert_int_equal(float_to_fp16(65519.99f), 0x7bff);
    assert_int_equal(float_to_fp16(65520.0f), 0x7c00);
    assert_int_equal(float_to_fp16(-65520.0f), 0xfc00);
    assert_int_equal(float_to_fp16(1e6f), 0x7c00);
    assert_int_equal(float_to_fp16(-1e30f), 0xfc00);
    assert_int_equal(float_to_fp16(INFINITY), 0x7c00);
    assert_int_equal(float_to_fp16(-INFINITY), 0xfc00);
    uint16_t h = float_to_fp16(NAN);
    assert_int_equal(h & 0x7c00, 0x7c00);
    assert_int_not_equal(h & 0x3ff, 0);
    /* NaN whose payload is only in the low float bits must stay NaN */
    h = float_to_fp16(from_bits(0x7f800001u));
    assert_int_equal(h & 0x7c00, 0x7c00);
    assert_int_not_equal(h & 0x3ff, 0);
    /* ties to even in the normal range */
    assert_int_equal(float_to_fp16(1.0f + 0x1p-11f), 0x3c00);
    assert_int_equal(float_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02);
    assert_int_equal(float_to_fp16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
    assert_int_equal(float_to_fp16(2049.0f), 0x6800);
    assert_int_equal(float_to_fp16(2051.0f), 0x6802);
    assert_int_equal(float_to_fp16(0.99999f), 0x3c00); /* mantissa carry into the exponent */
    /* subnormals: smallest is 2^-24 */
    assert_int_equal(float_to_fp16(0x1p-24f), 0x0001);
    assert_int_equal(float_to_fp16(-0x1p-24f), 0x8001);
    assert_int_equal(float_to_fp16(0x1p-25f), 0x0000);             /* tie to even (0) */
    assert_int_equal(float_to_fp16(0x1p-25f + 0x1p-40f), 0x0001);  /* just above the tie */
    assert_int_equal(float_to_fp16(3 * 0x1p-25f), 0x0002);         /* tie to even (2) */
    assert_int_equal(float_to_fp16(1e-7f), 0x0002);                /* 1.68 * 2^-24 */
    assert_int_equal(float_to_fp16(5e-5f), 0x0347);                /* 838.86 * 2^-24 */
    assert_int_equal(float_to_fp16(1e-8f), 0x0000);                /* below half the smallest */
    assert_int_equal(float_to_fp16(1023.5f * 0x1p-24f), 0x0400);   /* rounds up to min normal */
    assert_int_equal(float_to_fp16(0x1p-14f), 0x0400);
    assert_int_equal(float_to_fp16(from_bits(0x00000001u)), 0x0000); /* float subnormal */
}

static void test_fp16_to_float(void **state) {
    (void)state;
    assert_true(fp16_to_float(0x7bff) == 65504.0f);
    assert_true(fp16_to_float(0x3c00) == 1.0f);
    assert_true(fp16_to_float(0x0001) == 0x1p-24f);
    assert_true(fp16_to_float(0x8001) == -0x1p-24f);
    assert_true(fp16_to_float(0x03ff) == 1023 * 0x1p-24f);
    assert_true(fp16_to_float(0x0400) == 0x1p-14f);
    assert_int_equal(to_bits(fp16_to_float(0x8000)), 0x80000000u);
    assert_true(fp16_to_float(0x3555) == 0.333251953125f);
    assert_true(isinf(fp16_to_float(0x7c00)) && fp16_to_float(0x7c00) > 0);
    assert_true(isinf(fp16_to_float(0xfc00)) && fp16_to_float(0xfc00) < 0);
    assert_true(isnan(fp16_to_float(0x7e00)));
    assert_true(isnan(fp16_to_float(0x7c01)));
    /* every half survives the round trip (NaNs stay NaN) */
    for (uint32_t i = 0; i < 0x10000; i++) {
        float f = fp16_to_float((uint16_t)i);
        uint16_t back = float_to_fp16(f);
        if ((i & 0x7c00) == 0x7c00 && (i & 0x3ff)) {
            assert_true(isnan(f));
            assert_int_equal(back & 0x7c00, 0x7c00);
            assert_int_not_equal(back & 0x3ff, 0);
        } else {
            assert_int_equal(back, i);
        }
    }
}

static void test_bf16(void **state) {
    (void)state;
    assert_int_equal(float_to_bf16(1.0f), 0x3f80);
    assert_int_equal(float_to_bf16(-2.0f), 0xc000);
    assert_int_equal(float_to_bf16(0.0f), 0x0000);
    assert_int_equal(float_to_bf16(-0.0f), 0x8000);
    assert_int_equal(float_to_bf16(3.14159265f), 0x4049);
    /* ties to even */
    assert_int_equal(float_to_bf16(from_bits(0x3f808000u)), 0x3f80);
    assert_int_equal(float_to_bf16(from_bits(0x3f818000u)), 0x3f82);
    assert_int_equal(float_to_bf16(from_bits(0x3f808001u)), 0x3f81);
    assert_int_equal(float_to_bf16(from_bits(0x3f807fffu)), 0x3f80);
    /* overflow to inf, infinities, NaN (also one whose payload is only in the low bits) */
    assert_int_equal(float_to_bf16(from_bits(0x7f7fffffu)), 0x7f80);
    assert_int_equal(float_to_bf16(from_bits(0x7f7f7fffu)), 0x7f7f);
    assert_int_equal(float_to_bf16(INFINITY), 0x7f80);
    assert_int_equal(float_to_bf16(-INFINITY), 0xff80);
    uint16_t b = float_to_bf16(from_bits(0x7f800001u));
    assert_int_equal(b & 0x7f80, 0x7f80);
    assert_int_not_equal(b & 0x7f, 0);
    b = float_to_bf16(-NAN);
    assert_int_equal(b & 0x7f80, 0x7f80);
    assert_int_not_equal(b & 0x7f, 0);
    /* subnormals */
    assert_int_equal(float_to_bf16(from_bits(0x00010000u)), 0x0001);
    assert_int_equal(float_to_bf16(from_bits(0x00008000u)), 0x0000);
    assert_int_equal(float_to_bf16(from_bits(0x00018000u)), 0x0002);
    assert_int_equal(to_bits(bf16_to_float(0x0001)), 0x00010000u);
    assert_true(bf16_to_float(0x3f80) == 1.0f);
    assert_true(bf16_to_float(0xc000) == -2.0f);
    assert_true(isinf(bf16_to_float(0xff80)));
    assert_true(isnan(bf16_to_float(0x7fc0)));
    for (uint32_t i = 0; i < 0x10000; i++) {
        float f = bf16_to_float((uint16_t)i);
        uint16_t back = float_to_bf16(f);
        if ((i & 0x7f80) == 0x7f80 && (i & 0x7f)) {
            assert_true(isnan(f));
            assert_true(isnan(bf16_to_float(back)));
        } else {
            assert_int_equal(back, i);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_storage_size),
        cmocka_unit_test(test_fp16_from_float),
        cmocka_unit_test(test_fp16_to_float),
        cmocka_unit_test(test_bf16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
