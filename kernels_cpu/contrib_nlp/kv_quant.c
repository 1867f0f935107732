#include "kernels_cpu/contrib_nlp/kv_quant.h"

#include <math.h>

static inline int code(float x, float scale, int lo, int hi) {
    float q = rintf(x * (scale != 0.0f ? 1.0f / scale : 1.0f));
    q = q < (float)hi ? q : (float)hi; /* NaN compares false: the top code */
    return (int)(q > (float)lo ? q : (float)lo);
}

void cnlp_kv_quantize_row(int bits, const float *x, uint8_t *dst, int64_t cols,
                          const float *scale, bool per_column) {
    if (bits == 8) {
        for (int64_t j = 0; j < cols; j++)
            ((int8_t *)dst)[j] = (int8_t)code(x[j], scale[per_column ? j : 0], -128, 127);
        return;
    }
    for (int64_t j = 0; j < cols; j += 2) {
        int lo = code(x[j], scale[per_column ? j : 0], -8, 7), hi = 0; /* an odd tail: 0 */
        if (j + 1 < cols) hi = code(x[j + 1], scale[per_column ? j + 1 : 0], -8, 7);
        dst[j / 2] = (uint8_t)(((lo + 8) & 15) | (((hi + 8) & 15) << 4));
    }
}

void cnlp_kv_dequantize_row(int bits, const uint8_t *src, float *y, int64_t cols,
                            const float *scale, bool per_column) {
    for (int64_t j = 0; j < cols; j++) {
        int q = bits == 8 ? ((const int8_t *)src)[j] : ((src[j / 2] >> (j % 2 * 4)) & 15) - 8;
        y[j] = (float)q * scale[per_column ? j : 0];
    }
}
