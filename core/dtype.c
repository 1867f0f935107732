/* Element type facts and the half/bfloat16 conversions every float16 kernel uses. */
#include "core/dtype.h"

#include <string.h>

static const struct {
    const char *name;
    unsigned bits;
} dtype_table[ONYX_DTYPE_COUNT] = {
    [ONYX_UNDEFINED] = {"undefined", 0},
    [ONYX_FLOAT] = {"float", 32},
    [ONYX_UINT8] = {"uint8", 8},
    [ONYX_INT8] = {"int8", 8},
    [ONYX_UINT16] = {"uint16", 16},
    [ONYX_INT16] = {"int16", 16},
    [ONYX_INT32] = {"int32", 32},
    [ONYX_INT64] = {"int64", 64},
    [ONYX_STRING] = {"string", sizeof(char *) * 8},
    [ONYX_BOOL] = {"bool", 8},
    [ONYX_FLOAT16] = {"float16", 16},
    [ONYX_DOUBLE] = {"double", 64},
    [ONYX_UINT32] = {"uint32", 32},
    [ONYX_UINT64] = {"uint64", 64},
    [ONYX_COMPLEX64] = {"complex64", 64},
    [ONYX_COMPLEX128] = {"complex128", 128},
    [ONYX_BFLOAT16] = {"bfloat16", 16},
    [ONYX_FLOAT8E4M3FN] = {"float8e4m3fn", 8},
    [ONYX_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", 8},
    [ONYX_FLOAT8E5M2] = {"float8e5m2", 8},
    [ONYX_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", 8},
    [ONYX_UINT4] = {"uint4", 4},
    [ONYX_INT4] = {"int4", 4},
    [ONYX_FLOAT4E2M1] = {"float4e2m1", 4},
    [ONYX_FLOAT8E8M0] = {"float8e8m0", 8},
    [ONYX_UINT2] = {"uint2", 2},
    [ONYX_INT2] = {"int2", 2},
    [ONYX_FLOAT6E2M3] = {"float6e2m3", 6},
    [ONYX_FLOAT6E3M2] = {"float6e3m2", 6},
};

bool dtype_valid(int d) { return d > 0 && d < ONYX_DTYPE_COUNT; }

const char *onyx_dtype_name(onyx_dtype d) {
    return dtype_valid((int)d) ? dtype_table[d].name : "undefined";
}

size_t onyx_dtype_bits(onyx_dtype d) { return dtype_valid((int)d) ? dtype_table[d].bits : 0; }

size_t dtype_size(onyx_dtype d) {
    size_t bits = onyx_dtype_bits(d);
    return bits % 8 == 0 ? bits / 8 : 0;
}

int dtype_per_byte(onyx_dtype d) {
    size_t bits = onyx_dtype_bits(d);
    return (bits == 4 || bits == 2) ? (int)(8 / bits) : 0;
}

int dtype_packed_bits(onyx_dtype d) {
    size_t bits = onyx_dtype_bits(d);
    return bits % 8 ? (int)bits : 0;
}

bool dtype_storage_size(onyx_dtype d, int64_t numel, size_t *out) {
    size_t bits = onyx_dtype_bits(d);
    if (bits == 0 || numel < 0) return false;
    uint64_t n = (uint64_t)numel;
    if (bits % 8 == 0) {
        uint64_t size = bits / 8;
        if (n > SIZE_MAX / size) return false;
        *out = (size_t)(n * size);
        return true;
    }
    /* ceil(n * bits / 8) in groups of 8 elements (= `bits` whole bytes): n * bits may overflow */
    *out = (size_t)((n / 8) * bits + ((n % 8) * bits + 7) / 8);
    return true;
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float fp16_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        /* subnormal: value = mant * 2^-24 */
        float v = (float)mant * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t float_to_fp16(float f) {
    uint32_t u = float_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u) /* inf or nan */
        return (uint16_t)(sign | 0x7c00 | (abs > 0x7f800000u ? 0x200 | ((abs >> 13) & 0x3ff) : 0));
    if (abs >= 0x477ff000u) return sign | 0x7c00; /* rounds to >= 65520: overflow to inf */
    if (abs < 0x38800000u) {
        /* result is subnormal or zero: round abs * 2^24 to an integer, nearest even */
        float v = bits_float(abs) * 16777216.0f;
        uint32_t i = (uint32_t)v;
        float rem = v - (float)i;
        if (rem > 0.5f || (rem == 0.5f && (i & 1))) i++;
        return (uint16_t)(sign | i);
    }
    uint32_t mant = abs & 0x7fffff;
    uint32_t exp = (abs >> 23) - 112;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

float bf16_to_float(uint16_t b) { return bits_float((uint32_t)b << 16); }

uint16_t float_to_bf16(float f) {
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    uint32_t rounding = 0x7fff + ((u >> 16) & 1);
    return (uint16_t)((u + rounding) >> 16);
}
