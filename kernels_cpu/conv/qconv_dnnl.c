/* QLinearConv (ai.onnx) on oneDNN's int8 convolution: X reordered channels last, the convolution
 * of (X - x_zero_point) by W into int32 (X's zero point a runtime argument, so one primitive
 * serves every zero point), then requantized as onnxruntime does, float(acc + B[m]) *
 * (x_scale * w_scale[m] / y_scale) rounded half to even and saturated around y_zero_point, on
 * the way back to NCHW. X and Y the fusion pass keeps opaque (core/fuse.h: channels last, between
 * the quantized convolutions, pooling and elementwise ops) are read and written as they are.
 * The requantization is ours rather than oneDNN's output scales: oneDNN
 * adds the bias after scaling and the zero point before rounding, two float roundings
 * onnxruntime does not make, which move an output by one step now and then.
 *
 * oneDNN's convolutions take no weight zero point: int8 W with zero point 0 (what onnxruntime's
 * quantizer writes) runs as it is, uint8 W with zero point 128 as int8 shifted once at prepare;
 * any other stays on the reference loops (conv_int.c). So does every CPU without VNNI, where
 * oneDNN's u8 x s8 products saturate in int16. */
#include "kernels_cpu/conv/qconv_dnnl.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec.h"
#include "core/fuse.h"
#include "core/parallel.h"
#include "ops/conv/conv.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/common/dnnl_util.h"

/* Pixels requantized and transposed together: their int32 rows stay in cache between the two. */
#define PIX_BLOCK 64

typedef struct qconv_fast {
    conv_geom g;
    int rank;
    int64_t xdims[ONYX_MAX_RANK], ydims[ONYX_MAX_RANK];
    int64_t pixels;                    /* output pixels per image */
    onyx_dtype xt, yt;
    bool x_opaque, y_opaque;           /* stored channels last (core/fuse.h) */
    dnnl_primitive_t conv, reo_x;      /* reo_x: X to channels last, NULL where they are one */
    dnnl_memory_desc_t md_xu, md_x, md_w, md_acc, md_zp, md_pad_conv, md_pad_reo;
    size_t pad_conv, pad_reo;
    const void *wbuf;                  /* W in the primitive's layout, with its compensations */
    bool wbuf_own;                     /* not the rep's (kernel_shared) */
    size_t off_x, off_acc, off_tile, off_pad, off_mult, off_zp, scratch;
} qconv_fast;

static void md_drop(dnnl_memory_desc_t *md) {
    if (*md) dnnl_memory_desc_destroy(*md);
    *md = NULL;
}

void qconv_fast_release(void *state) {
    qconv_fast *q = state;
    if (!q) return;
    if (q->conv) dnnl_primitive_destroy(q->conv);
    if (q->reo_x) dnnl_primitive_destroy(q->reo_x);
    md_drop(&q->md_xu);
    md_drop(&q->md_x);
    md_drop(&q->md_w);
    md_drop(&q->md_acc);
    md_drop(&q->md_zp);
    md_drop(&q->md_pad_conv);
    md_drop(&q->md_pad_reo);
    if (q->wbuf_own) free((void *)q->wbuf);
    free(q);
}

static int64_t count_of(const tensor *t) { return t ? t->numel : 0; }

static int32_t load8(onyx_dtype d, const void *p, int64_t i) {
    return d == ONYX_INT8 ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

/* Whether W's zero point lets W run as int8 with zero point 0 (uint8 shifted by 128). */
static bool weight_zero_point_fits(const tensor *w, const tensor *wz) {
    int32_t want = w->dtype == ONYX_UINT8 ? 128 : 0;
    if (!wz) return want == 0;
    if (wz->dtype != w->dtype || !wz->data) return false;
    for (int64_t i = 0; i < wz->numel; i++)
        if (load8(wz->dtype, wz->data, i) != want) return false;
    return true;
}

static dnnl_data_type_t dnnl_type(onyx_dtype t) { return t == ONYX_INT8 ? dnnl_s8 : dnnl_u8; }

/* ---- weights: packed once, shared by the rep's plans (kernel_shared) */

typedef struct wkey {
    char tag[8];
    const void *data;
    int32_t wtype, xtype; /* X's type decides oneDNN's compensation (s8 X: shifted by 128) */
    int64_t numel;
    cpu_dnnl_layout packed;
} wkey;

typedef struct wpack_ctx {
    const qconv_fast *q;
    const tensor *w;
    dnnl_memory_desc_t md_wu;
} wpack_ctx;

static onyx_status wpack_make(void *ctx, void **obj) {
    const wpack_ctx *x = ctx;
    onyx_status st = ONYX_OK;
    dnnl_primitive_t reo = NULL;
    dnnl_memory_desc_t pad_md = NULL;
    dnnl_memory_t mu = NULL, mw = NULL, mp = NULL;
    size_t pad_size = 0;
    int8_t *shifted = NULL;
    void *pad = NULL, *buf = cpu_dnnl_alloc(dnnl_memory_desc_get_size(x->q->md_w));
    if (!buf) return onyx_oom("int8 convolution weights");
    const void *src = x->w->data;
    if (x->w->dtype == ONYX_UINT8) { /* w - 128 as int8: the zero point 128 becomes 0 */
        if (!(shifted = malloc((size_t)x->w->numel + 1))) {
            st = onyx_oom("int8 convolution weights");
            goto done;
        }
        for (int64_t i = 0; i < x->w->numel; i++)
            shifted[i] = (int8_t)(((const uint8_t *)x->w->data)[i] ^ 0x80);
        src = shifted;
    }
    dnnl_engine_t eng;
    CHECK(cpu_dnnl_engine(&eng));
    CHECK(cpu_dnnl_reorder(x->md_wu, x->q->md_w, &reo, &pad_md, &pad_size));
    if (pad_size && !(pad = cpu_dnnl_alloc(pad_size))) {
        st = onyx_oom("int8 convolution weights");
        goto done;
    }
    CHECK(cpu_dnnl_check(dnnl_guard_memory_create(&mu, x->md_wu, eng, (void *)src), "binding weights"));
    CHECK(cpu_dnnl_check(dnnl_guard_memory_create(&mw, x->q->md_w, eng, buf), "binding weights"));
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_FROM, mu}, {DNNL_ARG_TO, mw}};
    int n = 2;
    if (pad_size) {
        CHECK(cpu_dnnl_check(dnnl_guard_memory_create(&mp, pad_md, eng, pad), "binding a scratchpad"));
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, mp};
    }
    CHECK(cpu_dnnl_execute(reo, n, args));
    *obj = buf;
    buf = NULL;
done:
    if (reo) dnnl_primitive_destroy(reo);
    if (pad_md) dnnl_memory_desc_destroy(pad_md);
    if (mu) dnnl_memory_destroy(mu);
    if (mw) dnnl_memory_destroy(mw);
    if (mp) dnnl_memory_destroy(mp);
    free(pad);
    free(shifted);
    free(buf);
    return st;
}

static void wpack_release(void *obj) { free(obj); }

static onyx_status pack_weights(const kernel_prep *p, qconv_fast *q, const tensor *w) {
    onyx_status st = ONYX_OK;
    wpack_ctx ctx = {q, w, NULL};
    dnnl_dims_t d;
    int wr = 0;
    if (q->g.group > 1) d[wr++] = q->g.group;
    d[wr++] = q->g.m / q->g.group;
    d[wr++] = q->g.c / q->g.group;
    for (int i = 0; i < q->g.nsp; i++) d[wr++] = q->g.k[i];
    static const dnnl_format_tag_t plain[] = {dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
    TRY(cpu_dnnl_check(dnnl_memory_desc_create_with_tag(&ctx.md_wu, wr, d, dnnl_s8, plain[wr - 3]),
                       "describing int8 weights"));
    wkey key;
    memset(&key, 0, sizeof key); /* padding bytes are part of the key */
    memcpy(key.tag, "qconvW", 7);
    key.data = w->data;
    key.wtype = (int32_t)w->dtype;
    key.xtype = (int32_t)q->xt;
    key.numel = w->numel;
    void *obj = NULL;
    if (cpu_dnnl_layout_of(q->md_w, &key.packed) && p->env && p->env->shared) {
        st = kernel_shared(p, &key, sizeof key, wpack_make, wpack_release, &ctx, &obj);
    } else {
        st = wpack_make(&ctx, &obj);
        q->wbuf_own = st == ONYX_OK;
    }
    if (st == ONYX_OK) q->wbuf = obj;
    dnnl_memory_desc_destroy(ctx.md_wu);
    return st;
}

/* ---- prepare */

static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

/* A copy of pd's descriptor `what`; caller destroys. */
static onyx_status md_of(dnnl_memory_desc_t *out, const_dnnl_primitive_desc_t pd, dnnl_query_t what) {
    const_dnnl_memory_desc_t q = dnnl_primitive_desc_query_md(pd, what, 0);
    if (!q) return onyx_error(ONYX_ERR_RUNTIME, "oneDNN: the int8 convolution has no descriptor %d",
                              (int)what);
    return cpu_dnnl_check(dnnl_memory_desc_clone(out, q), "copying a descriptor");
}

/* The convolution primitive; ONYX_ERR_UNSUPPORTED where oneDNN has only its reference kernel
 * (no faster than ours, and not what this path is for). */
static onyx_status make_primitive(qconv_fast *q) {
    dnnl_engine_t eng;
    TRY(cpu_dnnl_engine(&eng));
    dnnl_dims_t strides, dil, pl, pr;
    for (int i = 0; i < q->g.nsp; i++) {
        strides[i] = q->g.stride[i];
        dil[i] = q->g.dil[i] - 1;
        pl[i] = q->g.pad_b[i];
        pr[i] = q->g.pad_e[i];
    }
    dnnl_memory_desc_t md_wany = NULL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    onyx_status st = ONYX_OK;
    dnnl_dims_t d;
    int wr = 0;
    if (q->g.group > 1) d[wr++] = q->g.group;
    d[wr++] = q->g.m / q->g.group;
    d[wr++] = q->g.c / q->g.group;
    for (int i = 0; i < q->g.nsp; i++) d[wr++] = q->g.k[i];
    CHECK(cpu_dnnl_check(dnnl_memory_desc_create_with_tag(&md_wany, wr, d, dnnl_s8, dnnl_format_tag_any),
                         "describing int8 weights"));
    CHECK(cpu_dnnl_md_channels_last(&q->md_x, q->rank, q->xdims, dnnl_type(q->xt)));
    CHECK(cpu_dnnl_md_channels_last(&q->md_acc, q->rank, q->ydims, dnnl_s32));
    CHECK(cpu_dnnl_attr(&attr));
    CHECK(cpu_dnnl_check(dnnl_primitive_attr_set_zero_points_mask(attr, DNNL_ARG_SRC, 0),
                         "setting the input zero point"));
    CHECK(cpu_dnnl_check(dnnl_guard_convolution_pd(&pd, eng, dnnl_forward_inference,
                                                   dnnl_convolution_direct, q->md_x, md_wany, NULL,
                                                   q->md_acc, strides, dil, pl, pr, attr),
                         "creating an int8 convolution"));
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl ||
        strncmp(impl, "ref", 3) == 0) {
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "oneDNN has only a reference int8 convolution here");
        goto done;
    }
    CHECK(md_of(&q->md_w, pd, dnnl_query_weights_md));
    dnnl_memory_desc_t pad_md = NULL;
    size_t pad = cpu_dnnl_scratchpad(pd, &pad_md);
    if (pad == SIZE_MAX) {
        st = onyx_oom("int8 convolution scratchpad");
        goto done;
    }
    q->md_pad_conv = pad_md;
    q->pad_conv = pad;
    CHECK(cpu_dnnl_check(dnnl_guard_primitive_create(&q->conv, pd), "creating an int8 convolution"));
    dnnl_dims_t one = {1};
    CHECK(cpu_dnnl_check(dnnl_memory_desc_create_with_tag(&q->md_zp, 1, one, dnnl_s32, dnnl_a),
                         "describing a zero point"));
done:
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (md_wany) dnnl_memory_desc_destroy(md_wany);
    return st;
}

onyx_status qconv_fast_prepare(const kernel_prep *p, void **state) {
    *state = NULL;
    const type_info *xt = p->in_type[0], *wt = p->n_in > 3 ? p->in_type[3] : NULL;
    const tensor *w = p->n_in > 3 ? p->in_value[3] : NULL;
    const tensor *wz = p->n_in > 5 ? p->in_value[5] : NULL;
    bool wz_given = p->n_in > 5 && p->in_type[5];
    if (!cpu_int8_exact() || !xt || !wt || !type_is_static(xt) || !type_is_static(wt) || !w ||
        !p->out_type || xt->rank < 3 || xt->rank > 5 || (wz_given && !wz) ||
        (xt->dtype != ONYX_UINT8 && xt->dtype != ONYX_INT8) ||
        (w->dtype != ONYX_UINT8 && w->dtype != ONYX_INT8) ||
        (p->out_type->dtype != ONYX_UINT8 && p->out_type->dtype != ONYX_INT8) ||
        !weight_zero_point_fits(w, wz))
        return ONYX_OK;
    qconv_fast *q = calloc(1, sizeof *q);
    if (!q) return onyx_oom("int8 convolution");
    onyx_status st = conv_geometry(p->node, false, xt->rank, xt->dims, wt->rank, wt->dims, &q->g);
    if (st != ONYX_OK) { /* the reference reports it at run, as for any geometry */
        onyx_error_clear();
        free(q);
        return ONYX_OK;
    }
    q->rank = xt->rank;
    memcpy(q->xdims, xt->dims, (size_t)q->rank * sizeof *q->xdims);
    conv_out_dims(&q->g, q->ydims);
    q->xt = xt->dtype;
    q->yt = p->out_type->dtype;
    q->x_opaque = p->fused && p->fused->opaque_in0;
    q->y_opaque = p->fused && p->fused->opaque_out0;
    q->pixels = 1;
    for (int i = 0; i < q->g.nsp; i++) q->pixels *= q->g.out[i];
    int64_t xn = 1, yn = q->g.n * q->g.m * q->pixels;
    for (int i = 0; i < q->rank; i++) xn *= q->xdims[i];
    if (xn <= 0 || yn <= 0 || (uint64_t)yn > SIZE_MAX / 16) {
        free(q);
        return ONYX_OK;
    }
    st = make_primitive(q);
    /* X as stored is already channels last where it has one channel or one pixel */
    if (st == ONYX_OK && !q->x_opaque && q->g.c > 1 && xn / (q->g.n * q->g.c) > 1) {
        CHECK(cpu_dnnl_md_plain(&q->md_xu, q->rank, q->xdims, dnnl_type(q->xt)));
        CHECK(cpu_dnnl_reorder(q->md_xu, q->md_x, &q->reo_x, &q->md_pad_reo, &q->pad_reo));
    }
    if (st == ONYX_OK) CHECK(pack_weights(p, q, w));
    if (st == ONYX_OK) {
        size_t off = 0;
        q->off_x = off;
        off += q->reo_x ? round64((size_t)xn) : 0;
        q->off_acc = off;
        off += round64((size_t)yn * sizeof(int32_t));
        q->off_tile = off;
        off += q->y_opaque ? 0 : round64((size_t)yn);
        q->off_pad = off;
        off += round64(q->pad_conv > q->pad_reo ? q->pad_conv : q->pad_reo);
        q->off_mult = off;
        off += round64((size_t)q->g.m * sizeof(float));
        q->off_zp = off;
        off += 64;
        q->scratch = off;
        *state = q;
        return ONYX_OK;
    }
done:
    qconv_fast_release(q);
    if (st == ONYX_ERR_NO_MEMORY) return st;
    onyx_error_clear(); /* oneDNN has no int8 kernel for this geometry: the reference runs it */
    return ONYX_OK;
}

bool qconv_fast_opaque(const void *state) {
    const qconv_fast *q = state;
    return q->x_opaque || q->y_opaque;
}

/* ---- run */

typedef struct requant_job {
    const int32_t *acc, *bias;
    const float *mult;
    bool per_channel, y_signed, y_opaque;
    uint8_t *tile;
    void *y;
    int64_t m, pixels, blocks;
    int32_t zp, lo, hi;
} requant_job;

/* One pixel's m accumulators, requantized into out (8 lanes at a time). */
__attribute__((target("avx2"))) static void requant_row(const requant_job *j, const int32_t *a,
                                                        uint8_t *out) {
    const float lo = (float)(j->lo - j->zp), hi = (float)(j->hi - j->zp);
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi), m0 = _mm256_set1_ps(j->mult[0]);
    const __m256i vzp = _mm256_set1_epi32(j->zp);
    int64_t i = 0;
    for (; i + 8 <= j->m; i += 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(a + i));
        if (j->bias) v = _mm256_add_epi32(v, _mm256_loadu_si256((const __m256i *)(j->bias + i)));
        __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(v),
                                 j->per_channel ? _mm256_loadu_ps(j->mult + i) : m0);
        f = _mm256_min_ps(_mm256_max_ps(f, vlo), vhi);
        __m256i r = _mm256_add_epi32(_mm256_cvtps_epi32(f), vzp); /* half to even */
        __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        __m128i b8 = j->y_signed ? _mm_packs_epi16(w16, w16) : _mm_packus_epi16(w16, w16);
        _mm_storel_epi64((__m128i *)(out + i), b8);
    }
    for (; i < j->m; i++) {
        int32_t v = j->bias ? (int32_t)((uint32_t)a[i] + (uint32_t)j->bias[i]) : a[i];
        float f = (float)v * j->mult[j->per_channel ? i : 0];
        f = fminf(fmaxf(f, lo), hi);
        int32_t r = (int32_t)nearbyintf(f) + j->zp;
        out[i] = j->y_signed ? (uint8_t)(int8_t)r : (uint8_t)r;
    }
}

/* Blocks [b, e) of PIX_BLOCK pixels: requantized channels last into an opaque Y, or into the
 * tile and then written to Y channel by channel. */
static void requant_blocks(void *ctx, int64_t b, int64_t e) {
    const requant_job *j = ctx;
    for (int64_t t = b; t < e; t++) {
        int64_t n = t / j->blocks, p0 = (t % j->blocks) * PIX_BLOCK;
        int64_t np = j->pixels - p0 < PIX_BLOCK ? j->pixels - p0 : PIX_BLOCK;
        const int32_t *a = j->acc + (n * j->pixels + p0) * j->m;
        uint8_t *tile = (j->y_opaque ? (uint8_t *)j->y : j->tile) + (n * j->pixels + p0) * j->m;
        for (int64_t p = 0; p < np; p++) requant_row(j, a + p * j->m, tile + p * j->m);
        if (j->y_opaque) continue;
        uint8_t *y = (uint8_t *)j->y + n * j->m * j->pixels + p0;
        for (int64_t m = 0; m < j->m; m++, y += j->pixels)
            for (int64_t p = 0; p < np; p++) y[p] = tile[p * j->m + m];
    }
}

static bool scalar_float(const tensor *t, float *out) {
    if (!t || t->dtype != ONYX_FLOAT || t->numel != 1) return false;
    *out = ((const float *)t->data)[0];
    return true;
}

/* Binds md to ptr as a new memory object. */
static onyx_status bind(dnnl_memory_t *m, const_dnnl_memory_desc_t md, void *ptr) {
    dnnl_engine_t eng;
    TRY(cpu_dnnl_engine(&eng));
    return cpu_dnnl_check(dnnl_guard_memory_create(m, md, eng, ptr), "binding a tensor");
}

onyx_status qconv_fast_run(const kernel_call *c, const void *state, bool *done) {
    const qconv_fast *q = state;
    *done = false;
    const tensor *x = kernel_input(c, 0), *xz = kernel_input(c, 2), *ws = kernel_input(c, 4),
                 *yz = kernel_input(c, 7), *b = kernel_input(c, 8);
    tensor *y = kernel_output(c, 0);
    float xs, ys;
    /* anything unexpected: the reference checks it and says what is wrong */
    if (!x || !y || x->dtype != q->xt || y->dtype != q->yt || x->rank != q->rank ||
        memcmp(x->dims, q->xdims, (size_t)q->rank * sizeof *q->xdims) != 0 ||
        !scalar_float(kernel_input(c, 1), &xs) || !scalar_float(kernel_input(c, 6), &ys) ||
        !ws || ws->dtype != ONYX_FLOAT || (ws->numel != 1 && ws->numel != q->g.m) ||
        (xz && (xz->numel != 1 || xz->dtype != q->xt)) || !yz || yz->numel != 1 ||
        yz->dtype != q->yt || (b && (b->dtype != ONYX_INT32 || b->numel != q->g.m)) ||
        count_of(y) != q->g.n * q->g.m * q->pixels)
        return ONYX_OK;
    void *mem;
    TRY(kernel_scratch(c, q->scratch, &mem));
    char *base = mem;
    float *mult = (float *)(base + q->off_mult);
    for (int64_t i = 0; i < ws->numel; i++) {
        mult[i] = xs * ((const float *)ws->data)[i] / ys; /* onnxruntime's order */
        if (!isfinite(mult[i])) return ONYX_OK;
    }
    int32_t *zp = (int32_t *)(base + q->off_zp);
    *zp = xz ? load8(xz->dtype, xz->data, 0) : 0;

    onyx_status st = ONYX_OK;
    dnnl_memory_t mxu = NULL, mx = NULL, mw = NULL, macc = NULL, mzp = NULL, mpad = NULL;
    /* X as the convolution reads it: channels last (opaque, or one channel or pixel) or copied so */
    void *xcl = q->reo_x ? base + q->off_x : x->data, *pad = base + q->off_pad;
    CHECK(bind(&mx, q->md_x, xcl));
    if (q->reo_x) {
        CHECK(bind(&mxu, q->md_xu, x->data));
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_FROM, mxu}, {DNNL_ARG_TO, mx}};
        int n = 2;
        if (q->pad_reo) {
            CHECK(bind(&mpad, q->md_pad_reo, pad));
            args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, mpad};
        }
        CHECK(cpu_dnnl_execute(q->reo_x, n, args));
        dnnl_memory_destroy(mpad);
        mpad = NULL;
    }
    CHECK(bind(&mw, q->md_w, (void *)q->wbuf));
    CHECK(bind(&macc, q->md_acc, base + q->off_acc));
    CHECK(bind(&mzp, q->md_zp, zp));
    dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, mx},
                               {DNNL_ARG_WEIGHTS, mw},
                               {DNNL_ARG_DST, macc},
                               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, mzp}};
    int n = 4;
    if (q->pad_conv) {
        CHECK(bind(&mpad, q->md_pad_conv, pad));
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, mpad};
    }
    CHECK(cpu_dnnl_execute(q->conv, n, args));

    bool y_signed = q->yt == ONYX_INT8;
    requant_job j = {.acc = (const int32_t *)(base + q->off_acc),
                     .bias = b ? b->data : NULL,
                     .mult = mult,
                     .per_channel = ws->numel > 1,
                     .y_signed = y_signed,
                     .y_opaque = q->y_opaque,
                     .tile = (uint8_t *)(base + q->off_tile),
                     .y = y->data,
                     .m = q->g.m,
                     .pixels = q->pixels,
                     .blocks = (q->pixels + PIX_BLOCK - 1) / PIX_BLOCK,
                     .zp = load8(yz->dtype, yz->data, 0),
                     .lo = y_signed ? -128 : 0,
                     .hi = y_signed ? 127 : 255};
    parallel_for(q->g.n * j.blocks, 1, requant_blocks, &j);
    *done = true;
done:
    if (mxu) dnnl_memory_destroy(mxu);
    if (mx) dnnl_memory_destroy(mx);
    if (mw) dnnl_memory_destroy(mw);
    if (macc) dnnl_memory_destroy(macc);
    if (mzp) dnnl_memory_destroy(mzp);
    if (mpad) dnnl_memory_destroy(mpad);
    return st;
}
