/* Unit tests for core/dtype.c: element sizes, packed storage sizes and the float16/bfloat16
 * conversions, checked against known bit patterns (ties to even, subnormals, inf, NaN); and the
 * float6 codes of core/floatconv.c against ml_dtypes' (onnx's reference) values. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/dtype.h"
#include "core/floatconv.h"

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
    assert_true(dtype_valid(ONYX_FLOAT6E3M2));
    assert_false(dtype_valid(0));
    assert_false(dtype_valid(29));
    assert_false(dtype_valid(-1));
    assert_string_equal(onyx_dtype_name(ONYX_FLOAT8E4M3FN), "float8e4m3fn");
    assert_string_equal(onyx_dtype_name((onyx_dtype)99), "undefined");
    assert_int_equal(onyx_dtype_bits(ONYX_UINT2), 2);
    assert_int_equal(onyx_dtype_bits(ONYX_FLOAT6E2M3), 6);
    assert_int_equal(dtype_size(ONYX_FLOAT6E3M2), 0);
    assert_int_equal(dtype_per_byte(ONYX_FLOAT6E2M3), 0); /* elements straddle bytes */
    assert_int_equal(dtype_packed_bits(ONYX_FLOAT6E3M2), 6);
    assert_int_equal(dtype_packed_bits(ONYX_INT4), 4);
    assert_int_equal(dtype_packed_bits(ONYX_UINT2), 2);
    assert_int_equal(dtype_packed_bits(ONYX_UINT8), 0);
    assert_int_equal(dtype_packed_bits(ONYX_STRING), 0);
    assert_string_equal(onyx_dtype_name(ONYX_FLOAT6E2M3), "float6e2m3");
    assert_string_equal(onyx_dtype_name(ONYX_FLOAT6E3M2), "float6e3m2");
    assert_true(dtype_in(ONYX_FLOAT6E2M3, DT_SUBBYTE));
    assert_true(dtype_in(ONYX_FLOAT6E3M2, DT_ALL_TENSOR));
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
    assert_int_equal(n, (size_t)(INT64_MAX / 4 + 1));
    /* float6: ceil(6n / 8) bytes, 4 elements in 3 */
    static const size_t f6_bytes[10] = {0, 1, 2, 3, 3, 4, 5, 6, 6, 7};
    for (int64_t k = 0; k < 10; k++) {
        assert_true(dtype_storage_size(ONYX_FLOAT6E2M3, k, &n));
        assert_int_equal(n, f6_bytes[k]);
    }
    assert_true(dtype_storage_size(ONYX_FLOAT6E3M2, INT64_MAX, &n));
    assert_int_equal(n, (size_t)((INT64_MAX / 8) * 6 + 6)); /* 7 left over: 42 bits */
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

/* Packing as onnx's numpy_helper._pack_6bit: element i in bits [6i, 6i+6), low bits first. */
static void test_packed(void **state) {
    (void)state;
    static const uint8_t codes[7] = {1, 2, 3, 4, 63, 0, 42};
    static const uint8_t packed[6] = {0x81, 0x30, 0x10, 0x3f, 0xa0, 0x02}; /* from _pack_6bit */
    uint8_t buf[6];
    memset(buf, 0xff, sizeof buf);
    for (int i = 0; i < 7; i++) dtype_packed_set(buf, i, 6, codes[i]);
    buf[5] &= 0x03; /* bits past element 6 are padding */
    assert_memory_equal(buf, packed, sizeof packed);
    for (int i = 0; i < 7; i++) assert_int_equal(dtype_packed_get(packed, i, 6), codes[i]);
    /* setting one element leaves its neighbours (on both sides of a byte boundary) alone */
    dtype_packed_set(buf, 1, 6, 0x3f);
    assert_int_equal(dtype_packed_get(buf, 0, 6), 1);
    assert_int_equal(dtype_packed_get(buf, 1, 6), 0x3f);
    assert_int_equal(dtype_packed_get(buf, 2, 6), 3);
    dtype_packed_set(buf, 1, 6, 0x100 | 2); /* only the low 6 bits count */
    assert_int_equal(buf[0], 0x81);
    assert_int_equal(buf[1], 0x30);
    /* the 2- and 4-bit layouts are unchanged */
    uint8_t b2 = 0;
    dtype_packed_set(&b2, 3, 2, 2);
    dtype_packed_set(&b2, 0, 2, 1);
    assert_int_equal(b2, 0x81);
    assert_int_equal(dtype_packed_get(&b2, 3, 2), 2);
    uint8_t b4[1] = {0x5a};
    assert_int_equal(dtype_packed_get(b4, 0, 4), 0xa);
    assert_int_equal(dtype_packed_get(b4, 1, 4), 0x5);
}

/* The 32 magnitudes of each float6 type, as ml_dtypes decodes codes 0..31 (onnx's reference). */
static const double e2m3_values[32] = {
    0.0,   0.125, 0.25,  0.375, 0.5,   0.625, 0.75,  0.875, 1.0,   1.125, 1.25,
    1.375, 1.5,   1.625, 1.75,  1.875, 2.0,   2.25,  2.5,   2.75,  3.0,   3.25,
    3.5,   3.75,  4.0,   4.5,   5.0,   5.5,   6.0,   6.5,   7.0,   7.5};
static const double e3m2_values[32] = {
    0.0,  0.0625, 0.125, 0.1875, 0.25, 0.3125, 0.375, 0.4375, 0.5,  0.625, 0.75,
    0.875, 1.0,   1.25,  1.5,    1.75, 2.0,    2.5,   3.0,    3.5,  4.0,   5.0,
    6.0,  7.0,    8.0,   10.0,   12.0, 14.0,   16.0,  20.0,   24.0, 28.0};

static void check_float6(onyx_dtype d, const double *values) {
    for (unsigned code = 0; code < 64; code++) {
        double v = values[code & 31];
        float got = floatconv_decode(d, (uint8_t)code);
        assert_true(got == (code & 32 ? -v : v));
        assert_int_equal(signbit(got) != 0, (code & 32) != 0);
        assert_int_equal(floatconv_decode(d, (uint8_t)(code | 0xc0)), got); /* high bits ignored */
        /* every value encodes back to its code, saturating or not */
        assert_int_equal(floatconv_encode(d, got, true), code);
        assert_int_equal(floatconv_encode(d, got, false), code);
    }
    for (int k = 0; k < 31; k++) {
        /* the midpoint of two neighbours goes to the even code; a hair off it, to the nearer */
        double mid = (values[k] + values[k + 1]) / 2, eps = ldexp(mid, -40);
        int even = k % 2 == 0 ? k : k + 1;
        assert_int_equal(floatconv_encode(d, mid, true), even);
        assert_int_equal(floatconv_encode(d, -mid, true), 32 | even);
        assert_int_equal(floatconv_encode(d, mid - eps, true), k);
        assert_int_equal(floatconv_encode(d, mid + eps, true), k + 1);
    }
    /* no Inf or NaN: overflow saturates either way, NaN becomes -0 and -NaN +0 (ml_dtypes) */
    double max = values[31], over = max + (max - values[30]) / 2;
    assert_int_equal(floatconv_encode(d, over, false), 31);
    assert_int_equal(floatconv_encode(d, -over, false), 63);
    assert_int_equal(floatconv_encode(d, 1e300, false), 31);
    assert_int_equal(floatconv_encode(d, INFINITY, false), 31);
    assert_int_equal(floatconv_encode(d, -INFINITY, true), 63);
    assert_int_equal(floatconv_encode(d, NAN, true), 32);
    assert_int_equal(floatconv_encode(d, -NAN, false), 0);
    assert_int_equal(floatconv_encode(d, 1e-300, true), 0);
    assert_int_equal(floatconv_encode(d, -1e-300, true), 32);
    assert_int_equal(floatconv_encode(d, -0.0, true), 32);
}

static void test_float6(void **state) {
    (void)state;
    assert_true(floatconv_is_small_float(ONYX_FLOAT6E2M3));
    assert_true(floatconv_is_small_float(ONYX_FLOAT6E3M2));
    check_float6(ONYX_FLOAT6E2M3, e2m3_values);
    check_float6(ONYX_FLOAT6E3M2, e3m2_values);
    /* rounded from the double itself, as ml_dtypes converts a float64: 1.0625 + 2^-40 would be
     * the tie 1.0625 (and so 1.0) through float */
    assert_int_equal(floatconv_encode(ONYX_FLOAT6E2M3, 1.0625 + 0x1p-40, true), 9);
    assert_int_equal(floatconv_encode(ONYX_FLOAT6E3M2, 0.03125 + 0x1p-40, true), 1);
    /* values ml_dtypes gives (checked with ml_dtypes 0.7) */
    assert_int_equal(floatconv_encode(ONYX_FLOAT6E2M3, 3.875, true), 24);
    assert_int_equal(floatconv_encode(ONYX_FLOAT6E2M3, 7.25, true), 30);
    assert_int_equal(floatconv_encode(ONYX_FLOAT6E2M3, 7.75, true), 31);
    assert_int_equal(floatconv_encode(ONYX_FLOAT6E3M2, 26.0, true), 30);
    assert_int_equal(floatconv_encode(ONYX_FLOAT6E3M2, 0.09375, true), 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_storage_size),
        cmocka_unit_test(test_fp16_from_float),
        cmocka_unit_test(test_fp16_to_float),
        cmocka_unit_test(test_bf16),
        cmocka_unit_test(test_packed),
        cmocka_unit_test(test_float6),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
