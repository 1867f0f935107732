/* CPU kernels of ConvInteger and QLinearConv: an exact int32 convolution of zero-point-shifted
 * 8-bit operands (im2col, then a row-parallel integer product), requantized for QLinearConv.
 * The reference for what the fast paths cannot take. Which path runs a node is decided at
 * prepare: QLinearConv takes oneDNN's (kernels_cpu/conv/qconv_dnnl.c) where this CPU has VNNI
 * and the weights allow it, else, on a CPU with AVX2 (cpu_i8_choose), onnxruntime's arithmetic
 * there (kernels_cpu/conv/qconv_avx2.c), which ConvInteger also takes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "core/fuse_chain.h"
#include "kernels_cpu/common/opaque.h"
#include "kernels_cpu/conv/qconv_avx2.h"
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
static onyx_status take_buffers(const kernel_call *c, const geom_window *g, bool need_acc,
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

/* ConvInteger's state: the AVX2 path, or NULL (the reference). */
onyx_status cpu_convinteger_prepare(const kernel_prep *p, void **state) {
    *state = NULL;
    qconv_avx2 *q = NULL;
    TRY(qconv_avx2_prepare(p, QCONV_AVX2_INTEGER, (qconv_avx2_layout){0}, &q));
    *state = q;
    return ONYX_OK;
}

void cpu_convinteger_release(void *state) { qconv_avx2_release(state); }

/* QLinearConv's state: the one fast path prepared (or neither: the reference), read-only. */
typedef struct qlinear_paths {
    void *onednn;    /* qconv_dnnl.h's state */
    qconv_avx2 *avx2;
} qlinear_paths;

/* A run context's working state: oneDNN's memory objects, where that path is prepared. */
typedef struct qlinear_fork {
    const qlinear_paths *paths;
    void *onednn;
} qlinear_fork;

void cpu_qlinearconv_release(void *state) {
    qlinear_paths *s = state;
    if (!s) return;
    qconv_fast_release(s->onednn);
    qconv_avx2_release(s->avx2);
    free(s);
}

/* kernel.takes_chain of QLinearConv: a chain of its layouts alone (an opaque X or Y, never an
 * addend: input 3 is W), and where one is opaque, a fast path that takes the node (the
 * reference reads and writes plain tensors only), as cpu_qlinearconv_prepare finds it: oneDNN's,
 * else the AVX2 one. */
bool cpu_qlinearconv_takes_chain(const kernel_prep *p) {
    const fuse_chain *f = p->fused;
    if (f && !cpu_chain_layout_only(f)) return false;
    if (!f || (!f->opaque_in0 && !f->opaque_out0)) return true;
    return qconv_fast_takes(p) || qconv_avx2_takes(p, QCONV_AVX2_QLINEAR);
}

onyx_status cpu_qlinearconv_prepare(const kernel_prep *p, void **state) {
    *state = NULL;
    if (p->fused && !cpu_chain_layout_only(p->fused))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "QLinearConv takes no chain but an opaque X or Y");
    qlinear_paths *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("int8 convolution");
    onyx_status st = qconv_fast_prepare(p, &s->onednn);
    bool x_opaque = p->fused && p->fused->opaque_in0, y_opaque = p->fused && p->fused->opaque_out0;
    if (st == ONYX_OK && !s->onednn)
        st = qconv_avx2_prepare(p, QCONV_AVX2_QLINEAR,
                                (qconv_avx2_layout){.x_opaque = x_opaque, .y_opaque = y_opaque},
                                &s->avx2);
    if (st == ONYX_OK && !s->onednn && !s->avx2 && (x_opaque || y_opaque))
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "an opaque-layout QLinearConv needs a fast path "
                        "(oneDNN's: int8 weights with zero point 0 and VNNI; or AVX2), and static "
                        "shapes and constant weights");
    if (st != ONYX_OK) {
        cpu_qlinearconv_release(s);
        return st;
    }
    *state = s;
    return ONYX_OK;
}

onyx_status cpu_qlinearconv_fork(const void *state, void **out) {
    qlinear_fork *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("int8 convolution working state");
    f->paths = state;
    if (f->paths && f->paths->onednn) {
        onyx_status st = qconv_fast_fork(f->paths->onednn, &f->onednn);
        if (st != ONYX_OK) {
            free(f);
            return st;
        }
    }
    *out = f;
    return ONYX_OK;
}

void cpu_qlinearconv_unfork(void *fork) {
    qlinear_fork *f = fork;
    if (!f) return;
    qconv_fast_unfork(f->onednn);
    free(f);
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
    const geom_window *g;
    TRY(kernel_window(c->params, &g));
    TRY(zero_point(xz, 1, "x_zero_point"));
    TRY(zero_point(wz, g->m, "w_zero_point"));
    if (b && b->numel != g->m)
        return onyx_error(ONYX_ERR_SHAPE, "B has %lld values, expected %lld", (long long)b->numel,
                          (long long)g->m);
    qconv_bufs bufs = {0}, *s = &bufs;
    TRY(take_buffers(c, g, acc_or_null == NULL, s));
    int32_t *acc = acc_or_null ? acc_or_null : s->acc;
    int64_t kp = 1, ip = 1, op = 1;
    for (int i = 0; i < g->nsp; i++) {
        kp *= g->k[i];
        ip *= g->in[i];
        op *= g->out[i];
    }
    int64_t cg = g->c / g->group, mg = g->m / g->group, rows = cg * kp;
    for (int64_t m = 0; m < g->m; m++) {
        int32_t z = zp_at(wz, m);
        for (int64_t r = 0; r < rows; r++) s->w[m * rows + r] = load8(w->dtype, w->data, m * rows + r) - z;
    }
    int32_t xzv = zp_at(xz, 0);
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t gi = 0; gi < g->group; gi++) {
            int64_t xbase = (n * g->c + gi * cg) * ip;
            for (int64_t r = 0; r < rows; r++) {
                int64_t ch = r / kp, kr = r % kp, kk[GEOM_WINDOW_MAX_SPATIAL];
                int64_t pos[GEOM_WINDOW_MAX_SPATIAL] = {0};
                for (int i = g->nsp - 1; i >= 0; i--) {
                    kk[i] = kr % g->k[i];
                    kr /= g->k[i];
                }
                int32_t *col = s->col + r * op;
                for (int64_t o = 0; o < op; o++) {
                    int64_t flat = 0;
                    bool inside = true;
                    for (int i = 0; i < g->nsp && inside; i++) {
                        int64_t t = pos[i] * g->stride[i] - g->pad_b[i] + kk[i] * g->dil[i];
                        inside = t >= 0 && t < g->in[i];
                        flat = flat * g->in[i] + t;
                    }
                    col[o] = inside ? load8(x->dtype, x->data, xbase + ch * ip + flat) - xzv : 0;
                    for (int i = g->nsp - 1; i >= 0; i--) {
                        if (++pos[i] < g->out[i]) break;
                        pos[i] = 0;
                    }
                }
            }
            row_job j = {.w = s->w + gi * mg * rows, .col = s->col,
                         .y = acc + (n * g->m + gi * mg) * op, .rows = rows, .cols = op};
            parallel_for(mg, (65536 + rows * op - 1) / (rows * op + 1), rows_fn, &j);
        }
    if (b) {
        const int32_t *bv = b->data;
        for (int64_t n = 0; n < g->n; n++)
            for (int64_t m = 0; m < g->m; m++) {
                uint32_t *y = (uint32_t *)acc + (n * g->m + m) * op;
                for (int64_t o = 0; o < op; o++) y[o] += (uint32_t)bv[m];
            }
    }
    *acc_out = acc;
    return ONYX_OK;
}

onyx_status cpu_convinteger_run(const kernel_call *c) {
    tensor *y = kernel_output(c, 0);
    if (y->numel == 0) return ONYX_OK;
    if (c->state) {
        bool done;
        TRY(qconv_avx2_run(c->state, c, &done));
        if (done) return ONYX_OK;
    }
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
    const qlinear_fork *f = c->state;
    bool done = false, opaque = false;
    if (f && f->onednn && qconv_fast_prepared(f->onednn)) {
        TRY(qconv_fast_run(c, f->onednn, &done));
        opaque = qconv_fast_opaque(f->onednn);
    } else if (f && f->paths && f->paths->avx2) {
        TRY(qconv_avx2_run(f->paths->avx2, c, &done));
        opaque = qconv_avx2_opaque(f->paths->avx2);
    }
    if (done) return ONYX_OK;
    if (opaque) /* the reference reads and writes NCHW only */
        return onyx_error(ONYX_ERR_RUNTIME, "an opaque-layout QLinearConv got scales, zero points "
                          "or a bias its fast path cannot requantize exactly (a multiplier that is "
                          "not finite, or a bias of 2^24 or more in magnitude for oneDNN's)");
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
