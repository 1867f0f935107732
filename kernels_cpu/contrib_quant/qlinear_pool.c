/* CPU kernels of com.microsoft QLinearGlobalAveragePool and QLinearAveragePool, NCHW or NHWC.
 *
 * Two roundings, as onnxruntime: the global pool sums integers and requantizes the sum with one
 * float multiplier x_scale / (y_scale * count); the windowed pool averages dequantized floats and
 * quantizes round(avg / y_scale + y_zero_point), except that a window covering the whole unpadded
 * image goes the global way as onnxruntime sends it there. The windowed pool's window comes from
 * the plan (core/op_params.h). */
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/contrib_quant/cq_kernel.h"

typedef struct gap_job {
    onyx_dtype t;
    const uint8_t *x;
    uint8_t *y;
    int64_t c, image;   /* channels and spatial size */
    bool cl;            /* channels last */
    int32_t bias;       /* -x_zero_point * image */
    float scale;
    int32_t zp, lo, hi;
} gap_job;

/* NCHW: items are (n, c) planes. */
static void gap_planes(void *ctx, int64_t b, int64_t e) {
    const gap_job *j = ctx;
    for (int64_t r = b; r < e; r++) {
        int32_t acc = j->bias;
        if (j->t == ONYX_INT8) {
            const int8_t *p = (const int8_t *)j->x + r * j->image;
            for (int64_t i = 0; i < j->image; i++) acc += p[i];
        } else {
            const uint8_t *p = j->x + r * j->image;
            for (int64_t i = 0; i < j->image; i++) acc += p[i];
        }
        j->y[r] = (uint8_t)q8_saturate((float)acc * j->scale, j->zp, j->lo, j->hi);
    }
}

/* NHWC: items are blocks of GAP_BLOCK channels of one image, summed side by side (a
 * contiguous run of each pixel: vector adds), so that one image spreads over the threads. */
#define GAP_BLOCK 64

#define DEFINE_SUM_PIXELS(NAME, T)                                                                 \
    static void NAME(const T *x, int64_t image, int64_t stride, int64_t cn, int32_t *acc) {       \
        if (cn == GAP_BLOCK) { /* a trip count the compiler knows: one unrolled vector loop */     \
            for (int64_t i = 0; i < image; i++, x += stride)                                       \
                CPU_SIMD for (int k = 0; k < GAP_BLOCK; k++) acc[k] += x[k];                       \
            return;                                                                                \
        }                                                                                          \
        for (int64_t i = 0; i < image; i++, x += stride)                                           \
            CPU_SIMD for (int64_t k = 0; k < cn; k++) acc[k] += x[k];                              \
    }
DEFINE_SUM_PIXELS(sum_pixels_u8, uint8_t)
DEFINE_SUM_PIXELS(sum_pixels_s8, int8_t)

static void gap_images(void *ctx, int64_t b, int64_t e) {
    const gap_job *j = ctx;
    int32_t acc[GAP_BLOCK];
    int64_t blocks = (j->c + GAP_BLOCK - 1) / GAP_BLOCK;
    for (int64_t t = b; t < e; t++) {
        int64_t n = t / blocks, c0 = (t % blocks) * GAP_BLOCK;
        int64_t cn = j->c - c0 < GAP_BLOCK ? j->c - c0 : GAP_BLOCK;
        for (int64_t k = 0; k < cn; k++) acc[k] = j->bias;
        int64_t off = n * j->image * j->c + c0;
        if (j->t == ONYX_INT8) sum_pixels_s8((const int8_t *)j->x + off, j->image, j->c, cn, acc);
        else sum_pixels_u8(j->x + off, j->image, j->c, cn, acc);
        for (int64_t k = 0; k < cn; k++)
            j->y[n * j->c + c0 + k] =
                (uint8_t)q8_saturate((float)acc[k] * j->scale, j->zp, j->lo, j->hi);
    }
}

/* The integer global pool of x [batch, ...] with `c` channels and `image` spatial elements. */
static void global_pool(onyx_dtype t, const tensor *x, uint8_t *y, int64_t batch, int64_t c,
                        int64_t image, bool cl, cq_param px, cq_param py) {
    gap_job j = {.t = t, .x = x->data, .y = y, .c = c, .image = image, .cl = cl,
                 .bias = (int32_t)(-(int64_t)px.zp * image), .zp = py.zp, .lo = cq_lo(t),
                 .hi = cq_hi(t)};
    j.scale = px.scale / (py.scale * (float)image);
    int64_t blocks = (c + GAP_BLOCK - 1) / GAP_BLOCK, block_sum = (c < GAP_BLOCK ? c : GAP_BLOCK) * image;
    if (cl && c > 1) parallel_for(batch * blocks, 65536 / (block_sum + 1) + 1, gap_images, &j);
    else parallel_for(batch * c, 65536 / (image + 1) + 1, gap_planes, &j);
}

static onyx_status params(const kernel_call *c, onyx_dtype *t, cq_param *px, cq_param *py) {
    TRY(cq_need_q8(c, 0, ONYX_UNDEFINED, "X"));
    *t = kernel_input(c, 0)->dtype;
    TRY(cq_param_get(c, 1, 2, *t, "X", px));
    TRY(cq_param_get(c, 3, 4, *t, "Y", py));
    if (kernel_input(c, 0)->rank < 3)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 (X) has rank %d, expected at least 3",
                          kernel_input(c, 0)->rank);
    return ONYX_OK;
}

onyx_status cpu_qlinearglobalaveragepool_run(const kernel_call *c) {
    onyx_dtype t;
    cq_param px, py;
    TRY(params(c, &t, &px, &py));
    const tensor *x = kernel_input(c, 0);
    /* an opaque X (cpu_opaque_prepare's marker): [N, C, spatial...] stored channels last */
    bool opaque = c->state != NULL, cl = attr_int(c->node, "channels_last", 0) != 0 || opaque;
    int64_t ch = cl && !opaque ? x->dims[x->rank - 1] : x->dims[1], image = 1;
    for (int d = cl && !opaque ? 1 : 2; d < (cl && !opaque ? x->rank - 1 : x->rank); d++)
        image *= x->dims[d];
    if (kernel_output(c, 0)->numel == 0) return ONYX_OK;
    global_pool(t, x, kernel_output(c, 0)->data, x->dims[0], ch, image, cl, px, py);
    return ONYX_OK;
}

/* ---- the windowed pool, in float */

typedef struct avg_job {
    onyx_dtype t;
    const uint8_t *x;
    uint8_t *y;
    int64_t ch;
    int64_t in[3], out[3], k[3], s[3], pb[3]; /* spatial dims padded to 3 with 1s */
    int64_t in_size, out_size, kernel_size;
    bool cl, include_pad;
    float deq[256];
    cq_param py;
    int32_t lo, hi;
} avg_job;

/* Window of output position o along dim i: [*b, *e) of the input, as onnxruntime clips it. */
static inline void window(const avg_job *j, int i, int64_t o, int64_t *b, int64_t *e) {
    int64_t s = o * j->s[i] - j->pb[i], end = s + j->k[i];
    *e = end < j->in[i] ? end : j->in[i];
    *b = s > 0 ? s : 0;
}

static inline uint8_t avg_quantize(const avg_job *j, float sum, int64_t count) {
    float avg = sum / (float)count;
    float v = avg / j->py.scale + (float)j->py.zp;
    float flo = (float)j->lo, fhi = (float)j->hi;
    v = v > flo ? v : flo;
    v = v < fhi ? v : fhi;
    return (uint8_t)(int32_t)q8_round(v);
}

/* Output positions [b, e) of every channel: items are NCHW planes or NHWC positions. */
static void avg_items(void *ctx, int64_t b, int64_t e) {
    const avg_job *j = ctx;
    for (int64_t it = b; it < e; it++) {
        /* NCHW: item = plane (n, c), each output position in turn; NHWC: item = (n, position) */
        int64_t npos = j->cl ? 1 : j->out_size;
        for (int64_t q = 0; q < npos; q++) {
            int64_t pos = j->cl ? it % j->out_size : q;
            int64_t o0 = pos / (j->out[1] * j->out[2]), o1 = pos / j->out[2] % j->out[1],
                    o2 = pos % j->out[2];
            int64_t b0, e0, b1, e1, b2, e2;
            window(j, 0, o0, &b0, &e0);
            window(j, 1, o1, &b1, &e1);
            window(j, 2, o2, &b2, &e2);
            int64_t count = j->include_pad ? j->kernel_size : (e0 - b0) * (e1 - b1) * (e2 - b2);
            if (!j->cl) {
                const uint8_t *x = j->x + it * j->in_size;
                float sum = 0;
                for (int64_t h = b0; h < e0; h++)
                    for (int64_t w = b1; w < e1; w++)
                        for (int64_t d = b2; d < e2; d++)
                            sum += j->deq[x[(h * j->in[1] + w) * j->in[2] + d]];
                j->y[it * j->out_size + pos] = avg_quantize(j, sum, count);
                continue;
            }
            int64_t n = it / j->out_size;
            float acc[256];
            for (int64_t c0 = 0; c0 < j->ch; c0 += 256) {
                int64_t cn = j->ch - c0 < 256 ? j->ch - c0 : 256;
                for (int64_t k = 0; k < cn; k++) acc[k] = 0;
                for (int64_t h = b0; h < e0; h++)
                    for (int64_t w = b1; w < e1; w++)
                        for (int64_t d = b2; d < e2; d++) {
                            const uint8_t *x = j->x + ((n * j->in[0] + h) * j->in[1] * j->in[2] +
                                                       w * j->in[2] + d) * j->ch + c0;
                            for (int64_t k = 0; k < cn; k++) acc[k] += j->deq[x[k]];
                        }
                uint8_t *y = j->y + it * j->ch + c0;
                for (int64_t k = 0; k < cn; k++) y[k] = avg_quantize(j, acc[k], count);
            }
        }
    }
}

/* NCHW with one or two spatial dims: each plane dequantized once into a zero-bordered float copy,
 * then each output row summed tap by tap across its columns (vector adds). The taps come in
 * avg_items' order and a border tap adds 0, which leaves a float sum as it was: the same sums,
 * bit for bit, at a fraction of the table lookups. Items are split into `chunks` runs, each with
 * its own bordered plane and row sums in `buf` (chunk_floats apiece). */
typedef struct plane_job {
    const avg_job *j;
    int64_t items, chunks, rows, cols; /* rows, cols: the bordered plane */
    size_t chunk_floats;
    float *buf;
} plane_job;

static void avg_planes(void *ctx, int64_t b, int64_t e) {
    const plane_job *pj = ctx;
    const avg_job *j = pj->j;
    const int64_t H = j->in[0], W = j->in[1], OH = j->out[0], OW = j->out[1];
    const int64_t kh = j->k[0], kw = j->k[1], sh = j->s[0], sw = j->s[1];
    const int64_t ph = j->pb[0], pw = j->pb[1], R = pj->rows, C = pj->cols;
    for (int64_t chunk = b; chunk < e; chunk++) {
        float *plane = pj->buf + (size_t)chunk * pj->chunk_floats;
        float *sum = plane + R * C, *count = sum + OW;
        int64_t first = chunk * pj->items / pj->chunks, last = (chunk + 1) * pj->items / pj->chunks;
        for (int64_t it = first; it < last; it++) {
            const uint8_t *x = j->x + it * H * W;
            for (int64_t r = 0; r < R; r++) {
                float *row = plane + r * C;
                int64_t h = r - ph, inner = W < C - pw ? W : C - pw; /* the columns inside x */
                if (h < 0 || h >= H || inner <= 0) {
                    memset(row, 0, (size_t)C * sizeof *row);
                    continue;
                }
                memset(row, 0, (size_t)pw * sizeof *row);
                for (int64_t q = 0; q < inner; q++) row[pw + q] = j->deq[x[h * W + q]];
                memset(row + pw + inner, 0, (size_t)(C - pw - inner) * sizeof *row);
            }
            for (int64_t oh = 0; oh < OH; oh++) {
                int64_t b0, e0, b1, e1;
                window(j, 0, oh, &b0, &e0);
                for (int64_t ow = 0; ow < OW; ow++) {
                    window(j, 1, ow, &b1, &e1);
                    sum[ow] = 0.0f;
                    count[ow] = (float)(j->include_pad ? j->kernel_size : (e0 - b0) * (e1 - b1));
                }
                for (int64_t dh = 0; dh < kh; dh++) {
                    const float *row = plane + (oh * sh + dh) * C;
                    for (int64_t dw = 0; dw < kw; dw++)
                        CPU_SIMD for (int64_t ow = 0; ow < OW; ow++) sum[ow] += row[ow * sw + dw];
                }
                uint8_t *y = j->y + it * j->out_size + oh * OW;
                for (int64_t ow = 0; ow < OW; ow++)
                    y[ow] = avg_quantize(j, sum[ow], (int64_t)count[ow]);
            }
        }
    }
}

onyx_status cpu_qlinearaveragepool_run(const kernel_call *c) {
    onyx_dtype t;
    cq_param px, py;
    TRY(params(c, &t, &px, &py));
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    bool cl = attr_int(c->node, "channels_last", 0) != 0;
    int nd = x->rank - 2, first = cl ? 1 : 2;
    int64_t ch = cl ? x->dims[x->rank - 1] : x->dims[1], batch = x->dims[0];
    /* the plan's window (NCHW order): checked against X and Y in their layout, not derived
     * again */
    const geom_window *w;
    TRY(kernel_window(c->params, &w));
    bool fits = w->nsp == nd && nd <= 3 && y->rank == x->rank && w->n == batch && w->c == ch &&
                y->dims[0] == batch && (cl ? y->dims[y->rank - 1] : y->dims[1]) == ch;
    for (int i = 0; i < nd && fits; i++)
        fits = w->in[i] == x->dims[first + i] && w->out[i] == y->dims[first + i] &&
               w->dil[i] == 1;
    if (!fits) return onyx_error(ONYX_ERR_RUNTIME, "the plan's pooling window is for other dims");
    if (y->numel == 0) return ONYX_OK;
    bool whole = true;
    int64_t image = 1, ksize = 1;
    for (int i = 0; i < nd; i++) {
        whole = whole && w->k[i] == w->in[i] && !w->pad_b[i] && !w->pad_e[i];
        image *= w->in[i];
        ksize *= w->k[i];
    }
    if (whole) {
        global_pool(t, x, y->data, batch, ch, image, cl, px, py);
        return ONYX_OK;
    }
    /* NCHW pools of one or two spatial dims go plane by plane (avg_planes), each of its chunks
     * of planes with a bordered float plane of its own in this call's one scratch region */
    bool planes = !cl && nd <= 2;
    int64_t items = cl ? batch * (y->numel / (batch * ch)) : batch * ch;
    plane_job pj = {.items = items};
    if (planes) {
        pj.rows = (w->out[0] - 1) * w->stride[0] + w->k[0];
        pj.cols = nd == 2 ? (w->out[1] - 1) * w->stride[1] + w->k[1] : 1;
        pj.chunks = items < 4 * parallel_threads() ? items : 4 * parallel_threads();
        pj.chunk_floats = (size_t)(pj.rows * pj.cols + 2 * (nd == 2 ? w->out[1] : 1));
    }
    avg_job *j;
    TRY(kernel_scratch(c, sizeof *j + (size_t)pj.chunks * pj.chunk_floats * sizeof(float),
                       (void **)&j));
    memset(j, 0, sizeof *j);
    j->t = t;
    j->x = x->data;
    j->y = y->data;
    j->ch = ch;
    j->cl = cl;
    j->include_pad = attr_int(c->node, "count_include_pad", 0) != 0;
    j->py = py;
    j->lo = cq_lo(t);
    j->hi = cq_hi(t);
    j->kernel_size = ksize;
    j->in_size = image;
    j->out_size = 1;
    for (int i = 0; i < 3; i++) {
        bool has = i < nd;
        j->in[i] = has ? w->in[i] : 1;
        j->out[i] = has ? w->out[i] : 1;
        j->k[i] = has ? w->k[i] : 1;
        j->s[i] = has ? w->stride[i] : 1;
        j->pb[i] = has ? w->pad_b[i] : 0;
        j->out_size *= j->out[i];
    }
    for (int b = 0; b < 256; b++)
        j->deq[b] = px.scale * (float)(cq_get(t, &(uint8_t){(uint8_t)b}, 0) - px.zp);
    if (planes) {
        pj.j = j;
        pj.buf = (float *)(j + 1);
        parallel_for(pj.chunks, 1, avg_planes, &pj);
        return ONYX_OK;
    }
    int64_t work = (cl ? ch : j->out_size) * ksize + 1;
    parallel_for(items, 65536 / work + 1, avg_items, j);
    return ONYX_OK;
}
