/* Reading and checking the attributes of ai.onnx.ml SVMClassifier / SVMRegressor (see ml_svm.h).
 * The rules follow onnx's reference evaluator: support vectors select SVM_SVC (one-vs-one with
 * votes), none select liblinear mode (one coefficient row per class, LINEAR kernel). */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ops/ml/svm.h"

static bool same_name(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (toupper((unsigned char)*a) != toupper((unsigned char)*b)) return false;
    return *a == *b;
}

/* kernel_type (any case, as the reference lowers it) and kernel_params [gamma, coef0, degree]. */
static onyx_status read_kernel(const graph_node *n, svm_layout *l) {
    static const char *const names[] = {"LINEAR", "POLY", "RBF", "SIGMOID"};
    const char *k = attr_string(n, "kernel_type", "LINEAR");
    int found = -1;
    for (int i = 0; i < 4; i++)
        if (same_name(k, names[i])) found = i;
    if (found < 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "kernel_type '%s' is not LINEAR, POLY, RBF or SIGMOID", k);
    l->kernel = (svm_kernel)found;
    const float *p;
    size_t np = attr_floats(n, "kernel_params", &p);
    l->gamma = l->coef0 = 0.0;
    l->degree = 0;
    if (np == 0) return ONYX_OK;
    if (np != 3)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "kernel_params has %zu values, expected 3 (gamma, coef0, "
                          "degree)", np);
    if (!(fabsf(p[2]) < 2147483648.0f))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "kernel_params degree %g is not a usable integer", p[2]);
    l->gamma = p[0];
    l->coef0 = p[1];
    l->degree = (int64_t)p[2]; /* truncated, as int() in the reference */
    return ONYX_OK;
}

static onyx_status need_at_least(const char *what, size_t got, int64_t want, const char *why) {
    if ((int64_t)got >= want) return ONYX_OK;
    return onyx_error(ONYX_ERR_INVALID_MODEL, "%s has %zu values, expected at least %" PRId64 " (%s)", what, got,
                      want, why);
}

onyx_status ml_svm_classifier_layout(const graph_node *n, svm_layout *l) {
    memset(l, 0, sizeof *l);
    onyx_dtype label_dt;
    TRY(ml_class_labels(n, "classlabels_ints", "classlabels_strings", &l->classes, &label_dt));
    l->strings = label_dt == ONYX_STRING;
    TRY(read_kernel(n, l));
    const int64_t *vpc;
    const float *unused;
    size_t n_vpc = attr_ints(n, "vectors_per_class", &vpc);
    size_t n_sv = attr_floats(n, "support_vectors", &unused);
    size_t n_coef = attr_floats(n, "coefficients", &unused);
    size_t n_pa = attr_floats(n, "prob_a", &unused), n_pb = attr_floats(n, "prob_b", &unused);
    l->n_rho = (int64_t)attr_floats(n, "rho", &unused);
    const char *post = attr_string(n, "post_transform", "NONE");
    l->probit = !strcmp(post, "PROBIT");
    if (n_coef == 0) return onyx_error(ONYX_ERR_INVALID_MODEL, "coefficients is empty");
    if (n_pa != n_pb)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "prob_a has %zu values but prob_b has %zu", n_pa, n_pb);
    for (size_t i = 0; i < n_vpc; i++) {
        if (vpc[i] < 0 || vpc[i] > INT32_MAX)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "vectors_per_class[%zu] = %" PRId64 " is out of range",
                              i, vpc[i]);
        l->vectors += vpc[i];
    }
    l->pairs = l->classes * (l->classes - 1) / 2;
    l->svc = l->vectors > 0;
    if (l->svc) {
        if ((int64_t)n_vpc != l->classes)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "vectors_per_class has %zu entries for %" PRId64
                              " class labels", n_vpc, l->classes);
        if (l->classes < 2)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "support vectors need at least 2 classes, got %" PRId64,
                              l->classes);
        if (n_sv == 0 || (int64_t)n_sv % l->vectors)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "support_vectors has %zu values, not a multiple of the "
                              "%" PRId64 " vectors vectors_per_class counts", n_sv, l->vectors);
        l->features = (int64_t)n_sv / l->vectors;
        TRY(need_at_least("coefficients", n_coef, (l->classes - 1) * l->vectors,
                          "(classes - 1) x support vectors"));
        TRY(need_at_least("rho", (size_t)l->n_rho, l->pairs, "one per pair of classes"));
        if (n_pa) TRY(need_at_least("prob_a", n_pa, l->pairs, "one per pair of classes"));
        l->proba = n_pa > 0;
        l->scores = l->proba ? l->classes : l->pairs;
    } else {
        l->kernel = SVM_LINEAR;
        if ((int64_t)n_coef % l->classes)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "%zu coefficients do not split into %" PRId64 " class rows",
                              n_coef, l->classes);
        if (l->n_rho < 1) return onyx_error(ONYX_ERR_INVALID_MODEL, "rho is empty");
        l->features = (int64_t)n_coef / l->classes;
        l->scores = l->classes;
    }
    /* one score for two labels is written as the pair [-s, s] (PROBIT keeps one column) */
    l->width = l->scores == 1 && l->n_rho == 1 && l->classes == 2 && !l->probit ? 2 : l->scores;
    return ONYX_OK;
}

onyx_status ml_svm_regressor_layout(const graph_node *n, svm_layout *l) {
    memset(l, 0, sizeof *l);
    TRY(read_kernel(n, l));
    const float *unused;
    size_t n_sv = attr_floats(n, "support_vectors", &unused);
    size_t n_coef = attr_floats(n, "coefficients", &unused);
    l->n_rho = (int64_t)attr_floats(n, "rho", &unused);
    int64_t supports = attr_int(n, "n_supports", 0);
    if (supports < 0 || supports > INT32_MAX)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "n_supports %" PRId64 " is out of range", supports);
    if (n_coef == 0) return onyx_error(ONYX_ERR_INVALID_MODEL, "coefficients is empty");
    if (l->n_rho < 1) return onyx_error(ONYX_ERR_INVALID_MODEL, "rho is empty");
    l->vectors = supports;
    l->svc = supports > 0;
    if (l->svc) {
        if (n_sv == 0 || (int64_t)n_sv % supports)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "support_vectors has %zu values, not a multiple of "
                              "n_supports %" PRId64, n_sv, supports);
        l->features = (int64_t)n_sv / supports;
        TRY(need_at_least("coefficients", n_coef, supports, "one per support vector"));
    } else {
        l->kernel = SVM_LINEAR;
        l->features = (int64_t)n_coef;
    }
    l->classes = 1;
    l->scores = l->width = 1;
    return ONYX_OK;
}

onyx_status ml_svm_check_x(const infer_ctx *c, const svm_layout *l, int64_t *rows) {
    int64_t cols;
    TRY(ml_rows_cols(c, 0, rows, &cols));
    if (cols >= 0 && cols != l->features)
        return onyx_error(ONYX_ERR_SHAPE, "X has %" PRId64 " columns but the model has %" PRId64 " features",
                          cols, l->features);
    return ONYX_OK;
}
