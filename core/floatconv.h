/* Conversions between float/double and the small float types (float8 e4m3fn, e4m3fnuz, e5m2,
 * e5m2fnuz, e8m0, float6 e2m3 and e3m2, float4 e2m1, and half/bfloat16 from double), with ONNX
 * Cast's rounding (nearest even) and its NaN/Inf/saturation rules per type. */
#ifndef ONYX_CORE_FLOATCONV_H
#define ONYX_CORE_FLOATCONV_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

/* True for the 8-, 6- and 4-bit float types these functions encode (e8m0 included). */
bool floatconv_is_small_float(onyx_dtype d);

/* Encodes x as `d` (a float8 type but e8m0, a float6 or FLOAT4E2M1: the code in the low 8, 6 or 4
 * bits) rounding to nearest even, from x itself (no rounding through float first). saturate:
 * out-of-range values and infinities become the largest finite value of the right sign;
 * otherwise they become NaN (or Inf for e5m2), as ONNX Cast specifies. float4 and float6 have no
 * NaN/Inf: they always saturate, and NaN becomes -0 (-NaN +0), as ml_dtypes (onnx's reference)
 * converts. */
uint8_t floatconv_encode(onyx_dtype d, double x, bool saturate);

/* Decodes a float8/float6/float4 code (in the low 8/6/4 bits) of type `d` exactly into a float. */
float floatconv_decode(onyx_dtype d, uint8_t code);

/* float8e8m0 (a power of two 2^(code-127), 0xFF NaN) from a float, as onnx's to_float8e8m0. */
typedef enum floatconv_round {
    FLOATCONV_UP = 0,      /* away from zero (the default) */
    FLOATCONV_DOWN = 1,    /* toward zero */
    FLOATCONV_NEAREST = 2, /* nearest, ties up */
} floatconv_round;
uint8_t floatconv_to_e8m0(float x, bool saturate, floatconv_round mode);

/* Half and bfloat16 from a double with one rounding (no double rounding through float). */
uint16_t floatconv_double_to_fp16(double x);
uint16_t floatconv_double_to_bf16(double x);

#endif
