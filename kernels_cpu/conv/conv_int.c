/* CPU kernels of ConvInteger and QLinearConv: an exact int32 convolution of zero-point-shifted
 * 8-bit operands (im2col, then a row-parallel integer product), requantized for QLinearConv.
 * oneDNN 2.6 has no weight zero points for convolutions, and shifted 8-bit weights no longer fit
 * 8 bits, so this stays a plain C path. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "ops/conv/conv.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

typedef struct qconv_state {
    int32_t *col, *w, *acc; /* columns, shifted weights, QLinearConv's accumulators */
    size_t col_cap, w_cap, acc_cap;
} qconv_state;

static onyx_status grow(int32_t **buf, size_t *cap, size_t n, const char *what) {
    if (n <= *cap) return ONYX_OK;
    int32_t *b = malloc((n ? n : 1) * sizeof *b);
    if (!b) return onyx_oom(what);
    free(*buf);
    *buf = b;
    *cap = n;
    return ONYX_OK;
}

static int32_t load8(onyx_dtype d, const void *p, int64_t i) {
    return d == ONYX_INT8 ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

/* Sizes the buffers a geometry needs (prepare with static shapes, else the first run). */
static onyx_status size_buffers(qconv_state *s, const conv_geom *g, bool need_acc) {
    int64_t kp = 1, op = 1, wn, yn;
    for (int i = 0; i < g->nsp; i++) {
        kp *= g->k[i];
        op *= g->out[i];
    }
    int64_t rows = g->c / g->group * kp;
    wn = g->m * rows;
    yn = g->n * g->m * op;
    TRY(grow(&s->col, &s->col_cap, (size_t)(rows * op), "convolution columns"));
    TRY(grow(&s->w, &s->w_cap, (size_t)wn, "shifted weights"));
    if (need_acc) TRY(grow(&s->acc, &s->acc_cap, (size_t)yn, "convolution accumulators"));
    return ONYX_OK;
}

void cpu_qconv_release(void *state) {
    qconv_state *s = state;
    if (!s) return;
    free(s->col);
    free(s->w);
    free(s->acc);
    free(s);
}

static onyx_status qconv_prepare(const kernel_prep *p, void **state, int w_index, bool acc) {
    qconv_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("convolution state");
    const type_info *x = p->in_type[0], *w = p->in_type[w_index];
    onyx_status st = ONYX_OK;
    if (type_is_static(x) && type_is_static(w)) {
        conv_geom g;
        st = conv_geometry(p->node, false, x->rank, x->dims, w->rank, w->dims, &g);
        if (st == ONYX_OK) st = size_buffers(s, &g, acc);
    }
    if (st != ONYX_OK) {
        cpu_qconv_release(s);
        return st;
    }
    *state = s;
    return ONYX_OK;
}

onyx_status cpu_convinteger_prepare(const kernel_prep *p, void **state) {
    return qconv_prepare(p, state, 1, false);
}
onyx_status cpu_qlinearconv_prepare(const kernel_prep *p, void **state) {
    return qconv_prepare(p, state, 3, true);
}

/* A zero point: absent = 0; one value; or per output channel m. */
static onyx_status zero_point(const tensor *z, int64_t count, const char *what) {
    if (!z) return ONYX_OK;
    if (z->numel != 1 && z->numel != count)
        return onyx_error(ONYX_ERR_SHAPE, "%s has %lld values, expected 1%s", what,
                          (long long)z->numel, count > 1 ? " or one per output channel" : "");
    return ONYX_OK;
}

static int32_t zp_at(const tensor *z, int64_t m) {
    if (!z) return 0;
    return load8(z->dtype, z->data, z->numel == 1 ? 0 : m);
}

typedef struct row_job {
    const int32_t *w, *col;
    int32_t *y;
    int64_t rows, cols;
} row_job;

/* y[m, :] = sum_r w[m, r] * col[r, :], wrapping as int32 (unsigned arithmetic avoids UB). */
static void rows_fn(void *ctx, int64_t begin, int64_t end) {
    const row_job *j = ctx;
    for (int64_t m = begin; m < end; m++) {
        uint32_t *y = (uint32_t *)j->y + m * j->cols;
        memset(y, 0, (size_t)j->cols * sizeof *y);
        const int32_t *wr = j->w + m * j->rows;
        for (int64_t r = 0; r < j->rows; r++) {
            uint32_t wv = (uint32_t)wr[r];
            if (!wv) continue;
            const uint32_t *cr = (const uint32_t *)j->col + r * j->cols;
            CPU_SIMD for (int64_t o = 0; o < j->cols; o++) y[o] += wv * cr[o];
        }
    }
}

/* The int32 convolution of (x - xz) by (w - wz) into acc (N, M, out...), plus bias if given. */
static onyx_status int_conv(qconv_state *s, const kernel_call *c, const tensor *x,
                            const tensor *xz, const tensor *w, const tensor *wz, const tensor *b,
                            int32_t *acc_or_null, int32_t **acc_out) {
    conv_geom g;
    TRY(conv_geometry(c->node, false, x->rank, x->dims, w->rank, w->dims, &g));
    TRY(zero_point(xz, 1, "x_zero_point"));
    TRY(zero_point(wz, g.m, "w_zero_point"));
    if (b && b->numel != g.m)
        return onyx_error(ONYX_ERR_SHAPE, "B has %lld values, expected %lld", (long long)b->numel,
                          (long long)g.m);
    TRY(size_buffers(s, &g, acc_or_null == NULL));
    int32_t *acc = acc_or_null ? acc_or_null : s->acc;
    int64_t kp = 1, ip = 1, op = 1;
    for (int i = 0; i < g.nsp; i++) {
        kp *= g.k[i];
        ip *= g.in[i];
        op *= g.out[i];
    }
    int64_t cg = g.c / g.group, mg = g.m / g.group, rows = cg * kp;
    for (int64_t m = 0; m < g.m; m++) {
        int32_t z = zp_at(wz, m);
        for (int64_t r = 0; r < rows; r++) s->w[m * rows + r] = load8(w->dtype, w->data, m * rows + r) - z;
    }
    int32_t xzv = zp_at(xz, 0);
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t gi = 0; gi < g.group; gi++) {
            int64_t xbase = (n * g.c + gi * cg) * ip;
            for (int64_t r = 0; r < rows; r++) {
                int64_t ch = r / kp, kr = r % kp, kk[CONV_MAX_SPATIAL], pos[CONV_MAX_SPATIAL] = {0};
                for (int i = g.nsp - 1; i >= 0; i--) {
                    kk[i] = kr % g.k[i];
                    kr /= g.k[i];
                }
                int32_t *col = s->col + r * op;
                for (int64_t o = 0; o < op; o++) {
                    int64_t flat = 0;
                    bool inside = true;
                    for (int i = 0; i < g.nsp && inside; i++) {
                        int64_t t = pos[i] * g.stride[i] - g.pad_b[i] + kk[i] * g.dil[i];
                        inside = t >= 0 && t < g.in[i];
                        flat = flat * g.in[i] + t;
                    }
                    col[o] = inside ? load8(x->dtype, x->data, xbase + ch * ip + flat) - xzv : 0;
                    for (int i = g.nsp - 1; i >= 0; i--) {
                        if (++pos[i] < g.out[i]) break;
                        pos[i] = 0;
                    }
                }
            }
            row_job j = {.w = s->w + gi * mg * rows, .col = s->col,
                         .y = acc + (n * g.m + gi * mg) * op, .rows = rows, .cols = op};
            parallel_for(mg, (65536 + rows * op - 1) / (rows * op + 1), rows_fn, &j);
        }
    if (b) {
        const int32_t *bv = b->data;
        for (int64_t n = 0; n < g.n; n++)
            for (int64_t m = 0; m < g.m; m++) {
                uint32_t *y = (uint32_t *)acc + (n * g.m + m) * op;
                for (int64_t o = 0; o < op; o++) y[o] += (uint32_t)bv[m];
            }
    }
    *acc_out = acc;
    return ONYX_OK;
}

onyx_status cpu_convinteger_run(const kernel_call *c) {
    qconv_state *s = c->state;
    if (!s) return onyx_error(ONYX_ERR_RUNTIME, "kernel state missing (prepare was not run)");
    tensor *y = kernel_output(c, 0);
    if (y->numel == 0) return ONYX_OK;
    int32_t *acc;
    return int_conv(s, c, kernel_input(c, 0), kernel_input(c, 2), kernel_input(c, 1), kernel_input(c, 3), NULL, y->data, &acc);
}

static onyx_status scalar_float(const tensor *t, const char *what, float *out) {
    if (!t || t->dtype != ONYX_FLOAT || t->numel != 1)
        return onyx_error(ONYX_ERR_SHAPE, "%s must be one float", what);
    *out = ((const float *)t->data)[0];
    return ONYX_OK;
}

onyx_status cpu_qlinearconv_run(const kernel_call *c) {
    qconv_state *s = c->state;
    if (!s) return onyx_error(ONYX_ERR_RUNTIME, "kernel state missing (prepare was not run)");
    tensor *y = kernel_output(c, 0);
    if (y->numel == 0) return ONYX_OK;
    const tensor *ws = kernel_input(c, 4), *yz = kernel_input(c, 7);
    float xs = 0.f, ys = 0.f;
    TRY(scalar_float(kernel_input(c, 1), "x_scale", &xs));
    TRY(scalar_float(kernel_input(c, 6), "y_scale", &ys));
    if (!ws || ws->dtype != ONYX_FLOAT) return onyx_error(ONYX_ERR_SHAPE, "w_scale must be float");
    if (!yz || yz->numel != 1) return onyx_error(ONYX_ERR_SHAPE, "y_zero_point must be one value");
    int32_t *acc;
    TRY(int_conv(s, c, kernel_input(c, 0), kernel_input(c, 2), kernel_input(c, 3), kernel_input(c, 5), kernel_input(c, 8), NULL, &acc));
    int64_t m_count = y->dims[1], per = y->numel / (y->dims[0] * m_count);
    if (ws->numel != 1 && ws->numel != m_count)
        return onyx_error(ONYX_ERR_SHAPE, "w_scale has %lld values, expected 1 or %lld",
                          (long long)ws->numel, (long long)m_count);
    double zp = load8(yz->dtype, yz->data, 0);
    double lo = y->dtype == ONYX_INT8 ? -128 : 0, hi = y->dtype == ONYX_INT8 ? 127 : 255;
    for (int64_t i = 0; i < y->numel; i++) {
        int64_t m = (i / per) % m_count;
        /* as the reference: the multiplier in float, the product and rounding in double */
        float mult = xs * ((const float *)ws->data)[ws->numel == 1 ? 0 : m] / ys;
        double r = (double)acc[i] * (double)mult + zp;
        r = isnan(r) ? zp : r < lo ? lo : r > hi ? hi : r; /* NaN: a zero y_scale */
        r = nearbyint(r);
        if (y->dtype == ONYX_INT8) ((int8_t *)y->data)[i] = (int8_t)r;
        else ((uint8_t *)y->data)[i] = (uint8_t)r;
    }
    return ONYX_OK;
}
