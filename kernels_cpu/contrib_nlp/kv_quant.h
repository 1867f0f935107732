/* GroupQueryAttention's quantized KV cache, row by row (the format: ops/contrib_nlp/contrib_nlp.h,
 * cnlp_kv_quant): head-size floats to their int8 or int4-pair bytes and back, with one scale or
 * one per column. */
#ifndef ONYX_KERNELS_CPU_CONTRIB_NLP_KV_QUANT_H
#define ONYX_KERNELS_CPU_CONTRIB_NLP_KV_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of one cache row of `cols` values at `bits` (8, or 4: two values a byte). */
static inline size_t cnlp_kv_row_bytes(int bits, int64_t cols) {
    return (size_t)(bits == 4 ? (cols + 1) / 2 : cols);
}

/* dst = clamp(rint(x / scale)) (x times the scale's float reciprocal, a zero scale taken as 1, NaN
 * to the top code, as onnxruntime); scale[0] for every column, or scale[j] per column. */
void cnlp_kv_quantize_row(int bits, const float *x, uint8_t *dst, int64_t cols,
                          const float *scale, bool per_column);

/* y = code * scale, the inverse. */
void cnlp_kv_dequantize_row(int bits, const uint8_t *src, float *y, int64_t cols,
                            const float *scale, bool per_column);

#endif
