/* CPU kernels of ConvInteger and QLinearConv: an exact int32 convolution of zero-point-shifted
 * 8-bit operands (im2col, then a row-parallel integer product), requantized for QLinearConv.
 * The reference for what oneDNN cannot take: its convolutions have no weight zero points, and
 * shifted 8-bit weights no longer fit 8 bits. QLinearConv takes the oneDNN path
 * (kernels_cpu/conv/qconv_dnnl.c) wherever that applies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "ops/conv/conv.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "core/fuse.h"
#include "kernels_cpu/conv/qconv_dnnl.h"

/* One run's working buffers, carved from its scratch (kernel_scratch): nothing is kept in a state
 * that concurrent runs would share. */
typedef struct qconv_bufs {
    int32_t *col, *w, *acc; /* columns, shifted weights, QLinearConv's accumulators */
} qconv_bufs;

static int32_t load8(onyx_dtype d, const void *p, int64_t i) {
    return d == ONYX_INT8 ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

/* Carves the buffers a geometry needs out of the run's scratch. */
static onyx_status take_buffers(const kernel_call *c, const conv_geom *g, bool need_acc,
                                qconv_bufs *b) {
    int64_t kp = 1, op = 1, rows, wn, yn, cn;
    for (int i = 0; i < g->nsp; i++)
        if (__builtin_mul_overflow(kp, g->k[i], &kp) || __builtin_mul_overflow(op, g->out[i], &op))
            return onyx_oom("convolution buffers");
    if (__builtin_mul_overflow(g->c / g->group, kp, &rows) ||
        __builtin_mul_overflow(g->m, rows, &wn) || __builtin_mul_overflow(rows, op, &cn) ||
        __builtin_mul_overflow(g->n * g->m, op, &yn) || cn < 0 || wn < 0 || yn < 0 ||
        (uint64_t)cn > SIZE_MAX / 16 || (uint64_t)wn > SIZE_MAX / 16 ||
        (uint64_t)yn > SIZE_MAX / 16)
        return onyx_oom("convolution buffers");
    size_t cb = round64((size_t)cn * sizeof(int32_t)), wb = round64((size_t)wn * sizeof(int32_t));
    size_t ab = need_acc ? round64((size_t)yn * sizeof(int32_t)) : 0;
    void *mem;
    TRY(kernel_scratch(c, cb + wb + ab + 1, &mem));
    b->col = mem;
    b->w = (int32_t *)((char *)mem + cb);
    b->acc = need_acc ? (int32_t *)((char *)mem + cb + wb) : NULL;
    return ONYX_OK;
}

void cpu_qconv_release(void *state) { qconv_fast_release(state); }

/* Prepare checks the geometry when shapes are static; there is no state. */
static onyx_status qconv_prepare(const kernel_prep *p, void **state, int w_index) {
    const type_info *x = p->in_type[0], *w = p->in_type[w_index];
    if (x && w && type_is_static(x) && type_is_static(w)) {
        conv_geom g;
        TRY(conv_geometry(p->node, false, x->rank, x->dims, w->rank, w->dims, &g));
    }
    *state = NULL;
    return ONYX_OK;
}

onyx_status cpu_convinteger_prepare(const kernel_prep *p, void **state) {
    return qconv_prepare(p, state, 1);
}
onyx_status cpu_qlinearconv_prepare(const kernel_prep *p, void **state) {
    TRY(qconv_prepare(p, state, 3));
    TRY(qconv_fast_prepare(p, state));
    if (!*state && p->fused && (p->fused->opaque_in0 || p->fused->opaque_out0))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "an opaque-layout QLinearConv needs the oneDNN "
                          "path (int8 weights with zero point 0, VNNI, static shapes)");
    return ONYX_OK;
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
static onyx_status int_conv(const kernel_call *c, const tensor *x,
                            const tensor *xz, const tensor *w, const tensor *wz, const tensor *b,
                            int32_t *acc_or_null, int32_t **acc_out) {
    conv_geom g;
    TRY(conv_geometry(c->node, false, x->rank, x->dims, w->rank, w->dims, &g));
    TRY(zero_point(xz, 1, "x_zero_point"));
    TRY(zero_point(wz, g.m, "w_zero_point"));
    if (b && b->numel != g.m)
        return onyx_error(ONYX_ERR_SHAPE, "B has %lld values, expected %lld", (long long)b->numel,
                          (long long)g.m);
    qconv_bufs bufs = {0}, *s = &bufs;
    TRY(take_buffers(c, &g, acc_or_null == NULL, s));
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
    tensor *y = kernel_output(c, 0);
    if (y->numel == 0) return ONYX_OK;
    int32_t *acc;
    return int_conv(c, kernel_input(c, 0), kernel_input(c, 2), kernel_input(c, 1), kernel_input(c, 3), NULL, y->data, &acc);
}

static onyx_status scalar_float(const tensor *t, const char *what, float *out) {
    if (!t || t->dtype != ONYX_FLOAT || t->numel != 1)
        return onyx_error(ONYX_ERR_SHAPE, "%s must be one float", what);
    *out = ((const float *)t->data)[0];
    return ONYX_OK;
}

onyx_status cpu_qlinearconv_run(const kernel_call *c) {
    tensor *y = kernel_output(c, 0);
    if (y->numel == 0) return ONYX_OK;
    if (qconv_fast_prepared(c->state)) {
        bool done;
        TRY(qconv_fast_run(c, c->state, &done));
        if (done) return ONYX_OK;
        if (qconv_fast_opaque(c->state)) /* the reference reads and writes NCHW only */
            return onyx_error(ONYX_ERR_RUNTIME, "an opaque-layout QLinearConv got scales or a "
                              "bias it cannot requantize exactly (a multiplier that is not "
                              "finite, or a bias of 2^24 or more in magnitude)");
    }
    const tensor *ws = kernel_input(c, 4), *yz = kernel_input(c, 7);
    float xs = 0.f, ys = 0.f;
    TRY(scalar_float(kernel_input(c, 1), "x_scale", &xs));
    TRY(scalar_float(kernel_input(c, 6), "y_scale", &ys));
    if (!ws || ws->dtype != ONYX_FLOAT) return onyx_error(ONYX_ERR_SHAPE, "w_scale must be float");
    if (!yz || yz->numel != 1) return onyx_error(ONYX_ERR_SHAPE, "y_zero_point must be one value");
    int32_t *acc;
    TRY(int_conv(c, kernel_input(c, 0), kernel_input(c, 2), kernel_input(c, 3), kernel_input(c, 5), kernel_input(c, 8), NULL, &acc));
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
