/* What the ai.onnx.ml CPU kernels share: reading an input element, and the score post-transforms
 * of the classifiers and regressors, computed as onnx's reference and onnxruntime do. */
#ifndef ONYX_KERNELS_CPU_ML_COMMON_H
#define ONYX_KERNELS_CPU_ML_COMMON_H

#include <stdint.h>

#include "core/status.h"
#include "core/value.h"

/* Element i of X as a double: float and double (the usual inputs) read inline, the rest converted. */
static inline double ml_x_at(const tensor *x, int64_t i) {
    if (x->dtype == ONYX_FLOAT) return ((const float *)x->data)[i];
    if (x->dtype == ONYX_DOUBLE) return ((const double *)x->data)[i];
    return tensor_get_f64(x, i);
}

typedef enum ml_post {
    ML_POST_NONE = 0,
    ML_POST_SOFTMAX = 1,
    ML_POST_LOGISTIC = 2,
    ML_POST_SOFTMAX_ZERO = 3,
    ML_POST_PROBIT = 4,
} ml_post;

/* "NONE", "SOFTMAX", … (the string attribute of the older ops) into *out. */
onyx_status ml_parse_post(const char *name, ml_post *out);
/* Applies the transform to one row of n scores in place. */
void ml_post_row(ml_post post, float *row, int64_t n);
/* The same on doubles (TreeEnsemble on double inputs). */
void ml_post_row_f64(ml_post post, double *row, int64_t n);

#endif
