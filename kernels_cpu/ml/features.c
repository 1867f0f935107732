/* CPU kernels of the ai.onnx.ml feature transforms: ArrayFeatureExtractor, Binarizer, Scaler,
 * Normalizer, Imputer, OneHotEncoder. Inputs are float, double, int64 or int32 (and strings where
 * allowed); rows are the leading dims, columns the last. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/move.h"
#include "kernels_cpu/ml/common.h"

/* Last-axis length and row count of x (a 1-D x is one row). */
static void rows_cols(const tensor *x, int64_t *rows, int64_t *cols) {
    *cols = x->rank ? x->dims[x->rank - 1] : 1;
    *rows = *cols ? x->numel / *cols : 0;
}

/* ---- ArrayFeatureExtractor */

onyx_status cpu_array_feature_extractor_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *idx = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    int64_t rows, cols, n = idx->numel;
    rows_cols(x, &rows, &cols);
    for (int64_t j = 0; j < n; j++) {
        int64_t k = ((const int64_t *)idx->data)[j];
        if (k < -cols || k >= cols)
            return onyx_error(ONYX_ERR_RUNTIME, "index %" PRId64 " (Y[%" PRId64 "]) is out of range for "
                              "%" PRId64 " columns", k, j, cols);
    }
    size_t es = cpu_move_esize(x);
    cpu_move_begin(y);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++) {
            int64_t k = ((const int64_t *)idx->data)[j];
            if (k < 0) k += cols;
            memcpy((char *)y->data + (size_t)(r * n + j) * es, (const char *)x->data + (size_t)(r * cols + k) * es, es);
        }
    return cpu_move_end(y);
}

/* ---- Binarizer: y = x > threshold (NaN → 0), in x's type */

#define BINARIZE(T, x, y, n, t)                                                                    \
    CPU_SIMD for (int64_t i = 0; i < (n); i++)((T *)(y))[i] = (T)(((const T *)(x))[i] > (t) ? 1 : 0);

onyx_status cpu_binarizer_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    double t = attr_float(c->node, "threshold", 0.0f);
    switch (x->dtype) {
    case ONYX_FLOAT: BINARIZE(float, x->data, y->data, x->numel, (float)t); break;
    case ONYX_DOUBLE: BINARIZE(double, x->data, y->data, x->numel, t); break;
    case ONYX_INT64: BINARIZE(int64_t, x->data, y->data, x->numel, t); break;
    case ONYX_INT32: BINARIZE(int32_t, x->data, y->data, x->numel, t); break;
    default: return onyx_error(ONYX_ERR_UNSUPPORTED, "Binarizer of %s", onyx_dtype_name(x->dtype));
    }
    return ONYX_OK;
}

/* ---- Scaler: y = (x - offset[c]) * scale[c] in float; a one-value list applies to every column */

static onyx_status per_column(const graph_node *n, const char *name, int64_t cols, const float **v,
                              size_t *count) {
    *count = attr_floats(n, name, v);
    if (*count != 1 && (int64_t)*count != cols)
        return onyx_error(ONYX_ERR_SHAPE, "%s has %zu values for %" PRId64 " columns (expected 1 or %"
                          PRId64 ")", name, *count, cols, cols);
    return ONYX_OK;
}

onyx_status cpu_scaler_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    int64_t rows, cols;
    rows_cols(x, &rows, &cols);
    const float *off, *scale;
    size_t noff, nscale;
    TRY(per_column(c->node, "offset", cols, &off, &noff));
    TRY(per_column(c->node, "scale", cols, &scale, &nscale));
    float *out = y->data;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t i = r * cols + j;
            double v = ml_x_at(x, i);
            out[i] = (float)((v - off[noff == 1 ? 0 : j]) * scale[nscale == 1 ? 0 : j]);
        }
    return ONYX_OK;
}

/* ---- Normalizer: each row over its MAX (of |x|), L1 or L2 norm, floored at 1e-30 */

onyx_status cpu_normalizer_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    int64_t rows, cols;
    rows_cols(x, &rows, &cols);
    const char *norm = attr_string(c->node, "norm", "MAX");
    float *out = y->data;
    for (int64_t r = 0; r < rows; r++) {
        double s = 0;
        for (int64_t j = 0; j < cols; j++) {
            double v = ml_x_at(x, r * cols + j);
            out[r * cols + j] = (float)v;
            if (norm[0] == 'M') s = fmax(s, fabs(v));
            else if (norm[1] == '1') s += fabs(v);
            else s += v * v;
        }
        if (!strcmp(norm, "L2")) s = sqrt(s);
        s = fmax(s, 1e-30);
        for (int64_t j = 0; j < cols; j++) out[r * cols + j] = (float)(out[r * cols + j] / s);
    }
    return ONYX_OK;
}

/* ---- Imputer: the replaced value (NaN matches NaN) becomes the column's imputed value */

#define IMPUTE(T, vals, nv, replaced)                                                              \
    do {                                                                                           \
        T *o = y->data;                                                                            \
        for (int64_t r = 0; r < rows; r++)                                                         \
            for (int64_t j = 0; j < cols; j++) {                                                   \
                T cur = o[r * cols + j];                                                           \
                bool hit = isnan((double)(replaced)) ? isnan((double)cur) : (double)cur == (double)(replaced); \
                if (hit) o[r * cols + j] = (T)(vals)[(nv) == 1 ? 0 : j];                           \
            }                                                                                      \
    } while (0)

onyx_status cpu_imputer_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    int64_t rows, cols;
    rows_cols(x, &rows, &cols);
    if (y->data != x->data) memcpy(y->data, x->data, x->nbytes);
    if (x->dtype == ONYX_FLOAT || x->dtype == ONYX_DOUBLE) {
        const float *v;
        size_t n;
        TRY(per_column(c->node, "imputed_value_floats", cols, &v, &n));
        float replaced = attr_float(c->node, "replaced_value_float", 0.0f);
        if (x->dtype == ONYX_FLOAT) IMPUTE(float, v, n, replaced);
        else IMPUTE(double, v, n, replaced);
        return ONYX_OK;
    }
    const int64_t *v;
    size_t n = attr_ints(c->node, "imputed_value_int64s", &v);
    if (n != 1 && (int64_t)n != cols)
        return onyx_error(ONYX_ERR_SHAPE, "imputed_value_int64s has %zu values for %" PRId64 " columns",
                          n, cols);
    int64_t replaced = attr_int(c->node, "replaced_value_int64", 0);
    if (x->dtype == ONYX_INT64) IMPUTE(int64_t, v, n, replaced);
    else IMPUTE(int32_t, v, n, replaced);
    return ONYX_OK;
}

/* ---- OneHotEncoder: y[..., k] = 1 where x == category k; with zeros=0 an unknown category is an
 * error */

onyx_status cpu_one_hot_encoder_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    bool strings = x->dtype == ONYX_STRING;
    const graph_attr *cats = node_attr(c->node, strings ? "cats_strings" : "cats_int64s");
    int64_t ncat = cats ? (int64_t)cats->n : 0;
    bool zeros = attr_int(c->node, "zeros", 1) != 0;
    float *out = y->data;
    memset(out, 0, y->nbytes);
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t hit = -1;
        if (strings) {
            const char *s = ((char *const *)x->data)[i];
            for (int64_t k = 0; k < ncat && hit < 0; k++)
                if (!strcmp(s, cats->strings[k])) hit = k;
        } else {
            double v = tensor_get_f64(x, i);
            for (int64_t k = 0; k < ncat && hit < 0; k++)
                if ((double)cats->ints[k] == v) hit = k;
        }
        if (hit >= 0) out[i * ncat + hit] = 1.0f;
        else if (!zeros)
            return onyx_error(ONYX_ERR_RUNTIME, "element %" PRId64 " is not one of the %" PRId64
                              " categories (and zeros=0)", i, ncat);
    }
    return ONYX_OK;
}
