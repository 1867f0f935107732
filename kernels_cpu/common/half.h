/* Bulk float16/bfloat16 <-> float conversions, vectorized: float16 with AVX-512F or AVX2+F16C
 * (vcvtph2ps / vcvtps2ph, round to nearest even), picked once at run time, with the scalar
 * branch-free conversions of cpu_types.h as the fallback and for the tails. Results are
 * bit-exact with cpu_fp16_to_float / cpu_float_to_fp16, except that a signaling NaN half
 * comes out quiet. */
#ifndef ONYX_KERNELS_CPU_COMMON_HALF_H
#define ONYX_KERNELS_CPU_COMMON_HALF_H

#include <stdint.h>

#include "core/dtype.h"

void cpu_fp16_to_float_n(const uint16_t *h, float *f, int64_t n);
void cpu_float_to_fp16_n(const float *f, uint16_t *h, int64_t n);
void cpu_bf16_to_float_n(const uint16_t *h, float *f, int64_t n);
void cpu_float_to_bf16_n(const float *f, uint16_t *h, int64_t n);

/* d is ONYX_FLOAT16 or ONYX_BFLOAT16 */
void cpu_half_to_float_n(onyx_dtype d, const uint16_t *h, float *f, int64_t n);
void cpu_float_to_half_n(onyx_dtype d, const float *f, uint16_t *h, int64_t n);

#endif
