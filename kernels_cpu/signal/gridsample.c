/* GridSample on the CPU, any number of spatial dims: per output position the taps (flat input
 * offset and weight, the product of per-dim 1-D weights) are found once and reused for every
 * channel. Coordinates follow the ONNX reference (float32 denormalization, PyTorch rules). */
#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"

#include <math.h>
#include <string.h>

enum { GS_NEAREST, GS_LINEAR, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };
#define GS_MAX_TAPS 4096

typedef struct gs_job {
    const tensor *X, *G;
    tensor *Y;
    int r, mode, pad;
    bool align;
    int64_t C, P;               /* channels, output positions per batch item */
    int64_t in_sp;              /* input spatial elements */
    int64_t dims[ONYX_MAX_RANK];/* input spatial dims */
    int64_t strides[ONYX_MAX_RANK];
} gs_job;

static double reflect(double x, double lo, double hi) {
    double rng = hi - lo;
    if (!(rng > 0)) return lo;
    if (x < lo) {
        double dx = lo - x;
        double n = floor(dx / rng), r = dx - n * rng;
        return fmod(n, 2) == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi;
        double n = floor(dx / rng), r = dx - n * rng;
        return fmod(n, 2) == 0 ? hi - r : lo + r;
    }
    return x;
}

/* Input index that tap i (possibly outside) reads, or -1 for a zero. */
static int64_t pixel_index(const gs_job *j, int64_t i, int64_t d, double lo, double hi) {
    if (j->pad == GS_ZEROS) return i >= 0 && i < d ? i : -1;
    if (j->pad == GS_BORDER) return i < 0 ? 0 : i >= d ? d - 1 : i;
    double v = reflect((double)i, lo, hi);
    int64_t k = (int64_t)v;
    return k < 0 ? 0 : k >= d ? d - 1 : k;
}

static void cubic_coeffs(double x, double *c) {
    const double A = -0.75;
    x = fabs(x);
    c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

static double grid_at(const tensor *g, int64_t i) {
    switch (g->dtype) {
    case ONYX_FLOAT: return ((const float *)g->data)[i];
    case ONYX_DOUBLE: return ((const double *)g->data)[i];
    case ONYX_FLOAT16: return fp16_to_float(((const uint16_t *)g->data)[i]);
    default: return bf16_to_float(((const uint16_t *)g->data)[i]);
    }
}

/* Taps of one output position into off[]/w[]; returns their count. */
static int position_taps(const gs_job *j, int64_t n, int64_t p, int64_t *off, double *w) {
    int r = j->r;
    int64_t idx[ONYX_MAX_RANK][4];
    double wt[ONYX_MAX_RANK][4];
    int cnt[ONYX_MAX_RANK];
    const int64_t gbase = (n * j->P + p) * r;
    bool dbl = j->G->dtype == ONYX_DOUBLE;
    for (int k = 0; k < r; k++) {
        /* grid's last axis lists coordinates innermost dim first */
        int64_t d = j->dims[k];
        double nv = grid_at(j->G, gbase + (r - 1 - k));
        float xf;
        if (dbl) {
            xf = (float)(j->align ? (nv + 1) / 2.0 * (double)(d - 1) : ((nv + 1) * (double)d - 1) / 2.0);
        } else {
            float nf = (float)nv;
            xf = j->align ? (nf + 1) / 2.0f * (float)(d - 1) : ((nf + 1) * (float)d - 1) / 2.0f;
        }
        double x = xf;
        double lo = j->align ? 0.0 : -0.5, hi = j->align ? (double)d - 1 : (double)d - 0.5;
        if (j->mode == GS_NEAREST) x = nearbyint(x);
        if (x < lo || x > hi) {
            if (j->pad == GS_BORDER) x = x < 0 ? 0 : x > (double)(d - 1) ? (double)(d - 1) : x;
            else if (j->pad == GS_REFLECTION) x = (float)reflect(x, lo, hi);
        }
        if (!isfinite(x)) x = -2.0 * (double)d - 4; /* NaN / inf samples read padding */
        if (x > 4e15) x = 4e15;
        if (x < -4e15) x = -4e15;
        if (j->mode == GS_NEAREST) {
            idx[k][0] = pixel_index(j, (int64_t)x, d, lo, hi);
            wt[k][0] = 1;
            cnt[k] = 1;
            continue;
        }
        double x0 = floor(x), t = x - x0;
        int64_t i0 = (int64_t)x0;
        if (j->mode == GS_LINEAR) {
            cnt[k] = 2;
            wt[k][0] = 1 - t;
            wt[k][1] = t;
            idx[k][0] = pixel_index(j, i0, d, lo, hi);
            idx[k][1] = pixel_index(j, i0 + 1, d, lo, hi);
        } else {
            cnt[k] = 4;
            cubic_coeffs(t, wt[k]);
            for (int q = 0; q < 4; q++) idx[k][q] = pixel_index(j, i0 - 1 + q, d, lo, hi);
        }
    }
    /* tensor product of the per-dim taps, dropping zero-padding ones */
    int total = 0, pos[ONYX_MAX_RANK] = {0};
    for (;;) {
        int64_t o = 0;
        double ww = 1;
        bool zero = false;
        for (int k = 0; k < r; k++) {
            int64_t i = idx[k][pos[k]];
            if (i < 0) {
                zero = true;
                break;
            }
            o += i * j->strides[k];
            ww *= wt[k][pos[k]];
        }
        if (!zero) {
            off[total] = o;
            w[total] = ww;
            total++;
        }
        int k = r - 1;
        while (k >= 0 && ++pos[k] == cnt[k]) pos[k--] = 0;
        if (k < 0) break;
    }
    return total;
}

#define GS_TYPES(X)                                                                                \
    X(ONYX_FLOAT, float, (double), (float))                                                         \
    X(ONYX_DOUBLE, double, (double), (double))                                                      \
    X(ONYX_FLOAT16, uint16_t, (double)fp16_to_float, float_to_fp16)                                 \
    X(ONYX_BFLOAT16, uint16_t, (double)bf16_to_float, float_to_bf16)                                \
    X(ONYX_UINT8, uint8_t, (double), sat_u8)                                                        \
    X(ONYX_UINT16, uint16_t, (double), sat_u16)                                                     \
    X(ONYX_UINT32, uint32_t, (double), sat_u32)                                                     \
    X(ONYX_UINT64, uint64_t, (double), sat_u64)                                                     \
    X(ONYX_INT8, int8_t, (double), sat_i8)                                                          \
    X(ONYX_INT16, int16_t, (double), sat_i16)                                                       \
    X(ONYX_INT32, int32_t, (double), sat_i32)                                                       \
    X(ONYX_INT64, int64_t, (double), sat_i64)

/* Integers round half to even and saturate (NaN reads 0). */
#define SAT(NAME, T, LO, HI)                                                                       \
    static T NAME(double v) {                                                                      \
        v = nearbyint(v);                                                                          \
        return v != v ? 0 : v <= (double)(LO) ? (T)(LO) : v >= (double)(HI) ? (T)(HI) : (T)v;      \
    }
SAT(sat_u8, uint8_t, 0, UINT8_MAX)
SAT(sat_u16, uint16_t, 0, UINT16_MAX)
SAT(sat_u32, uint32_t, 0, UINT32_MAX)
SAT(sat_u64, uint64_t, 0, UINT64_MAX)
SAT(sat_i8, int8_t, INT8_MIN, INT8_MAX)
SAT(sat_i16, int16_t, INT16_MIN, INT16_MAX)
SAT(sat_i32, int32_t, INT32_MIN, INT32_MAX)
SAT(sat_i64, int64_t, INT64_MIN, INT64_MAX)

#define GS_FN(D, T, TO_D, FROM_D)                                                                  \
    static void gs_range_##T##_##D(void *ctx, int64_t b, int64_t e) {                              \
        const gs_job *j = ctx;                                                                     \
        int64_t off[GS_MAX_TAPS];                                                                  \
        double w[GS_MAX_TAPS];                                                                     \
        const T *x = j->X->data;                                                                   \
        T *y = j->Y->data;                                                                         \
        for (int64_t q = b; q < e; q++) {                                                          \
            int64_t n = q / j->P, p = q % j->P;                                                    \
            int nt = position_taps(j, n, p, off, w);                                               \
            for (int64_t c = 0; c < j->C; c++) {                                                   \
                const T *xc = x + (n * j->C + c) * j->in_sp;                                       \
                double acc = 0;                                                                    \
                for (int t = 0; t < nt; t++) acc += w[t] * TO_D(xc[off[t]]);                       \
                y[(n * j->C + c) * j->P + p] = FROM_D(acc);                                        \
            }                                                                                      \
        }                                                                                          \
    }
GS_TYPES(GS_FN)
#undef GS_FN

onyx_status cpu_gridsample_run(const kernel_call *c) {
    const tensor *X = kernel_input(c, 0), *G = kernel_input(c, 1);
    tensor *Y = kernel_output(c, 0);
    const graph_node *node = c->node;
    gs_job j;
    memset(&j, 0, sizeof j);
    j.X = X;
    j.G = G;
    j.Y = Y;
    if (X->rank < 3 || G->rank != X->rank)
        return onyx_error(ONYX_ERR_SHAPE, "X has rank %d and grid rank %d, expected equal ranks >= 3",
                          X->rank, G->rank);
    j.r = X->rank - 2;
    if (G->dims[0] != X->dims[0] || G->dims[G->rank - 1] != j.r)
        return onyx_error(ONYX_ERR_SHAPE, "grid must be [%lld, ..., %d]", (long long)X->dims[0],
                          j.r);
    const char *mode = attr_string(node, "mode", node->version < 20 ? "bilinear" : "linear");
    j.mode = strcmp(mode, "nearest") == 0                                  ? GS_NEAREST
             : strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0 ? GS_LINEAR
                                                                             : GS_CUBIC;
    const char *pad = attr_string(node, "padding_mode", "zeros");
    j.pad = strcmp(pad, "border") == 0 ? GS_BORDER : strcmp(pad, "reflection") == 0 ? GS_REFLECTION
                                                                                   : GS_ZEROS;
    j.align = attr_int(node, "align_corners", 0) != 0;
    int per = j.mode == GS_NEAREST ? 1 : j.mode == GS_LINEAR ? 2 : 4;
    int64_t taps = 1;
    for (int k = 0; k < j.r; k++) taps *= per;
    if (taps > GS_MAX_TAPS)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%s GridSample over %d spatial dims needs %lld taps, "
                          "at most %d are supported", mode, j.r, (long long)taps, GS_MAX_TAPS);
    j.C = X->dims[1];
    j.P = 1;
    j.in_sp = 1;
    for (int k = j.r - 1; k >= 0; k--) {
        j.dims[k] = X->dims[2 + k];
        j.strides[k] = j.in_sp;
        j.in_sp *= X->dims[2 + k];
        j.P *= G->dims[1 + k];
    }
    if (Y->numel == 0) return ONYX_OK;
    if (j.in_sp == 0) {
        if (j.pad != GS_ZEROS) return onyx_error(ONYX_ERR_SHAPE, "X has an empty spatial dim");
        memset(Y->data, 0, Y->nbytes); /* every tap reads padding */
        return ONYX_OK;
    }
    int64_t grain = 4096 / (taps * (j.C ? j.C : 1)) + 1;
    switch (X->dtype) {
#define GS_CASE(D, T, TO_D, FROM_D)                                                                \
    case D: parallel_for(X->dims[0] * j.P, grain, gs_range_##T##_##D, &j); break;
        GS_TYPES(GS_CASE)
#undef GS_CASE
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "GridSample on %s is not supported",
                          onyx_dtype_name(X->dtype));
    }
    return ONYX_OK;
}
