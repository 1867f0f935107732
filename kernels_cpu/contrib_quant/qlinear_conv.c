/* CPU kernel of com.microsoft QLinearConv: ONNX's QLinearConv on NCHW or, with channels_last,
 * NHWC data, as the patches of each group times W through the exact 8-bit GEMM; on a CPU without
 * VNNI (cpu_i8_choose) as onnxruntime computes it there (kernels_cpu/conv/qconv_avx2.c).
 *
 * A patch row holds its taps tap-major ([tap][channel]), W's columns reordered to match, so that
 * an NHWC tap is one contiguous run of channels.
 * The requantization is onnxruntime's: float(acc + B[m]) * (x_scale * w_scale[m] / y_scale),
 * rounded half to even and saturated with y_zero_point. Patches read padding as x_zero_point,
 * which the GEMM's zero point then cancels. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/contrib_quant/cq_kernel.h"
#include "kernels_cpu/conv/qconv_avx2.h"

/* One group's W [mg, cg, ks] as the GEMM's int8 B [ks * cg, mg], rows tap-major like the
 * patches; uint8 moves down by 128 as cq_gemm_s32 expects. */
static void layout_w(onyx_dtype wt, const uint8_t *w, int64_t mg, int64_t cg, int64_t ks,
                     int8_t *out) {
    const uint8_t flip = wt == ONYX_UINT8 ? 0x80 : 0;
    for (int64_t m = 0; m < mg; m++)
        for (int64_t c = 0; c < cg; c++)
            for (int64_t k = 0; k < ks; k++)
                out[(k * cg + c) * mg + m] = (int8_t)(w[(m * cg + c) * ks + k] ^ flip);
}

/* W laid out once per group for the GEMM (when W is a constant). */
typedef struct qconv_state {
    int8_t *w;
    int64_t m, kg; /* output channels and the patch length of one group */
    int64_t group;
    qconv_avx2 *avx2;   /* the AVX2 path, where it applies, else NULL */
} qconv_state;

static int64_t kernel_size(const tensor *w) {
    int64_t ks = 1;
    for (int i = 2; i < w->rank; i++) ks *= w->dims[i];
    return ks;
}

onyx_status cpu_msqlinearconv_prepare(const kernel_prep *p, void **state) {
    *state = NULL;
    const tensor *w = p->n_in > 3 ? p->in_value[3] : NULL;
    if (!w || w->rank < 3 || (w->dtype != ONYX_INT8 && w->dtype != ONYX_UINT8)) return ONYX_OK;
    int64_t group = attr_int(p->node, "group", 1);
    if (group < 1 || w->dims[0] % group) return ONYX_OK; /* the run reports it */
    qconv_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("QLinearConv weights");
    s->m = w->dims[0];
    s->kg = w->dims[1] * kernel_size(w);
    s->group = group;
    s->w = malloc((size_t)(s->m * s->kg) + 1);
    if (!s->w) {
        free(s);
        return onyx_oom("QLinearConv weights");
    }
    int64_t mg = s->m / group;
    for (int64_t g = 0; g < group; g++)
        layout_w(w->dtype, (const uint8_t *)w->data + g * mg * s->kg, mg, w->dims[1],
                 kernel_size(w), s->w + g * mg * s->kg);
    bool cl = attr_int(p->node, "channels_last", 0) != 0;
    onyx_status st = qconv_avx2_prepare(p, QCONV_AVX2_QLINEAR,
                                        (qconv_avx2_layout){.dims_last = cl}, &s->avx2);
    if (st != ONYX_OK) {
        cpu_msqlinearconv_release(s);
        return st;
    }
    *state = s;
    return ONYX_OK;
}

void cpu_msqlinearconv_release(void *state) {
    qconv_state *s = state;
    if (!s) return;
    qconv_avx2_release(s->avx2);
    free(s->w);
    free(s);
}

typedef struct patch_job {
    const geom_window *g;
    const uint8_t *x;      /* this image */
    uint8_t *a;            /* [P, kg] patches */
    uint8_t pad;           /* x_zero_point's byte */
    int64_t cg, c0, kg, ks;
    /* element strides of a channel and of the spatial dims */
    int64_t cstride, sstride[GEOM_WINDOW_MAX_SPATIAL];
} patch_job;

/* Patches of output positions [b, e): a[p, kidx * cg + c] = x at the window's kidx-th tap. */
static void patches(void *ctx, int64_t b, int64_t e) {
    const patch_job *j = ctx;
    const geom_window *g = j->g;
    const int nsp = g->nsp;
    for (int64_t p = b; p < e; p++) {
        int64_t o[GEOM_WINDOW_MAX_SPATIAL], rest = p;
        for (int i = nsp - 1; i >= 0; i--) {
            o[i] = rest % g->out[i];
            rest /= g->out[i];
        }
        uint8_t *row = j->a + p * j->kg;
        for (int64_t kidx = 0; kidx < j->ks; kidx++) {
            int64_t kr = kidx, off = 0;
            bool inside = true;
            for (int i = nsp - 1; i >= 0; i--) {
                int64_t k = kr % g->k[i];
                kr /= g->k[i];
                int64_t pos = o[i] * g->stride[i] - g->pad_b[i] + k * g->dil[i];
                if (pos < 0 || pos >= g->in[i]) inside = false;
                off += pos * j->sstride[i];
            }
            const uint8_t *src = j->x + off + j->c0 * j->cstride;
            uint8_t *dst = row + kidx * j->cg;
            if (!inside) memset(dst, j->pad, (size_t)j->cg);
            else if (j->cstride == 1) memcpy(dst, src, (size_t)j->cg);
            else for (int64_t c = 0; c < j->cg; c++) dst[c] = src[c * j->cstride];
        }
    }
}

typedef struct out_job {
    const int32_t *acc;    /* [P, mg] */
    const int32_t *bias;   /* this group's mg values */
    const float *scale;    /* this group's mg values */
    int64_t mg;
    uint8_t *y;            /* this image's channel m0 */
    int64_t ystep_p, ystep_m;
    int32_t zp, lo, hi;
} out_job;

static void out_rows(void *ctx, int64_t b, int64_t e) {
    const out_job *j = ctx;
    const int32_t zp = j->zp, lo = j->lo, hi = j->hi;
    for (int64_t p = b; p < e; p++) {
        const int32_t *acc = j->acc + p * j->mg;
        uint8_t *y = j->y + p * j->ystep_p;
        if (j->ystep_m == 1) {
            CPU_SIMD for (int64_t m = 0; m < j->mg; m++) {
                int32_t v = (int32_t)((uint32_t)acc[m] + (uint32_t)j->bias[m]);
                y[m] = (uint8_t)q8_saturate((float)v * j->scale[m], zp, lo, hi);
            }
        } else {
            for (int64_t m = 0; m < j->mg; m++) {
                int32_t v = (int32_t)((uint32_t)acc[m] + (uint32_t)j->bias[m]);
                y[m * j->ystep_m] = (uint8_t)q8_saturate((float)v * j->scale[m], zp, lo, hi);
            }
        }
    }
}

onyx_status cpu_msqlinearconv_run(const kernel_call *c) {
    const qconv_state *prepared = c->state;
    if (prepared && prepared->avx2 && kernel_output(c, 0)->numel > 0) {
        bool done;
        TRY(qconv_avx2_run(prepared->avx2, c, &done));
        if (done) return ONYX_OK;
    }
    TRY(cq_need_q8(c, 0, ONYX_UNDEFINED, "x"));
    TRY(cq_need_q8(c, 3, ONYX_UNDEFINED, "w"));
    const tensor *x = kernel_input(c, 0), *w = kernel_input(c, 3);
    const tensor *ws = kernel_input(c, 4), *wz = kernel_input(c, 5), *bias = kernel_input(c, 8);
    tensor *y = kernel_output(c, 0);
    onyx_dtype t = x->dtype;
    cq_param px, py;
    TRY(cq_param_get(c, 1, 2, t, "x", &px));
    TRY(cq_param_get(c, 6, 7, t, "y", &py));
    bool cl = attr_int(c->node, "channels_last", 0) != 0;
    if (x->rank < 3) return onyx_error(ONYX_ERR_SHAPE, "input 0 (x) has rank %d", x->rank);
    const geom_window *win; /* the plan's: X's dims in NCHW order whatever the layout */
    TRY(kernel_window(c->params, &win));
    const geom_window g = *win;
    const int64_t m = g.m, group = g.group, mg = m / group, cg = g.c / group, ks = kernel_size(w);
    const int64_t kg = cg * ks;
    if (!ws || ws->dtype != ONYX_FLOAT || (ws->numel != 1 && ws->numel != m))
        return onyx_error(ONYX_ERR_SHAPE, "input 4 (w_scale) must be float with 1 or M = %lld "
                          "values", (long long)m);
    if (!wz || wz->dtype != w->dtype || (wz->numel != 1 && wz->numel != m))
        return onyx_error(ONYX_ERR_SHAPE, "input 5 (w_zero_point) must be of w's type with 1 or "
                          "M = %lld values", (long long)m);
    if (bias && (bias->dtype != ONYX_INT32 || bias->numel != m))
        return onyx_error(ONYX_ERR_SHAPE, "input 8 (B) must be int32 with M = %lld values",
                          (long long)m);
    if (y->numel == 0) return ONYX_OK;
    int64_t npos = 1, image = 1;
    for (int i = 0; i < g.nsp; i++) npos *= g.out[i], image *= g.in[i];

    /* scratch: patches [P, kg], int32 sums [P, mg], per-channel parameters, W, GEMM work */
    size_t a_bytes = ((size_t)(npos * kg) + 63) & ~(size_t)63;
    size_t acc_bytes = ((size_t)(npos * mg) * 4 + 63) & ~(size_t)63;
    size_t par_bytes = ((size_t)m * 12 + 63) & ~(size_t)63;
    const qconv_state *st = c->state;
    bool ready = st && st->m == m && st->kg == kg && st->group == group;
    size_t w_bytes = ready ? 0 : ((size_t)(m * kg) + 63) & ~(size_t)63;
    void *buf;
    TRY(kernel_scratch(c, a_bytes + acc_bytes + par_bytes + w_bytes +
                              cq_gemm_work_bytes(npos, mg, kg), &buf));
    uint8_t *a = buf;
    int32_t *acc = (int32_t *)((char *)buf + a_bytes);
    float *scale = (float *)((char *)acc + acc_bytes);
    int32_t *zb = (int32_t *)(scale + m), *bv = zb + m;
    int8_t *wl = ready ? st->w : (int8_t *)((char *)scale + par_bytes);
    void *work = (char *)scale + par_bytes + w_bytes;
    if (!ready)
        for (int64_t gi = 0; gi < group; gi++)
            layout_w(w->dtype, (const uint8_t *)w->data + gi * mg * kg, mg, cg, ks,
                     wl + gi * mg * kg);
    for (int64_t i = 0; i < m; i++) {
        scale[i] = px.scale * ((const float *)ws->data)[ws->numel > 1 ? i : 0] / py.scale;
        bv[i] = bias ? ((const int32_t *)bias->data)[i] : 0;
    }
    for (int64_t i = 0; i < wz->numel; i++) zb[i] = cq_get(w->dtype, wz->data, i);

    /* element strides of x and y in their layout */
    patch_job pj = {.g = &g, .a = a, .kg = kg, .ks = ks, .cg = cg};
    pj.pad = (uint8_t)px.zp;
    int64_t sp = 1;
    for (int i = g.nsp - 1; i >= 0; i--) {
        pj.sstride[i] = sp * (cl ? g.c : 1);
        sp *= g.in[i];
    }
    pj.cstride = cl ? 1 : image;
    out_job oj = {.mg = mg, .zp = py.zp, .lo = cq_lo(t), .hi = cq_hi(t)};
    oj.ystep_p = cl ? m : 1;
    oj.ystep_m = cl ? 1 : npos;
    for (int64_t n = 0; n < g.n; n++) {
        pj.x = (const uint8_t *)x->data + n * image * g.c;
        for (int64_t gi = 0; gi < group; gi++) {
            pj.c0 = gi * cg;
            parallel_for(npos, 65536 / (kg + 1) + 1, patches, &pj);
            cq_gemm gm = {npos, mg, kg, t, w->dtype, a, (const uint8_t *)w->data + gi * mg * kg,
                          false, true, px.zp, wz->numel > 1 ? zb + gi * mg : zb,
                          wz->numel > 1 ? mg : 1, wl + gi * mg * kg};
            cq_gemm_s32(&gm, work, acc);
            oj.acc = acc;
            oj.bias = bv + gi * mg;
            oj.scale = scale + gi * mg;
            oj.y = (uint8_t *)y->data + n * npos * m + gi * mg * (cl ? 1 : npos);
            parallel_for(npos, 65536 / (mg + 1) + 1, out_rows, &oj);
        }
    }
    return ONYX_OK;
}
