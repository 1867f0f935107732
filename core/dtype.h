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
#define DT_FLOAT6S (DT_BIT(ONYX_FLOAT6E2M3) | DT_BIT(ONYX_FLOAT6E3M2))
#define DT_SUBBYTE                                                                                 \
    (DT_BIT(ONYX_INT4) | DT_BIT(ONYX_UINT4) | DT_BIT(ONYX_FLOAT4E2M1) | DT_BIT(ONYX_INT2) |        \
     DT_BIT(ONYX_UINT2) | DT_FLOAT6S)
#define DT_ALL_TENSOR (DT_NUMERIC | DT_BIT(ONYX_BOOL) | DT_BIT(ONYX_STRING) | DT_BIT(ONYX_COMPLEX64) | DT_BIT(ONYX_COMPLEX128) | DT_FLOAT8S | DT_SUBBYTE)

static inline bool dtype_in(onyx_dtype d, dtype_mask m) {
    return (unsigned)d < 32 && (m & DT_BIT(d)) != 0;
}

/* True for a dtype number onyx knows (1..ONYX_DTYPE_COUNT-1). */
bool dtype_valid(int d);

/* Bytes per element for byte-aligned types; 0 for sub-byte types and UNDEFINED. */
size_t dtype_size(onyx_dtype d);

/* Storage size of `numel` elements, packed as ONNX stores sub-byte types. False on overflow. */
bool dtype_storage_size(onyx_dtype d, int64_t numel, size_t *out);

/* Elements per byte for the sub-byte types that fill whole bytes (2 for 4-bit, 4 for 2-bit), 0
 * otherwise -- 0 for the 6-bit floats too, whose elements straddle bytes: code that walks packed
 * elements takes dtype_packed_bits and the dtype_packed_get/set pair below instead. */
int dtype_per_byte(onyx_dtype d);

/* Bits per element of a packed sub-byte type (2, 4 or 6), 0 for byte-aligned types. */
int dtype_packed_bits(onyx_dtype d);

/* Element i of a packed buffer of `bits`-bit elements (2, 4 or 6): bits [i*bits, (i+1)*bits) of
 * the little-endian bit stream, as ONNX packs raw_data (a 6-bit element may span two bytes). */
static inline unsigned dtype_packed_get(const void *data, int64_t i, unsigned bits) {
    const uint8_t *p = (const uint8_t *)data; /* the cast: .cu files include this too */
    uint64_t at = (uint64_t)i * bits;
    size_t byte = (size_t)(at >> 3);
    unsigned shift = (unsigned)(at & 7), v = p[byte] >> shift;
    if (shift + bits > 8) v |= (unsigned)p[byte + 1] << (8 - shift);
    return v & ((1u << bits) - 1);
}

/* Sets element i of such a buffer to the low `bits` bits of v, keeping its neighbours. */
static inline void dtype_packed_set(void *data, int64_t i, unsigned bits, unsigned v) {
    uint8_t *p = (uint8_t *)data;
    uint64_t at = (uint64_t)i * bits;
    size_t byte = (size_t)(at >> 3);
    unsigned shift = (unsigned)(at & 7), mask = (1u << bits) - 1;
    v &= mask;
    p[byte] = (uint8_t)((p[byte] & ~(mask << shift)) | (v << shift));
    if (shift + bits > 8)
        p[byte + 1] = (uint8_t)((p[byte + 1] & ~(mask >> (8 - shift))) | (v >> (8 - shift)));
}

static inline bool dtype_is_float(onyx_dtype d) { return dtype_in(d, DT_FLOATS); }
static inline bool dtype_is_int(onyx_dtype d) { return dtype_in(d, DT_INTS); }
static inline bool dtype_is_signed_int(onyx_dtype d) { return dtype_in(d, DT_SINTS); }

/* IEEE half and bfloat16 <-> float, round to nearest even; NaN stays NaN. */
float fp16_to_float(uint16_t h);
uint16_t float_to_fp16(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);

#endif
