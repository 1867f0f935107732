/* Helpers shared by the onyx tools (runner and CLI): element conversion for comparing and printing
 * tensors, deterministic input filling, file reading, timing. Uses only the public API (onyx.h). */
#ifndef ONYX_TOOLS_COMMON_H
#define ONYX_TOOLS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onyx.h"

/* Monotonic clock in milliseconds. */
double tool_now_ms(void);

/* "tensor", "sequence", "optional", "map", "none". */
const char *tool_kind_name(onyx_value_kind kind);

/* The core's converters are internal to the library; the tools keep their own (exact, checked
 * against ml_dtypes) so that comparisons do not depend on the code under test. */
float tool_fp16_to_float(uint16_t h);
float tool_bf16_to_float(uint16_t b);
uint16_t tool_float_to_fp16(float f); /* round to nearest even */
uint16_t tool_float_to_bf16(float f); /* round to nearest even */
/* float8 family (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E8M0) byte to double. */
double tool_float8_to_double(onyx_dtype dtype, uint8_t byte);
/* FLOAT4E2M1 nibble (low 4 bits) to double. */
double tool_float4_to_double(uint8_t nibble);
/* FLOAT6E2M3 or FLOAT6E3M2 code (low 6 bits) to double. */
double tool_float6_to_double(onyx_dtype dtype, uint8_t code);

/* Real floating types compared with a tolerance: float, double, float16, bfloat16, float8s,
 * float6s, float4. */
bool tool_dtype_is_floating(onyx_dtype dtype);
bool tool_dtype_is_complex(onyx_dtype dtype);
/* Integer types incl. the packed int4/uint4/int2/uint2. */
bool tool_dtype_is_integer(onyx_dtype dtype);

/* Element i of a floating tensor buffer as double. */
double tool_elem_double(onyx_dtype dtype, const void *data, int64_t i);
/* Exact equality of element i of two integer or bool buffers (bool: both zero or both not). */
bool tool_elem_int_equal(onyx_dtype dtype, const void *a, const void *b, int64_t i);
/* Formats element i (any dtype) into buf; returns buf. */
const char *tool_format_elem(onyx_dtype dtype, const void *data, int64_t i, char *buf, size_t cap);

/* "[1,3,N,224]" (symbolic names where given, "?" for unknown dims, "[?]" for unknown rank). */
const char *tool_format_dims(int64_t rank, const int64_t *dims, const char *const *dim_params,
                             char *buf, size_t cap);
/* Shape index of flat element i as "[0,2,1]". */
const char *tool_format_index(size_t rank, const int64_t *dims, int64_t i, char *buf, size_t cap);

/* Deterministic input for a tensor input: float, double, float16 and bfloat16 get arange(n)/n (as
 * onnx's runner makes inputs for the light models), everything else zero bytes (empty strings).
 * Unknown dims are taken as
 * 1. Fails with ONYX_ERR_UNSUPPORTED for an unknown rank or a dtype it cannot fill.
 * Caller owns *out. */
onyx_status tool_make_input(onyx_dtype dtype, int64_t rank, const int64_t *dims, onyx_value **out);

/* Reads a whole file (NUL-terminated for convenience). Caller frees *data. 0 on success, else
 * errno. */
int tool_read_file(const char *path, char **data, size_t *size);

#endif
