/* CPU kernels of the contrib normalizations: SkipLayerNormalization and its RMS form (input + skip
 * + bias, normalized over the last axis), onnxruntime's SimplifiedLayerNormalization (RMS over the
 * axes from `axis` on) and EmbedLayerNormalization (embedding gathers, sum, LayerNorm, mask
 * lengths). float16/bfloat16 compute in float through float copies in the run's scratch; double
 * computes in double. */
#include <math.h>
#include <stdatomic.h>

#include "core/parallel.h"
#include "kernels_cpu/contrib_nlp/cnlp_cpu.h"
#include "kernels_cpu/cpu_kernels.h"

#define GRAIN 16384
#define NORM_PRAGMA_(x) _Pragma(#x)
#define SIMD_SUM(v) NORM_PRAGMA_(omp simd reduction(+ : v))

static size_t up64(size_t n) { return (n + 63) / 64 * 64; }

/* ---------------------------------------------------------------- Skip(Simplified)LayerNorm */

typedef struct skip_job {
    bool rms;
    double eps;
    int64_t h, skip_rows;
    onyx_dtype t;                    /* the tensors' type (sum output written in it) */
    const void *x, *skip;            /* compute type: float (halves converted) or double */
    const void *gamma, *beta, *bias; /* compute type; beta/bias NULL when absent */
    void *y;                         /* compute type */
    void *sum;                       /* input_skip_bias_sum in type t, or NULL */
    float *mean, *inv;               /* outputs 1 and 2 (always float), or NULL */
} skip_job;

#define DEFINE_SKIP(N, F, SQRT)                                                                    \
    static void N##_skip_rows(void *ctx, int64_t r0, int64_t r1) {                                 \
        const skip_job *j = ctx;                                                                   \
        const int64_t h = j->h;                                                                    \
        const F *g = j->gamma, *be = j->beta, *bi = j->bias;                                       \
        for (int64_t r = r0; r < r1; r++) {                                                        \
            const F *x = (const F *)j->x + r * h,                                                  \
                    *s = (const F *)j->skip + (r % j->skip_rows) * h;                              \
            F *y = (F *)j->y + r * h;                                                              \
            if (bi) {                                                                              \
                CPU_SIMD for (int64_t k = 0; k < h; k++) y[k] = x[k] + s[k] + bi[k];               \
            } else {                                                                               \
                CPU_SIMD for (int64_t k = 0; k < h; k++) y[k] = x[k] + s[k];                       \
            }                                                                                      \
            if (j->sum) N##_store_sum(j, r, y);                                                    \
            F mean = 0, var = 0;                                                                   \
            if (!j->rms) {                                                                         \
                F acc = 0;                                                                         \
                SIMD_SUM(acc) for (int64_t k = 0; k < h; k++) acc += y[k];                         \
                mean = acc / (F)h;                                                                 \
            }                                                                                      \
            SIMD_SUM(var) for (int64_t k = 0; k < h; k++) {                                        \
                F d = y[k] - mean;                                                                 \
                var += d * d;                                                                      \
            }                                                                                      \
            F inv = 1 / SQRT(var / (F)h + (F)j->eps);                                              \
            if (j->mean) j->mean[r] = (float)mean;                                                 \
            if (j->inv) j->inv[r] = (float)inv;                                                    \
            if (be) {                                                                              \
                CPU_SIMD for (int64_t k = 0; k < h; k++) y[k] =                                    \
                    (y[k] - mean) * inv * g[k] + be[k];                                            \
            } else {                                                                               \
                CPU_SIMD for (int64_t k = 0; k < h; k++) y[k] = (y[k] - mean) * inv * g[k];        \
            }                                                                                      \
        }                                                                                          \
    }

static void f32_store_sum(const skip_job *j, int64_t r, const float *row) {
    cnlp_store(j->sum, j->t, r * j->h, row, j->h);
}
static void f64_store_sum(const skip_job *j, int64_t r, const double *row) {
    memcpy((double *)j->sum + r * j->h, row, (size_t)j->h * sizeof(double));
}
DEFINE_SKIP(f32, float, sqrtf)
DEFINE_SKIP(f64, double, sqrt)

static onyx_status skip_run(const kernel_call *c, bool rms) {
    const tensor *x = kernel_input(c, 0), *skip = kernel_input(c, 1), *gamma = kernel_input(c, 2);
    const tensor *beta = rms ? NULL : kernel_input(c, 3), *bias = kernel_input(c, rms ? 3 : 4);
    tensor *y = kernel_output(c, 0), *mean = kernel_output(c, 1), *inv = kernel_output(c, 2),
           *sum = kernel_output(c, 3);
    if (x->rank != 2 && x->rank != 3)
        return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected 2 or 3", x->rank);
    int64_t h = x->dims[x->rank - 1], rows = h ? x->numel / h : 0;
    const tensor *params[3] = {gamma, beta, bias};
    for (int i = 0; i < 3; i++)
        if (params[i] && (params[i]->dtype != x->dtype || params[i]->numel != h))
            return onyx_error(ONYX_ERR_SHAPE,
                              "gamma/beta/bias must have the input's type and %lld "
                              "elements",
                              (long long)h);
    if (skip->dtype != x->dtype || h == 0 || skip->numel % h != 0 || skip->numel == 0 ||
        rows % (skip->numel / h) != 0)
        return onyx_error(ONYX_ERR_SHAPE, "skip does not broadcast to the input");
    skip_job j = {.rms = rms,
                  .eps = attr_float(c->node, "epsilon", 1e-12f),
                  .h = h,
                  .skip_rows = skip->numel / h,
                  .t = x->dtype,
                  .sum = sum ? sum->data : NULL,
                  .mean = mean ? mean->data : NULL,
                  .inv = inv ? inv->data : NULL};
    if ((mean && (mean->dtype != ONYX_FLOAT || mean->numel != rows)) ||
        (inv && (inv->dtype != ONYX_FLOAT || inv->numel != rows)))
        return onyx_error(ONYX_ERR_SHAPE, "mean and inv_std_var must be float with %lld elements",
                          (long long)rows);
    if (rows == 0) return ONYX_OK;
    if (x->dtype == ONYX_FLOAT || x->dtype == ONYX_DOUBLE) {
        j.x = x->data, j.skip = skip->data, j.y = y->data;
        j.gamma = gamma->data, j.beta = beta ? beta->data : NULL, j.bias = bias ? bias->data : NULL;
    } else {
        /* float copies: x (normalized in place as y), skip, the three parameter rows */
        size_t bx = up64((size_t)x->numel * 4), bs = up64((size_t)skip->numel * 4),
               bp = up64((size_t)h * 4);
        char *buf;
        TRY(kernel_scratch(c, bx + bs + 3 * bp, (void **)&buf));
        float *fx = (float *)buf, *fs = (float *)(buf + bx), *fp = (float *)(buf + bx + bs);
        cnlp_load(x->data, x->dtype, 0, fx, x->numel);
        cnlp_load(skip->data, x->dtype, 0, fs, skip->numel);
        const void **dst[3] = {&j.gamma, &j.beta, &j.bias};
        for (int i = 0; i < 3; i++) {
            float *p = (float *)((char *)fp + (size_t)i * bp);
            *dst[i] = params[i] ? p : NULL;
            if (params[i]) cnlp_load(params[i]->data, x->dtype, 0, p, h);
        }
        j.x = fx, j.skip = fs, j.y = fx;
    }
    parallel_for(rows, cnlp_grain(h, GRAIN),
                 x->dtype == ONYX_DOUBLE ? f64_skip_rows : f32_skip_rows, &j);
    if (x->dtype != ONYX_FLOAT && x->dtype != ONYX_DOUBLE)
        cnlp_store(y->data, y->dtype, 0, (const float *)j.y, x->numel);
    if (rms && mean) memset(mean->data, 0, mean->nbytes); /* as onnxruntime: no mean for RMS */
    return ONYX_OK;
}

onyx_status cpu_cnlp_skip_layernorm(const kernel_call *c) { return skip_run(c, false); }
onyx_status cpu_cnlp_skip_simplified_layernorm(const kernel_call *c) { return skip_run(c, true); }

/* ---------------------------------------------------------------- SimplifiedLayerNormalization */

typedef struct rms_job {
    const tensor *x, *scale;
    tensor *y, *inv;
    int64_t cols;
    const float *sf;  /* the scale under each normalized column, as float */
    const double *sd; /* and as double (double X and Y) */
    double eps;
} rms_job;

/* rows [r0, r1): double for double X, else float through a per-row chunked conversion */
static void rms_rows(void *ctx, int64_t r0, int64_t r1) {
    const rms_job *j = ctx;
    const int64_t n = j->cols;
    enum { CH = 256 };
    for (int64_t r = r0; r < r1; r++) {
        double ss = 0;
        if (j->x->dtype == ONYX_DOUBLE) {
            const double *x = (const double *)j->x->data + r * n;
            for (int64_t k = 0; k < n; k++) ss += x[k] * x[k];
        } else {
            float buf[CH];
            for (int64_t k0 = 0; k0 < n; k0 += CH) {
                int64_t m = n - k0 < CH ? n - k0 : CH;
                cnlp_load(j->x->data, j->x->dtype, r * n + k0, buf, m);
                float acc = 0;
                SIMD_SUM(acc) for (int64_t k = 0; k < m; k++) acc += buf[k] * buf[k];
                ss += acc;
            }
        }
        double inv = 1 / sqrt(ss / (double)n + j->eps);
        if (j->inv) {
            if (j->inv->dtype == ONYX_DOUBLE)
                ((double *)j->inv->data)[r] = inv;
            else
                ((float *)j->inv->data)[r] = (float)inv;
        }
        if (j->x->dtype == ONYX_DOUBLE && j->y->dtype == ONYX_DOUBLE) {
            const double *x = (const double *)j->x->data + r * n;
            double *y = (double *)j->y->data + r * n;
            for (int64_t k = 0; k < n; k++) y[k] = x[k] * inv * j->sd[k];
            continue;
        }
        float buf[CH], fi = (float)inv;
        for (int64_t k0 = 0; k0 < n; k0 += CH) {
            int64_t m = n - k0 < CH ? n - k0 : CH;
            cnlp_load(j->x->data, j->x->dtype, r * n + k0, buf, m);
            const float *sf = j->sf + k0;
            CPU_SIMD for (int64_t k = 0; k < m; k++) buf[k] = buf[k] * fi * sf[k];
            cnlp_store(j->y->data, j->y->dtype, r * n + k0, buf, m);
        }
    }
}

onyx_status cpu_cnlp_simplified_layernorm(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *scale = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0), *inv = kernel_output(c, 1);
    if (x->rank < 1) return onyx_error(ONYX_ERR_SHAPE, "X is a scalar, expected rank >= 1");
    int axis;
    TRY(kernel_axis(c->params, x->rank, &axis));
    int64_t rows = 1, cols = 1;
    for (int i = 0; i < x->rank; i++) {
        if (i < axis)
            rows *= x->dims[i];
        else
            cols *= x->dims[i];
    }
    if (scale->rank > x->rank - axis)
        return onyx_error(ONYX_ERR_SHAPE, "scale has rank %d, more than the %d normalized axes",
                          scale->rank, x->rank - axis);
    if (inv && inv->numel != rows)
        return onyx_error(ONYX_ERR_SHAPE, "inv_std_var has %lld elements, expected %lld",
                          (long long)inv->numel, (long long)rows);
    char *buf;
    size_t nf = up64((size_t)(cols > 0 ? cols : 1) * sizeof(float));
    TRY(kernel_scratch(c, nf + (size_t)(cols > 0 ? cols : 1) * sizeof(double), (void **)&buf));
    float *sf = (float *)buf;
    double *sd = (double *)(buf + nf);
    /* the scale element under each normalized column (an odometer over the normalized axes) */
    int64_t idx[ONYX_MAX_RANK] = {0}, st[ONYX_MAX_RANK], acc = 1, off = 0;
    for (int d = x->rank - 1; d >= axis; d--) {
        int k = d - (x->rank - scale->rank);
        int64_t sd = k >= 0 ? scale->dims[k] : 1;
        if (sd != 1 && sd != x->dims[d]) {
            char a[160], b[160];
            return onyx_error(ONYX_ERR_SHAPE, "scale %s does not broadcast to X %s",
                              shape_str(scale->rank, scale->dims, a, sizeof a),
                              shape_str(x->rank, x->dims, b, sizeof b));
        }
        st[d] = sd == 1 ? 0 : acc;
        acc *= sd;
    }
    for (int64_t k = 0; k < cols; k++) {
        sd[k] = cnlp_get(scale, off);
        sf[k] = (float)sd[k];
        for (int d = x->rank - 1; d >= axis; d--) {
            off += st[d];
            if (++idx[d] < x->dims[d]) break;
            off -= st[d] * x->dims[d];
            idx[d] = 0;
        }
    }
    rms_job j = {.x = x,
                 .scale = scale,
                 .y = y,
                 .inv = inv,
                 .cols = cols,
                 .sf = sf,
                 .sd = sd,
                 .eps = attr_float(c->node, "epsilon", 1e-5f)};
    if (x->numel == 0) return ONYX_OK;
    parallel_for(rows, cnlp_grain(cols, GRAIN), rms_rows, &j);
    return ONYX_OK;
}

/* ---------------------------------------------------------------- EmbedLayerNormalization */

typedef struct eln_job {
    const int32_t *ids, *seg, *pos_ids;
    bool pos_bcast; /* position_ids [1, S] */
    const tensor *word, *pos, *segemb, *gamma, *beta;
    tensor *y, *esum;
    int64_t seq, h;
    double eps;
    float *rowbuf;   /* h floats per row (the run's scratch) */
    _Atomic int bad; /* 1 + the first kind of out-of-range id */
} eln_job;

static void eln_rows(void *ctx, int64_t r0, int64_t r1) {
    eln_job *j = ctx;
    const int64_t h = j->h;
    float g[256], b[256];
    for (int64_t r = r0; r < r1; r++) {
        float *row = j->rowbuf + r * h;
        int64_t s = r % j->seq;
        int64_t wi = j->ids[r], pi = j->pos_ids ? j->pos_ids[j->pos_bcast ? s : r] : s;
        int64_t si = j->seg ? j->seg[r] : 0;
        if (wi < 0 || wi >= j->word->dims[0] || pi < 0 || pi >= j->pos->dims[0] ||
            (j->segemb && (si < 0 || si >= j->segemb->dims[0]))) {
            int none = 0;
            atomic_compare_exchange_strong(&j->bad, &none, 1);
            memset(row, 0, (size_t)h * sizeof *row);
            continue;
        }
        cnlp_load(j->word->data, j->word->dtype, wi * h, row, h);
        for (int64_t k0 = 0; k0 < h; k0 += 256) {
            int64_t m = h - k0 < 256 ? h - k0 : 256;
            cnlp_load(j->pos->data, j->pos->dtype, pi * h + k0, g, m);
            for (int64_t k = 0; k < m; k++) row[k0 + k] += g[k];
            if (j->segemb) {
                cnlp_load(j->segemb->data, j->segemb->dtype, si * h + k0, g, m);
                for (int64_t k = 0; k < m; k++) row[k0 + k] += g[k];
            }
        }
        if (j->esum) cnlp_store(j->esum->data, j->esum->dtype, r * h, row, h);
        float acc = 0, var = 0;
        SIMD_SUM(acc) for (int64_t k = 0; k < h; k++) acc += row[k];
        float mean = acc / (float)h;
        SIMD_SUM(var) for (int64_t k = 0; k < h; k++) var += (row[k] - mean) * (row[k] - mean);
        float inv = 1 / sqrtf(var / (float)h + (float)j->eps);
        for (int64_t k0 = 0; k0 < h; k0 += 256) {
            int64_t m = h - k0 < 256 ? h - k0 : 256;
            cnlp_load(j->gamma->data, j->gamma->dtype, k0, g, m);
            cnlp_load(j->beta->data, j->beta->dtype, k0, b, m);
            for (int64_t k = 0; k < m; k++) row[k0 + k] = (row[k0 + k] - mean) * inv * g[k] + b[k];
        }
        cnlp_store(j->y->data, j->y->dtype, r * h, row, h);
    }
}

onyx_status cpu_cnlp_embed_layernorm(const kernel_call *c) {
    const tensor *ids = kernel_input(c, 0), *seg = kernel_input(c, 1), *word = kernel_input(c, 2),
                 *pos = kernel_input(c, 3), *segemb = kernel_input(c, 4),
                 *gamma = kernel_input(c, 5), *beta = kernel_input(c, 6),
                 *mask = kernel_input(c, 7), *pids = kernel_input(c, 8);
    tensor *y = kernel_output(c, 0), *mi = kernel_output(c, 1), *esum = kernel_output(c, 2);
    if (ids->rank != 2 || ids->dtype != ONYX_INT32 || word->rank != 2 || pos->rank != 2 ||
        (segemb && segemb->rank != 2))
        return onyx_error(ONYX_ERR_SHAPE, "input_ids must be int32 [batch, seq] and the "
                                          "embeddings 2-D");
    int64_t batch = ids->dims[0], seq = ids->dims[1], h = word->dims[1], rows = batch * seq;
    if (pos->dims[1] != h || (segemb && segemb->dims[1] != h) || gamma->numel != h ||
        beta->numel != h)
        return onyx_error(ONYX_ERR_SHAPE,
                          "embeddings, gamma and beta must share the hidden size "
                          "%lld",
                          (long long)h);
    if ((seg && seg->numel != rows) || (mask && mask->numel != rows))
        return onyx_error(ONYX_ERR_SHAPE, "segment_ids and mask must have shape [%lld, %lld]",
                          (long long)batch, (long long)seq);
    eln_job j = {.ids = ids->data,
                 .seg = seg && segemb ? seg->data : NULL,
                 .word = word,
                 .pos = pos,
                 .segemb = seg ? segemb : NULL,
                 .gamma = gamma,
                 .beta = beta,
                 .y = y,
                 .esum = esum,
                 .seq = seq,
                 .h = h,
                 .eps = attr_float(c->node, "epsilon", 1e-12f)};
    if (pids) {
        if (pids->numel != rows && pids->numel != seq)
            return onyx_error(ONYX_ERR_SHAPE,
                              "position_ids must have shape [%lld, %lld] or "
                              "[1, %lld]",
                              (long long)batch, (long long)seq, (long long)seq);
        j.pos_ids = pids->data;
        j.pos_bcast = pids->numel != rows;
    } else if (seq > pos->dims[0]) {
        return onyx_error(ONYX_ERR_SHAPE,
                          "sequence length %lld exceeds the %lld positions of "
                          "position_embedding",
                          (long long)seq, (long long)pos->dims[0]);
    }
    atomic_init(&j.bad, 0);
    if (mi) {
        int32_t *m = mi->data;
        for (int64_t b = 0; b < batch; b++) {
            int32_t n = 0;
            if (mask)
                for (int64_t s = 0; s < seq; s++)
                    n += ((const int32_t *)mask->data)[b * seq + s] == 1;
            m[b] = n;
        }
    }
    if (rows == 0 || h == 0) return ONYX_OK;
    TRY(kernel_scratch(c, (size_t)(rows * h) * sizeof(float), (void **)&j.rowbuf));
    parallel_for(rows, cnlp_grain(h * 4, GRAIN), eln_rows, &j);
    if (atomic_load(&j.bad))
        return onyx_error(ONYX_ERR_RUNTIME, "an input, segment or position id is out of the "
                                            "range of its embedding table");
    return ONYX_OK;
}
