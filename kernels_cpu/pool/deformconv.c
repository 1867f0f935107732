/* CPU kernel of DeformConv (2-D): per image and group, the taps are sampled bilinearly at their
 * offset positions (scaled by the mask) into a column matrix, then one GEMM with the group's
 * weights, over the window the plan hands (core/op_params.h). float16/bfloat16 compute in float
 * through scratch copies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

/* One run's working buffers, carved from its scratch (kernel_scratch). */
typedef struct deform_bufs {
    void *col, *wf, *yf;     /* column matrix; half types: float weights and output */
} deform_bufs;

typedef struct deform_geom {
    int64_t C, H, W, oc, kh, kw, oh, ow, group, og;
    int64_t sh, sw, dh, dw, ph, pw;
} deform_geom;

typedef struct col_job {
    const deform_geom *g;
    const void *x, *off, *mask; /* of image n */
    void *col;
    int64_t grp;
} col_job;

#define DEFORM_TEMPLATE(N, T, A, LD)                                                               \
    static A bilinear_##N(const T *x, int64_t H, int64_t W, A h, A w) {                            \
        if (!(h > -1 && w > -1 && h < (A)H && w < (A)W)) return 0;                                 \
        A fh = floor(h), fw = floor(w);                                                            \
        int64_t h0 = (int64_t)fh, w0 = (int64_t)fw, h1 = h0 + 1, w1 = w0 + 1;                      \
        A lh = h - fh, lw = w - fw, hh = 1 - lh, hw = 1 - lw;                                      \
        A v00 = h0 >= 0 && w0 >= 0 ? (A)LD(x[h0 * W + w0]) : 0;                                   \
        A v01 = h0 >= 0 && w1 < W ? (A)LD(x[h0 * W + w1]) : 0;                                    \
        A v10 = h1 < H && w0 >= 0 ? (A)LD(x[h1 * W + w0]) : 0;                                    \
        A v11 = h1 < H && w1 < W ? (A)LD(x[h1 * W + w1]) : 0;                                     \
        return hh * hw * v00 + hh * lw * v01 + lh * hw * v10 + lh * lw * v11;                      \
    }                                                                                              \
    static void col_rows_##N(void *ctx, int64_t b, int64_t e) {                                    \
        const col_job *j = ctx;                                                                    \
        const deform_geom *g = j->g;                                                               \
        int64_t kvol = g->kh * g->kw, P = g->oh * g->ow, icg = g->C / g->group;                    \
        for (int64_t r = b; r < e; r++) {                                                          \
            int64_t ci = j->grp * icg + r / kvol, kk = r % kvol, ki = kk / g->kw, kj = kk % g->kw; \
            int64_t ogi = ci / (g->C / g->og);                                                     \
            const T *x = (const T *)j->x + ci * g->H * g->W;                                       \
            const T *offh = (const T *)j->off + ((ogi * kvol + kk) * 2) * P;                       \
            const T *offw = offh + P;                                                              \
            const T *m = j->mask ? (const T *)j->mask + (ogi * kvol + kk) * P : NULL;              \
            A *col = (A *)j->col + r * P;                                                          \
            for (int64_t oy = 0; oy < g->oh; oy++)                                                 \
                for (int64_t ox = 0; ox < g->ow; ox++) {                                           \
                    int64_t p = oy * g->ow + ox;                                                   \
                    A h = (A)(oy * g->sh - g->ph + ki * g->dh) + (A)LD(offh[p]);                   \
                    A w = (A)(ox * g->sw - g->pw + kj * g->dw) + (A)LD(offw[p]);                   \
                    A v = bilinear_##N(x, g->H, g->W, h, w);                                       \
                    col[p] = m ? v * (A)LD(m[p]) : v;                                              \
                }                                                                                  \
        }                                                                                          \
    }

DEFORM_TEMPLATE(f32, float, float, cpu_f32_ld)
DEFORM_TEMPLATE(f64, double, double, cpu_f64_ld)
DEFORM_TEMPLATE(f16, uint16_t, float, cpu_f16_ld)
DEFORM_TEMPLATE(bf16, uint16_t, float, cpu_bf16_ld)

static size_t acc_size(onyx_dtype d) { return d == ONYX_DOUBLE ? sizeof(double) : sizeof(float); }

/* Scratch sizes for X [N,C,H,W], W [oc, C/group, kh, kw], output [N, oc, oh, ow]; false when
 * they overflow. */
static bool scratch_sizes(onyx_dtype d, int64_t C, int64_t group, int64_t wnumel, int64_t kvol,
                          int64_t P, int64_t ynumel, size_t *col, size_t *wf, size_t *yf) {
    bool half = d == ONYX_FLOAT16 || d == ONYX_BFLOAT16;
    int64_t rows, elems;
    if (__builtin_mul_overflow(C / group, kvol, &rows) ||
        __builtin_mul_overflow(rows, P, &elems) || (uint64_t)elems > SIZE_MAX / 8)
        return false;
    *col = (size_t)elems * acc_size(d);
    *wf = half ? (size_t)wnumel * sizeof(float) : 0;
    *yf = half ? (size_t)ynumel * sizeof(float) : 0;
    return true;
}

static void to_float(onyx_dtype d, const void *src, float *dst, int64_t n) {
    const uint16_t *h = src;
    for (int64_t i = 0; i < n; i++)
        dst[i] = d == ONYX_FLOAT16 ? cpu_fp16_to_float(h[i]) : cpu_bf16_to_float(h[i]);
}

onyx_status cpu_deformconv_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *w = kernel_input(c, 1), *off = kernel_input(c, 2), *b = kernel_input(c, 3),
                 *mask = kernel_input(c, 4);
    tensor *y = kernel_output(c, 0);
    const graph_node *n = c->node;
    if (x->rank != 4 || w->rank != 4 || off->rank != 4 || y->rank != 4)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "only 2-D DeformConv (rank-4 X, W, offset) is "
                          "supported");
    /* the plan's window (the schema's for these shapes): checked, not derived again */
    const geom_window *win;
    TRY(kernel_window(c->params, &win));
    if (win->nsp != 2 || win->transposed || win->n != x->dims[0] || win->c != x->dims[1] ||
        win->m != w->dims[0] || win->in[0] != x->dims[2] || win->in[1] != x->dims[3] ||
        win->k[0] != w->dims[2] || win->k[1] != w->dims[3] || win->out[0] != y->dims[2] ||
        win->out[1] != y->dims[3])
        return onyx_error(ONYX_ERR_RUNTIME, "the plan's DeformConv window is for other dims");
    deform_geom g = {.C = win->c, .H = win->in[0], .W = win->in[1], .oc = win->m,
                     .kh = win->k[0], .kw = win->k[1], .oh = win->out[0], .ow = win->out[1],
                     .group = win->group, .og = attr_int(n, "offset_group", 1),
                     .sh = win->stride[0], .sw = win->stride[1], .dh = win->dil[0],
                     .dw = win->dil[1], .ph = win->pad_b[0], .pw = win->pad_b[1]};
    /* kernel dims are at most 2^30 each (ops/spatial.c); group and offset_group any int64 */
    int64_t kvol = g.kh * g.kw, P = g.oh * g.ow, cin = 0, mc = 0, oc2 = 0;
    bool ovf = __builtin_mul_overflow(w->dims[1], g.group, &cin) ||
               __builtin_mul_overflow(g.og, kvol, &mc) || __builtin_mul_overflow(mc, 2, &oc2);
    if (ovf || g.group < 1 || g.og < 1 || g.C % g.group || g.oc % g.group || g.C % g.og ||
        cin != g.C ||
        y->dims[0] != x->dims[0] || y->dims[1] != g.oc || off->dims[0] != x->dims[0] ||
        off->dims[1] != oc2 || off->dims[2] != g.oh || off->dims[3] != g.ow ||
        (b && (b->rank != 1 || b->dims[0] != g.oc)) ||
        (mask && (mask->rank != 4 || mask->dims[0] != x->dims[0] ||
                  mask->dims[1] != mc || mask->dims[2] != g.oh ||
                  mask->dims[3] != g.ow)))
        return onyx_error(ONYX_ERR_SHAPE, "inconsistent DeformConv shapes (X, W, offset, B, "
                          "mask, group, offset_group)");
    /* (with Y non-empty W is too, so that its dims bound the products below) */
    if (y->numel == 0) return ONYX_OK;
    if (!cpu_blas_dims_ok(g.oc, P, w->dims[1] * kvol))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "DeformConv too large for BLAS");

    onyx_dtype d = x->dtype;
    bool half = d == ONYX_FLOAT16 || d == ONYX_BFLOAT16;
    size_t col_b, wf_b, yf_b;
    if (!scratch_sizes(d, g.C, g.group, w->numel, kvol, P, y->numel, &col_b, &wf_b, &yf_b))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "DeformConv scratch size overflows");
    col_b = (col_b + 63) / 64 * 64;
    wf_b = (wf_b + 63) / 64 * 64;
    if (col_b > SIZE_MAX / 4 || wf_b > SIZE_MAX / 4 || yf_b > SIZE_MAX / 4)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "DeformConv scratch size overflows");
    void *mem;
    TRY(kernel_scratch(c, col_b + wf_b + yf_b + 1, &mem));
    deform_bufs bufs = {mem, (char *)mem + col_b, (char *)mem + col_b + wf_b}, *s = &bufs;
    void (*rows)(void *, int64_t, int64_t);
    switch (d) {
    case ONYX_FLOAT: rows = col_rows_f32; break;
    case ONYX_DOUBLE: rows = col_rows_f64; break;
    case ONYX_FLOAT16: rows = col_rows_f16; break;
    case ONYX_BFLOAT16: rows = col_rows_bf16; break;
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a float type",
                          onyx_dtype_name(d));
    }
    const void *wdata = w->data;
    if (half) {
        to_float(d, w->data, s->wf, w->numel);
        wdata = s->wf;
    }
    void *ydata = half ? s->yf : y->data;
    size_t es = dtype_size(d);
    int64_t icg = g.C / g.group, ocg = g.oc / g.group, K = icg * kvol;
    for (int64_t img = 0; img < x->dims[0]; img++) {
        for (int64_t oc = 0; oc < g.oc; oc++) {
            double bv = 0;
            if (b) bv = d == ONYX_DOUBLE ? ((const double *)b->data)[oc]
                        : d == ONYX_FLOAT ? ((const float *)b->data)[oc]
                        : d == ONYX_FLOAT16 ? cpu_fp16_to_float(((const uint16_t *)b->data)[oc])
                                            : cpu_bf16_to_float(((const uint16_t *)b->data)[oc]);
            for (int64_t p = 0; p < P; p++) {
                int64_t i = (img * g.oc + oc) * P + p;
                if (d == ONYX_DOUBLE) ((double *)ydata)[i] = bv;
                else ((float *)ydata)[i] = (float)bv;
            }
        }
        for (int64_t grp = 0; grp < g.group; grp++) {
            col_job j = {&g, (const char *)x->data + (size_t)(img * g.C * g.H * g.W) * es,
                         (const char *)off->data + (size_t)(img * off->dims[1] * P) * es,
                         mask ? (const char *)mask->data + (size_t)(img * mask->dims[1] * P) * es
                              : NULL,
                         s->col, grp};
            parallel_for(K, 1 + 8192 / (P + 1), rows, &j);
            int64_t yo = (img * g.oc + grp * ocg) * P, wo = grp * ocg * K;
            if (d == ONYX_DOUBLE)
                cpu_dgemm(false, false, ocg, P, K, 1.0, (const double *)wdata + wo, K, s->col, P,
                          1.0, (double *)ydata + yo, P);
            else
                cpu_sgemm(false, false, ocg, P, K, 1.0f, (const float *)wdata + wo, K, s->col, P,
                          1.0f, (float *)ydata + yo, P);
        }
    }
    if (half) {
        const float *f = s->yf;
        uint16_t *o = y->data;
        for (int64_t i = 0; i < y->numel; i++)
            o[i] = d == ONYX_FLOAT16 ? cpu_float_to_fp16(f[i]) : cpu_float_to_bf16(f[i]);
    }
    return ONYX_OK;
}
