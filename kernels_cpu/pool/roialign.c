/* CPU kernel of RoiAlign: each output bin averages (or maxes) a grid of bilinear samples, as
 * onnxruntime and onnx's reference do (max mode takes the max of the weighted corner values). */
#include <math.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

typedef struct roi_job {
    const void *x, *rois;
    const int64_t *bidx;
    void *y;
    int64_t c, h, w, oh, ow, sr;
    double scale;
    bool half_pixel, max;
} roi_job;

/* The four corners and weights of one bilinear sample; all weights 0 outside the map. */
typedef struct corner {
    int64_t p[4];
    double w[4];
} corner;

static void sample_at(double y, double x, int64_t h, int64_t w, corner *r) {
    memset(r, 0, sizeof *r);
    /* written so that NaN coordinates also land here */
    if (!(y >= -1.0 && y <= (double)h && x >= -1.0 && x <= (double)w)) return;
    if (y < 0) y = 0;
    if (x < 0) x = 0;
    int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
    if (yl >= h - 1) {
        yh = yl = h - 1;
        y = (double)yl;
    } else {
        yh = yl + 1;
    }
    if (xl >= w - 1) {
        xh = xl = w - 1;
        x = (double)xl;
    } else {
        xh = xl + 1;
    }
    double ly = y - (double)yl, lx = x - (double)xl, hy = 1 - ly, hx = 1 - lx;
    r->p[0] = yl * w + xl;
    r->p[1] = yl * w + xh;
    r->p[2] = yh * w + xl;
    r->p[3] = yh * w + xh;
    r->w[0] = hy * hx;
    r->w[1] = hy * lx;
    r->w[2] = ly * hx;
    r->w[3] = ly * lx;
}

/* Adaptive samples per bin, ceil(bin size); NaN or absurd boxes are clamped rather than
 * converted out of range. */
static int64_t grid_size(double bin) {
    double g = ceil(bin);
    if (!(g >= 0)) return 0;
    return g > 4096 ? 4096 : (int64_t)g;
}

#define ROI_TEMPLATE(N, T, LD, ST)                                                                 \
    static void roi_rows_##N(void *ctx, int64_t b, int64_t e) {                                    \
        const roi_job *j = ctx;                                                                    \
        for (int64_t rc = b; rc < e; rc++) {                                                       \
            int64_t r = rc / j->c, ch = rc % j->c;                                                 \
            const T *box = (const T *)j->rois + r * 4;                                             \
            const T *x = (const T *)j->x + (j->bidx[r] * j->c + ch) * j->h * j->w;                 \
            T *y = (T *)j->y + rc * j->oh * j->ow;                                                 \
            double off = j->half_pixel ? 0.5 : 0.0;                                                \
            double x0 = (double)LD(box[0]) * j->scale - off;                                       \
            double y0 = (double)LD(box[1]) * j->scale - off;                                       \
            double rw = (double)LD(box[2]) * j->scale - off - x0;                                  \
            double rh = (double)LD(box[3]) * j->scale - off - y0;                                  \
            if (!j->half_pixel) {                                                                  \
                rw = rw > 1.0 ? rw : 1.0; /* malformed rois become 1x1 */                          \
                rh = rh > 1.0 ? rh : 1.0;                                                          \
            }                                                                                      \
            double bh = rh / (double)j->oh, bw = rw / (double)j->ow;                               \
            int64_t gh = j->sr > 0 ? j->sr : grid_size(rh / (double)j->oh);                        \
            int64_t gw = j->sr > 0 ? j->sr : grid_size(rw / (double)j->ow);                        \
            double cnt = gh * gw > 1 ? (double)(gh * gw) : 1.0;                                    \
            for (int64_t ph = 0; ph < j->oh; ph++)                                                 \
                for (int64_t pw = 0; pw < j->ow; pw++) {                                           \
                    double acc = 0;                                                                \
                    bool first = true;                                                             \
                    for (int64_t iy = 0; iy < gh; iy++) {                                          \
                        double yy = y0 + ph * bh + (iy + 0.5) * bh / (double)gh;                   \
                        for (int64_t ix = 0; ix < gw; ix++) {                                      \
                            double xx = x0 + pw * bw + (ix + 0.5) * bw / (double)gw;               \
                            corner s;                                                              \
                            sample_at(yy, xx, j->h, j->w, &s);                                     \
                            double v[4];                                                           \
                            for (int q = 0; q < 4; q++) v[q] = s.w[q] * (double)LD(x[s.p[q]]);     \
                            if (!j->max) {                                                         \
                                acc += v[0] + v[1] + v[2] + v[3];                                  \
                            } else {                                                               \
                                double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));               \
                                acc = first || m > acc ? m : acc;                                  \
                                first = false;                                                     \
                            }                                                                      \
                        }                                                                          \
                    }                                                                              \
                    y[ph * j->ow + pw] = ST((j->max ? acc : acc / cnt));                           \
                }                                                                                  \
        }                                                                                          \
    }

static inline float ld_f(float v) { return v; }
static inline float st_f(double v) { return (float)v; }
static inline double ld_d(double v) { return v; }
static inline double st_d(double v) { return v; }
static inline float ld_h(uint16_t v) { return cpu_fp16_to_float(v); }
static inline uint16_t st_h(double v) { return cpu_float_to_fp16((float)v); }
static inline float ld_b(uint16_t v) { return cpu_bf16_to_float(v); }
static inline uint16_t st_b(double v) { return cpu_float_to_bf16((float)v); }

ROI_TEMPLATE(f32, float, ld_f, st_f)
ROI_TEMPLATE(f64, double, ld_d, st_d)
ROI_TEMPLATE(f16, uint16_t, ld_h, st_h)
ROI_TEMPLATE(bf16, uint16_t, ld_b, st_b)

onyx_status cpu_roialign_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *rois = kernel_input(c, 1), *bi = kernel_input(c, 2);
    tensor *y = kernel_output(c, 0);
    if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || bi->rank != 1 ||
        bi->dims[0] != rois->dims[0] || bi->dtype != ONYX_INT64 || rois->dtype != x->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "expected X [N,C,H,W], rois [R,4] of X's type and "
                          "batch_indices [R] int64");
    const int64_t *b = bi->data;
    for (int64_t r = 0; r < bi->numel; r++)
        if (b[r] < 0 || b[r] >= x->dims[0])
            return onyx_error(ONYX_ERR_SHAPE, "batch_indices[%lld] is %lld, expected 0..%lld",
                              (long long)r, (long long)b[r], (long long)x->dims[0] - 1);
    if (y->numel == 0) return ONYX_OK;
    if (x->dims[2] == 0 || x->dims[3] == 0)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has an empty spatial extent");
    const graph_node *n = c->node;
    roi_job j = {
        .x = x->data, .rois = rois->data, .bidx = b, .y = y->data,
        .c = x->dims[1], .h = x->dims[2], .w = x->dims[3],
        .oh = y->dims[2], .ow = y->dims[3],
        .sr = attr_int(n, "sampling_ratio", 0),
        .scale = attr_float(n, "spatial_scale", 1.0f),
        .half_pixel = n->version >= 16 &&
                      !strcmp(attr_string(n, "coordinate_transformation_mode", "half_pixel"),
                              "half_pixel"),
        .max = !strcmp(attr_string(n, "mode", "avg"), "max"),
    };
    void (*fn)(void *, int64_t, int64_t);
    switch (x->dtype) {
    case ONYX_FLOAT: fn = roi_rows_f32; break;
    case ONYX_DOUBLE: fn = roi_rows_f64; break;
    case ONYX_FLOAT16: fn = roi_rows_f16; break;
    case ONYX_BFLOAT16: fn = roi_rows_bf16; break;
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a float type",
                          onyx_dtype_name(x->dtype));
    }
    int64_t grain = 4096 / (j.oh * j.ow * 4 + 1) + 1;
    parallel_for(rois->dims[0] * j.c, grain, fn, &j);
    return ONYX_OK;
}
