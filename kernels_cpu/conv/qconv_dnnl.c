/* QLinearConv (ai.onnx) on oneDNN's int8 convolution, requantized inside it as onnxruntime
 * requantizes: X channels last (opaque, or reordered so), the convolution of (X - x_zero_point)
 * by W with X's zero point a runtime argument, then in float float(acc) + B[m] (the bias as a
 * float), times x_scale * w_scale[m] / y_scale (a binary post-op of runtime multipliers,
 * computed in onnxruntime's order), rounded half to even (an eltwise round post-op), plus
 * y_zero_point (a runtime argument) and saturated into 8 bits, channels last (opaque Y) or
 * reordered back to NCHW. Step for step onnxruntime's float(acc + B[m]) * multiplier, rounded,
 * shifted and saturated: the same bits while the sums stay below 2^24, where float holds them
 * exactly (oneDNN's output scales would add the bias after scaling and the zero point before
 * rounding, two roundings onnxruntime does not make). One primitive serves every scale and zero
 * point; the result never leaves the kernel as int32.
 *
 * X's zero point costs oneDNN a compensation per output (a fifth of MobileNetV2's 1x1
 * convolutions, whose sums are short): where the convolution has no padding, or the zero point
 * is 0, it goes into the bias instead, B[m] - x_zero_point * sum(W[m]) in int32, exact while
 * sum(X W) stays below 2^24 (checked from W's magnitudes at prepare) and the folded bias too
 * (checked per run; else that run takes the reference). Padding would read 0, not the zero point.
 *
 * oneDNN's convolutions take no weight zero point: int8 W with zero point 0 (what onnxruntime's
 * quantizer writes) runs as it is, uint8 W with zero point 128 as int8 shifted once at prepare;
 * any other stays on the reference loops (conv_int.c). So does every CPU without VNNI, where
 * oneDNN's u8 x s8 products saturate in int16 (not as onnxruntime's do): cpu_i8_choose() picks
 * this path only where it is exact; elsewhere kernels_cpu/conv/qconv_avx2.c runs the node. */
#include "kernels_cpu/conv/qconv_dnnl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec_frame.h"
#include "core/exec_run.h"
#include "core/fuse_chain.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/common/dnnl_util.h"
#include "kernels_cpu/common/i8_gemm_avx2.h"
#include "kernels_cpu/common/requant.h"
#include "kernels_cpu/common/cpu_types.h"

typedef struct qconv_fast {
    geom_window g;
    int rank;
    int64_t xdims[ONYX_MAX_RANK], ydims[ONYX_MAX_RANK];
    onyx_dtype xt, yt;
    bool x_opaque, y_opaque;           /* stored channels last (core/fuse.h) */
    bool has_bias;                     /* the node's B */
    bool fold_xz;                      /* X's zero point folded into the bias: none in oneDNN */
    /* Y's zero point as a post-op (zy_as_post_op) */
    bool zy_post_op;
    int32_t zy;
    int32_t *wsum;                     /* [M] sums of W (as int8) where folding a nonzero one */
    /* reo_x: X to channels last, reo_y: Y back to NCHW; NULL where not needed (opaque, or one
     * channel or pixel, where the two layouts are one) */
    dnnl_primitive_t conv, reo_x, reo_y;
    dnnl_memory_desc_t md_xu, md_x, md_w, md_b, md_y, md_yu, md_mult, md_zp, md_pad_conv,
        md_pad_reo_x, md_pad_reo_y;
    size_t pad_conv, pad_reo_x, pad_reo_y;
    const void *wbuf;                  /* W in the primitive's layout, with its compensations */
    /* One pixel in, one out (a squeeze-and-excitation block's 1x1 convolutions): W as int8
     * [M][C], each output a dot product computed here, no primitive (oneDNN 3.2 has only its
     * reference kernel for these, at a fifth of EfficientNet-B0's int8 run). */
    int8_t *w8;
    bool wbuf_own;                     /* not the rep's (kernel_shared) */
    /* the bias as float [M], the multipliers [M] and the two zero points, computed once at
     * prepare where the scales, zero points and bias are constants (else per run, in scratch) */
    float *fixed;
    int32_t fixed_zp[2];
    /* a run's scratch: X and Y channels last (where reordered), the largest scratchpad, the
     * bias as float, the multipliers, the two zero points */
    size_t off_x, off_y, off_pad, off_b, off_mult, off_zp, scratch;
} qconv_fast;

static void md_drop(dnnl_memory_desc_t *md) {
    if (*md) dnnl_memory_desc_destroy(*md);
    *md = NULL;
}

void qconv_fast_release(void *state) {
    qconv_fast *q = state;
    if (!q) return;
    dnnl_primitive_t prims[] = {q->conv, q->reo_x, q->reo_y};
    for (size_t i = 0; i < sizeof prims / sizeof *prims; i++)
        if (prims[i]) dnnl_primitive_destroy(prims[i]);
    dnnl_memory_desc_t *mds[] = {&q->md_xu, &q->md_x, &q->md_w, &q->md_b, &q->md_y, &q->md_yu,
                                 &q->md_mult, &q->md_zp, &q->md_pad_conv, &q->md_pad_reo_x,
                                 &q->md_pad_reo_y};
    for (size_t i = 0; i < sizeof mds / sizeof *mds; i++) md_drop(mds[i]);
    if (q->wbuf_own) free((void *)q->wbuf);
    free(q->wsum);
    free(q->fixed);
    free(q->w8);
    free(q);
}

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
    int8_t *shifted = NULL;
    void *buf = cpu_dnnl_alloc(dnnl_memory_desc_get_size(x->q->md_w));
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
    CHECK(cpu_dnnl_reorder_once(x->md_wu, src, x->q->md_w, buf));
    *obj = buf;
    buf = NULL;
done:
    free(shifted);
    free(buf);
    return st;
}

static void wpack_release(void *obj) { free(obj); }

/* W's dims as oneDNN takes them ([group,] M / group, C / group, k...), in d; their count. */
static int weight_dims(const qconv_fast *q, dnnl_dims_t d) {
    int wr = 0;
    if (q->g.group > 1) d[wr++] = q->g.group;
    d[wr++] = q->g.m / q->g.group;
    d[wr++] = q->g.c / q->g.group;
    for (int i = 0; i < q->g.nsp; i++) d[wr++] = q->g.k[i];
    return wr;
}

static onyx_status pack_weights(const kernel_prep *p, qconv_fast *q, const tensor *w) {
    onyx_status st = ONYX_OK;
    wpack_ctx ctx = {q, w, NULL};
    dnnl_dims_t d;
    int wr = weight_dims(q, d);
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

/* The attributes: runtime zero points of X (where not folded) and of Y (where not a constant),
 * and the post-ops that requantize: times the per-channel multipliers (a runtime [1, M, 1...]
 * operand), rounded half to even, plus Y's constant zero point. */
static onyx_status make_attr(qconv_fast *q, dnnl_primitive_attr_t *out) {
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    onyx_status st = ONYX_OK;
    CHECK(cpu_dnnl_attr(&attr));
    if (!q->fold_xz)
        CHECK(cpu_dnnl_check(dnnl_primitive_attr_set_zero_points_mask(attr, DNNL_ARG_SRC, 0),
                             "setting the input zero point"));
    if (!q->zy_post_op)
        CHECK(cpu_dnnl_check(dnnl_primitive_attr_set_zero_points_mask(attr, DNNL_ARG_DST, 0),
                             "setting the output zero point"));
    dnnl_dims_t d;
    for (int i = 0; i < q->rank; i++) d[i] = i == 1 ? q->g.m : 1;
    CHECK(cpu_dnnl_check(dnnl_memory_desc_create_with_tag(&q->md_mult, q->rank, d, dnnl_f32,
                                                          q->rank == 3   ? dnnl_abc
                                                          : q->rank == 4 ? dnnl_abcd
                                                                         : dnnl_abcde),
                         "describing the multipliers"));
    CHECK(cpu_dnnl_check(dnnl_post_ops_create(&po), "creating post-ops"));
    CHECK(cpu_dnnl_check(dnnl_post_ops_append_binary(po, dnnl_binary_mul, q->md_mult),
                         "appending the multipliers"));
    CHECK(cpu_dnnl_check(dnnl_post_ops_append_eltwise(po, dnnl_eltwise_round, 0.f, 0.f),
                         "appending the rounding"));
    /* the rounded value is an integer in float: adding the zero point there is exact below
     * 2^24, and past it the conversion to 8 bits saturates either way */
    if (q->zy_post_op && q->zy != 0)
        CHECK(cpu_dnnl_check(dnnl_post_ops_append_eltwise(po, dnnl_eltwise_linear, 1.f, (float)q->zy),
                             "appending the output zero point"));
    CHECK(cpu_dnnl_check(dnnl_primitive_attr_set_post_ops(attr, po), "setting post-ops"));
    *out = attr;
    attr = NULL;
done:
    if (po) dnnl_post_ops_destroy(po);
    if (attr) dnnl_primitive_attr_destroy(attr);
    return st;
}

/* Multiply-adds below which oneDNN's reference kernel will do: a squeeze-and-excitation block's
 * convolutions of one pixel, which oneDNN 3.2 has no other int8 kernel for (and which must
 * stay on this path for the opaque tensors around them). */
#define REF_MACS_MAX ((int64_t)1 << 20)

/* Input channels per group below which a pointwise convolution leaves oneDNN's AMX kernels for
 * the next ones it has (VNNI): an AMX tile multiply takes K 64 bytes a row, and a 1x1
 * convolution's K is its input channels, so 16-32 of them fill a quarter to a half of each. This
 * Xeon (Sapphire Rapids), 2 threads, MobileNetV2's and EfficientNet-B0's convolutions, shortest
 * of 30 runs: AMX took 1.3-1.9x VNNI's time at 16-32 channels and 1.07x at 40 (jit_1x1 kernels),
 * while the wider pointwise ones and the spatial ones (whose K spans the taps) gain on AMX, up
 * to 3x. With the brgemm kernels (Y's zero point a post-op): 1.1-1.15x at 16-24 channels, 0.9x at
 * 32, the whole runs within their noise of each other at a bound of 32 or 64. */
#define AMX_MIN_POINTWISE_CHANNELS 64

static bool narrow_pointwise(const qconv_fast *q) {
    for (int i = 0; i < q->g.nsp; i++)
        if (q->g.k[i] != 1) return false;
    return q->g.c / q->g.group < AMX_MIN_POINTWISE_CHANNELS;
}

static const char *impl_of(const_dnnl_primitive_desc_t pd) {
    const char *impl = NULL;
    return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success
               ? impl
               : NULL;
}

static onyx_status create_pd(qconv_fast *q, const_dnnl_memory_desc_t md_w,
                             const_dnnl_primitive_attr_t attr, dnnl_primitive_desc_t *pd) {
    dnnl_engine_t eng;
    TRY(cpu_dnnl_engine(&eng));
    dnnl_dims_t strides, dil, pl, pr;
    for (int i = 0; i < q->g.nsp; i++) {
        strides[i] = q->g.stride[i];
        dil[i] = q->g.dil[i] - 1;
        pl[i] = q->g.pad_b[i];
        pr[i] = q->g.pad_e[i];
    }
    return cpu_dnnl_check(dnnl_guard_convolution_pd(pd, eng, dnnl_forward_inference,
                                                    dnnl_convolution_direct, q->md_x, md_w,
                                                    q->md_b, q->md_y, strides, dil, pl, pr, attr),
                          "creating an int8 convolution");
}

/* oneDNN 3.2's AMX pointwise int8 kernel (jit_1x1:avx512_core_amx) writes past the end of Y
 * where an image has 27, 33, 36, 39, 42, 45 or 48 output pixels: 720 bytes past a 9x5 one of
 * 48 channels, whatever the channels, threads or batch (guard bytes around Y, every count from 1
 * to 400; onyx's arena and heap took it: a 9x5 projection between two convolutions crashed
 * when its rep was freed). Its other AMX kernel (jit:avx512_core_amx) writes inside Y at every
 * count from 1 to 200; convolutions of so few pixels take it. */
#define AMX_1X1_PIXELS_MIN 49

static bool overflows(const qconv_fast *q, const char *impl) {
    int64_t pixels = 1;
    for (int i = 0; i < q->g.nsp; i++) pixels *= q->g.out[i];
    return impl && strcmp(impl, "jit_1x1:avx512_core_amx") == 0 && pixels < AMX_1X1_PIXELS_MIN;
}

/* Whether pd's kernel is one q does not take from oneDNN: AMX for a narrow pointwise convolution
 * (slower than VNNI there), or the pointwise AMX kernel where it overflows. */
static bool unwanted(const qconv_fast *q, const_dnnl_primitive_desc_t pd) {
    const char *impl = impl_of(pd);
    return (narrow_pointwise(q) && impl && strstr(impl, "amx")) || overflows(q, impl);
}

/* Where oneDNN's first choice is unwanted, *pd moves to its first implementation that is
 * neither unwanted nor the reference, if it has one (asked in a second descriptor: walking the
 * first past its end would lose it); none: *pd stays, unless it overflows (an error then). */
static onyx_status leave_unwanted(qconv_fast *q, const_dnnl_memory_desc_t md_w,
                                  const_dnnl_primitive_attr_t attr, dnnl_primitive_desc_t *pd) {
    if (!unwanted(q, *pd)) return ONYX_OK;
    dnnl_primitive_desc_t alt = NULL;
    TRY(create_pd(q, md_w, attr, &alt));
    while (unwanted(q, alt) && dnnl_guard_next_impl(alt) == dnnl_success) {
    }
    const char *impl = impl_of(alt);
    if (impl && !unwanted(q, alt) && strncmp(impl, "ref", 3) != 0) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = alt;
        return ONYX_OK;
    }
    dnnl_primitive_desc_destroy(alt);
    if (overflows(q, impl_of(*pd)))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "oneDNN's only int8 kernel here writes past Y");
    return ONYX_OK;
}

/* The convolution's primitive descriptor in *out (caller destroys), with X's, Y's and the bias's
 * descriptors and the attributes' multipliers in q; ONYX_ERR_UNSUPPORTED where oneDNN has only
 * its reference kernel and the convolution is larger than REF_MACS_MAX (no faster than ours, and
 * not what this path is for). */
static onyx_status describe(qconv_fast *q, dnnl_primitive_desc_t *out) {
    *out = NULL;
    dnnl_memory_desc_t md_wany = NULL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    onyx_status st = ONYX_OK;
    dnnl_dims_t d;
    int wr = weight_dims(q, d);
    CHECK(cpu_dnnl_check(dnnl_memory_desc_create_with_tag(&md_wany, wr, d, dnnl_s8, dnnl_format_tag_any),
                         "describing int8 weights"));
    CHECK(cpu_dnnl_md_channels_last(&q->md_x, q->rank, q->xdims, dnnl_type(q->xt)));
    CHECK(cpu_dnnl_md_channels_last(&q->md_y, q->rank, q->ydims, dnnl_type(q->yt)));
    if (q->has_bias || q->wsum) {
        dnnl_dims_t m = {q->g.m};
        CHECK(cpu_dnnl_check(dnnl_memory_desc_create_with_tag(&q->md_b, 1, m, dnnl_f32, dnnl_a),
                             "describing the bias"));
    }
    CHECK(make_attr(q, &attr));
    CHECK(create_pd(q, md_wany, attr, &pd));
    CHECK(leave_unwanted(q, md_wany, attr, &pd));
    int64_t macs = q->g.n * q->g.m * (q->g.c / q->g.group);
    for (int i = 0; i < q->g.nsp; i++) macs *= q->g.k[i] * q->g.out[i];
    const char *impl = impl_of(pd);
    if (!impl || (strncmp(impl, "ref", 3) == 0 && macs > REF_MACS_MAX)) {
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "oneDNN has only a reference int8 convolution here");
        goto done;
    }
    *out = pd;
    pd = NULL;
done:
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (md_wany) dnnl_memory_desc_destroy(md_wany);
    return st;
}

/* The convolution primitive, from its descriptor (describe). */
static onyx_status make_primitive(qconv_fast *q) {
    dnnl_primitive_desc_t pd = NULL;
    TRY(describe(q, &pd));
    onyx_status st = ONYX_OK;
    CHECK(md_of(&q->md_w, pd, dnnl_query_weights_md));
    size_t pad = cpu_dnnl_scratchpad(pd, &q->md_pad_conv);
    if (pad == SIZE_MAX) {
        st = onyx_oom("int8 convolution scratchpad");
        goto done;
    }
    q->pad_conv = pad;
    CHECK(cpu_dnnl_check(dnnl_guard_primitive_create(&q->conv, pd), "creating an int8 convolution"));
    dnnl_dims_t one = {1};
    CHECK(cpu_dnnl_check(dnnl_memory_desc_create_with_tag(&q->md_zp, 1, one, dnnl_s32, dnnl_a),
                         "describing a zero point"));
done:
    dnnl_primitive_desc_destroy(pd);
    return st;
}

/* The sum of one output channel's n weights from `at` (as int8: less `shift`) and of their
 * magnitudes. Typed loops: the query and the prepare both run it over every weight. */
static void weight_row_sums(const tensor *w, int64_t at, int64_t n, int32_t shift, int64_t *sum,
                            int64_t *magnitude) {
    int64_t s = 0, a = 0;
    if (w->dtype == ONYX_INT8) {
        const int8_t *v = (const int8_t *)w->data + at;
        for (int64_t k = 0; k < n; k++) {
            s += v[k];
            a += v[k] < 0 ? -v[k] : v[k];
        }
    } else {
        const uint8_t *v = (const uint8_t *)w->data + at;
        for (int64_t k = 0; k < n; k++) {
            int32_t x = (int32_t)v[k] - shift;
            s += x;
            a += x < 0 ? -x : x;
        }
    }
    *sum = s;
    *magnitude = a;
}

/* Whether X's zero point can go into the bias (qconv_fast above): absent or a constant 0, or
 * no padding, every sum of X W below 2^24 whatever X holds, and the constant zero point and bias
 * folding into a bias below 2^24; then the sums of W for the fold. */
static onyx_status fold_zero_point(const kernel_prep *p, qconv_fast *q, const tensor *w) {
    bool given = p->n_in > 2 && p->in_type[2];
    const tensor *xz = given ? p->in_value[2] : NULL;
    if (!given || (xz && xz->numel == 1 && xz->dtype == q->xt && load8(xz->dtype, xz->data, 0) == 0)) {
        q->fold_xz = true;
        return ONYX_OK;
    }
    const tensor *b = p->n_in > 8 ? p->in_value[8] : NULL;
    if (!xz || xz->numel != 1 || xz->dtype != q->xt || (q->has_bias && !b) ||
        (b && (b->dtype != ONYX_INT32 || b->numel != q->g.m)))
        return ONYX_OK;
    for (int i = 0; i < q->g.nsp; i++)
        if (q->g.pad_b[i] || q->g.pad_e[i]) return ONYX_OK;
    const int64_t zx = load8(xz->dtype, xz->data, 0);
    const int64_t per = w->numel / q->g.m;     /* C / group * kernel: one output channel's W */
    const int64_t xmax = q->xt == ONYX_UINT8 ? 255 : 128;
    const int32_t shift = w->dtype == ONYX_UINT8 ? 128 : 0;
    int32_t *sums = malloc((size_t)q->g.m * sizeof *sums);
    if (!sums) return onyx_oom("int8 convolution weight sums");
    for (int64_t m = 0; m < q->g.m; m++) {
        int64_t sum, reach;
        weight_row_sums(w, m * per, per, shift, &sum, &reach);
        reach *= xmax;
        int64_t folded = (b ? ((const int32_t *)b->data)[m] : 0) - zx * sum;
        if (reach >= (int64_t)1 << 24 || folded <= -((int64_t)1 << 24) ||
            folded >= (int64_t)1 << 24) { /* float would round: keep oneDNN's zero point */
            free(sums);
            return ONYX_OK;
        }
        sums[m] = (int32_t)sum;
    }
    q->fold_xz = true;
    q->wsum = sums;
    return ONYX_OK;
}

/* Whether a constant bias (folded or not) is below 2^24 everywhere, where float holds it exactly
 * (the folded one was checked by fold_zero_point); a bias given per run is checked per run. */
static bool constant_bias_fits(const kernel_prep *p, const qconv_fast *q) {
    const tensor *b = p->n_in > 8 ? p->in_value[8] : NULL;
    if (!b || q->wsum || b->dtype != ONYX_INT32) return true;
    for (int64_t m = 0; m < b->numel; m++) {
        int32_t v = ((const int32_t *)b->data)[m];
        if (v <= -(1 << 24) || v >= 1 << 24) return false;
    }
    return true;
}

static bool scalar_float(const tensor *t, float *out) {
    if (!t || t->dtype != ONYX_FLOAT || t->numel != 1) return false;
    *out = ((const float *)t->data)[0];
    return true;
}

/* What the primitive takes besides X and W, from the node's scales (x_scale, w_scale, y_scale),
 * zero points (x_zero_point may be NULL) and bias (NULL: none): the multipliers [M] in
 * onnxruntime's order, the bias as float [M] (the folded zero point in it), the two zero points.
 * False where the inputs are not what this path takes, a multiplier is not finite, or a bias does
 * not fit float exactly: the reference runs (and checks) such a node. */
static bool requant_terms(const qconv_fast *q, const tensor *xs_t, const tensor *xz,
                          const tensor *ws, const tensor *ys_t, const tensor *yz, const tensor *b,
                          float *mult, float *bias, int32_t zp[2]) {
    float xs, ys;
    if (!scalar_float(xs_t, &xs) || !scalar_float(ys_t, &ys) || !ws || ws->dtype != ONYX_FLOAT ||
        (ws->numel != 1 && ws->numel != q->g.m) || (xz && (xz->numel != 1 || xz->dtype != q->xt)) ||
        !yz || yz->numel != 1 || yz->dtype != q->yt || (b != NULL) != q->has_bias ||
        (b && (b->dtype != ONYX_INT32 || b->numel != q->g.m)))
        return false;
    zp[0] = xz ? load8(xz->dtype, xz->data, 0) : 0;
    zp[1] = load8(yz->dtype, yz->data, 0);
    for (int64_t m = 0; m < q->g.m; m++) {
        mult[m] = xs * ((const float *)ws->data)[ws->numel == 1 ? 0 : m] / ys; /* onnxruntime's order */
        if (!isfinite(mult[m])) return false;
        int64_t bm = b ? ((const int32_t *)b->data)[m] : 0;
        if (q->wsum) bm -= (int64_t)zp[0] * q->wsum[m];
        if (bm <= -((int64_t)1 << 24) || bm >= (int64_t)1 << 24) return false; /* not exact */
        bias[m] = (float)bm;
    }
    return true;
}

/* The requantization terms once, where every input they come from is a constant. */
static onyx_status fix_requant_terms(const kernel_prep *p, qconv_fast *q) {
    const int from[] = {1, 2, 4, 6, 7, 8};
    for (size_t i = 0; i < sizeof from / sizeof *from; i++)
        if (p->n_in > from[i] && p->in_type[from[i]] && !p->in_value[from[i]]) return ONYX_OK;
    const tensor *in[9] = {NULL};
    for (int i = 0; i < 9 && i < p->n_in; i++) in[i] = p->in_value[i];
    float *fixed = malloc(2 * (size_t)q->g.m * sizeof *fixed);
    if (!fixed) return onyx_oom("int8 convolution requantization terms");
    if (requant_terms(q, in[1], in[2], in[4], in[6], in[7], in[8], fixed + q->g.m, fixed,
                      q->fixed_zp))
        q->fixed = fixed;
    else
        free(fixed); /* each run computes them, and the reference takes the node */
    return ONYX_OK;
}

/* Whether a tensor of these dims is stored the same channels last and plain: one channel or
 * one pixel. */
static bool layouts_agree(int rank, const int64_t *dims) {
    int64_t pixels = 1;
    for (int i = 2; i < rank; i++) pixels *= dims[i];
    return dims[1] == 1 || pixels == 1;
}

/* Whether the convolution reads one pixel and writes one, through a 1x1 kernel of one group. */
static bool one_pixel(const qconv_fast *q) {
    if (q->g.group != 1) return false;
    for (int i = 0; i < q->g.nsp; i++)
        if (q->g.in[i] != 1 || q->g.out[i] != 1 || q->g.k[i] != 1 || q->g.pad_b[i] != 0 ||
            q->g.pad_e[i] != 0)
            return false;
    return true;
}

/* W as int8 [M][C] for the dot products (uint8 W, zero point 128, shifted). */
static onyx_status dots_prepare(qconv_fast *q, const tensor *w) {
    const int64_t n = q->g.m * q->g.c;
    q->w8 = malloc((size_t)n);
    if (!q->w8) return onyx_oom("int8 convolution weights");
    const int32_t shift = w->dtype == ONYX_UINT8 ? 128 : 0;
    for (int64_t i = 0; i < n; i++) q->w8[i] = (int8_t)(load8(w->dtype, w->data, i) - shift);
    return ONYX_OK;
}

/* Whether a constant zero point of Y goes into the post-ops (the rounded value plus the zero point,
 * exact) instead of oneDNN's runtime zero point, whose attribute keeps oneDNN off its brgemm
 * kernels: its jit ones took 1.15-1.6x their time on MobileNetV2's layers (this Xeon, 2 threads;
 * the whole QOperator run 1.71 -> 1.46 ms). Pointwise and depthwise convolutions only: there the
 * brgemm kernels (brgconv_1x1, brdgmm_dw; AMX, AVX-512 VNNI and AVX-VNNI) wrote the runtime zero
 * point's bytes on 16000 random shapes, types and zero points (a one-off harness on oneDNN
 * itself; test_int8.py's random cases hold it against onnxruntime), while oneDNN 3.2's spatial
 * AMX brgemm kernel (brgconv:avx512_core_amx) summed wrong at 2x2 and 4x4 kernels of 80-96
 * input channels (ConvNeXt's downsampling: 255 steps off), so every other convolution keeps the
 * attribute, as do 1-D and 3-D ones (not checked). */
static bool zy_as_post_op(const qconv_fast *q) {
    if (q->g.nsp != 2) return false;
    bool pointwise = true;
    for (int i = 0; i < q->g.nsp; i++) pointwise &= q->g.k[i] == 1;
    bool depthwise = q->g.group > 1 && q->g.group == q->g.c && q->g.group == q->g.m;
    return pointwise || depthwise;
}

/* What qconv_fast_prepare decides before it builds anything, the rule its query
 * (qconv_fast_takes) follows too: in *out the path's state with its geometry, types, layouts and
 * the fold of X's zero point, or NULL where the path does not take the node (the reference, or
 * the AVX2 path, does). Fails only for memory. */
static onyx_status fast_setup(const kernel_prep *p, qconv_fast **out) {
    *out = NULL;
    const type_info *xt = p->in_type[0], *wt = p->n_in > 3 ? p->in_type[3] : NULL;
    const tensor *w = p->n_in > 3 ? p->in_value[3] : NULL;
    const tensor *wz = p->n_in > 5 ? p->in_value[5] : NULL;
    bool wz_given = p->n_in > 5 && p->in_type[5];
    if (cpu_i8_choose() != CPU_I8_ONEDNN || !xt || !wt || !type_is_static(xt) || !type_is_static(wt) || !w ||
        !p->out_type || xt->rank < 3 || xt->rank > 5 || (wz_given && !wz) ||
        (xt->dtype != ONYX_UINT8 && xt->dtype != ONYX_INT8) ||
        (w->dtype != ONYX_UINT8 && w->dtype != ONYX_INT8) ||
        (p->out_type->dtype != ONYX_UINT8 && p->out_type->dtype != ONYX_INT8) ||
        !weight_zero_point_fits(w, wz))
        return ONYX_OK;
    qconv_fast *q = calloc(1, sizeof *q);
    if (!q) return onyx_oom("int8 convolution");
    const geom_window *win = op_params_window(p->params); /* the plan's window */
    if (!win || !geom_window_known(win)) { /* the reference runs it */
        free(q);
        return ONYX_OK;
    }
    q->g = *win;
    q->rank = xt->rank;
    memcpy(q->xdims, xt->dims, (size_t)q->rank * sizeof *q->xdims);
    geom_window_out_dims(&q->g, q->ydims);
    q->xt = xt->dtype;
    q->yt = p->out_type->dtype;
    q->x_opaque = p->fused && p->fused->opaque_in0;
    q->y_opaque = p->fused && p->fused->opaque_out0;
    q->has_bias = p->n_in > 8 && p->in_type[8];
    const tensor *yz = p->n_in > 7 ? p->in_value[7] : NULL;
    if (yz && yz->numel == 1 && yz->dtype == q->yt && zy_as_post_op(q)) {
        q->zy_post_op = true;
        q->zy = load8(yz->dtype, yz->data, 0);
    }
    int64_t xn = 1, yn = 1;
    bool sizes_fit = true;
    for (int i = 0; i < q->rank; i++)
        sizes_fit &= !__builtin_mul_overflow(xn, q->xdims[i], &xn) &&
                     !__builtin_mul_overflow(yn, q->ydims[i], &yn);
    if (!sizes_fit || xn <= 0 || yn <= 0 || (uint64_t)xn > SIZE_MAX / 4 ||
        (uint64_t)yn > SIZE_MAX / 4) {
        free(q);
        return ONYX_OK;
    }
    onyx_status st = one_pixel(q) ? ONYX_OK : fold_zero_point(p, q, w);
    if (st != ONYX_OK || !constant_bias_fits(p, q)) { /* the reference is exact */
        qconv_fast_release(q);
        return st;
    }
    *out = q;
    return ONYX_OK;
}

bool qconv_fast_takes(const kernel_prep *p) {
    qconv_fast *q = NULL;
    bool takes = fast_setup(p, &q) == ONYX_OK && q;
    if (takes && !one_pixel(q)) { /* oneDNN's descriptor, where the product is its */
        dnnl_primitive_desc_t pd = NULL;
        takes = describe(q, &pd) == ONYX_OK;
        if (pd) dnnl_primitive_desc_destroy(pd);
    }
    if (!takes) onyx_error_clear(); /* a refusal is the answer, not an error */
    qconv_fast_release(q);
    return takes;
}

onyx_status qconv_fast_prepare(const kernel_prep *p, void **state) {
    *state = NULL;
    qconv_fast *q = NULL;
    TRY(fast_setup(p, &q));
    if (!q) return ONYX_OK;
    const tensor *w = p->in_value[3];
    int64_t xn = 1, yn = 1; /* fast_setup checked that they fit */
    for (int i = 0; i < q->rank; i++) {
        xn *= q->xdims[i];
        yn *= q->ydims[i];
    }
    onyx_status st = one_pixel(q) ? dots_prepare(q, w) : ONYX_OK;
    if (st == ONYX_OK && !q->w8) st = make_primitive(q);
    if (st == ONYX_OK && !q->x_opaque && !layouts_agree(q->rank, q->xdims)) {
        CHECK(cpu_dnnl_md_plain(&q->md_xu, q->rank, q->xdims, dnnl_type(q->xt)));
        CHECK(cpu_dnnl_reorder(q->md_xu, q->md_x, &q->reo_x, &q->md_pad_reo_x, &q->pad_reo_x));
    }
    if (st == ONYX_OK && !q->y_opaque && !layouts_agree(q->rank, q->ydims)) {
        CHECK(cpu_dnnl_md_plain(&q->md_yu, q->rank, q->ydims, dnnl_type(q->yt)));
        CHECK(cpu_dnnl_reorder(q->md_y, q->md_yu, &q->reo_y, &q->md_pad_reo_y, &q->pad_reo_y));
    }
    if (st == ONYX_OK && !q->w8) CHECK(pack_weights(p, q, w));
    if (st == ONYX_OK) CHECK(fix_requant_terms(p, q));
    if (st == ONYX_OK) {
        size_t off = 0, pad = q->pad_conv;
        if (q->pad_reo_x > pad) pad = q->pad_reo_x;
        if (q->pad_reo_y > pad) pad = q->pad_reo_y;
        q->off_x = off;
        off += q->reo_x ? round64((size_t)xn) : 0;
        q->off_y = off;
        off += q->reo_y ? round64((size_t)yn) : 0;
        q->off_pad = off;
        off += round64(pad);
        q->off_b = off;
        off += round64((size_t)q->g.m * sizeof(float));
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

/* ---- a run context's memory objects (made once per context, their handles set per call) */

typedef struct qconv_mems {
    const qconv_fast *q; /* NULL where the node has no prepared path */
    /* the convolution's (x and y also the reorders' destination and source), the reorders'
     * plain ends, and the scratchpads of the three primitives */
    dnnl_memory_t x, w, b, y, mult, zx, zy, pad, xu, yu, pad_rx, pad_ry;
} qconv_mems;

void qconv_fast_unfork(void *fork) {
    qconv_mems *f = fork;
    if (!f) return;
    dnnl_memory_t all[] = {f->x,    f->w,  f->b,  f->y,      f->mult,  f->zx,
                           f->zy,   f->pad, f->xu, f->yu,     f->pad_rx, f->pad_ry};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i]) dnnl_memory_destroy(all[i]);
    free(f);
}

onyx_status qconv_fast_fork(const void *state, void **out) {
    qconv_mems *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("int8 convolution working state");
    const qconv_fast *q = f->q = state;
    onyx_status st = ONYX_OK;
    if (q && !q->w8) {
        CHECK(cpu_dnnl_memory(&f->x, q->md_x));
        CHECK(cpu_dnnl_memory(&f->w, q->md_w));
        CHECK(cpu_dnnl_memory(&f->y, q->md_y));
        CHECK(cpu_dnnl_memory(&f->mult, q->md_mult));
        CHECK(cpu_dnnl_memory(&f->zx, q->md_zp));
        CHECK(cpu_dnnl_memory(&f->zy, q->md_zp));
        if (q->has_bias || q->wsum) CHECK(cpu_dnnl_memory(&f->b, q->md_b));
        if (q->pad_conv) CHECK(cpu_dnnl_memory(&f->pad, q->md_pad_conv));
        if (q->reo_x) CHECK(cpu_dnnl_memory(&f->xu, q->md_xu));
        if (q->md_pad_reo_x) CHECK(cpu_dnnl_memory(&f->pad_rx, q->md_pad_reo_x));
        if (q->reo_y) CHECK(cpu_dnnl_memory(&f->yu, q->md_yu));
        if (q->md_pad_reo_y) CHECK(cpu_dnnl_memory(&f->pad_ry, q->md_pad_reo_y));
    }
    *out = f;
    return ONYX_OK;
done:
    qconv_fast_unfork(f);
    return st;
}

bool qconv_fast_prepared(const void *fork) {
    const qconv_mems *f = fork;
    return f && f->q;
}

bool qconv_fast_opaque(const void *fork) {
    const qconv_mems *f = fork;
    return f && f->q && (f->q->x_opaque || f->q->y_opaque);
}

/* ---- run */

/* Points memory object m at ptr. */
static onyx_status set(dnnl_memory_t m, const void *ptr) {
    return cpu_dnnl_check(dnnl_memory_set_data_handle(m, (void *)ptr), "binding a tensor");
}

/* Runs a reorder from `from` to `to` (handles set), with its scratchpad `pad` (NULL: none). */
static onyx_status reorder(dnnl_primitive_t prim, dnnl_memory_t from, dnnl_memory_t to,
                           dnnl_memory_t pad) {
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    int n = 2;
    if (pad) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, pad};
    return cpu_dnnl_execute(prim, n, args);
}

/* Output m of each image: the dot product of X's C values (less X's zero point) with W's row m,
 * plus the bias in int32, requantized as onnxruntime does. One pixel in and out: channels last
 * and NCHW are the same bytes. */
#define DEFINE_DOTS(NAME, TX)                                                                      \
    CPU_CLONES static void NAME(const qconv_fast *q, const TX *restrict x, uint8_t *restrict y,     \
                                bool y_signed, const float *restrict mult,                         \
                                const float *restrict bias, const int32_t *zp) {                   \
        const int64_t c = q->g.c, m = q->g.m;                                                      \
        const int32_t zx = zp[0], zy = zp[1];                                                      \
        const int32_t lo = y_signed ? -128 : 0, hi = y_signed ? 127 : 255;                         \
        for (int64_t i = 0; i < q->g.n; i++, x += c, y += m)                                       \
            for (int64_t o = 0; o < m; o++) {                                                      \
                const int8_t *restrict w = q->w8 + o * c;                                          \
                int32_t acc = 0;                                                                   \
                CPU_SIMD_SUM(acc) for (int64_t k = 0; k < c; k++)                                    \
                    acc += ((int32_t)x[k] - zx) * (int32_t)w[k];                                   \
                if (q->has_bias || q->wsum) acc += (int32_t)bias[o];                               \
                int32_t v = q8_saturate((float)acc * mult[o], zy, lo, hi);                         \
                y[o] = y_signed ? (uint8_t)(int8_t)v : (uint8_t)v;                                 \
            }                                                                                      \
    }
DEFINE_DOTS(dots_u8, uint8_t)
DEFINE_DOTS(dots_s8, int8_t)

static void dots_run(const qconv_fast *q, const tensor *x, tensor *y, const float *mult,
                     const float *bias, const int32_t *zp) {
    if (q->xt == ONYX_INT8)
        dots_s8(q, x->data, y->data, q->yt == ONYX_INT8, mult, bias, zp);
    else
        dots_u8(q, x->data, y->data, q->yt == ONYX_INT8, mult, bias, zp);
}

onyx_status qconv_fast_run(const kernel_call *c, void *fork, bool *done) {
    qconv_mems *f = fork;
    const qconv_fast *q = f->q;
    *done = false;
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    /* anything unexpected: the reference checks it and says what is wrong */
    if (!x || !y || x->dtype != q->xt || y->dtype != q->yt || x->rank != q->rank ||
        memcmp(x->dims, q->xdims, (size_t)q->rank * sizeof *q->xdims) != 0 || y->rank != q->rank ||
        memcmp(y->dims, q->ydims, (size_t)q->rank * sizeof *q->ydims) != 0)
        return ONYX_OK;
    void *mem;
    TRY(kernel_scratch(c, q->scratch, &mem));
    char *base = mem;
    const float *mult = q->fixed + q->g.m, *bias = q->fixed;
    const int32_t *zp = q->fixed_zp;
    if (!q->fixed) {
        float *m = (float *)(base + q->off_mult), *b = (float *)(base + q->off_b);
        int32_t *z = (int32_t *)(base + q->off_zp);
        if (!requant_terms(q, kernel_input(c, 1), kernel_input(c, 2), kernel_input(c, 4),
                           kernel_input(c, 6), kernel_input(c, 7), kernel_input(c, 8), m, b, z))
            return ONYX_OK;
        mult = m;
        bias = b;
        zp = z;
    }
    if (q->w8) {
        dots_run(q, x, y, mult, bias, zp);
        *done = true;
        return ONYX_OK;
    }
    void *pad = base + q->off_pad;
    /* X and Y as the convolution reads and writes them: channels last */
    void *xcl = q->reo_x ? base + q->off_x : x->data, *ycl = q->reo_y ? base + q->off_y : y->data;
    TRY(set(f->x, xcl));
    TRY(set(f->y, ycl));
    if (q->reo_x) {
        TRY(set(f->xu, x->data));
        if (f->pad_rx) TRY(set(f->pad_rx, pad));
        TRY(reorder(q->reo_x, f->xu, f->x, f->pad_rx));
    }
    TRY(set(f->w, q->wbuf));
    TRY(set(f->mult, mult));
    TRY(set(f->zx, zp));
    TRY(set(f->zy, zp + 1));
    dnnl_exec_arg_t args[8] = {{DNNL_ARG_SRC, f->x},
                               {DNNL_ARG_WEIGHTS, f->w},
                               {DNNL_ARG_DST, f->y},
                               {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, f->mult}};
    int n = 4;
    if (!q->zy_post_op) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, f->zy};
    if (!q->fold_xz) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, f->zx};
    if (f->b) {
        TRY(set(f->b, bias));
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, f->b};
    }
    if (f->pad) {
        TRY(set(f->pad, pad));
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, f->pad};
    }
    TRY(cpu_dnnl_execute(q->conv, n, args));
    if (q->reo_y) {
        TRY(set(f->yu, y->data));
        if (f->pad_ry) TRY(set(f->pad_ry, pad));
        TRY(reorder(q->reo_y, f->y, f->yu, f->pad_ry));
    }
    *done = true;
    return ONYX_OK;
}
