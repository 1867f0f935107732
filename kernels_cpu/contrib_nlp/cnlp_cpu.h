/* Helpers the contrib_nlp CPU kernels share: moving element runs of any float type to and from
 * float, where they compute (double inputs compute in double in the kernels that take them). */
#ifndef ONYX_KERNELS_CPU_CONTRIB_NLP_H
#define ONYX_KERNELS_CPU_CONTRIB_NLP_H

#include <string.h>

#include "core/value.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/half.h"

/* n elements of src (float, double, float16 or bfloat16) starting at element off, as float */
static inline void cnlp_load(const void *src, onyx_dtype t, int64_t off, float *dst, int64_t n) {
    switch (t) {
    case ONYX_FLOAT: memcpy(dst, (const float *)src + off, (size_t)n * sizeof(float)); return;
    case ONYX_DOUBLE:
        for (int64_t i = 0; i < n; i++) dst[i] = (float)((const double *)src)[off + i];
        return;
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: cpu_half_to_float_n(t, (const uint16_t *)src + off, dst, n); return;
    default: memset(dst, 0, (size_t)n * sizeof(float)); return;
    }
}

/* n floats into dst (any of the four float types) from element off on */
static inline void cnlp_store(void *dst, onyx_dtype t, int64_t off, const float *src, int64_t n) {
    switch (t) {
    case ONYX_FLOAT: memcpy((float *)dst + off, src, (size_t)n * sizeof(float)); return;
    case ONYX_DOUBLE:
        for (int64_t i = 0; i < n; i++) ((double *)dst)[off + i] = src[i];
        return;
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: cpu_float_to_half_n(t, src, (uint16_t *)dst + off, n); return;
    default: return;
    }
}

/* Element i of a float-typed tensor as double (small parameter tensors). */
static inline double cnlp_get(const tensor *t, int64_t i) {
    switch (t->dtype) {
    case ONYX_FLOAT: return ((const float *)t->data)[i];
    case ONYX_DOUBLE: return ((const double *)t->data)[i];
    case ONYX_FLOAT16: return cpu_fp16_to_float(((const uint16_t *)t->data)[i]);
    case ONYX_BFLOAT16: return cpu_bf16_to_float(((const uint16_t *)t->data)[i]);
    default: return 0;
    }
}

/* One head's rotary embedding: the first `rot` of its d features rotated by cos/sin (rot/2 values
 * each), as halves (i, i + rot/2) or interleaved pairs (2i, 2i + 1); the rest copied. y may be
 * x. */
static inline void cnlp_rotate(const float *x, float *y, const float *c, const float *s,
                               int64_t rot, int64_t d, bool interleaved) {
    const int64_t half = rot / 2;
    if (interleaved) {
        for (int64_t i = 0; i < half; i++) {
            float a = x[2 * i], e = x[2 * i + 1];
            y[2 * i] = a * c[i] - e * s[i];
            y[2 * i + 1] = e * c[i] + a * s[i];
        }
    } else {
        CPU_SIMD for (int64_t i = 0; i < half; i++) {
            float a = x[i], e = x[i + half];
            y[i] = a * c[i] - e * s[i];
            y[i + half] = e * c[i] + a * s[i];
        }
    }
    for (int64_t i = rot; i < d; i++) y[i] = x[i];
}

/* parallel_for's grain in rows of `row_elems` elements: enough rows for `target` elements. */
static inline int64_t cnlp_grain(int64_t row_elems, int64_t target) {
    return target / (row_elems > 0 ? row_elems : 1) + 1;
}

#endif
