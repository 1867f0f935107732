/* CPU kernels of ai.onnx.ml LinearRegressor and LinearClassifier: one dot product per (row, class)
 * in double, rows in parallel, then the post-transform and (classifier) the label. */
#include <inttypes.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/ml/common.h"

typedef struct linear_job {
    const tensor *x;
    float *z;
    const float *coef, *intercepts;
    int64_t cols, classes, width; /* width: score columns written (2 for the binary expansion) */
    ml_post post;
} linear_job;

static void linear_rows(void *ctx, int64_t begin, int64_t end) {
    const linear_job *j = ctx;
    for (int64_t r = begin; r < end; r++) {
        float *z = j->z + r * j->width;
        for (int64_t k = 0; k < j->classes; k++) {
            double s = j->intercepts ? j->intercepts[k] : 0.0;
            const float *w = j->coef + k * j->cols;
            for (int64_t i = 0; i < j->cols; i++) s += w[i] * ml_x_at(j->x, r * j->cols + i);
            z[k] = (float)s;
        }
        if (j->width == 2 && j->classes == 1) {
            z[1] = z[0];
            z[0] = -z[0];
        }
        ml_post_row(j->post, z, j->width);
    }
}

static onyx_status setup(const kernel_call *c, linear_job *j, int64_t classes_hint) {
    const tensor *x = kernel_input(c, 0);
    size_t nc = attr_floats(c->node, "coefficients", &j->coef);
    size_t ni = attr_floats(c->node, "intercepts", &j->intercepts);
    j->x = x;
    j->cols = x->rank ? x->dims[x->rank - 1] : 1;
    j->classes = classes_hint > 0 ? classes_hint : (j->cols ? (int64_t)nc / j->cols : 0);
    if ((int64_t)nc != j->classes * j->cols)
        return onyx_error(ONYX_ERR_SHAPE, "%zu coefficients for %" PRId64 " columns and %" PRId64 " outputs",
                          nc, j->cols, j->classes);
    if (ni && (int64_t)ni != j->classes)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%zu intercepts for %" PRId64 " outputs", ni, j->classes);
    if (!ni) j->intercepts = NULL;
    return ml_parse_post(attr_string(c->node, "post_transform", "NONE"), &j->post);
}

onyx_status cpu_linear_regressor_run(const kernel_call *c) {
    linear_job j;
    TRY(setup(c, &j, attr_int(c->node, "targets", 1)));
    j.z = kernel_output(c, 0)->data;
    j.width = j.classes;
    int64_t rows = j.cols ? j.x->numel / j.cols : 0;
    parallel_for(rows, 1 + 65536 / (j.cols * j.classes + 1), linear_rows, &j);
    return ONYX_OK;
}

onyx_status cpu_linear_classifier_run(const kernel_call *c) {
    linear_job j;
    TRY(setup(c, &j, 0));
    tensor *labels = kernel_output(c, 0), *scores = kernel_output(c, 1);
    const int64_t *int_labels;
    const graph_attr *str_labels = node_attr(c->node, "classlabels_strings");
    size_t n_labels = str_labels && str_labels->n ? str_labels->n
                                                   : attr_ints(c->node, "classlabels_ints", &int_labels);
    bool strings = str_labels && str_labels->n;
    int64_t rows = j.cols ? j.x->numel / j.cols : 0;
    j.width = j.classes == 1 && n_labels == 2 ? 2 : j.classes;
    if (j.width > 1 && (int64_t)n_labels < j.width)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%zu class labels for %" PRId64 " score columns", n_labels,
                          j.width);
    tensor tmp = {0};
    if (!scores) {
        int64_t dims[2] = {rows, j.width};
        TRY(tensor_alloc(&tmp, ONYX_FLOAT, 2, dims));
        scores = &tmp;
    }
    j.z = scores->data;
    parallel_for(rows, 1 + 65536 / (j.cols * j.classes + 1), linear_rows, &j);
    onyx_status st = ONYX_OK;
    for (int64_t r = 0; r < rows && st == ONYX_OK; r++) {
        const float *z = j.z + r * j.width;
        int64_t pick = 0;
        bool positive = false;
        if (j.width > 1) {
            for (int64_t k = 1; k < j.width; k++)
                if (z[k] > z[pick]) pick = k;
        } else {
            /* one score column: a threshold picks label 0 or the "no class" value */
            positive = z[0] >= (j.post == ML_POST_NONE ? 0.0f : 0.5f);
        }
        if (strings) {
            const char *s = j.width > 1 ? str_labels->strings[pick] : positive ? str_labels->strings[0] : "";
            st = tensor_set_string(labels, r, s, strlen(s));
        } else {
            ((int64_t *)labels->data)[r] = j.width > 1 ? int_labels[pick] : positive ? int_labels[0] : 0;
        }
    }
    tensor_release(&tmp);
    return st;
}
