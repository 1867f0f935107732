/* The 8-bit convolutions on CPUs without VNNI (qconv_avx2.h), computed as onnxruntime 1.32
 * computes them on such a CPU, so that results there are onnxruntime's there.
 *
 * What onnxruntime does on AVX2 without VNNI (providers/cpu/quantization/qlinearconv.cc,
 * conv_integer.cc; mlas/lib/convsym.cpp, platform.cpp, x86_64/ConvSymKernelAvx2.S):
 * - QLinearConv works on channels-last images (an NCHW X is transposed first, Y back after).
 *   Its reduction index over one group is k = tap * (C / group) + c: the kernel positions outer,
 *   the group's channels inner, both for the im2col rows of its GEMM path (Im2col NHWC, or X
 *   itself for a 1x1, stride-1, unpadded convolution) and for its ConvSym path.
 * - ConvSym (uint8 X, int8 W with zero points all 0, one group, C % 4 == 0, M % 8 == 0 and
 *   M >= 16; ConvSymS8S8 has no AVX2 kernel): per tap, four channels broadcast, vpmaddubsw
 *   multiplies raw X by raw W and adds each pair (c = 2p, 2p + 1) saturated to int16, vpmaddwd by
 *   ones adds the two pairs exactly; X's zero point goes into the bias (B - zx sum W). With C a
 *   multiple of 4 these pairs are pairs of consecutive k, as in the GEMM path.
 * - Otherwise MlasGemm on the im2col rows (padding holds X's zero point, as in ConvSym): u8 x s8
 *   through MlasGemmU8S8KernelAvx2, pairs (k = 2p, 2p + 1) of the whole row saturated to int16
 *   (where C / group is odd a pair joins the last channel of one tap and the first of the next);
 *   u8 x u8 exact (int16 vpmaddwd); int8 X exact (portable kernel). Zero points afterwards
 *   through row and column sums, then MlasRequantizeOutput: float(acc + B[m]) * multiplier,
 *   clamped, rounded half to even, plus Y's zero point.
 * - Depthwise (one input and one output channel per group): MlasConvSymDepthwise (values
 *   widened to int32, vpmaddwd with zero high halves) or MlasConvDepthwise: exact int32 sums.
 * - ConvInteger (onnxruntime: uint8 X and W only): NCHW im2col with A = W, B = columns, u8 x u8:
 *   exact. Here every ConvInteger is exact: uint8 X with int8 W is taken as int8 (x - 128), whose
 *   products the AVX2 kernels sum exactly; so ConvInteger takes this path on every CPU with
 *   AVX2, VNNI or not (unless ONYX_I8=ref), and so does a QLinearConv that oneDNN's path
 *   (qconv_dnnl.c) does not take where the pairing of its types is exact here.
 * So one rule serves every case: raw patches [pixel][tap][channel] of each group times W packed
 * as B [k, M / group] (i8avx2_pack), the zero points through row and column sums (as
 * kernels_cpu/common/i8_matmul.c), then onnxruntime's requantization (requant.h). Depthwise
 * convolutions sum exactly per channel over the taps, channels last. Work runs over output
 * pixels (core/parallel.h); the product itself on the thread pool. */
#include "kernels_cpu/conv/qconv_avx2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec_frame.h"
#include "core/exec_run.h"
#include "core/parallel.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/dnnl_util.h"
#include "kernels_cpu/common/i8_gemm_avx2.h"
#include "kernels_cpu/common/requant.h"

struct qconv_avx2 {
    qconv_avx2_op op;
    geom_window g;
    int rank;
    int64_t xdims[ONYX_MAX_RANK], ydims[ONYX_MAX_RANK]; /* as the tensors give them */
    onyx_dtype xt, wt, yt;
    bool x_last, y_last;         /* X, Y stored channels last */
    bool opaque;                 /* either is opaque (no reference can stand in) */
    bool depthwise;              /* one input and one output channel per group */
    bool direct;                 /* a 1x1, stride-1, unpadded convolution of one group */
    bool a_signed, b_signed;     /* the product's operand types */
    bool yz_optional;            /* com.microsoft's: an absent Y zero point reads 0 */
    bool flip;                   /* uint8 X read as int8 (x - 128): an exact ConvInteger */
    int64_t ks, cg, mg, kdim;    /* taps, channels and outputs of a group, k = ks * cg */
    int64_t pin, pout;           /* pixels of an input and an output image */
    const char *packed;          /* per group: packed B, then colsum [mg] (rep's shared cache) */
    size_t group_bytes;
    int32_t *wdw;                /* depthwise: raw W as [tap][C] */
    int64_t *taps;               /* [tap][spatial dim]: the tap's offset from its window's start */
    /* a run's scratch: X channels last, patches, sums, the product's scratch, the
     * per-channel terms (multiplier, bias, W's zero point), depthwise W less its zero point */
    size_t off_x, off_a, off_acc, off_gs, off_par, off_wdw, scratch;
};

static size_t align64(size_t n) { return (n + 63) / 64 * 64; }

static bool q8(onyx_dtype t) { return t == ONYX_UINT8 || t == ONYX_INT8; }

static int32_t load8(onyx_dtype d, const void *p, int64_t i) {
    return d == ONYX_INT8 ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

/* input positions of the two ops */
static int in_w(const qconv_avx2 *q) { return q->op == QCONV_AVX2_INTEGER ? 1 : 3; }
static int in_wz(const qconv_avx2 *q) { return q->op == QCONV_AVX2_INTEGER ? 3 : 5; }

void qconv_avx2_release(qconv_avx2 *q) {
    if (!q) return;
    free(q->wdw);
    free(q->taps);
    free(q); /* packed belongs to the rep's shared cache */
}

bool qconv_avx2_opaque(const qconv_avx2 *q) { return q && q->opaque; }

/* ---- W packed once per group */

typedef struct wkey {
    char tag[8];
    const void *data;
    int32_t wtype;
    bool a_signed;
    int64_t group, mg, cg, ks;
} wkey;

typedef struct wpack_ctx {
    const qconv_avx2 *q;
    const void *w;
} wpack_ctx;

static onyx_status wpack_make(void *ctx, void **obj) {
    const qconv_avx2 *q = ((const wpack_ctx *)ctx)->q;
    const void *w = ((const wpack_ctx *)ctx)->w;
    char *buf = cpu_dnnl_alloc(q->group_bytes * (size_t)q->g.group); /* 64-byte aligned */
    uint8_t *rows = malloc((size_t)(q->mg * q->kdim) + 1);
    if (!buf || !rows) {
        free(buf);
        free(rows);
        return onyx_oom("int8 convolution weights");
    }
    const size_t pack = align64(i8avx2_pack_bytes(q->kdim, q->mg, q->a_signed, q->b_signed));
    for (int64_t gi = 0; gi < q->g.group; gi++) {
        /* W [m][c][tap] of this group as rows [m][tap * cg + c]: B stored transposed */
        const uint8_t *wg = (const uint8_t *)w + gi * q->mg * q->kdim;
        for (int64_t m = 0; m < q->mg; m++)
            for (int64_t c = 0; c < q->cg; c++)
                for (int64_t t = 0; t < q->ks; t++)
                    rows[m * q->kdim + t * q->cg + c] = wg[(m * q->cg + c) * q->ks + t];
        char *dst = buf + (size_t)gi * q->group_bytes;
        i8avx2_pack(rows, q->b_signed, true, q->kdim, q->mg, q->a_signed, dst,
                    (uint32_t *)(dst + pack));
    }
    free(rows);
    *obj = buf;
    return ONYX_OK;
}

static void wpack_release(void *obj) { free(obj); }

static onyx_status pack_weights(const kernel_prep *p, qconv_avx2 *q, const tensor *w) {
    const size_t pack = align64(i8avx2_pack_bytes(q->kdim, q->mg, q->a_signed, q->b_signed));
    q->group_bytes = pack + align64((size_t)q->mg * sizeof(int32_t));
    wkey key;
    memset(&key, 0, sizeof key); /* padding bytes are part of the key */
    memcpy(key.tag, "qcavx2", 7);
    key.data = w->data;
    key.wtype = (int32_t)w->dtype;
    key.a_signed = q->a_signed;
    key.group = q->g.group;
    key.mg = q->mg;
    key.cg = q->cg;
    key.ks = q->ks;
    wpack_ctx ctx = {q, w->data};
    void *obj = NULL;
    TRY(kernel_shared(p, &key, sizeof key, wpack_make, wpack_release, &ctx, &obj));
    q->packed = obj;
    return ONYX_OK;
}

/* ---- prepare */

/* What qconv_avx2_prepare decides before it packs anything, the rule its query
 * (qconv_avx2_takes) follows too: in *out the path's state with its geometry, types and layouts,
 * or NULL where the path does not take the node. Fails only for memory. */
static onyx_status avx2_setup(const kernel_prep *p, qconv_avx2_op op, qconv_avx2_layout layout,
                              qconv_avx2 **out) {
    *out = NULL;
    const int wi = op == QCONV_AVX2_INTEGER ? 1 : 3;
    const type_info *xt = p->in_type[0], *wt = p->n_in > wi ? p->in_type[wi] : NULL;
    const tensor *w = p->n_in > wi ? p->in_value[wi] : NULL;
    const type_info *yt = p->out_type;
    /* Without VNNI these kernels are onnxruntime's arithmetic. With it (oneDNN's path, exact)
     * they serve where their sums are exact too, what oneDNN's convolution does not take:
     * every ConvInteger, and QLinearConv but for uint8 X x int8 W, which they saturate. */
    const cpu_i8_path path = cpu_i8_choose();
    const bool exact = op == QCONV_AVX2_INTEGER ||
                       (xt && w && !i8avx2_saturates(xt->dtype == ONYX_INT8, w->dtype == ONYX_INT8));
    const bool wanted = path == CPU_I8_AVX2 || (path == CPU_I8_ONEDNN && exact && i8avx2_supported());
    if (!wanted || !xt || !wt || !w || !w->data || !yt ||
        !type_is_static(xt) || !type_is_static(wt) || xt->rank < 3 || xt->rank > 5 ||
        wt->rank != xt->rank || !q8(xt->dtype) || !q8(w->dtype) ||
        (op == QCONV_AVX2_QLINEAR ? !q8(yt->dtype) : yt->dtype != ONYX_INT32))
        return ONYX_OK;
    qconv_avx2 *q = calloc(1, sizeof *q);
    if (!q) return onyx_oom("int8 convolution");
    q->op = op;
    q->rank = xt->rank;
    q->xt = xt->dtype;
    q->wt = w->dtype;
    q->yt = yt->dtype;
    memcpy(q->xdims, xt->dims, (size_t)q->rank * sizeof *q->xdims);
    /* the plan's window (X's dims in NCHW order, whatever its layout) */
    const geom_window *win = op_params_window(p->params);
    if (!win || !geom_window_known(win)) {
        free(q); /* the reference runs it */
        return ONYX_OK;
    }
    q->g = *win;
    int64_t yd[ONYX_MAX_RANK];
    geom_window_out_dims(&q->g, yd);
    for (int i = 0; i < q->rank; i++)
        q->ydims[i] = layout.dims_last ? yd[i == 0 ? 0 : i == q->rank - 1 ? 1 : i + 1] : yd[i];
    q->yz_optional = layout.dims_last;
    q->x_last = layout.dims_last || layout.x_opaque;
    q->y_last = layout.dims_last || layout.y_opaque;
    q->opaque = layout.x_opaque || layout.y_opaque;
    q->ks = q->pin = q->pout = 1;
    for (int i = 0; i < q->g.nsp; i++) {
        q->ks *= q->g.k[i];
        q->pin *= q->g.in[i];
        q->pout *= q->g.out[i];
    }
    q->cg = q->g.c / q->g.group;
    q->mg = q->g.m / q->g.group;
    q->kdim = q->cg * q->ks;
    q->depthwise = q->g.group > 1 && q->cg == 1 && q->mg == 1;
    q->direct = q->g.group == 1 && q->ks == 1;
    for (int i = 0; i < q->g.nsp; i++)
        q->direct &= q->g.stride[i] == 1 && q->g.pad_b[i] == 0 && q->g.pad_e[i] == 0;
    q->b_signed = q->wt == ONYX_INT8;
    q->flip = op == QCONV_AVX2_INTEGER && q->xt == ONYX_UINT8 && q->b_signed;
    q->a_signed = q->xt == ONYX_INT8 || q->flip;
    q->direct &= !q->flip;
    /* sizes: every buffer below 2^40 bytes keeps the arithmetic in range */
    const int64_t lim = (int64_t)1 << 40;
    if (q->g.n <= 0 || q->pout <= 0 || q->pin <= 0 || q->g.c > lim / q->pin ||
        q->kdim > lim / q->pout || q->g.m > lim / 4 / q->pout || q->ks * q->g.c > lim / 4) {
        free(q);
        return ONYX_OK;
    }
    *out = q;
    return ONYX_OK;
}

bool qconv_avx2_takes(const kernel_prep *p, qconv_avx2_op op) {
    qconv_avx2 *q = NULL;
    bool takes = avx2_setup(p, op, (qconv_avx2_layout){0}, &q) == ONYX_OK && q;
    if (!takes) onyx_error_clear(); /* only a lack of memory sets one: the answer is no */
    qconv_avx2_release(q);
    return takes;
}

onyx_status qconv_avx2_prepare(const kernel_prep *p, qconv_avx2_op op, qconv_avx2_layout layout,
                               qconv_avx2 **out) {
    *out = NULL;
    qconv_avx2 *q = NULL;
    TRY(avx2_setup(p, op, layout, &q));
    if (!q) return ONYX_OK;
    const tensor *w = p->in_value[op == QCONV_AVX2_INTEGER ? 1 : 3];
    onyx_status st = ONYX_OK;
    q->taps = malloc((size_t)(q->ks * q->g.nsp) * sizeof *q->taps);
    if (!q->taps) {
        free(q);
        return onyx_oom("int8 convolution");
    }
    for (int64_t t = 0; t < q->ks; t++) {
        int64_t rest = t;
        for (int i = q->g.nsp - 1; i >= 0; i--) {
            q->taps[t * q->g.nsp + i] = (rest % q->g.k[i]) * q->g.dil[i];
            rest /= q->g.k[i];
        }
    }
    if (q->depthwise) {
        q->wdw = malloc((size_t)(q->ks * q->g.c) * sizeof *q->wdw + 1);
        if (!q->wdw) {
            st = onyx_oom("int8 convolution weights");
        } else {
            for (int64_t c = 0; c < q->g.c; c++)
                for (int64_t t = 0; t < q->ks; t++)
                    q->wdw[t * q->g.c + c] = load8(q->wt, w->data, c * q->ks + t);
        }
    } else {
        st = pack_weights(p, q, w);
    }
    if (st != ONYX_OK) {
        qconv_avx2_release(q);
        return st;
    }
    const size_t npos = (size_t)q->pout, m = (size_t)q->g.m;
    size_t off = 0;
    q->off_x = off;
    off += q->x_last ? 0 : align64((size_t)(q->g.c * q->pin));
    q->off_a = off;
    off += q->depthwise || q->direct ? 0 : align64(npos * (size_t)q->kdim);
    q->off_acc = off;
    off += align64(npos * m * sizeof(int32_t));
    q->off_gs = off;
    off += q->depthwise ? 0 : align64(i8avx2_scratch_bytes(q->pout, q->kdim, q->a_signed, q->b_signed));
    q->off_par = off;
    off += 3 * align64(m * sizeof(int32_t));
    q->off_wdw = off;
    off += q->depthwise ? align64((size_t)(q->ks * q->g.c) * sizeof(int32_t)) : 0;
    q->scratch = off + 64;
    *out = q;
    return ONYX_OK;
}

/* ---- run: the pieces, each over a range of output pixels */

/* The window of output pixel o: each spatial dim's first input position, in base[]. */
static void window_of(const geom_window *g, int64_t o, int64_t *base) {
    for (int i = g->nsp - 1; i >= 0; i--) {
        base[i] = (o % g->out[i]) * g->stride[i] - g->pad_b[i];
        o /= g->out[i];
    }
}

/* The input pixel of tap t of a window, or -1 where it falls in the padding. */
static inline int64_t tap_pixel(const qconv_avx2 *q, const int64_t *base, int64_t t) {
    const int64_t *off = q->taps + t * q->g.nsp;
    int64_t pix = 0;
    for (int i = 0; i < q->g.nsp; i++) {
        const int64_t pos = base[i] + off[i];
        if (pos < 0 || pos >= q->g.in[i]) return -1;
        pix = pix * q->g.in[i] + pos;
    }
    return pix;
}

typedef struct run_job {
    const qconv_avx2 *q;
    const uint8_t *x;      /* this image, channels last */
    const uint8_t *x_nchw; /* this image as stored, when it is transposed */
    uint8_t *a;            /* patches [pixel][kdim] */
    int32_t *acc;          /* [pixel][M] */
    int64_t gi;            /* the group */
    uint8_t pad;           /* the byte padding holds: X's zero point (moved where flipped) */
    int32_t zx, za;        /* X's zero point, and the product's A zero point (moved where flipped) */
    const int32_t *zb;     /* [M] W's zero points, or NULL where all are 0 */
    const uint32_t *colsum;/* this group's */
    const float *mult;     /* [M] */
    const int32_t *bias;   /* [M] (zeros where the node has none) */
    const int32_t *wdw;    /* depthwise: [tap][C] W less its zero point */
    void *y;               /* this image */
    int32_t zy, lo, hi;
} run_job;

/* X's image [C][pixels] to [pixels][C], pixels [b, e). */
CPU_CLONES static void transpose_fn(void *ctx, int64_t b, int64_t e) {
    const run_job *j = ctx;
    const int64_t c = j->q->g.c, pin = j->q->pin;
    uint8_t *dst = (uint8_t *)j->x;
    for (int64_t p = b; p < e; p++)
        for (int64_t ch = 0; ch < c; ch++) dst[p * c + ch] = j->x_nchw[ch * pin + p];
}

/* Patch rows of group gi: a[p][t * cg + c] = X at tap t of p's window, channel gi * cg + c. */
CPU_CLONES static void patches_fn(void *ctx, int64_t b, int64_t e) {
    const run_job *j = ctx;
    const qconv_avx2 *q = j->q;
    const int64_t cg = q->cg, c = q->g.c, kd = q->kdim;
    int64_t base[GEOM_WINDOW_MAX_SPATIAL];
    for (int64_t p = b; p < e; p++) {
        uint8_t *row = j->a + p * kd;
        window_of(&q->g, p, base);
        for (int64_t t = 0; t < q->ks; t++) {
            const int64_t pix = tap_pixel(q, base, t);
            if (pix < 0) memset(row + t * cg, j->pad, (size_t)cg);
            else memcpy(row + t * cg, j->x + pix * c + j->gi * cg, (size_t)cg);
        }
        if (q->flip)
            CPU_SIMD for (int64_t k = 0; k < kd; k++) row[k] ^= 0x80;
    }
}

/* sum of one row of A in A's type, wrapping */
static int32_t row_sum(const uint8_t *a, int64_t k, bool s8) {
    uint32_t s = 0;
    if (s8) {
        CPU_SIMD_SUM(s) for (int64_t i = 0; i < k; i++) s += (uint32_t)(int32_t)(int8_t)a[i];
    } else {
        CPU_SIMD_SUM(s) for (int64_t i = 0; i < k; i++) s += (uint32_t)a[i];
    }
    return (int32_t)s;
}

/* The zero points of group gi's columns: acc - za colsum[j] - zb[j] rowsum(A - za). */
CPU_CLONES static void fix_fn(void *ctx, int64_t b, int64_t e) {
    const run_job *j = ctx;
    const qconv_avx2 *q = j->q;
    const int64_t mg = q->mg, m = q->g.m, kd = q->kdim;
    const uint8_t *a = q->direct ? j->x : j->a;
    const uint32_t za = (uint32_t)j->za;
    for (int64_t p = b; p < e; p++) {
        uint32_t *acc = (uint32_t *)j->acc + p * m + j->gi * mg;
        if (j->zb) {
            const uint32_t rs = (uint32_t)row_sum(a + p * kd, kd, q->a_signed) - za * (uint32_t)kd;
            const uint32_t *zb = (const uint32_t *)j->zb + j->gi * mg;
            CPU_SIMD for (int64_t c = 0; c < mg; c++) acc[c] = acc[c] - za * j->colsum[c] - rs * zb[c];
        } else {
            CPU_SIMD for (int64_t c = 0; c < mg; c++) acc[c] = acc[c] - za * j->colsum[c];
        }
    }
}

/* Depthwise: acc[p][c] = sum_t (x - zx)(w - zw) over the taps inside the image, exact. */
CPU_CLONES static void depthwise_fn(void *ctx, int64_t b, int64_t e) {
    const run_job *j = ctx;
    const qconv_avx2 *q = j->q;
    const int64_t c = q->g.c;
    const int32_t zx = j->zx;
    const bool s8 = q->xt == ONYX_INT8;
    int64_t base[GEOM_WINDOW_MAX_SPATIAL];
    for (int64_t p = b; p < e; p++) {
        window_of(&q->g, p, base);
        uint32_t *restrict sum = (uint32_t *)j->acc + p * c;
        memset(sum, 0, (size_t)c * sizeof *sum);
        for (int64_t t = 0; t < q->ks; t++) {
            const int64_t pix = tap_pixel(q, base, t);
            if (pix < 0) continue; /* padding: x - zx = 0 */
            const uint32_t *restrict w = (const uint32_t *)j->wdw + t * c;
            if (s8) {
                const int8_t *restrict x = (const int8_t *)j->x + pix * c;
                CPU_SIMD for (int64_t i = 0; i < c; i++) sum[i] += (uint32_t)((int32_t)x[i] - zx) * w[i];
            } else {
                const uint8_t *restrict x = j->x + pix * c;
                CPU_SIMD for (int64_t i = 0; i < c; i++) sum[i] += (uint32_t)((int32_t)x[i] - zx) * w[i];
            }
        }
    }
}

/* One pixel's M sums plus the bias, requantized as onnxruntime does (requant.h), into y. The
 * pointers are local and restrict so that the loop vectorizes. */
#define DEFINE_REQUANT_ROW(NAME, T)                                                                \
    static inline void NAME(const int32_t *restrict acc, const int32_t *restrict bias,             \
                            const float *restrict mult, T *restrict y, int64_t m, int32_t zy,      \
                            int32_t lo, int32_t hi) {                                              \
        CPU_SIMD for (int64_t c = 0; c < m; c++) {                                                 \
            const int32_t v = (int32_t)((uint32_t)acc[c] + (uint32_t)bias[c]);                     \
            y[c] = (T)q8_saturate((float)v * mult[c], zy, lo, hi);                                 \
        }                                                                                          \
    }
DEFINE_REQUANT_ROW(requant_row_u8, uint8_t)
DEFINE_REQUANT_ROW(requant_row_s8, int8_t)

#define OUT_CHUNK 256

/* Output pixels [b, e): requantized (QLinearConv) or the sums themselves (ConvInteger), written
 * channels last, or NCHW through a row of OUT_CHUNK channels at a time. */
CPU_CLONES static void out_fn(void *ctx, int64_t b, int64_t e) {
    const run_job *j = ctx;
    const qconv_avx2 *q = j->q;
    const int64_t m = q->g.m, npos = q->pout;
    const bool s8 = q->yt == ONYX_INT8;
    for (int64_t p = b; p < e; p++) {
        const int32_t *acc = j->acc + p * m;
        if (q->op == QCONV_AVX2_INTEGER) {
            int32_t *y = (int32_t *)j->y + p;
            for (int64_t c = 0; c < m; c++) y[c * npos] = acc[c];
            continue;
        }
        if (q->y_last) {
            if (s8) requant_row_s8(acc, j->bias, j->mult, (int8_t *)j->y + p * m, m, j->zy, j->lo, j->hi);
            else requant_row_u8(acc, j->bias, j->mult, (uint8_t *)j->y + p * m, m, j->zy, j->lo, j->hi);
            continue;
        }
        uint8_t row[OUT_CHUNK];
        for (int64_t c0 = 0; c0 < m; c0 += OUT_CHUNK) {
            const int64_t n = m - c0 < OUT_CHUNK ? m - c0 : OUT_CHUNK;
            if (s8) requant_row_s8(acc + c0, j->bias + c0, j->mult + c0, (int8_t *)row, n, j->zy, j->lo, j->hi);
            else requant_row_u8(acc + c0, j->bias + c0, j->mult + c0, row, n, j->zy, j->lo, j->hi);
            uint8_t *y = (uint8_t *)j->y + c0 * npos + p;
            for (int64_t c = 0; c < n; c++) y[c * npos] = row[c];
        }
    }
}

/* ---- run */

static bool scalar_float(const tensor *t, float *v) {
    if (!t || t->dtype != ONYX_FLOAT || t->numel != 1) return false;
    *v = ((const float *)t->data)[0];
    return true;
}

/* A zero point of type t with 1 value (or `per` values where per > 1); absent reads 0. */
static bool zero_point_ok(const tensor *z, onyx_dtype t, int64_t per) {
    return !z || (z->dtype == t && (z->numel == 1 || (per > 1 && z->numel == per)));
}

/* The per-run terms in par: multipliers [M] (QLinearConv), bias [M], W's zero points [M]; X's
 * and Y's zero points; false where an input is not of the forms this path takes. */
static bool run_terms(const qconv_avx2 *q, const kernel_call *c, char *par, run_job *j,
                      int32_t *zx) {
    const int64_t m = q->g.m;
    const size_t stride = align64((size_t)m * sizeof(int32_t));
    float *mult = (float *)par;
    int32_t *bias = (int32_t *)(par + stride), *zb = (int32_t *)(par + 2 * stride);
    const tensor *xz = kernel_input(c, 2), *wz = kernel_input(c, in_wz(q));
    if (!zero_point_ok(xz, q->xt, 1) || !zero_point_ok(wz, q->wt, m)) return false;
    *zx = xz ? load8(xz->dtype, xz->data, 0) : 0;
    bool any = false;
    for (int64_t i = 0; i < m; i++) {
        zb[i] = wz ? load8(wz->dtype, wz->data, wz->numel == 1 ? 0 : i) : 0;
        any |= zb[i] != 0;
    }
    j->zb = any ? zb : NULL;
    j->mult = mult;
    j->bias = bias;
    if (q->op == QCONV_AVX2_INTEGER) return true;
    float xs, ys;
    const tensor *ws = kernel_input(c, 4), *yz = kernel_input(c, 7), *b = kernel_input(c, 8);
    if (!scalar_float(kernel_input(c, 1), &xs) || !scalar_float(kernel_input(c, 6), &ys) || !ws ||
        ws->dtype != ONYX_FLOAT || (ws->numel != 1 && ws->numel != m) ||
        !zero_point_ok(yz, q->yt, 1) || (!yz && !q->yz_optional) || (b && (b->dtype != ONYX_INT32 || b->numel != m)))
        return false;
    for (int64_t i = 0; i < m; i++) {
        mult[i] = xs * ((const float *)ws->data)[ws->numel == 1 ? 0 : i] / ys; /* onnxruntime's order */
        if (!isfinite(mult[i])) return false;
        bias[i] = b ? ((const int32_t *)b->data)[i] : 0;
    }
    j->zy = yz ? load8(yz->dtype, yz->data, 0) : 0;
    j->lo = q->yt == ONYX_INT8 ? -128 : 0;
    j->hi = q->yt == ONYX_INT8 ? 127 : 255;
    return true;
}

static int64_t grain(int64_t per_item) { return 65536 / (per_item + 1) + 1; }

onyx_status qconv_avx2_run(const qconv_avx2 *q, const kernel_call *c, bool *done) {
    *done = false;
    const tensor *x = kernel_input(c, 0), *w = kernel_input(c, in_w(q));
    tensor *y = kernel_output(c, 0);
    if (!x || !w || !y || x->dtype != q->xt || w->dtype != q->wt || y->dtype != q->yt ||
        x->rank != q->rank || y->rank != q->rank ||
        memcmp(x->dims, q->xdims, (size_t)q->rank * sizeof *q->xdims) != 0 ||
        memcmp(y->dims, q->ydims, (size_t)q->rank * sizeof *q->ydims) != 0)
        return ONYX_OK;
    void *mem;
    TRY(kernel_scratch(c, q->scratch, &mem));
    char *base = (char *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
    run_job j = {.q = q, .a = (uint8_t *)(base + q->off_a),
                 .acc = (int32_t *)(base + q->off_acc)};
    int32_t zx;
    if (!run_terms(q, c, base + q->off_par, &j, &zx)) return ONYX_OK;
    j.zx = zx;
    j.za = q->flip ? zx - 128 : zx;
    j.pad = (uint8_t)zx; /* the patches flip it with the rest */
    const int64_t cc = q->g.c, m = q->g.m, npos = q->pout;
    if (q->depthwise) {
        int32_t *wdw = (int32_t *)(base + q->off_wdw);
        const int32_t *zb = j.zb;
        for (int64_t t = 0; t < q->ks; t++)
            for (int64_t ch = 0; ch < cc; ch++)
                wdw[t * cc + ch] = (int32_t)((uint32_t)q->wdw[t * cc + ch] - (uint32_t)(zb ? zb[ch] : 0));
        j.wdw = wdw;
    }
    const size_t ysize = q->op == QCONV_AVX2_INTEGER ? 4 : 1;
    for (int64_t n = 0; n < q->g.n; n++) {
        const uint8_t *xi = (const uint8_t *)x->data + n * cc * q->pin;
        j.x = xi;
        if (!q->x_last && cc > 1 && q->pin > 1) {
            j.x = (const uint8_t *)(base + q->off_x);
            j.x_nchw = xi;
            parallel_for(q->pin, grain(cc), transpose_fn, &j);
        }
        j.y = (char *)y->data + (size_t)(n * m * npos) * ysize;
        if (q->depthwise) {
            parallel_for(npos, grain(q->ks * cc), depthwise_fn, &j);
        } else {
            const size_t pack = align64(i8avx2_pack_bytes(q->kdim, q->mg, q->a_signed, q->b_signed));
            for (j.gi = 0; j.gi < q->g.group; j.gi++) {
                const char *pk = q->packed + (size_t)j.gi * q->group_bytes;
                j.colsum = (const uint32_t *)(pk + pack);
                if (!q->direct) parallel_for(npos, grain(q->kdim), patches_fn, &j);
                i8avx2_gemm(pk, q->direct ? j.x : j.a, q->a_signed, q->b_signed, npos, q->kdim,
                            q->mg, j.acc + j.gi * q->mg, m, base + q->off_gs);
                parallel_for(npos, grain(q->mg + (j.zb ? q->kdim : 0)), fix_fn, &j);
            }
        }
        parallel_for(npos, grain(m), out_fn, &j);
    }
    *done = true;
    return ONYX_OK;
}
