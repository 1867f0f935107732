/* CPU kernels of InstanceNormalization, GroupNormalization, LayerNormalization and
 * RMSNormalization: statistics per independent row (an instance's group of channels, or the
 * trailing axes) in two passes (NORM_SUM: short blocks in the compute type, their sums in
 * double), then one affine pass; rows run in parallel. Scale/bias of LayerNorm/RMSNorm that
 * broadcast inside a row, or types that differ, take a slower general path. */
#include <math.h>

#include "core/parallel.h"
#include "geometry/broadcast.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/norm/common.h"

#define GRAIN 16384

/* Rounds a statistic to the stash type's precision (stage one's computation type). */
static inline double stash_round(int stash, double v) {
    if (stash == ONYX_FLOAT) return (float)v;
    if (stash == ONYX_BFLOAT16) return cpu_bf16_to_float(cpu_float_to_bf16((float)v));
    return v;
}

/* ---- Instance / Group normalization: x as [N, G, cpg, inner]; scale per channel or group */

typedef struct gn_plan {
    const void *x, *scale, *bias;
    void *y;
    int64_t groups, cpg, inner; /* groups per instance, channels per group, spatial size */
    bool per_channel;
    int stash;
    double eps;
} gn_plan;

#define DEFINE_GN(N, T, F, LD, ST)                                                                 \
    static void N##_gn(void *ctx, int64_t b, int64_t e) {                                          \
        const gn_plan *p = ctx;                                                                    \
        const int64_t in = p->inner, len = p->cpg * in;                                            \
        const T *sc = p->scale, *bi = p->bias;                                                     \
        for (int64_t t = b; t < e; t++) {                                                          \
            const T *x = (const T *)p->x + t * len;                                                \
            T *y = (T *)p->y + t * len;                                                            \
            double s, v;                                                                           \
            NORM_SUM(F, LD, x, len, s);                                                            \
            double m = len ? s / (double)len : 0;                                                  \
            NORM_SUM_SQDIFF(F, LD, x, len, m, v);                                                  \
            m = stash_round(p->stash, m);                                                          \
            double inv = stash_round(p->stash, 1 / sqrt((len ? v / (double)len : 0) + p->eps));    \
            int64_t g = t % p->groups;                                                             \
            for (int64_t k = 0; k < p->cpg; k++) {                                                 \
                int64_t pi = p->per_channel ? g * p->cpg + k : g;                                  \
                double a = (double)LD(sc[pi]) * inv;                                               \
                F fa = (F)a, fb = (F)((double)LD(bi[pi]) - m * a);                                 \
                const T *xk = x + k * in;                                                          \
                T *yk = y + k * in;                                                                \
                CPU_SIMD for (int64_t j = 0; j < in; j++) yk[j] = ST(LD(xk[j]) * fa + fb);         \
            }                                                                                      \
        }                                                                                          \
    }
NORM_FOR_FLOATS(DEFINE_GN)

typedef void (*task_fn)(void *, int64_t, int64_t);
#define FN_GN(N, T, F, LD, ST) N##_gn,
static const task_fn gn_fns[] = {NORM_FOR_FLOATS(FN_GN)};

static onyx_status gn_run(const kernel_call *c, int64_t groups, bool per_channel, int stash) {
    const tensor *x = kernel_input(c, 0), *scale = kernel_input(c, 1), *bias = kernel_input(c, 2);
    tensor *y = kernel_output(c, 0);
    int fi = norm_float_index(x->dtype);
    if (fi < 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a float type",
                          onyx_dtype_name(x->dtype));
    if (x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 2", x->rank);
    int64_t ch = x->dims[1];
    if (groups <= 0 || ch % groups != 0)
        return onyx_error(ONYX_ERR_SHAPE, "C = %lld is not a multiple of num_groups = %lld",
                          (long long)ch, (long long)groups);
    int64_t want = per_channel ? ch : groups;
    for (int i = 1; i < 3; i++) {
        const tensor *t = kernel_input(c, i);
        if (!t || t->dtype != x->dtype || t->numel != want)
            return onyx_error(ONYX_ERR_SHAPE, "input %d: expected %lld values of type %s", i,
                              (long long)want, onyx_dtype_name(x->dtype));
    }
    gn_plan p = {.x = x->data,
                 .scale = scale->data,
                 .bias = bias->data,
                 .y = y->data,
                 .groups = groups,
                 .cpg = ch / groups,
                 .inner = 1,
                 .per_channel = per_channel,
                 .stash = stash,
                 .eps = attr_float(c->node, "epsilon", 1e-5f)};
    for (int d = 2; d < x->rank; d++) p.inner *= x->dims[d];
    if (x->numel == 0) return ONYX_OK;
    int64_t rows = x->dims[0] * groups;
    parallel_for(rows, GRAIN / (p.cpg * p.inner + 1) + 1, gn_fns[fi], &p);
    return ONYX_OK;
}

onyx_status cpu_instancenorm(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    if (x->rank >= 2 && x->dims[1] == 0) return ONYX_OK; /* no channels: nothing to normalize */
    return gn_run(c, x->rank >= 2 ? x->dims[1] : 0, true, ONYX_DOUBLE);
}

onyx_status cpu_groupnorm(const kernel_call *c) {
    int v = c->node->version;
    int stash = v >= 21 ? (int)attr_int(c->node, "stash_type", 1) : ONYX_DOUBLE;
    return gn_run(c, attr_int(c->node, "num_groups", 0), v >= 21, stash);
}

/* ---- Layer / RMS normalization: x as [rows, cols], cols = the axes from `axis` on */

/* How a scale/bias tensor maps onto x's elements. */
typedef struct ln_param {
    const tensor *t; /* NULL: absent */
    bool contiguous; /* element (r, j) is t[(r % rows) * cols + j] */
    int64_t rows;
    int64_t stride[ONYX_MAX_RANK]; /* general path: per x axis, 0 where t broadcasts */
} ln_param;

typedef struct ln_plan {
    const tensor *x;
    tensor *y, *mean, *inv;
    ln_param w, b;
    int64_t cols;
    int axis, stash;
    bool rms;
    double eps;
} ln_plan;

static onyx_status ln_param_init(ln_param *p, const tensor *t, const tensor *x, int axis,
                                 int input) {
    p->t = t;
    if (!t) return ONYX_OK;
    if (norm_float_index(t->dtype) < 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input %d has type %s, expected a float type",
                          input, onyx_dtype_name(t->dtype));
    geom_msg m;
    if (geom_broadcast_strides(t->rank, t->dims, x->rank, x->dims, p->stride, &m) != ONYX_OK)
        return onyx_error(ONYX_ERR_SHAPE, "input %d: %s", input, m.text);
    int off = x->rank - t->rank, lead = 0;
    while (lead < t->rank && t->dims[lead] == 1) lead++;
    bool exact = true;
    for (int k = lead; k < t->rank; k++)
        if (t->dims[k] != x->dims[k + off]) exact = false;
    /* the tensor (past its leading 1s) must cover every normalized axis and broadcast nowhere */
    p->contiguous = exact && off + lead <= axis;
    int64_t cols = 1;
    for (int d = axis; d < x->rank; d++) cols *= x->dims[d];
    p->rows = cols ? t->numel / cols : 1;
    if (p->rows == 0) p->rows = 1;
    return ONYX_OK;
}

/* A row's mean and inverse deviation as the row is normalized with them: in double, each output
 * element rounded once (float's stash_type asks at least float's precision; computing the
 * normalization in float rounded each element four to five times, 1.7 ulp on average where
 * onnxruntime's kernel errs by 1.1), but as stash_type rounds them where that is coarser than
 * float (bfloat16). The Mean and InvStdDev outputs are rounded as stash_type says. */
static inline double ln_stash(const ln_plan *p, double v) {
    return p->stash == ONYX_BFLOAT16 ? stash_round(p->stash, v) : v;
}

#define DEFINE_LN(N, T, F, LD, ST)                                                                 \
    CPU_CLONES static void N##_ln(void *ctx, int64_t b, int64_t e) {                               \
        const ln_plan *p = ctx;                                                                    \
        const int64_t cols = p->cols;                                                              \
        for (int64_t r = b; r < e; r++) {                                                          \
            const T *x = (const T *)p->x->data + r * cols;                                         \
            T *y = (T *)p->y->data + r * cols;                                                     \
            double s, v, m = 0;                                                                    \
            if (!p->rms) {                                                                         \
                NORM_SUM(double, LD, x, cols, s);                                                  \
                m = ln_stash(p, s / (double)cols);                                                 \
            }                                                                                      \
            NORM_SUM_SQDIFF(double, LD, x, cols, m, v);                                            \
            double inv = ln_stash(p, 1 / sqrt(v / (double)cols + p->eps));                         \
            if (p->mean) norm_set(p->mean, r, stash_round(p->stash, m));                           \
            if (p->inv) norm_set(p->inv, r, stash_round(p->stash, inv));                           \
            const T *w = (const T *)p->w.t->data + (r % p->w.rows) * cols;                         \
            if (p->b.t) {                                                                          \
                const T *bb = (const T *)p->b.t->data + (r % p->b.rows) * cols;                    \
                CPU_SIMD for (int64_t j = 0; j < cols; j++) y[j] =                                 \
                    ST((F)(((double)LD(x[j]) - m) * inv * LD(w[j]) + LD(bb[j])));                  \
            } else {                                                                               \
                CPU_SIMD for (int64_t j = 0; j < cols; j++) y[j] =                                 \
                    ST((F)(((double)LD(x[j]) - m) * inv * LD(w[j])));                              \
            }                                                                                      \
        }                                                                                          \
    }
NORM_FOR_FLOATS(DEFINE_LN)

#define FN_LN(N, T, F, LD, ST) N##_ln,
static const task_fn ln_fns[] = {NORM_FOR_FLOATS(FN_LN)};

/* Any types, any broadcast of scale/bias: element by element through double. */
static void ln_general(void *ctx, int64_t b, int64_t e) {
    const ln_plan *p = ctx;
    const tensor *x = p->x;
    const int64_t cols = p->cols;
    for (int64_t r = b; r < e; r++) {
        double s = 0, v = 0, m = 0;
        if (!p->rms) {
            for (int64_t j = 0; j < cols; j++) s += norm_get(x, r * cols + j);
            m = ln_stash(p, s / (double)cols);
        }
        for (int64_t j = 0; j < cols; j++) {
            double d = norm_get(x, r * cols + j) - m;
            v += d * d;
        }
        double inv = ln_stash(p, 1 / sqrt(v / (double)cols + p->eps));
        if (p->mean) norm_set(p->mean, r, stash_round(p->stash, m));
        if (p->inv) norm_set(p->inv, r, stash_round(p->stash, inv));
        /* offsets of the row's first element, then an odometer over the normalized axes */
        int64_t idx[ONYX_MAX_RANK] = {0}, wo = 0, bo = 0, rem = r;
        for (int d = p->axis - 1; d >= 0; d--) {
            int64_t cd = rem % x->dims[d];
            rem /= x->dims[d];
            wo += cd * p->w.stride[d];
            bo += cd * p->b.stride[d];
        }
        for (int64_t j = 0; j < cols; j++) {
            double val = (norm_get(x, r * cols + j) - m) * inv * norm_get(p->w.t, wo);
            if (p->b.t) val += norm_get(p->b.t, bo);
            norm_set(p->y, r * cols + j, val);
            for (int d = x->rank - 1; d >= p->axis; d--) {
                wo += p->w.stride[d];
                bo += p->b.stride[d];
                if (++idx[d] < x->dims[d]) break;
                wo -= p->w.stride[d] * x->dims[d];
                bo -= p->b.stride[d] * x->dims[d];
                idx[d] = 0;
            }
        }
    }
}

static onyx_status ln_run(const kernel_call *c, bool rms) {
    const tensor *x = kernel_input(c, 0);
    if (norm_float_index(x->dtype) < 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a float type",
                          onyx_dtype_name(x->dtype));
    if (x->rank < 1) return onyx_error(ONYX_ERR_SHAPE, "input 0 is a scalar, expected rank >= 1");
    ln_plan p = {.x = x,
                 .y = kernel_output(c, 0),
                 .mean = rms ? NULL : kernel_output(c, 1),
                 .inv = rms ? NULL : kernel_output(c, 2),
                 .rms = rms,
                 .stash = (int)attr_int(c->node, "stash_type", 1),
                 .eps = attr_float(c->node, "epsilon", 1e-5f)};
    TRY(kernel_axis(c->params, x->rank, &p.axis));
    if (!kernel_input(c, 1)) return onyx_error(ONYX_ERR_SHAPE, "input 1 (scale) is missing");
    TRY(ln_param_init(&p.w, kernel_input(c, 1), x, p.axis, 1));
    TRY(ln_param_init(&p.b, rms ? NULL : kernel_input(c, 2), x, p.axis, 2));
    int64_t rows = 1;
    p.cols = 1;
    for (int d = 0; d < x->rank; d++) {
        if (d < p.axis)
            rows *= x->dims[d];
        else
            p.cols *= x->dims[d];
    }
    for (int o = 1; o < 3; o++) {
        tensor *t = o == 1 ? p.mean : p.inv;
        if (t && (t->numel != rows || norm_float_index(t->dtype) < 0))
            return onyx_error(ONYX_ERR_SHAPE, "output %d has %lld elements, expected %lld", o,
                              (long long)t->numel, (long long)rows);
    }
    if (x->numel == 0) return ONYX_OK;
    bool fast = p.w.contiguous && p.w.t->dtype == x->dtype && p.y->dtype == x->dtype &&
                (!p.b.t || (p.b.contiguous && p.b.t->dtype == x->dtype));
    task_fn fn = fast ? ln_fns[norm_float_index(x->dtype)] : ln_general;
    parallel_for(rows, GRAIN / (p.cols * (fast ? 1 : 8)) + 1, fn, &p);
    return ONYX_OK;
}

onyx_status cpu_layernorm(const kernel_call *c) { return ln_run(c, false); }
onyx_status cpu_rmsnorm(const kernel_call *c) { return ln_run(c, true); }
