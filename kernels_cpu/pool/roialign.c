/* CPU kernel of RoiAlign: each output bin averages (or maxes) a grid of bilinear samples, as
 * onnxruntime and onnx's reference do (max mode takes the max of the weighted corner values). */
#include <math.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

/* The most bilinear samples one RoiAlign may take (minutes of work at most). */
#define MAX_SAMPLES 4294967296.0

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

/* Samples per bin along one axis: sampling_ratio, or adaptive ceil(bin size); as a double, since
 * a huge spatial_scale makes it far larger than any count; NaN boxes get none. */
static double grid_size(int64_t sr, double bin) {
    if (sr > 0) return (double)sr;
    double g = ceil(bin);
    return g >= 0 ? g : 0;
}

/* The samples i in [0, g) of start + (i + 0.5) * step that can land on the map, [-1, extent]
 * (the others weigh 0): [*first, *last], empty when *first > *last. One sample of slack on each
 * side (sample_at still checks each), so rounding never drops one. */
static void on_map(double start, double step, double g, int64_t extent, int64_t *first,
                   int64_t *last) {
    *first = 0;
    *last = -1;
    if (!(g >= 1) || !isfinite(start) || !isfinite(step)) return;
    double lo = 0, hi = g - 1;
    if (step != 0) {
        double a = (-1.0 - start) / step - 0.5, b = ((double)extent - start) / step - 0.5;
        if (a > b) {
            double t = a;
            a = b;
            b = t;
        }
        lo = fmax(lo, floor(a) - 1);
        hi = fmin(hi, ceil(b) + 1);
    } else if (!(start >= -1.0 && start <= (double)extent)) {
        return;
    }
    /* past 2^53 a sample's index (and position) is no longer exact: a box of 1e16 samples and
     * more reads nothing beyond that, and the count alone gets such a node refused */
    if (lo > hi || lo > 0x1p53) return;
    *first = (int64_t)lo;
    *last = (int64_t)fmin(hi, 0x1p53);
}

/* One roi's geometry: its corner, bin sizes and samples per bin. */
typedef struct roi_box {
    double x0, y0, bw, bh, gw, gh;
} roi_box;

static void roi_geometry(const roi_job *j, double bx0, double by0, double bx1, double by1,
                         roi_box *b) {
    double off = j->half_pixel ? 0.5 : 0.0;
    b->x0 = bx0 * j->scale - off;
    b->y0 = by0 * j->scale - off;
    double rw = bx1 * j->scale - off - b->x0, rh = by1 * j->scale - off - b->y0;
    if (!j->half_pixel) {
        rw = rw > 1.0 ? rw : 1.0; /* malformed rois become 1x1 */
        rh = rh > 1.0 ? rh : 1.0;
    }
    b->bh = rh / (double)j->oh;
    b->bw = rw / (double)j->ow;
    b->gh = grid_size(j->sr, b->bh);
    b->gw = grid_size(j->sr, b->bw);
}

/* Only the samples that land on the map are read: the others weigh 0 in the average (and are
 * a 0 in the max), so a huge box or sampling_ratio costs no more than the map it covers. */
#define ROI_TEMPLATE(N, T, LD, ST)                                                                 \
    static void roi_rows_##N(void *ctx, int64_t b, int64_t e) {                                    \
        const roi_job *j = ctx;                                                                    \
        for (int64_t rc = b; rc < e; rc++) {                                                       \
            int64_t r = rc / j->c, ch = rc % j->c;                                                 \
            const T *box = (const T *)j->rois + r * 4;                                             \
            const T *x = (const T *)j->x + (j->bidx[r] * j->c + ch) * j->h * j->w;                 \
            T *y = (T *)j->y + rc * j->oh * j->ow;                                                 \
            roi_box g;                                                                             \
            roi_geometry(j, LD(box[0]), LD(box[1]), LD(box[2]), LD(box[3]), &g);                   \
            double total = g.gh * g.gw, cnt = total > 1 ? total : 1.0;                             \
            for (int64_t ph = 0; ph < j->oh; ph++) {                                               \
                int64_t fy, ly;                                                                    \
                double sy = g.y0 + ph * g.bh, dy = g.bh / g.gh;                                    \
                on_map(sy, dy, g.gh, j->h, &fy, &ly);                                              \
                for (int64_t pw = 0; pw < j->ow; pw++) {                                           \
                    int64_t fx, lx;                                                                \
                    double sx = g.x0 + pw * g.bw, dx = g.bw / g.gw;                                \
                    on_map(sx, dx, g.gw, j->w, &fx, &lx);                                          \
                    double read = (double)(ly - fy + 1) * (double)(lx - fx + 1);                   \
                    /* samples off the map count as 0 in a max too */                              \
                    bool first = !(fy > ly || fx > lx) && read >= total;                           \
                    double acc = 0;                                                                \
                    for (int64_t iy = fy; iy <= ly && fx <= lx; iy++) {                            \
                        double yy = sy + (iy + 0.5) * dy;                                          \
                        for (int64_t ix = fx; ix <= lx; ix++) {                                    \
                            double xx = sx + (ix + 0.5) * dx;                                      \
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
            }                                                                                      \
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
    /* the samples that land on the map, over every roi: bounded, or the node is refused rather
     * than run for hours (a sampling_ratio of millions, a spatial_scale of 1e9) */
    double reads = 0;
    for (int64_t r = 0; r < rois->dims[0]; r++) {
        roi_box g;
        roi_geometry(&j, tensor_get_f64(rois, r * 4), tensor_get_f64(rois, r * 4 + 1),
                     tensor_get_f64(rois, r * 4 + 2), tensor_get_f64(rois, r * 4 + 3), &g);
        double ny = 0, nx = 0;
        for (int64_t ph = 0; ph < j.oh; ph++) {
            int64_t f, l;
            on_map(g.y0 + ph * g.bh, g.bh / g.gh, g.gh, j.h, &f, &l);
            ny += (double)(l - f + 1);
        }
        for (int64_t pw = 0; pw < j.ow; pw++) {
            int64_t f, l;
            on_map(g.x0 + pw * g.bw, g.bw / g.gw, g.gw, j.w, &f, &l);
            nx += (double)(l - f + 1);
        }
        reads += ny * nx * (double)j.c;
    }
    if (reads > MAX_SAMPLES)
        return onyx_error(ONYX_ERR_UNSUPPORTED,
                          "RoiAlign would take %.3g bilinear samples (sampling_ratio %lld, "
                          "spatial_scale %g): more than %.3g",
                          reads, (long long)j.sr, j.scale, MAX_SAMPLES);
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
