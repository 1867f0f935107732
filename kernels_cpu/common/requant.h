/* onnxruntime's rounding of a float to an 8-bit value (MLAS's requantization and QuantizeLinear):
 * clamped in float, rounded half to even, shifted by the zero point. One rule for every 8-bit
 * kernel, so that their results agree with each other and with onnxruntime's bit for bit. */
#ifndef ONYX_KERNELS_CPU_COMMON_REQUANT_H
#define ONYX_KERNELS_CPU_COMMON_REQUANT_H

#include <stdint.h>

/* Rounds half to even; |v| must stay below 2^22 (callers clamp first), where adding and
 * subtracting 1.5 * 2^23 leaves exactly the rounded integer. NaN gives NaN. */
static inline float q8_round(float v) {
    const float magic = 12582912.0f;
    return (v + magic) - magic;
}

/* v already in output units: clamped to [lo - zp, hi - zp] first (NaN to the low end), rounded,
 * then shifted by the zero point, as MLAS's requantization does. */
static inline int32_t q8_saturate(float v, int32_t zp, int32_t lo, int32_t hi) {
    float flo = (float)(lo - zp), fhi = (float)(hi - zp);
    v = v > flo ? v : flo;
    v = v < fhi ? v : fhi;
    return (int32_t)q8_round(v) + zp;
}

#endif
