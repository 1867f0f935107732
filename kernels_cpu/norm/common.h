/* Helpers shared by the norm-family CPU kernels (norm*.c, loss.c, dropout.c): element access of
 * the float types by dtype for small parameter tensors, and the stamping of one kernel body per
 * float type (computing in float for float16/bfloat16). */
#ifndef ONYX_KERNELS_CPU_NORM_COMMON_H
#define ONYX_KERNELS_CPU_NORM_COMMON_H

#include "core/value.h"
#include "kernels_cpu/common/cpu_types.h"

/* Stamps X(name, storage type, compute type, load, store) for the four float types. */
#define NORM_FOR_FLOATS(X)                                                                         \
    X(f32, float, float, cpu_f32_ld, cpu_f32_st)                                                   \
    X(f64, double, double, cpu_f64_ld, cpu_f64_st)                                                 \
    X(f16, uint16_t, float, cpu_f16_ld, cpu_f16_st)                                                \
    X(bf16, uint16_t, float, cpu_bf16_ld, cpu_bf16_st)

/* A sum over a loop that may be vectorized (reassociated): CPU_SIMD alone would race on it. */
#define NORM_PRAGMA_(x) _Pragma(#x)
#define NORM_SIMD_SUM(...) NORM_PRAGMA_(omp simd reduction(+ : __VA_ARGS__))

/* Sums over a row of n elements x[0..n) loaded with LD into compute type F: blocks of NORM_BLOCK
 * are summed in F (vectorized, exact enough at that length), the block sums in double, so long
 * float rows keep double-like accuracy at float speed. NORM_SUM gives sum x, NORM_SUM_SQDIFF
 * sum (x - m)^2; `out` is a double. */
#define NORM_BLOCK 512
#define NORM_SUM(F, LD, x, n, out)                                                                 \
    do {                                                                                           \
        (out) = 0;                                                                                 \
        for (int64_t b0_ = 0; b0_ < (n); b0_ += NORM_BLOCK) {                                      \
            int64_t be_ = (n)-b0_ < NORM_BLOCK ? (n) : b0_ + NORM_BLOCK;                           \
            F bs_ = 0;                                                                             \
            NORM_SIMD_SUM(bs_) for (int64_t j_ = b0_; j_ < be_; j_++) bs_ += LD((x)[j_]);          \
            (out) += (double)bs_;                                                                  \
        }                                                                                          \
    } while (0)
#define NORM_SUM_SQDIFF(F, LD, x, n, m, out)                                                       \
    do {                                                                                           \
        const F m_ = (F)(m);                                                                       \
        (out) = 0;                                                                                 \
        for (int64_t b0_ = 0; b0_ < (n); b0_ += NORM_BLOCK) {                                      \
            int64_t be_ = (n)-b0_ < NORM_BLOCK ? (n) : b0_ + NORM_BLOCK;                           \
            F bs_ = 0;                                                                             \
            NORM_SIMD_SUM(bs_) for (int64_t j_ = b0_; j_ < be_; j_++) {                            \
                F d_ = LD((x)[j_]) - m_;                                                           \
                bs_ += d_ * d_;                                                                    \
            }                                                                                      \
            (out) += (double)bs_;                                                                  \
        }                                                                                          \
    } while (0)

/* Index of dtype d in NORM_FOR_FLOATS' order, -1 when it is not a float type. */
static inline int norm_float_index(onyx_dtype d) {
    switch (d) {
    case ONYX_FLOAT: return 0;
    case ONYX_DOUBLE: return 1;
    case ONYX_FLOAT16: return 2;
    case ONYX_BFLOAT16: return 3;
    default: return -1;
    }
}

/* Element i of a float tensor (any of the four types) as double. */
static inline double norm_get(const tensor *t, int64_t i) {
    switch (t->dtype) {
    case ONYX_FLOAT: return ((const float *)t->data)[i];
    case ONYX_DOUBLE: return ((const double *)t->data)[i];
    case ONYX_FLOAT16: return cpu_fp16_to_float(((const uint16_t *)t->data)[i]);
    case ONYX_BFLOAT16: return cpu_bf16_to_float(((const uint16_t *)t->data)[i]);
    default: return 0;
    }
}

static inline void norm_set(tensor *t, int64_t i, double v) {
    switch (t->dtype) {
    case ONYX_FLOAT: ((float *)t->data)[i] = (float)v; break;
    case ONYX_DOUBLE: ((double *)t->data)[i] = v; break;
    case ONYX_FLOAT16: ((uint16_t *)t->data)[i] = cpu_float_to_fp16((float)v); break;
    case ONYX_BFLOAT16: ((uint16_t *)t->data)[i] = cpu_float_to_bf16((float)v); break;
    default: break;
    }
}

#endif
