/* CPU kernels of ai.onnx.ml SVMClassifier and SVMRegressor, computed as onnx's reference evaluator
 * does (its one-vs-one votes, its label and binary-score rules), but for the probabilities of more
 * than two classes: libsvm's pairwise coupling, as scikit-learn and onnxruntime. Prepare copies the support vectors (or coefficient rows) into one float
 * matrix, their squared norms and the per-class layout; run takes rows in blocks (each with its own
 * scratch), tiles of rows at a time: one SGEMM gives every x·v, the kernel is applied on top (RBF as
 * |x|² + |v|² - 2x·v), and the combination runs in double. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "ops/ml/svm.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/ml/common.h"

typedef struct svm_state {
    svm_layout l;
    bool regressor, one_class, all_positive;
    ml_post post;
    int64_t n_rows;            /* rows of `vecs`: support vectors, or coefficient rows (liblinear) */
    float *vecs;               /* [n_rows, features] */
    double *vnorm;             /* RBF: |v|² per row of vecs */
    double *coef;              /* svc: [classes - 1, vectors] (classifier) or [vectors] (regressor) */
    double *rho, *prob_a, *prob_b;
    int64_t *start, *count;    /* per class: first support vector and how many */
    const int64_t *int_labels; /* borrowed from the node (lives as long as the rep) */
    const char *const *str_labels;
    int64_t slot_doubles;      /* a row block's working doubles (see slot_size), in the run's
                                  scratch: the state is only read by concurrent runs */
} svm_state;

void cpu_svm_release(void *state) {
    svm_state *s = state;
    if (!s) return;
    free(s->vecs);
    free(s->vnorm);
    free(s->coef);
    free(s->rho);
    free(s->prob_a);
    free(s->prob_b);
    free(s->start);
    free(s->count);
    free(s);
}

/* A float list attribute as `want` doubles (the attribute holds at least that many). */
static onyx_status copy_reals(const graph_node *n, const char *name, int64_t want, double **out) {
    const float *f;
    attr_floats(n, name, &f);
    *out = NULL;
    if (want == 0) return ONYX_OK;
    *out = malloc((size_t)want * sizeof **out);
    if (!*out) return onyx_oom(name);
    for (int64_t i = 0; i < want; i++) (*out)[i] = f[i];
    return ONYX_OK;
}

/* Rows per SGEMM. */
enum { TILE = 64 };

/* Scratch layout of one block, in doubles: kernel values [n_rows], scores [max(pairs, classes)],
 * votes [classes], with probabilities R and Q [classes²], P and Qp [classes], the Z row [width],
 * |x|² [TILE]; then in floats: the tile of X [TILE, features] and its dot products [TILE, n_rows]. */
static int64_t slot_doubles_part(const svm_state *s) {
    int64_t k = s->l.classes, sc = s->l.pairs > k ? s->l.pairs : k;
    return s->n_rows + sc + k + (s->l.proba ? 2 * k * k + 2 * k : 0) + s->l.width + TILE;
}

static int64_t slot_size(const svm_state *s) {
    return slot_doubles_part(s) + (TILE * (s->l.features + s->n_rows) + 1) / 2;
}

static onyx_status prepare(const kernel_prep *p, bool regressor, void **state) {
    const graph_node *n = p->node;
    svm_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("SVM");
    s->regressor = regressor;
    onyx_status st = regressor ? ml_svm_regressor_layout(n, &s->l) : ml_svm_classifier_layout(n, &s->l);
    if (st == ONYX_OK) st = ml_parse_post(attr_string(n, "post_transform", "NONE"), &s->post);
    if (st != ONYX_OK) goto done;
    const svm_layout *l = &s->l;
    const float *src;
    size_t n_coef = attr_floats(n, "coefficients", &src);
    s->n_rows = l->svc ? l->vectors : regressor ? 1 : l->classes;
    s->vecs = malloc((size_t)(s->n_rows * l->features) * sizeof *s->vecs);
    if (!s->vecs) {
        st = onyx_oom("SVM vectors");
        goto done;
    }
    if (l->svc) attr_floats(n, "support_vectors", &src);
    memcpy(s->vecs, src, (size_t)(s->n_rows * l->features) * sizeof *s->vecs);
    if (!cpu_blas_dims_ok(TILE, s->n_rows, l->features)) {
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "%" PRId64 " vectors of %" PRId64 " features are past BLAS's int",
                        s->n_rows, l->features);
        goto done;
    }
    if (l->kernel == SVM_RBF) {
        s->vnorm = malloc((size_t)s->n_rows * sizeof *s->vnorm);
        if (!s->vnorm) {
            st = onyx_oom("SVM norms");
            goto done;
        }
        for (int64_t j = 0; j < s->n_rows; j++) {
            double acc = 0;
            for (int64_t i = 0; i < l->features; i++) acc += (double)s->vecs[j * l->features + i] * s->vecs[j * l->features + i];
            s->vnorm[j] = acc;
        }
    }
    /* the reference's min(coefficients) >= 0 */
    s->all_positive = true;
    attr_floats(n, "coefficients", &src);
    for (size_t i = 0; i < n_coef; i++)
        if (!(src[i] >= 0)) s->all_positive = false;
    if (l->svc) {
        st = copy_reals(n, "coefficients", regressor ? l->vectors : (l->classes - 1) * l->vectors, &s->coef);
        if (st != ONYX_OK) goto done;
    }
    st = copy_reals(n, "rho", l->n_rho, &s->rho);
    if (st == ONYX_OK && l->proba) st = copy_reals(n, "prob_a", l->pairs, &s->prob_a);
    if (st == ONYX_OK && l->proba) st = copy_reals(n, "prob_b", l->pairs, &s->prob_b);
    if (st != ONYX_OK) goto done;
    if (regressor) {
        s->one_class = attr_int(n, "one_class", 0) != 0;
    } else {
        const graph_attr *strs = node_attr(n, "classlabels_strings");
        if (l->strings) s->str_labels = strs->strings;
        else attr_ints(n, "classlabels_ints", &s->int_labels);
        if (l->svc) {
            const int64_t *vpc;
            attr_ints(n, "vectors_per_class", &vpc);
            s->start = malloc((size_t)l->classes * sizeof *s->start);
            s->count = malloc((size_t)l->classes * sizeof *s->count);
            if (!s->start || !s->count) {
                st = onyx_oom("SVM classes");
                goto done;
            }
            for (int64_t i = 0, at = 0; i < l->classes; at += vpc[i], i++) {
                s->start[i] = at;
                s->count[i] = vpc[i];
            }
        }
    }
    s->slot_doubles = (slot_size(s) + 7) / 8 * 8; /* slots stay 64-byte aligned */
done:
    if (st != ONYX_OK) {
        cpu_svm_release(s);
        return st;
    }
    *state = s;
    return ONYX_OK;
}

onyx_status cpu_svm_classifier_prepare(const kernel_prep *p, void **state) { return prepare(p, false, state); }
onyx_status cpu_svm_regressor_prepare(const kernel_prep *p, void **state) { return prepare(p, true, state); }

/* ---- per row */

/* k[j] = K(x, v_j) from the dot products x·v_j (and |x|² for RBF). */
static void kernel_values(const svm_state *s, const float *dots, double xnorm, double *k) {
    const svm_layout *l = &s->l;
    for (int64_t j = 0; j < s->n_rows; j++) {
        double d = dots[j];
        switch (l->kernel) {
        case SVM_LINEAR: k[j] = d; break;
        case SVM_POLY: k[j] = pow(d * l->gamma + l->coef0, (double)l->degree); break;
        case SVM_SIGMOID: k[j] = tanh(d * l->gamma + l->coef0); break;
        case SVM_RBF: {
            double sq = xnorm + s->vnorm[j] - 2 * d;
            k[j] = exp(-l->gamma * (sq > 0 ? sq : 0));
            break;
        }
        }
    }
}

/* Pairwise coupling of the pairwise probabilities R (k×k) into P: libsvm's multiclass_probability
 * (the second method of Wu, Lin and Weng, 2004), as scikit-learn's predict_proba and onnxruntime
 * compute it, with Q[t][j] = -R[j][t]·R[t][j] off the diagonal. (onnx's reference evaluator writes
 * the one sum -Σ_{m>t} R[m][t]·R[t][m] for every j > t instead: the two agree for two classes only,
 * and past two its probabilities are off libsvm's by up to 0.1.) The iteration stops on a
 * threshold, so it runs in float unless X is double, as onnxruntime does. */
#define DEFINE_COUPLING(NAME, T)                                                                   \
    static void NAME(int64_t k, const double *scores, const double *pa, const double *pb, T *R, T *Q, \
                     T *P, T *Qp, double *out) {                                                   \
        for (int64_t i = 0, e = 0; i < k; i++) {                                                   \
            R[i * k + i] = 0;                                                                      \
            for (int64_t j = i + 1; j < k; j++, e++) {                                             \
                /* 1 - logistic(score·a + b), each step rounded to T as the reference does */    \
                T arg = (T)scores[e] * (T)pa[e] + (T)pb[e];                                        \
                T ex = (T)exp(-fabs((double)arg)), lg = (T)1 / ((T)1 + ex);                        \
                T v = (T)1 - (arg < 0 ? (T)1 - lg : lg);                                           \
                v = v < (T)1e-7 ? (T)1e-7 : v > (T)(1 - 1e-7) ? (T)(1 - 1e-7) : v;                 \
                R[i * k + j] = v;                                                                  \
                R[j * k + i] = 1 - v;                                                              \
            }                                                                                      \
        }                                                                                          \
        for (int64_t t = 0; t < k; t++) {                                                          \
            P[t] = (T)(1.0 / (double)k);                                                           \
            T d = 0;                                                                               \
            for (int64_t j = 0; j < t; j++) {                                                      \
                d += R[j * k + t] * R[j * k + t];                                                  \
                Q[t * k + j] = Q[j * k + t];                                                       \
            }                                                                                      \
            for (int64_t j = t + 1; j < k; j++) {                                                  \
                d += R[j * k + t] * R[j * k + t];                                                  \
                Q[t * k + j] = -R[j * k + t] * R[t * k + j];                                       \
            }                                                                                      \
            Q[t * k + t] = d;                                                                      \
        }                                                                                          \
        int64_t max_iter = k > 100 ? k : 100;                                                      \
        T eps = (T)(0.005 / (double)k);                                                            \
        for (int64_t it = 0; it < max_iter; it++) {                                                \
            T pqp = 0, max_error = 0;                                                              \
            for (int64_t t = 0; t < k; t++) {                                                      \
                T q = 0;                                                                           \
                for (int64_t j = 0; j < k; j++) q += Q[t * k + j] * P[j];                          \
                Qp[t] = q;                                                                         \
            }                                                                                      \
            for (int64_t t = 0; t < k; t++) pqp += P[t] * Qp[t];                                   \
            for (int64_t t = 0; t < k; t++) {                                                      \
                T e = Qp[t] > pqp ? Qp[t] - pqp : pqp - Qp[t];                                     \
                if (e > max_error) max_error = e;                                                  \
            }                                                                                      \
            if (max_error < eps) break;                                                            \
            for (int64_t t = 0; t < k; t++) {                                                      \
                T diff = (-Qp[t] + pqp) / Q[t * k + t];                                            \
                P[t] += diff;                                                                      \
                pqp = (pqp + diff * (diff * Q[t * k + t] + 2 * Qp[t])) / ((1 + diff) * (1 + diff)); \
                for (int64_t j = 0; j < k; j++) {                                                  \
                    P[j] /= 1 + diff;                                                              \
                    Qp[j] = (Qp[j] + diff * Q[t * k + j]) / (1 + diff);                            \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        for (int64_t t = 0; t < k; t++) out[t] = P[t];                                             \
    }
DEFINE_COUPLING(coupling_f32, float)
DEFINE_COUPLING(coupling_f64, double)

/* The first index of the largest value (a NaN, if any, wins as in numpy's argmax). */
static int64_t argmax(const double *v, int64_t n) {
    int64_t best = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i])) return i;
        if (v[i] > v[best]) best = i;
    }
    return best;
}

typedef struct svm_job {
    const svm_state *s;
    const tensor *x;
    tensor *y, *z;             /* y: labels (classifier) or the regression output */
    int64_t rows, blocks;
    double *slots;             /* blocks x s->slot_doubles */
    onyx_status *status;       /* per block */
} svm_job;

/* Rows [r, r + n) of X as floats into out [n, f]; |row|² into norm (when not NULL). */
static void load_rows(const tensor *x, int64_t r, int64_t n, int64_t f, float *out, double *norm) {
    switch (x->dtype) {
#define LOAD(DT, T)                                                                                \
    case DT: {                                                                                     \
        const T *p = (const T *)x->data + r * f;                                                   \
        for (int64_t i = 0; i < n * f; i++) out[i] = (float)p[i];                                  \
        break;                                                                                     \
    }
        LOAD(ONYX_FLOAT, float)
        LOAD(ONYX_DOUBLE, double)
        LOAD(ONYX_INT64, int64_t)
        LOAD(ONYX_INT32, int32_t)
#undef LOAD
    default:
        for (int64_t i = 0; i < n * f; i++) out[i] = (float)tensor_get_f64(x, r * f + i);
    }
    if (!norm) return;
    for (int64_t i = 0; i < n; i++) {
        double acc = 0;
        for (int64_t k = 0; k < f; k++) acc += (double)out[i * f + k] * out[i * f + k];
        norm[i] = acc;
    }
}

/* Scores, label and Z row of one input row of a classifier, from its kernel values (w[0, n_rows)). */
static onyx_status classify_row(const svm_state *s, double *w, bool f64, tensor *y, float *zrow, int64_t r) {
    const svm_layout *l = &s->l;
    int64_t k = l->classes;
    double *kv = w, *scores = kv + s->n_rows, *votes = scores + (l->pairs > k ? l->pairs : k);
    int64_t max_class;
    double max_weight;
    const double *out = scores; /* the raw scores, or the probabilities */
    if (l->svc) {
        int64_t e = 0;
        for (int64_t i = 0; i < k; i++) votes[i] = 0;
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = i + 1; j < k; j++, e++) {
                const double *ci = s->coef + (j - 1) * l->vectors + s->start[i];
                const double *cj = s->coef + i * l->vectors + s->start[j];
                double s1 = 0, s2 = 0;
                for (int64_t m = 0; m < s->count[i]; m++) s1 += ci[m] * kv[s->start[i] + m];
                for (int64_t m = 0; m < s->count[j]; m++) s2 += cj[m] * kv[s->start[j] + m];
                double v = s->rho[e] + s1 + s2;
                scores[e] = v;
                votes[v > 0 ? i : j] += 1;
            }
        if (l->proba) {
            /* the probabilities replace the pair scores (read only while R is built) */
            double *R = votes + k, *Q = R + k * k, *P = Q + k * k, *Qp = P + k;
            if (f64)
                coupling_f64(k, scores, s->prob_a, s->prob_b, R, Q, P, Qp, scores);
            else
                coupling_f32(k, scores, s->prob_a, s->prob_b, (float *)R, (float *)Q, (float *)P, (float *)Qp,
                             scores);
        }
        max_class = argmax(votes, k);
        max_weight = votes[max_class];
    } else {
        for (int64_t i = 0; i < k; i++) scores[i] = s->rho[0] + kv[i];
        max_class = argmax(scores, k);
        max_weight = scores[max_class];
    }
    /* the label: one rho is the reference's binary rule (int labels 1/0 past two classes) */
    int64_t pick = max_class, literal = -1;
    if (l->n_rho == 1) {
        if (k == 2) pick = !l->proba && s->all_positive && max_weight >= 0.5 ? 1 : max_class;
        else literal = max_weight > 0 ? 1 : 0;
    }
    onyx_status st = ONYX_OK;
    if (l->strings) {
        const char *label = literal == 1 ? "1" : literal == 0 ? "0" : s->str_labels[pick];
        st = tensor_set_string(y, r, label, strlen(label));
    } else {
        ((int64_t *)y->data)[r] = literal >= 0 ? literal : s->int_labels[pick];
    }
    /* Z */
    if (l->scores >= 2) {
        for (int64_t i = 0; i < l->scores; i++) zrow[i] = (float)out[i];
        ml_post_row(s->post, zrow, l->scores);
    } else if (l->width == 2) {
        zrow[0] = (float)-out[0];
        zrow[1] = (float)out[0];
        ml_post_row(s->post, zrow, 2);
    } else {
        zrow[0] = (float)out[0];
        if (s->post == ML_POST_PROBIT) ml_post_row(s->post, zrow, 1);
    }
    return st;
}

static float regress_row(const svm_state *s, const double *w) {
    const svm_layout *l = &s->l;
    double v = s->rho[0];
    if (l->svc) {
        double acc = 0;
        for (int64_t j = 0; j < l->vectors; j++) acc += s->coef[j] * w[j];
        v += acc;
    } else {
        v += w[0];
    }
    if (s->one_class) return v > 0 ? 1.0f : -1.0f;
    float out = (float)v;
    ml_post_row(s->post, &out, 1);
    return out;
}

static void svm_blocks(void *ctx, int64_t begin, int64_t end) {
    const svm_job *j = ctx;
    const svm_state *s = j->s;
    const svm_layout *l = &s->l;
    int64_t f = l->features, nv = s->n_rows;
    bool f64 = j->x->dtype == ONYX_DOUBLE;
    for (int64_t b = begin; b < end; b++) {
        double *w = j->slots + b * s->slot_doubles, *xnorm = w + slot_doubles_part(s) - TILE;
        float *zrow = (float *)(xnorm - l->width), *xt = (float *)(xnorm + TILE), *dots = xt + TILE * f;
        onyx_status st = ONYX_OK;
        int64_t r_end = j->rows * (b + 1) / j->blocks;
        for (int64_t r0 = j->rows * b / j->blocks; r0 < r_end && st == ONYX_OK; r0 += TILE) {
            int64_t n = r_end - r0 < TILE ? r_end - r0 : TILE;
            load_rows(j->x, r0, n, f, xt, l->kernel == SVM_RBF ? xnorm : NULL);
            cpu_sgemm(false, true, n, nv, f, 1.0f, xt, f, s->vecs, f, 0.0f, dots, nv);
            for (int64_t i = 0; i < n && st == ONYX_OK; i++) {
                int64_t r = r0 + i;
                kernel_values(s, dots + i * nv, l->kernel == SVM_RBF ? xnorm[i] : 0.0, w);
                if (s->regressor) {
                    ((float *)j->y->data)[r] = regress_row(s, w);
                    continue;
                }
                float *z = j->z ? (float *)j->z->data + r * l->width : zrow;
                st = classify_row(s, w, f64, j->y, z, r);
            }
        }
        j->status[b] = st;
    }
}

static onyx_status run(const kernel_call *c) {
    const svm_state *s = c->state;
    const tensor *x = kernel_input(c, 0);
    int64_t cols = x->rank ? x->dims[x->rank - 1] : 1, rows = cols ? x->numel / cols : 0;
    if (x->rank > 2 || cols != s->l.features)
        return onyx_error(ONYX_ERR_SHAPE, "X has %" PRId64 " columns (rank %d) but the model has %" PRId64
                          " features", cols, x->rank, s->l.features);
    int64_t work = rows * (s->n_rows * s->l.features + s->l.pairs + 1);
    int64_t blocks = 1 + work / 32768, slots = parallel_threads();
    if (blocks > slots) blocks = slots > 0 ? slots : 1;
    if (blocks > rows) blocks = rows > 0 ? rows : 1;
    /* one slot of working doubles and a status per block, in the run's scratch */
    if ((uint64_t)blocks > SIZE_MAX / 16 / ((uint64_t)s->slot_doubles * sizeof(double) + 64))
        return onyx_oom("SVM scratch");
    size_t wbytes = (size_t)(blocks * s->slot_doubles) * sizeof(double);
    void *mem;
    TRY(kernel_scratch(c, wbytes + (size_t)blocks * sizeof(onyx_status), &mem));
    svm_job j = {s, x, kernel_output(c, 0), kernel_output(c, 1), rows, blocks, mem,
                 (onyx_status *)((char *)mem + wbytes)};
    parallel_for(blocks, 1, svm_blocks, &j);
    for (int64_t b = 0; b < blocks; b++)
        if (j.status[b] != ONYX_OK) return j.status[b];
    return ONYX_OK;
}

onyx_status cpu_svm_classifier_run(const kernel_call *c) { return run(c); }
onyx_status cpu_svm_regressor_run(const kernel_call *c) { return run(c); }
