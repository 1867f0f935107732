/* Element types: sizes, classes, and the packed byte size of a tensor. */
#ifndef ONYX_CORE_DTYPE_H
#define ONYX_CORE_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onyx.h"

/* Bit masks over dtypes (bit i = onyx_dtype i), used by kernel tables and type checks. */
typedef uint32_t dtype_mask;
#define DT_BIT(d) ((dtype_mask)1u << (d))
#define DT_FLOATS (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16))
#define DT_SINTS (DT_BIT(ONYX_INT8) | DT_BIT(ONYX_INT16) | DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64))
#define DT_UINTS (DT_BIT(ONYX_UINT8) | DT_BIT(ONYX_UINT16) | DT_BIT(ONYX_UINT32) | DT_BIT(ONYX_UINT64))
#define DT_INTS (DT_SINTS | DT_UINTS)
#define DT_NUMERIC (DT_FLOATS | DT_INTS)
#define DT_FLOAT8S (DT_BIT(ONYX_FLOAT8E4M3FN) | DT_BIT(ONYX_FLOAT8E4M3FNUZ) | DT_BIT(ONYX_FLOAT8E5M2) | DT_BIT(ONYX_FLOAT8E5M2FNUZ) | DT_BIT(ONYX_FLOAT8E8M0))
#define DT_SUBBYTE (DT_BIT(ONYX_INT4) | DT_BIT(ONYX_UINT4) | DT_BIT(ONYX_FLOAT4E2M1) | DT_BIT(ONYX_INT2) | DT_BIT(ONYX_UINT2))
#define DT_ALL_TENSOR (DT_NUMERIC | DT_BIT(ONYX_BOOL) | DT_BIT(ONYX_STRING) | DT_BIT(ONYX_COMPLEX64) | DT_BIT(ONYX_COMPLEX128) | DT_FLOAT8S | DT_SUBBYTE)

static inline bool dtype_in(onyx_dtype d, dtype_mask m) {
    return (unsigned)d < 32 && (m & DT_BIT(d)) != 0;
}

/* True for a dtype number onyx knows (1..26). */
bool dtype_valid(int d);

/* Bytes per element for byte-aligned types; 0 for sub-byte types and UNDEFINED. */
size_t dtype_size(onyx_dtype d);

/* Storage size of `numel` elements, packed as ONNX stores sub-byte types. False on overflow. */
bool dtype_storage_size(onyx_dtype d, int64_t numel, size_t *out);

/* Elements per byte for sub-byte types (2 for 4-bit, 4 for 2-bit), 0 otherwise. */
int dtype_per_byte(onyx_dtype d);

static inline bool dtype_is_float(onyx_dtype d) { return dtype_in(d, DT_FLOATS); }
static inline bool dtype_is_int(onyx_dtype d) { return dtype_in(d, DT_INTS); }
static inline bool dtype_is_signed_int(onyx_dtype d) { return dtype_in(d, DT_SINTS); }

/* IEEE half and bfloat16 <-> float, round to nearest even; NaN stays NaN. */
float fp16_to_float(uint16_t h);
uint16_t float_to_fp16(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);

#endif
