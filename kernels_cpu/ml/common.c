/* Score post-transforms of the ai.onnx.ml classifiers and regressors. PROBIT uses the same
 * closed-form approximation of erf^-1 as onnx's reference and onnxruntime, so results agree. */
#include <math.h>
#include <string.h>

#include "kernels_cpu/ml/common.h"

onyx_status ml_parse_post(const char *name, ml_post *out) {
    static const char *const names[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(name, names[i])) {
            *out = (ml_post)i;
            return ONYX_OK;
        }
    return onyx_error(ONYX_ERR_INVALID_MODEL, "post_transform '%s' is not NONE, SOFTMAX, LOGISTIC, "
                      "SOFTMAX_ZERO or PROBIT", name);
}

static double erf_inv(double x) {
    double sgn = x < 0 ? -1.0 : 1.0;
    x = (1.0 - x) * (1.0 + x);
    /* erf^-1(+-1) = +-inf, so PROBIT(0) = -inf and PROBIT(1) = inf, as onnxruntime computes them
     * (onnx's reference answers 0 there) */
    if (x == 0) return sgn * INFINITY;
    double l = log(x), v = 2.0 / (M_PI * 0.147) + 0.5 * l, v2 = 1.0 / 0.147 * l;
    return sgn * sqrt(-v + sqrt(v * v - v2));
}

static double logistic(double v) {
    double e = 1.0 / (1.0 + exp(-fabs(v)));
    return v < 0 ? 1.0 - e : e;
}

#define DEFINE_POST(NAME, T)                                                                       \
    void NAME(ml_post post, T *row, int64_t n) {                                                   \
        switch (post) {                                                                            \
        case ML_POST_NONE: return;                                                                 \
        case ML_POST_LOGISTIC:                                                                     \
            for (int64_t i = 0; i < n; i++) row[i] = (T)logistic(row[i]);                          \
            return;                                                                                \
        case ML_POST_PROBIT:                                                                       \
            for (int64_t i = 0; i < n; i++) row[i] = (T)(1.41421356 * erf_inv(row[i] * 2.0 - 1.0)); \
            return;                                                                                \
        case ML_POST_SOFTMAX: {                                                                    \
            if (n == 0) return;                                                                    \
            T m = row[0], s = 0;                                                                   \
            for (int64_t i = 1; i < n; i++) m = row[i] > m ? row[i] : m;                           \
            for (int64_t i = 0; i < n; i++) s += (row[i] = (T)exp(row[i] - m));                    \
            for (int64_t i = 0; i < n; i++) row[i] /= s;                                           \
            return;                                                                                \
        }                                                                                          \
        case ML_POST_SOFTMAX_ZERO: {                                                               \
            /* softmax over the nonzero scores; exact zeros stay zero */                           \
            if (n == 0) return;                                                                    \
            T m = row[0], s = 0;                                                                   \
            for (int64_t i = 1; i < n; i++) m = row[i] > m ? row[i] : m;                           \
            T scale = (T)exp(-m);                                                                  \
            for (int64_t i = 0; i < n; i++) {                                                      \
                row[i] = (row[i] > 1e-7 || row[i] < -1e-7) ? (T)exp(row[i] - m) : row[i] * scale;  \
                s += row[i];                                                                       \
            }                                                                                      \
            for (int64_t i = 0; i < n; i++) row[i] = s == 0 ? (T)0.5 : row[i] / s;                 \
            return;                                                                                \
        }                                                                                          \
        }                                                                                          \
    }
DEFINE_POST(ml_post_row, float)
DEFINE_POST(ml_post_row_f64, double)
