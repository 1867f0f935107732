#include "kernels_cpu/contrib_nlp/kv_quant.h"

#include <math.h>

#include "kernels_cpu/common/cpu_types.h"

static inline int code(float x, float inv, int lo, int hi) {
    float q = rintf(x * inv);
    q = q < (float)hi ? q : (float)hi; /* NaN compares false: the top code */
    return (int)(q > (float)lo ? q : (float)lo);
}

static inline float inverse(float scale) { return scale != 0.0f ? 1.0f / scale : 1.0f; }

void cnlp_kv_quantize_row(int bits, const float *x, uint8_t *dst, int64_t cols,
                          const float *scale, bool per_column) {
    if (bits == 8) {
        int8_t *d = (int8_t *)dst;
        if (per_column)
            for (int64_t j = 0; j < cols; j++)
                d[j] = (int8_t)code(x[j], inverse(scale[j]), -128, 127);
        else {
            const float inv = inverse(scale[0]);
            for (int64_t j = 0; j < cols; j++) d[j] = (int8_t)code(x[j], inv, -128, 127);
        }
        return;
    }
    for (int64_t j = 0; j < cols; j += 2) {
        int lo = code(x[j], inverse(scale[per_column ? j : 0]), -8, 7), hi = 0; /* odd tail: 0 */
        if (j + 1 < cols) hi = code(x[j + 1], inverse(scale[per_column ? j + 1 : 0]), -8, 7);
        dst[j / 2] = (uint8_t)(((lo + 8) & 15) | (((hi + 8) & 15) << 4));
    }
}

/* Each layout in a loop of its own, so that the compiler vectorizes it: a decoding step
 * dequantizes the whole cache. */
void cnlp_kv_dequantize_row(int bits, const uint8_t *src, float *y, int64_t cols,
                            const float *scale, bool per_column) {
    if (bits == 8) {
        const int8_t *s = (const int8_t *)src;
        if (per_column) {
            CPU_SIMD for (int64_t j = 0; j < cols; j++) y[j] = (float)s[j] * scale[j];
        } else {
            const float k = scale[0];
            CPU_SIMD for (int64_t j = 0; j < cols; j++) y[j] = (float)s[j] * k;
        }
        return;
    }
    const int64_t pairs = cols / 2;
    if (per_column) {
        CPU_SIMD for (int64_t p = 0; p < pairs; p++) {
            y[2 * p] = (float)((src[p] & 15) - 8) * scale[2 * p];
            y[2 * p + 1] = (float)((src[p] >> 4) - 8) * scale[2 * p + 1];
        }
    } else {
        const float k = scale[0];
        CPU_SIMD for (int64_t p = 0; p < pairs; p++) {
            y[2 * p] = (float)((src[p] & 15) - 8) * k;
            y[2 * p + 1] = (float)((src[p] >> 4) - 8) * k;
        }
    }
    if (cols % 2) y[cols - 1] = (float)((src[pairs] & 15) - 8) * scale[per_column ? cols - 1 : 0];
}
