/* The layout of an ai.onnx.ml SVMClassifier / SVMRegressor read from its attributes and checked
 * once, shared by the schemas (output widths) and the CPU kernels (which precompute from it). */
#ifndef ONYX_OPS_ML_SVM_H
#define ONYX_OPS_ML_SVM_H

#include "ops/ml/common.h"

typedef enum svm_kernel { SVM_LINEAR, SVM_POLY, SVM_RBF, SVM_SIGMOID } svm_kernel;

typedef struct svm_layout {
    svm_kernel kernel;       /* LINEAR whenever there are no support vectors */
    double gamma, coef0;
    int64_t degree;
    bool svc;                /* support vectors (SVM_SVC); else liblinear mode (coefficient rows) */
    int64_t vectors;         /* support vectors (svc) */
    int64_t features;        /* columns of X the model reads */
    /* classifier only */
    int64_t classes;         /* class labels */
    bool strings;            /* labels are classlabels_strings */
    int64_t pairs;           /* one-vs-one classifiers: classes * (classes - 1) / 2 */
    int64_t n_rho;
    bool proba;              /* Platt probabilities (prob_a / prob_b, svc only) */
    bool probit;             /* post_transform is PROBIT (changes the binary score width) */
    int64_t scores;          /* raw scores per row before the final expansion */
    int64_t width;           /* columns of Z */
} svm_layout;

/* Reads and checks an SVMClassifier's attributes (counts of vectors_per_class, support_vectors,
 * coefficients, rho, prob_a/prob_b, the kernel). */
onyx_status ml_svm_classifier_layout(const graph_node *n, svm_layout *out);
/* The same for SVMRegressor (n_supports, support_vectors, coefficients, rho). */
onyx_status ml_svm_regressor_layout(const graph_node *n, svm_layout *out);
/* Fails unless X's known column count matches the model's. */
onyx_status ml_svm_check_x(const infer_ctx *c, const svm_layout *l, int64_t *rows);

#endif
