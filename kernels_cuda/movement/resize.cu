// Resize on CUDA for float types: nearest and (bi)linear over the last two axes, with the CPU's
// coordinate formulas (kernels_cpu/signal/resize.c), evaluated in the same IEEE double steps so
// that every source index and weight is the CPU's bit for bit, and the two axes interpolated in
// the CPU's order. Everything else (cubic, antialias, tf_crop_and_resize, exclude_outside, aspect
// policies, integer types, other axes) stays on the CPU.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_cuda/movement/movement.cuh"

namespace {

enum {
    RZ_HALF_PIXEL,
    RZ_PYTORCH_HALF_PIXEL,
    RZ_ALIGN_CORNERS,
    RZ_ASYMMETRIC,
    RZ_TF_HALF_PIXEL_FOR_NN,
    RZ_TF_CROP_AND_RESIZE,
    RZ_HALF_PIXEL_SYMMETRIC,
};
enum { RZ_NEAREST, RZ_LINEAR };
enum { RZ_PREFER_FLOOR, RZ_PREFER_CEIL, RZ_FLOOR, RZ_CEIL, RZ_SIMPLE };

struct rz_axis {
    int active; // false: copied unchanged
    double scale;
    int64_t in, out;
};

// What the kernels need: the two resized axes (H, W), and which the CPU interpolates first.
struct rz_params {
    int mode, coord, nearest;
    int w_first;
    rz_axis ax[2];
    int64_t outer;
};

// One output index of an axis: its source taps, clamped into the input, with their weights.
struct rz_tap {
    int64_t i0, i1;
    double w0, w1;
};

struct rz_state {
    rz_params k;
    int rank;
    int64_t in_dims[CUDA_MAX_RANK], out_dims[CUDA_MAX_RANK];
};

int pick(const char *s, const char *const *names, int count) {
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

// The plan of ops_resize_plan_make restricted to what this kernel does; false for anything
// else (the node then stays on the CPU). scales / sizes: host tensors or NULL when absent.
bool rz_plan(const graph_node *n, int rank, const int64_t *dims, const tensor *scales,
             const tensor *sizes, rz_state *s) {
    memset(s, 0, sizeof *s);
    rz_params *p = &s->k;
    const char *mode = attr_string(n, "mode", "nearest");
    if (strcmp(mode, "nearest") == 0) p->mode = RZ_NEAREST;
    else if (strcmp(mode, "linear") == 0) p->mode = RZ_LINEAR;
    else return false;
    if (n->version < 11) {
        p->coord = RZ_ASYMMETRIC;
        p->nearest = RZ_SIMPLE;
    } else {
        static const char *const coords[] = {"half_pixel",   "pytorch_half_pixel",
                                             "align_corners", "asymmetric",
                                             "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                             "half_pixel_symmetric"};
        p->coord = pick(attr_string(n, "coordinate_transformation_mode", "half_pixel"), coords, 7);
        if (p->coord < 0 || p->coord == RZ_TF_CROP_AND_RESIZE ||
            (p->coord == RZ_TF_HALF_PIXEL_FOR_NN && n->version >= 13) ||
            (p->coord == RZ_HALF_PIXEL_SYMMETRIC && n->version < 19))
            return false;
        static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                               "ceil"};
        p->nearest = pick(attr_string(n, "nearest_mode", "round_prefer_floor"), nearests, 4);
        if (p->nearest < 0 || attr_int(n, "exclude_outside", 0) != 0) return false;
        if (n->version >= 18 && attr_int(n, "antialias", 0) != 0) return false;
    }
    if (rank < 2 || rank > CUDA_MAX_RANK) return false;
    int axes[CUDA_MAX_RANK], na = rank;
    const int64_t *ax = NULL;
    size_t nax = n->version >= 18 ? attr_ints(n, "axes", &ax) : 0;
    if (nax == 0) {
        for (int i = 0; i < rank; i++) axes[i] = i;
    } else {
        na = (int)nax;
        // in range and distinct (geometry/axes.h), as the CPU's Resize checks them
        if (geom_axes(ax, nax, rank, "axes", axes, NULL) != ONYX_OK) return false;
    }
    double scale[CUDA_MAX_RANK];
    bool active[CUDA_MAX_RANK];
    s->rank = rank;
    for (int i = 0; i < rank; i++) {
        s->in_dims[i] = s->out_dims[i] = dims[i];
        scale[i] = 1.0;
    }
    if (scales) {
        if (sizes || scales->dtype != ONYX_FLOAT || scales->rank != 1 || scales->numel != na)
            return false;
        for (int i = 0; i < na; i++) {
            int a = axes[i];
            double sc = ((const float *)scales->data)[i];
            if (!(sc > 0) || isinf(sc)) return false;
            scale[a] = sc;
            double v = floor(sc * (double)dims[a]);
            if (!(v < 4e15)) return false;
            s->out_dims[a] = (int64_t)v;
        }
    } else if (sizes) {
        if (sizes->dtype != ONYX_INT64 || sizes->rank != 1 || sizes->numel != na) return false;
        if (n->version >= 18 &&
            strcmp(attr_string(n, "keep_aspect_ratio_policy", "stretch"), "stretch") != 0)
            return false;
        for (int i = 0; i < na; i++) {
            int a = axes[i];
            int64_t sz = ((const int64_t *)sizes->data)[i];
            if (sz < 0 || sz > ((int64_t)1 << 50) || (dims[a] == 0 && sz != 0)) return false;
            s->out_dims[a] = sz;
            scale[a] = dims[a] ? (double)sz / (double)dims[a] : 1.0;
        }
    } else {
        return false;
    }
    for (int a = 0; a < rank; a++) {
        bool same = s->out_dims[a] == dims[a] && fabs(scale[a] - 1.0) <= 1e-9;
        active[a] = !same;
        if (active[a] && a < rank - 2) return false; /* only the last two axes are resized */
        if (active[a] && dims[a] == 0 && s->out_dims[a] > 0) return false;
    }
    for (int i = 0; i < 2; i++) {
        int a = rank - 2 + i;
        p->ax[i].active = active[a];
        p->ax[i].scale = scale[a];
        p->ax[i].in = dims[a];
        p->ax[i].out = s->out_dims[a];
    }
    p->outer = mv_product(dims, 0, rank - 2);
    // the CPU interpolates the axes in order of out/in ratio, smallest first (ties: H first)
    int h = rank - 2, w = rank - 1;
    double rh = (double)s->out_dims[h] / (double)(dims[h] ? dims[h] : 1);
    double rw = (double)s->out_dims[w] / (double)(dims[w] ? dims[w] : 1);
    p->w_first = active[h] && active[w] && rw < rh;
    return true;
}

// Input i's value for the plan: NULL when absent or known to be empty; *ok false when the
// value is not known at prepare (the plan cannot be checked: decline).
const tensor *known_input(const kernel_prep *p, int i, bool *ok) {
    if (i >= p->n_in || !p->in_type[i]) return NULL;
    const tensor *v = p->in_value ? p->in_value[i] : NULL;
    if (v) {
        if (v->device != DEVICE_CPU) *ok = false;
        return v->numel > 0 ? v : NULL;
    }
    const type_info *t = p->in_type[i];
    if (t->rank == 1 && t->dims[0] == 0) return NULL;
    *ok = false;
    return NULL;
}

bool plan_of(const kernel_prep *p, rz_state *s) {
    const type_info *x = p->in_type[0];
    bool ok = true;
    const tensor *scales, *sizes = NULL;
    if (p->node->version < 11) {
        scales = known_input(p, 1, &ok);
    } else {
        scales = known_input(p, 2, &ok);
        sizes = known_input(p, 3, &ok);
    }
    if (!ok || !rz_plan(p->node, x->rank, x->dims, scales, sizes, s)) return false;
    const type_info *y = &p->out_type[0];
    if (y->rank != x->rank || y->dtype != x->dtype) return false;
    for (int k = 0; k < x->rank; k++)
        if (y->dims[k] != s->out_dims[k]) return false;
    return true;
}

// ---- device: the tables

// Source coordinate of output index o, as the CPU's source_coord (the "output width" is
// scale * input width). Explicitly rounded operations: no contraction into fused multiply-adds,
// which the CPU build does not do either.
__device__ double source_coord(const rz_params &p, const rz_axis &a, double o) {
    double s = a.scale, in = (double)a.in;
    double ow = __dmul_rn(s, in);
    switch (p.coord) {
    case RZ_ALIGN_CORNERS:
        return ow == 1 ? 0.0 : __ddiv_rn(__dmul_rn(o, __dsub_rn(in, 1.0)), __dsub_rn(ow, 1.0));
    case RZ_ASYMMETRIC: return __ddiv_rn(o, s);
    case RZ_TF_HALF_PIXEL_FOR_NN: return __ddiv_rn(__dadd_rn(o, 0.5), s);
    case RZ_PYTORCH_HALF_PIXEL:
        return ow == 1 ? -0.5 : __dsub_rn(__ddiv_rn(__dadd_rn(o, 0.5), s), 0.5);
    case RZ_HALF_PIXEL_SYMMETRIC: {
        double adjustment = __ddiv_rn((double)a.out, ow);
        double offset = __dmul_rn(__ddiv_rn(in, 2.0), __dsub_rn(1.0, adjustment));
        return __dsub_rn(__dadd_rn(offset, __ddiv_rn(__dadd_rn(o, 0.5), s)), 0.5);
    }
    default: return __dsub_rn(__ddiv_rn(__dadd_rn(o, 0.5), s), 0.5);
    }
}

__device__ rz_tap build_tap(const rz_params &p, const rz_axis &a, int64_t o) {
    rz_tap t;
    if (!a.active) {
        t.i0 = t.i1 = o;
        t.w0 = 1;
        t.w1 = 0;
        return t;
    }
    double x = source_coord(p, a, (double)o);
    // the ratio lies in (0, 1]: an integer coordinate counts as 1 past its left neighbour
    double xf = floor(x), ratio = __dsub_rn(x, xf);
    if (ratio == 0) {
        ratio = 1;
        xf = __dsub_rn(xf, 1.0);
    }
    if (!(fabs(xf) < 4e15)) xf = xf < 0 ? -4e15 : 4e15;
    int64_t left = (int64_t)xf;
    if (p.mode == RZ_NEAREST) {
        int nm = p.nearest;
        if (nm == RZ_SIMPLE) nm = a.scale < 1 ? RZ_CEIL : RZ_FLOOR;
        bool right;
        if (ratio == 1) right = true;
        else if (nm == RZ_PREFER_FLOOR) right = ratio > 0.5;
        else if (nm == RZ_PREFER_CEIL) right = ratio >= 0.5;
        else right = nm == RZ_CEIL;
        t.i0 = t.i1 = left + (right ? 1 : 0);
        t.w0 = 1;
        t.w1 = 0;
    } else {
        t.i0 = left;
        t.i1 = left + 1;
        double v0 = __dsub_rn(1.0, fabs(__dsub_rn(0.0, ratio)));
        double v1 = __dsub_rn(1.0, fabs(__dsub_rn(1.0, ratio)));
        t.w0 = v0 < 0 ? 0 : v0;
        t.w1 = v1 < 0 ? 0 : v1;
    }
    int64_t last = a.in - 1;
    t.i0 = t.i0 < 0 ? 0 : t.i0 > last ? last : t.i0;
    t.i1 = t.i1 < 0 ? 0 : t.i1 > last ? last : t.i1;
    return t;
}

// tab[0 .. out_h) for H, then tab[out_h .. out_h + out_w) for W.
__global__ void rz_tables(rz_tap *tab, rz_params p) {
    int64_t nh = p.ax[0].out, n = nh + p.ax[1].out;
    CUDA_GRID_LOOP(e, n) {
        int a = e < nh ? 0 : 1;
        tab[e] = build_tap(p, p.ax[a], a ? e - nh : e);
    }
}

// ---- device: the interpolation

__device__ __forceinline__ float rz_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float rz_add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double rz_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double rz_add(double a, double b) { return __dadd_rn(a, b); }

// One axis's taps over two loaded values, as the CPU's pass: w0 * a, plus w1 * b unless w1 is 0.
template <typename W> __device__ __forceinline__ W rz_mix(W w0, W a, W w1, W b, bool two) {
    W r = rz_mul(w0, a);
    if (two && w1 != 0) r = rz_add(r, rz_mul(w1, b));
    return r;
}

template <typename T>
__global__ void rz_apply(T *__restrict__ y, const T *__restrict__ x, const rz_tap *__restrict__ tab,
                         rz_params p) {
    typedef typename compute<T>::type W; // float for the 16-bit floats, as the CPU's work type
    int64_t IH = p.ax[0].in, IW = p.ax[1].in, OH = p.ax[0].out, OW = p.ax[1].out;
    int64_t n = p.outer * OH * OW;
    bool two_h = p.mode == RZ_LINEAR && p.ax[0].active;
    bool two_w = p.mode == RZ_LINEAR && p.ax[1].active;
    CUDA_GRID_LOOP(i, n) {
        int64_t ox = i % OW, r = i / OW;
        int64_t oy = r % OH, b = r / OH;
        const T *base = x + b * IH * IW;
        rz_tap th = tab[oy], tw = tab[OH + ox];
        W wh0 = (W)th.w0, wh1 = (W)th.w1, ww0 = (W)tw.w0, ww1 = (W)tw.w1;
        W v;
        if (p.w_first) {
            // rows first along W, then the two rows mixed along H
            const T *r0 = base + th.i0 * IW, *r1 = base + th.i1 * IW;
            W a = rz_mix<W>(ww0, to_compute(r0[tw.i0]), ww1, to_compute(r0[tw.i1]), two_w);
            W c = two_h ? rz_mix<W>(ww0, to_compute(r1[tw.i0]), ww1, to_compute(r1[tw.i1]), two_w)
                        : a;
            v = rz_mix<W>(wh0, a, wh1, c, two_h);
        } else {
            const T *c0 = base + tw.i0, *c1 = base + tw.i1;
            W a = rz_mix<W>(wh0, to_compute(c0[th.i0 * IW]), wh1, to_compute(c0[th.i1 * IW]),
                            two_h);
            W c = two_w ? rz_mix<W>(wh0, to_compute(c1[th.i0 * IW]), wh1,
                                    to_compute(c1[th.i1 * IW]), two_h)
                        : a;
            v = rz_mix<W>(ww0, a, ww1, c, two_w);
        }
        y[i] = from_compute<T>(v);
    }
}

struct rz_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, tensor *y, const rz_params *p,
                           const rz_tap *tab) {
        rz_apply<T><<<cuda_blocks(y->numel), CUDA_THREADS, 0, cuda_stream(c)>>>(
            (T *)y->data, (const T *)x->data, tab, *p);
        return cuda_launched("Resize");
    }
};

} // namespace

bool mv_resize_supports(const kernel_prep *p) {
    rz_state s;
    const type_info *x = p->in_type[0];
    if (!dtype_in(x->dtype, DT_FLOATS) || !mv_ranks_ok(p)) return false;
    return plan_of(p, &s);
}

onyx_status mv_resize_prepare(const kernel_prep *p, void **state) {
    rz_state *s = (rz_state *)calloc(1, sizeof *s);
    if (!s) return onyx_error(ONYX_ERR_NO_MEMORY, "out of memory allocating resize state");
    if (!plan_of(p, s)) {
        free(s);
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Resize: this node is not one the CUDA kernel "
                          "takes");
    }
    *state = s;
    return ONYX_OK;
}

void mv_resize_release(void *state) { free(state); }

onyx_status mv_resize_run(const kernel_call *c) {
    const rz_state *s = (const rz_state *)c->state;
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    bool fits = s && x->rank == s->rank && y->rank == s->rank && y->dtype == x->dtype;
    for (int k = 0; fits && k < s->rank; k++)
        fits = x->dims[k] == s->in_dims[k] && y->dims[k] == s->out_dims[k];
    if (!fits) return onyx_error(ONYX_ERR_SHAPE, "Resize: shapes differ from the prepared ones");
    if (y->numel == 0) return ONYX_OK;
    const rz_params *p = &s->k;
    int64_t n_tab = p->ax[0].out + p->ax[1].out;
    void *mem;
    TRY(cuda_scratch(c, (size_t)n_tab * sizeof(rz_tap), &mem));
    rz_tap *tab = (rz_tap *)mem;
    rz_tables<<<cuda_blocks(n_tab), CUDA_THREADS, 0, cuda_stream(c)>>>(tab, *p);
    TRY(cuda_launched("Resize tables"));
    switch (x->dtype) {
    case ONYX_FLOAT: return rz_launch::run<float>(c, x, y, p, tab);
    case ONYX_DOUBLE: return rz_launch::run<double>(c, x, y, p, tab);
    case ONYX_FLOAT16: return rz_launch::run<__half>(c, x, y, p, tab);
    case ONYX_BFLOAT16: return rz_launch::run<__nv_bfloat16>(c, x, y, p, tab);
    default: return onyx_error(ONYX_ERR_UNSUPPORTED, "Resize: type %d on CUDA", (int)x->dtype);
    }
}
