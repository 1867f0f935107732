/* Resize and Upsample on the CPU: per-axis tables of source indices and weights (built once in
 * prepare when shapes and scales are static), applied one axis at a time. Floats compute in
 * float, doubles and integers in double (integers round half to even and saturate at the end). */
#include "core/parallel.h"
#include "ops/signal/signal_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct rz_axis {
    int axis;
    int taps;
    int64_t n_out;
    int64_t *idx;      /* [n_out * taps], clamped into the input */
    double *w;         /* [n_out * taps] */
    float *wf;         /* the same weights as float */
    uint8_t *extrap;   /* [n_out]: 1 where tf_crop_and_resize falls outside the input */
} rz_axis;

/* The tables of one plan. The prepared state's are read by concurrent runs; the two ping-pong
 * buffers a run writes come from its scratch (kernel_scratch). */
typedef struct rz_state {
    bool ready;
    bool in_arena;     /* tables carved from a run's scratch: nothing to free */
    ops_resize_plan plan;
    int n_axes;
    rz_axis ax[ONYX_MAX_RANK];
    size_t work_size;  /* bytes of each of the two ping-pong buffers */
} rz_state;

/* Where tables go: the heap (arena NULL) or a bump region of the run's scratch. */
typedef struct rz_arena {
    char *base;
    size_t used, cap;
} rz_arena;

#define RZ_ALIGN 64

static size_t rz_round(size_t n) { return (n + RZ_ALIGN - 1) / RZ_ALIGN * RZ_ALIGN; }

static void *rz_alloc(rz_arena *a, size_t n) {
    if (!a) return malloc(n);
    n = rz_round(n);
    if (a->cap - a->used < n) return NULL;
    void *p = a->base + a->used;
    a->used += n;
    return p;
}

static void rz_free(rz_state *s) {
    if (!s) return;
    if (!s->in_arena)
        for (int i = 0; i < s->n_axes; i++) {
            free(s->ax[i].idx);
            free(s->ax[i].w);
            free(s->ax[i].wf);
            free(s->ax[i].extrap);
        }
    memset(s, 0, sizeof *s);
}

static bool work_is_double(onyx_dtype d) {
    return d != ONYX_FLOAT && d != ONYX_FLOAT16 && d != ONYX_BFLOAT16;
}

/* Source coordinate of output index o along one axis, as the ONNX reference computes it (the
 * "output width" in the formulas is scale * input width, not the rounded size). */
static double source_coord(const ops_resize_plan *p, int a, double o, bool *extrap) {
    double s = p->scale[a], in = (double)p->in_dims[a];
    double ow = s * in;
    *extrap = false;
    switch (p->coord) {
    case OPS_RZ_ALIGN_CORNERS: return ow == 1 ? 0.0 : o * (in - 1) / (ow - 1);
    case OPS_RZ_ASYMMETRIC: return o / s;
    case OPS_RZ_TF_HALF_PIXEL_FOR_NN: return (o + 0.5) / s;
    case OPS_RZ_TF_CROP_AND_RESIZE: {
        double lo = p->roi_lo[a], hi = p->roi_hi[a], x;
        if (ow == 1) x = (hi - lo) * (in - 1) / 2;
        else x = o * (hi - lo) * (in - 1) / (ow - 1);
        x += lo * (in - 1);
        *extrap = x < 0 || x > in - 1;
        return x;
    }
    case OPS_RZ_PYTORCH_HALF_PIXEL: return ow == 1 ? -0.5 : (o + 0.5) / s - 0.5;
    case OPS_RZ_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)p->out_dims[a] / ow;
        double offset = in / 2 * (1 - adjustment);
        return offset + (o + 0.5) / s - 0.5;
    }
    default: return (o + 0.5) / s - 0.5;
    }
}

static double cubic_w(double x, double A) {
    x = fabs(x);
    if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0.0;
}

/* Taps of one axis: count and the offset of the first from the left neighbour; false when an
 * antialiased filter would be wider than OPS_RZ_MAX_TAPS (checked in double, before converting
 * its width to an integer: the scale may be 0 or subnormal). */
static bool tap_shape(const ops_resize_plan *p, int a, int *taps, int64_t *start) {
    *taps = 1;
    *start = 0;
    if (p->mode == OPS_RZ_NEAREST) return true;
    double reach = p->mode == OPS_RZ_LINEAR ? 1 : 2;
    if (p->antialias && p->scale[a] < 1) {
        if (p->out_dims[a] == 0) return true; /* nothing is computed along this axis */
        reach /= p->scale[a];
        if (!(reach < OPS_RZ_MAX_TAPS / 2 - 1)) return false;
    }
    *start = (int64_t)floor(-reach) + 1;
    *taps = (int)(2 - 2 * *start);
    return true;
}

static onyx_status build_axis(const ops_resize_plan *p, int a, rz_axis *t, rz_arena *arena) {
    int64_t start;
    int taps;
    if (!tap_shape(p, a, &taps, &start) || taps < 1 || taps > OPS_RZ_MAX_TAPS)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "scale %g on axis %d is too small for "
                          "antialias: its filter needs more than %d taps", p->scale[a], a,
                          OPS_RZ_MAX_TAPS);
    int64_t W = p->in_dims[a], n_out = p->out_dims[a];
    t->axis = a;
    t->taps = taps;
    t->n_out = n_out;
    size_t cells = (size_t)n_out * (size_t)taps;
    if (n_out > 0 && cells / (size_t)n_out != (size_t)taps) return onyx_oom("resize tables");
    if (cells > SIZE_MAX / 16) return onyx_oom("resize tables");
    t->idx = rz_alloc(arena, (cells ? cells : 1) * sizeof *t->idx);
    t->w = rz_alloc(arena, (cells ? cells : 1) * sizeof *t->w);
    t->wf = rz_alloc(arena, (cells ? cells : 1) * sizeof *t->wf);
    t->extrap = rz_alloc(arena, n_out ? (size_t)n_out : 1); /* every entry is written below */
    if (!t->idx || !t->w || !t->wf || !t->extrap) return onyx_oom("resize tables");
    double sa = p->scale[a] < 1 ? p->scale[a] : 1;
    for (int64_t o = 0; o < n_out; o++) {
        bool ex;
        double x = source_coord(p, a, (double)o, &ex);
        t->extrap[o] = ex;
        /* the ratio lies in (0, 1]: an integer coordinate counts as 1 past its left neighbour */
        double xf = floor(x), ratio = x - xf;
        if (ratio == 0) {
            ratio = 1;
            xf -= 1;
        }
        if (!(fabs(xf) < 4e15)) xf = xf < 0 ? -4e15 : 4e15; /* NaN and huge coords: clamp */
        int64_t left = (int64_t)xf;
        int64_t *ix = t->idx + o * taps;
        double *w = t->w + o * taps;
        if (p->mode == OPS_RZ_NEAREST) {
            int nm = p->nearest;
            if (nm == OPS_RZ_SIMPLE) nm = p->scale[a] < 1 ? OPS_RZ_CEIL : OPS_RZ_FLOOR;
            bool right;
            if (ratio == 1) right = true;
            else if (nm == OPS_RZ_PREFER_FLOOR) right = ratio > 0.5;
            else if (nm == OPS_RZ_PREFER_CEIL) right = ratio >= 0.5;
            else right = nm == OPS_RZ_CEIL;
            ix[0] = left + (right ? 1 : 0);
            w[0] = 1;
        } else {
            double sum = 0;
            for (int k = 0; k < taps; k++) {
                ix[k] = left + start + k;
                double d = (double)(start + k) - ratio; /* distance from x to tap k */
                double v;
                if (p->mode == OPS_RZ_LINEAR) {
                    v = p->antialias ? 1 - fabs(d * sa) : 1 - fabs(d);
                    if (v < 0) v = 0;
                } else {
                    v = p->antialias ? cubic_w(d * sa, p->cubic_a) : cubic_w(d, p->cubic_a);
                }
                w[k] = v;
                sum += v;
            }
            if (p->antialias && sum != 0)
                for (int k = 0; k < taps; k++) w[k] /= sum;
        }
        if (p->exclude_outside) {
            double sum = 0;
            for (int k = 0; k < taps; k++) {
                if (ix[k] < 0 || ix[k] >= W) w[k] = 0;
                sum += w[k];
            }
            if (sum == 0) sum = 1;
            for (int k = 0; k < taps; k++) w[k] /= sum;
        }
        for (int k = 0; k < taps; k++) {
            ix[k] = ix[k] < 0 ? 0 : ix[k] >= W ? W - 1 : ix[k];
            t->wf[o * taps + k] = (float)w[k];
        }
    }
    return ONYX_OK;
}

/* Bytes a run needs in its scratch for the tables of plan p (arena) and the two ping-pong buffers
 * (each at most the product over axes of the larger of input and output dims); false when they
 * overflow. */
static bool rz_run_bytes(const ops_resize_plan *p, onyx_dtype dt, size_t *tables, size_t *work) {
    size_t t = 0, most = 1;
    for (int a = 0; a < p->rank; a++) {
        int64_t d = p->in_dims[a] > p->out_dims[a] ? p->in_dims[a] : p->out_dims[a];
        if (d < 0 || (d > 0 && most > SIZE_MAX / 64 / (size_t)d)) return false;
        most *= d > 0 ? (size_t)d : 1;
        if (!p->active[a]) continue;
        int64_t start;
        int taps;
        size_t n = p->out_dims[a] > 0 ? (size_t)p->out_dims[a] : 1;
        if (!tap_shape(p, a, &taps, &start) || taps < 1 || taps > OPS_RZ_MAX_TAPS || n > (SIZE_MAX / 64) / (size_t)taps) return false;
        size_t cells = n * (size_t)taps;
        size_t add = rz_round(cells * sizeof(int64_t)) + rz_round(cells * sizeof(double)) +
                     rz_round(cells * sizeof(float)) + rz_round(n);
        if (t > SIZE_MAX / 4 - add) return false;
        t += add;
    }
    size_t es = work_is_double(dt) ? sizeof(double) : sizeof(float);
    *tables = t;
    *work = rz_round(most * es);
    return *work <= SIZE_MAX / 4 - t;
}

/* Builds the tables for a plan (on the heap, or in `arena`); axes that shrink most go first so
 * that later passes touch less data. Of axes that scale alike, the pass over the innermost axis
 * (it gathers element by element, where the others sweep contiguous rows) goes where the tensor
 * is smaller: first when they grow it, last when they shrink it. */
static onyx_status rz_build(rz_state *s, const ops_resize_plan *p, onyx_dtype dt,
                            rz_arena *arena) {
    onyx_status st = ONYX_OK;
    memset(s, 0, sizeof *s);
    s->in_arena = arena != NULL;
    s->plan = *p;
    int order[ONYX_MAX_RANK], n = 0;
    for (int a = 0; a < p->rank; a++)
        if (p->active[a]) order[n++] = a;
    for (int i = 1; i < n; i++) /* insertion sort by out/in ratio */
        for (int j = i; j > 0; j--) {
            int x = order[j], y = order[j - 1];
            double rx = (double)p->out_dims[x] / (double)(p->in_dims[x] ? p->in_dims[x] : 1);
            double ry = (double)p->out_dims[y] / (double)(p->in_dims[y] ? p->in_dims[y] : 1);
            if (rx > ry || (rx == ry && (rx > 1 ? x < y : x > y))) break;
            order[j] = y;
            order[j - 1] = x;
        }
    int64_t cur[ONYX_MAX_RANK], most = 1, numel;
    memcpy(cur, p->in_dims, sizeof cur);
    if (!shape_numel(p->rank, cur, &most)) return onyx_error(ONYX_ERR_SHAPE, "input too large");
    for (int i = 0; i < n; i++) {
        s->n_axes = i + 1;
        CHECK(build_axis(p, order[i], &s->ax[i], arena));
        cur[order[i]] = p->out_dims[order[i]];
        if (!shape_numel(p->rank, cur, &numel)) {
            st = onyx_error(ONYX_ERR_SHAPE, "resized tensor too large");
            goto done;
        }
        if (numel > most) most = numel;
    }
    size_t es = work_is_double(dt) ? sizeof(double) : sizeof(float);
    if ((uint64_t)most > SIZE_MAX / es / 2) {
        st = onyx_oom("resize buffers");
        goto done;
    }
    s->work_size = rz_round((size_t)most * es);
    s->ready = true;
done:
    if (st != ONYX_OK) rz_free(s);
    return st;
}

/* ---- element conversion into and out of the work type */

typedef struct conv_job {
    const tensor *t;
    void *work;
} conv_job;

#define LOAD_CASES(X)                                                                              \
    X(ONYX_UINT8, uint8_t) X(ONYX_UINT16, uint16_t) X(ONYX_UINT32, uint32_t)                       \
    X(ONYX_UINT64, uint64_t) X(ONYX_INT8, int8_t) X(ONYX_INT16, int16_t) X(ONYX_INT32, int32_t)    \
    X(ONYX_INT64, int64_t)

static void load_range(void *ctx, int64_t b, int64_t e) {
    const conv_job *j = ctx;
    const void *src = j->t->data;
    switch (j->t->dtype) {
    case ONYX_FLOAT16:
        for (int64_t i = b; i < e; i++)
            ((float *)j->work)[i] = fp16_to_float(((const uint16_t *)src)[i]);
        break;
    case ONYX_BFLOAT16:
        for (int64_t i = b; i < e; i++)
            ((float *)j->work)[i] = bf16_to_float(((const uint16_t *)src)[i]);
        break;
#define LOAD(D, T)                                                                                 \
    case D:                                                                                        \
        for (int64_t i = b; i < e; i++) ((double *)j->work)[i] = (double)((const T *)src)[i];      \
        break;
        LOAD_CASES(LOAD)
#undef LOAD
    default: break;
    }
}

/* Round half to even and saturate, as the reference casts its float64 result to integers. */
#define STORE_INT(T, LO, HI)                                                                       \
    for (int64_t i = b; i < e; i++) {                                                              \
        double v = nearbyint(((const double *)j->work)[i]);                                        \
        ((T *)dst)[i] = v != v ? 0 : v <= (double)(LO) ? (T)(LO) : v >= (double)(HI) ? (T)(HI) : (T)v; \
    }

static void store_range(void *ctx, int64_t b, int64_t e) {
    const conv_job *j = ctx;
    void *dst = j->t->data;
    switch (j->t->dtype) {
    case ONYX_FLOAT16:
        for (int64_t i = b; i < e; i++)
            ((uint16_t *)dst)[i] = float_to_fp16(((const float *)j->work)[i]);
        break;
    case ONYX_BFLOAT16:
        for (int64_t i = b; i < e; i++)
            ((uint16_t *)dst)[i] = float_to_bf16(((const float *)j->work)[i]);
        break;
    case ONYX_UINT8: STORE_INT(uint8_t, 0, UINT8_MAX) break;
    case ONYX_UINT16: STORE_INT(uint16_t, 0, UINT16_MAX) break;
    case ONYX_UINT32: STORE_INT(uint32_t, 0, UINT32_MAX) break;
    case ONYX_UINT64: STORE_INT(uint64_t, 0, UINT64_MAX) break;
    case ONYX_INT8: STORE_INT(int8_t, INT8_MIN, INT8_MAX) break;
    case ONYX_INT16: STORE_INT(int16_t, INT16_MIN, INT16_MAX) break;
    case ONYX_INT32: STORE_INT(int32_t, INT32_MIN, INT32_MAX) break;
    case ONYX_INT64: STORE_INT(int64_t, INT64_MIN, INT64_MAX) break;
    default: break;
    }
}

/* ---- one separable pass: dst[o, j, i] = sum_k w[j,k] * src[o, idx[j,k], i] */

typedef struct pass_job {
    const void *src;
    void *dst;
    int64_t n_in, n_out, inner;
    const rz_axis *t;
    double extrap;
} pass_job;

/* A pass with inner > 1: items are output rows (outer, o), each a weighted sum of `taps` source
 * rows of `inner` contiguous elements. */
#define PASS_FN(NAME, WT, WEIGHTS)                                                                 \
    CPU_CLONES static void NAME(void *ctx, int64_t b, int64_t e) {                                 \
        const pass_job *j = ctx;                                                                   \
        const rz_axis *t = j->t;                                                                   \
        int taps = t->taps;                                                                        \
        int64_t inner = j->inner;                                                                  \
        int64_t outer = b / j->n_out, o = b % j->n_out - 1;                                        \
        for (int64_t r = b; r < e; r++) {                                                          \
            if (++o == j->n_out) { /* rows walk (outer, o) without dividing */                     \
                o = 0;                                                                             \
                outer++;                                                                           \
            }                                                                                      \
            const WT *s = (const WT *)j->src + outer * j->n_in * inner;                           \
            WT *restrict d = (WT *)j->dst + r * inner;                                             \
            if (t->extrap[o]) {                                                                    \
                for (int64_t i = 0; i < inner; i++) d[i] = (WT)j->extrap;                          \
                continue;                                                                          \
            }                                                                                      \
            const int64_t *ix = t->idx + o * taps;                                                 \
            const WT *w = t->WEIGHTS + o * taps;                                                   \
            const WT *restrict s0 = s + ix[0] * inner;                                             \
            WT w0 = w[0];                                                                          \
            if (taps >= 2 && w[1] != 0) { /* linear's two taps in one sweep */                     \
                const WT *restrict s1 = s + ix[1] * inner;                                         \
                WT w1 = w[1];                                                                      \
                for (int64_t i = 0; i < inner; i++) d[i] = w0 * s0[i] + w1 * s1[i];                \
            } else {                                                                               \
                for (int64_t i = 0; i < inner; i++) d[i] = w0 * s0[i];                             \
            }                                                                                      \
            for (int k = 2; k < taps; k++) {                                                       \
                const WT *restrict sk = s + ix[k] * inner;                                         \
                WT wk = w[k];                                                                      \
                if (wk == 0) continue;                                                             \
                for (int64_t i = 0; i < inner; i++) d[i] += wk * sk[i];                            \
            }                                                                                      \
        }                                                                                          \
    }

/* A pass over the innermost axis (inner == 1): items are whole rows of n_out outputs, each
 * output a gather of `taps` elements of its source row. One item per element cost a loop trip,
 * a division and a table lookup per element. */
#define PASS_LAST_FN(NAME, WT, WEIGHTS)                                                            \
    CPU_CLONES static void NAME(void *ctx, int64_t b, int64_t e) {                                 \
        const pass_job *j = ctx;                                                                   \
        const rz_axis *t = j->t;                                                                   \
        int taps = t->taps;                                                                        \
        int64_t n_out = j->n_out;                                                                  \
        const int64_t *ix = t->idx;                                                                \
        const WT *w = t->WEIGHTS;                                                                  \
        for (int64_t r = b; r < e; r++) {                                                          \
            const WT *restrict s = (const WT *)j->src + r * j->n_in;                               \
            WT *restrict d = (WT *)j->dst + r * n_out;                                             \
            if (taps == 1) {                                                                       \
                for (int64_t o = 0; o < n_out; o++) d[o] = w[o] * s[ix[o]];                        \
            } else if (taps == 2) {                                                                \
                for (int64_t o = 0; o < n_out; o++)                                                \
                    d[o] = w[2 * o] * s[ix[2 * o]] + w[2 * o + 1] * s[ix[2 * o + 1]];             \
            } else {                                                                               \
                for (int64_t o = 0; o < n_out; o++) {                                              \
                    WT acc = 0;                                                                    \
                    for (int k = 0; k < taps; k++) acc += w[o * taps + k] * s[ix[o * taps + k]];   \
                    d[o] = acc;                                                                    \
                }                                                                                  \
            }                                                                                      \
            for (int64_t o = 0; o < n_out; o++)                                                    \
                if (t->extrap[o]) d[o] = (WT)j->extrap;                                            \
        }                                                                                          \
    }
PASS_FN(pass_f32, float, wf)
PASS_FN(pass_f64, double, w)
PASS_LAST_FN(pass_last_f32, float, wf)
PASS_LAST_FN(pass_last_f64, double, w)

static int64_t grain_for(int64_t per_item) {
    int64_t g = 32768 / (per_item > 0 ? per_item : 1);
    return g > 0 ? g : 1;
}

static onyx_status rz_apply(const rz_state *s, const tensor *X, tensor *Y, void *const work[2]) {
    const ops_resize_plan *p = &s->plan;
    bool dbl = work_is_double(X->dtype);
    onyx_dtype wt = dbl ? ONYX_DOUBLE : ONYX_FLOAT;
    if (Y->numel == 0) return ONYX_OK;
    if (s->n_axes == 0) return tensor_copy_data(Y, X);
    const void *src = X->data;
    int cur_buf = 0;
    if (X->dtype != wt) {
        conv_job cj = {X, work[0]};
        parallel_for(X->numel, 16384, load_range, &cj);
        src = work[0];
        cur_buf = 1;
    }
    int64_t cur[ONYX_MAX_RANK];
    memcpy(cur, p->in_dims, sizeof cur);
    for (int i = 0; i < s->n_axes; i++) {
        const rz_axis *t = &s->ax[i];
        int a = t->axis;
        int64_t outer = 1, inner = 1;
        for (int k = 0; k < a; k++) outer *= cur[k];
        for (int k = a + 1; k < p->rank; k++) inner *= cur[k];
        bool last = i == s->n_axes - 1;
        void *dst = last && Y->dtype == wt ? Y->data : work[cur_buf];
        pass_job j = {src, dst, cur[a], t->n_out, inner, t, p->extrapolation};
        if (inner == 1)
            parallel_for(outer, grain_for(t->n_out * t->taps), dbl ? pass_last_f64 : pass_last_f32,
                         &j);
        else
            parallel_for(outer * t->n_out, grain_for(inner * t->taps), dbl ? pass_f64 : pass_f32,
                         &j);
        cur[a] = t->n_out;
        src = dst;
        cur_buf ^= 1;
    }
    if (Y->dtype != wt) {
        conv_job cj = {Y, (void *)src};
        parallel_for(Y->numel, 16384, store_range, &cj);
    }
    return ONYX_OK;
}

/* Inputs that carry scales, sizes and roi, by op and version. */
static void rz_inputs(const graph_node *n, const tensor *const *in, int n_in, const tensor **roi,
                      const tensor **scales, const tensor **sizes) {
    *roi = *scales = *sizes = NULL;
    bool resize = strcmp(n->op_type, "Resize") == 0;
    if (!resize && n->version < 9) return;
    if (!resize || n->version < 11) {
        *scales = n_in > 1 ? in[1] : NULL;
        return;
    }
    *roi = n_in > 1 ? in[1] : NULL;
    *scales = n_in > 2 ? in[2] : NULL;
    *sizes = n_in > 3 ? in[3] : NULL;
}

onyx_status cpu_resize_prepare(const kernel_prep *p, void **state) {
    rz_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("resize state");
    *state = s;
    const type_info *x = p->in_type[0];
    if (!x || !type_is_static(x)) return ONYX_OK;
    for (int i = 1; i < p->n_in; i++)
        if (p->in_type[i] && !p->in_value[i]) return ONYX_OK; /* decided at run time */
    const tensor *roi, *scales, *sizes;
    rz_inputs(p->node, p->in_value, p->n_in, &roi, &scales, &sizes);
    ops_resize_plan plan;
    TRY(ops_resize_plan_make(p->node, x->rank, x->dims, roi, scales, sizes, &plan));
    return rz_build(s, &plan, x->dtype, NULL);
}

onyx_status cpu_resize_run(const kernel_call *c) {
    const tensor *X = kernel_input(c, 0);
    tensor *Y = kernel_output(c, 0);
    const rz_state *s = c->state;
    rz_state local;
    const tensor *ins[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < c->n_in && i < 4; i++) ins[i] = kernel_input(c, i);
    char *mem;
    void *work[2];
    if (s && s->ready && shape_equal(X->rank, X->dims, s->plan.rank, s->plan.in_dims)) {
        void *m;
        TRY(kernel_scratch(c, 2 * s->work_size + 1, &m));
        mem = m;
        work[0] = mem;
        work[1] = mem + s->work_size;
    } else {
        /* a plan of this run's own: its tables go in the scratch too, ahead of the buffers */
        const tensor *roi, *scales, *sizes;
        rz_inputs(c->node, ins, c->n_in, &roi, &scales, &sizes);
        ops_resize_plan plan;
        TRY(ops_resize_plan_make(c->node, X->rank, X->dims, roi, scales, sizes, &plan));
        size_t tables, wsize;
        if (!rz_run_bytes(&plan, X->dtype, &tables, &wsize))
            return onyx_oom("resize tables and buffers");
        void *m;
        TRY(kernel_scratch(c, tables + 2 * wsize + 1, &m));
        mem = m;
        rz_arena arena = {mem, 0, tables};
        TRY(rz_build(&local, &plan, X->dtype, &arena));
        work[0] = mem + tables;
        work[1] = mem + tables + wsize;
        s = &local;
    }
    if (!shape_equal(Y->rank, Y->dims, s->plan.rank, s->plan.out_dims)) {
        char a[96], b[96];
        return onyx_error(ONYX_ERR_SHAPE, "output has shape %s, expected %s",
                          shape_str(Y->rank, Y->dims, a, sizeof a),
                          shape_str(s->plan.rank, s->plan.out_dims, b, sizeof b));
    }
    return rz_apply(s, X, Y, work);
}

void cpu_resize_release(void *state) {
    rz_free(state);
    free(state);
}
