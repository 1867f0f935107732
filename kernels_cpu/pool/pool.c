/* CPU kernels of MaxPool (with Indices), AveragePool, LpPool and the Global* pools: direct loops
 * over N*C planes, one template per element type. float32 max/average and int8/uint8 max pooling
 * without Indices go to oneDNN (pool_dnnl.c) when it can do the case the ONNX way: its vectorized
 * kernels measured 4-6x faster than these loops on ResNet/VGG-shaped pools. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fuse_chain.h"
#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/opaque.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/pool/pool.h"

enum { POOL_MAX, POOL_AVG, POOL_LP };

/* Spatial dims the loops take (the schemas' limit, ops/spatial.h's SPATIAL_MAX_DIMS). */
#define POOL_MAX_SPATIAL 3

/* Windows of 1-D and 2-D pools are padded to 3-D with leading unit dims, so one loop nest serves
 * every rank. */
typedef struct pool_geom {
    int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
    int64_t in_size, out_size, planes;
    int kind;
    bool include_pad;   /* AveragePool count_include_pad */
    bool col_major;     /* MaxPool storage_order = 1 */
    double p;           /* LpPool */
} pool_geom;

typedef struct pool_state {
    int kind;
    bool include_pad, col_major;
    double p;
    cpu_pool_dnnl *dnnl;       /* NULL: own loops */
    bool opaque;               /* X and Y opaque (core/fuse.h): channels last, oneDNN only */
    onyx_dtype dnnl_dtype;
    bool dnnl_half;            /* float16 X and Y, converted to and from the float primitive */
    int rank;
    int64_t dnnl_in[2 + POOL_MAX_SPATIAL];  /* input dims the primitive was made for */
} pool_state;

/* The loops' 3-D window from the plan's (a pool's has at most POOL_MAX_SPATIAL dims). */
static void geom_fill(pool_geom *g, const geom_window *w) {
    int off = 3 - w->nsp;
    for (int i = 0; i < 3; i++) {
        g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
        g->pb[i] = g->pe[i] = 0;
    }
    for (int i = 0; i < w->nsp; i++) {
        g->in[off + i] = w->in[i];
        g->out[off + i] = w->out[i];
        g->k[off + i] = w->k[i];
        g->s[off + i] = w->stride[i];
        g->d[off + i] = w->dil[i];
        g->pb[off + i] = w->pad_b[i];
        g->pe[off + i] = w->pad_e[i];
    }
    g->in_size = g->in[0] * g->in[1] * g->in[2];
    g->out_size = g->out[0] * g->out[1] * g->out[2];
}

/* A window far larger than the input (a fuzzed kernel of 2^20): oneDNN walks every tap of it,
 * padding included (14 s for a 32x32 image), where the own loops visit the valid taps only. */
static bool window_dwarfs_input(const geom_window *w) {
    for (int i = 0; i < w->nsp; i++)
        if (geom_window_extent(w->k[i], w->dil[i]) > 4 * w->in[i] + 64) return true;
    return false;
}

/* Valid kernel taps [lo, hi) of the window starting at `start`: those landing in [0, limit). */
static inline void taps(int64_t start, int64_t k, int64_t d, int64_t limit, int64_t *lo,
                        int64_t *hi) {
    int64_t l = start < 0 ? (-start + d - 1) / d : 0;
    int64_t h = limit > start ? (limit - start + d - 1) / d : 0;
    if (h > k) h = k;
    *lo = l;
    *hi = h > l ? h : l;
}

typedef struct pool_job {
    const pool_geom *g;
    const void *x;
    void *y;
    int64_t *idx;
} pool_job;

static inline float ld_i8(int8_t v) { return v; }
static inline int8_t st_i8(float v) { return (int8_t)v; }
static inline float ld_u8(uint8_t v) { return v; }
static inline uint8_t st_u8(float v) { return (uint8_t)v; }

/* One plane loop per element type: T storage, A accumulator, LD/ST converters. Integer types only
 * reach the max path (the schemas allow them for MaxPool alone), where the float round trip is
 * exact. */
#define POOL_TEMPLATE(N, T, A, LD, ST, KIND)                                                       \
    static void pool_planes_##N##_##KIND(void *ctx, int64_t b, int64_t e) {                        \
        const pool_job *j = ctx;                                                                   \
        const pool_geom *g = j->g;                                                                 \
        for (int64_t pl = b; pl < e; pl++) {                                                       \
            const T *x = (const T *)j->x + pl * g->in_size;                                        \
            T *y = (T *)j->y + pl * g->out_size;                                                   \
            int64_t *ix = j->idx ? j->idx + pl * g->out_size : NULL;                               \
            int64_t o = 0;                                                                         \
            for (int64_t o0 = 0; o0 < g->out[0]; o0++) {                                           \
                int64_t s0 = o0 * g->s[0] - g->pb[0], l0, h0;                                      \
                taps(s0, g->k[0], g->d[0], g->in[0], &l0, &h0);                                    \
                for (int64_t o1 = 0; o1 < g->out[1]; o1++) {                                       \
                    int64_t s1 = o1 * g->s[1] - g->pb[1], l1, h1;                                  \
                    taps(s1, g->k[1], g->d[1], g->in[1], &l1, &h1);                                \
                    for (int64_t o2 = 0; o2 < g->out[2]; o2++, o++) {                              \
                        int64_t s2 = o2 * g->s[2] - g->pb[2], l2, h2;                              \
                        taps(s2, g->k[2], g->d[2], g->in[2], &l2, &h2);                            \
                        A acc = (KIND) == POOL_MAX ? (A)-INFINITY : (A)0;                         \
                        int64_t best = -1, cnt = 0;                                                \
                        for (int64_t j0 = l0; j0 < h0; j0++) {                                     \
                            int64_t i0 = s0 + j0 * g->d[0];                                        \
                            for (int64_t j1 = l1; j1 < h1; j1++) {                                 \
                                int64_t i1 = s1 + j1 * g->d[1];                                    \
                                const T *row = x + (i0 * g->in[1] + i1) * g->in[2];                \
                                if ((KIND) == POOL_MAX) {                                         \
                                    for (int64_t j2 = l2; j2 < h2; j2++) {                         \
                                        int64_t i2 = s2 + j2 * g->d[2];                            \
                                        A v = (A)LD(row[i2]);                                      \
                                        if (v > acc || best < 0) {                                 \
                                            acc = v;                                               \
                                            best = (i0 * g->in[1] + i1) * g->in[2] + i2;           \
                                            if (g->col_major)                                      \
                                                best = i0 + i1 * g->in[0] +                        \
                                                       i2 * g->in[0] * g->in[1];                   \
                                        }                                                          \
                                    }                                                              \
                                } else if ((KIND) == POOL_AVG) {                                  \
                                    for (int64_t j2 = l2; j2 < h2; j2++)                           \
                                        acc += (A)LD(row[s2 + j2 * g->d[2]]);                      \
                                } else {                                                           \
                                    for (int64_t j2 = l2; j2 < h2; j2++) {                         \
                                        A v = (A)fabs((double)LD(row[s2 + j2 * g->d[2]]));         \
                                        acc += g->p == 2 ? v * v                                   \
                                               : g->p == 1 ? v                                     \
                                                           : (A)pow((double)v, g->p);              \
                                    }                                                              \
                                }                                                                  \
                                cnt += h2 - l2;                                                    \
                            }                                                                      \
                        }                                                                          \
                        if ((KIND) == POOL_MAX) {                                                 \
                            /* a window of padding only (possible with large dilations) */       \
                            if (best < 0) acc = 0;                                                 \
                            if (ix) ix[o] = best < 0 ? 0 : pl * g->in_size + best;                 \
                        } else if ((KIND) == POOL_AVG) {                                          \
                            if (g->include_pad) {                                                  \
                                /* taps inside the padded extent, not the ceil_mode overhang */  \
                                int64_t a0, b0, a1, b1, a2, b2;                                    \
                                taps(s0 + g->pb[0], g->k[0], g->d[0],                              \
                                     g->in[0] + g->pb[0] + g->pe[0], &a0, &b0);                    \
                                taps(s1 + g->pb[1], g->k[1], g->d[1],                              \
                                     g->in[1] + g->pb[1] + g->pe[1], &a1, &b1);                    \
                                taps(s2 + g->pb[2], g->k[2], g->d[2],                              \
                                     g->in[2] + g->pb[2] + g->pe[2], &a2, &b2);                    \
                                cnt = (b0 - a0) * (b1 - a1) * (b2 - a2);                           \
                            }                                                                      \
                            acc = cnt > 0 ? acc / (A)cnt : (A)0;                                   \
                        } else {                                                                   \
                            acc = g->p == 2 ? (A)sqrt((double)acc)                                 \
                                  : g->p == 1 ? acc                                                \
                                              : (A)pow((double)acc, 1.0 / g->p);                   \
                        }                                                                          \
                        y[o] = ST(acc);                                                            \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

/* the pooling kind is a template constant so that each instance loses the other kinds' code */
#define POOL_KINDS(N, T, A, LD, ST)                                                                \
    POOL_TEMPLATE(N, T, A, LD, ST, 0) POOL_TEMPLATE(N, T, A, LD, ST, 1)                            \
    POOL_TEMPLATE(N, T, A, LD, ST, 2)
_Static_assert(POOL_MAX == 0 && POOL_AVG == 1 && POOL_LP == 2, "kinds are template suffixes");

POOL_KINDS(f32, float, float, cpu_f32_ld, cpu_f32_st)
POOL_KINDS(f64, double, double, cpu_f64_ld, cpu_f64_st)
POOL_KINDS(f16, uint16_t, float, cpu_f16_ld, cpu_f16_st)
POOL_KINDS(bf16, uint16_t, float, cpu_bf16_ld, cpu_bf16_st)
POOL_TEMPLATE(i8, int8_t, float, ld_i8, st_i8, 0)
POOL_TEMPLATE(u8, uint8_t, float, ld_u8, st_u8, 0)

typedef void (*plane_fn)(void *ctx, int64_t b, int64_t e);

/* NULL for a type the kind does not take (integers pool by max only) */
static plane_fn pool_fn(onyx_dtype d, int kind) {
#define PICK(N) (kind == POOL_MAX ? pool_planes_##N##_0 : kind == POOL_AVG ? pool_planes_##N##_1 \
                                                                           : pool_planes_##N##_2)
    switch (d) {
    case ONYX_FLOAT: return PICK(f32);
    case ONYX_DOUBLE: return PICK(f64);
    case ONYX_FLOAT16: return PICK(f16);
    case ONYX_BFLOAT16: return PICK(bf16);
    case ONYX_INT8: return kind == POOL_MAX ? pool_planes_i8_0 : NULL;
    case ONYX_UINT8: return kind == POOL_MAX ? pool_planes_u8_0 : NULL;
    default: return NULL;
    }
#undef PICK
}

/* Planes per parallel chunk: enough work per chunk to pay for waking a thread. */
static int64_t plane_grain(int64_t work_per_plane) {
    int64_t g = 32768 / (work_per_plane > 0 ? work_per_plane : 1);
    return g < 1 ? 1 : g;
}

/* Whether the window the plan handed is the one of X and Y (it is made for them: a check, not a
 * second derivation). */
static onyx_status pool_check_window(const geom_window *w, const tensor *x, const tensor *y,
                                     const tensor *idx) {
    if (w->nsp < 1 || w->nsp > POOL_MAX_SPATIAL || x->rank != w->nsp + 2 || y->rank != x->rank)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected %d (the window's spatial "
                          "dims, at most %d, and two)", x->rank, w->nsp + 2, POOL_MAX_SPATIAL);
    bool fits = x->dims[0] == w->n && x->dims[1] == w->c;
    for (int i = 0; i < w->nsp && fits; i++)
        fits = x->dims[2 + i] == w->in[i] && y->dims[2 + i] == w->out[i] &&
               (!idx || idx->dims[2 + i] == w->out[i]);
    if (!fits)
        return onyx_error(ONYX_ERR_RUNTIME, "the plan's pooling window is for other dims");
    return ONYX_OK;
}

static double lp_p(const graph_node *n) {
    const graph_attr *a = node_attr(n, "p");
    return !a ? 2.0 : a->type == ATTR_FLOAT ? (double)a->f : (double)a->i;
}

/* The layouts pool_prepare takes (p->fused, core/fuse_chain.h): a chain of layouts alone, and
 * X and Y opaque together or neither, for float X (8-bit for max) of static shape, no Indices,
 * not LpPool: what oneDNN's channels-last pooling, the only one over opaque tensors, may take. */
static bool layouts_fit(const kernel_prep *p, int kind) {
    const fuse_chain *f = p->fused;
    if (!f || (!f->opaque_in0 && !f->opaque_out0)) return !f || cpu_chain_layout_only(f);
    const type_info *xt = p->in_type[0];
    bool want_idx = p->n_out > 1 && p->node->outputs[1] >= 0;
    bool opaque_type = xt && (xt->dtype == ONYX_FLOAT ||
                              (kind == POOL_MAX && (xt->dtype == ONYX_INT8 || xt->dtype == ONYX_UINT8)));
    return cpu_chain_layout_only(f) && f->opaque_in0 && f->opaque_out0 && kind != POOL_LP &&
           !want_idx && opaque_type && type_is_static(xt);
}

/* The window oneDNN is asked to pool (float32 max/average, float16 through float where not
 * opaque, int8/uint8 max; no Indices; the plan's window known, for an output that is not empty;
 * a plain window that does not dwarf its input), or NULL: the loops run the node. */
static const geom_window *dnnl_window(const kernel_prep *p, int kind, bool opaque) {
    const type_info *xt = p->in_type[0];
    /* the plan's window; unknown dims (a generic plan) wait for the run's */
    const geom_window *win = op_params_window(p->params);
    bool known = win && geom_window_known(win) && win->nsp <= POOL_MAX_SPATIAL;
    bool want_idx = p->n_out > 1 && p->node->outputs[1] >= 0;
    if (kind == POOL_LP || want_idx || !known || !xt || xt->kind != ONYX_VALUE_TENSOR ||
        !(xt->dtype == ONYX_FLOAT || (xt->dtype == ONYX_FLOAT16 && !opaque) ||
          (kind == POOL_MAX && (xt->dtype == ONYX_INT8 || xt->dtype == ONYX_UINT8))) ||
        xt->rank != win->nsp + 2 || !type_is_static(xt))
        return NULL;
    int64_t out[2 + POOL_MAX_SPATIAL], numel;
    geom_window_out_dims(win, out);
    return shape_numel(xt->rank, out, &numel) && numel > 0 &&
                   (opaque || !window_dwarfs_input(win))
               ? win
               : NULL;
}

/* kernel.takes_chain of MaxPool and AveragePool: the layouts they take (layouts_fit) and, for
 * opaque ones, oneDNN's channels-last pooling of the window (its descriptor alone). */
static bool pool_takes_chain(const kernel_prep *p, int kind) {
    if (!layouts_fit(p, kind)) return false;
    if (!p->fused || !p->fused->opaque_in0) return true;
    const geom_window *win = dnnl_window(p, kind, true);
    return win && cpu_pool_dnnl_takes_channels_last(
                      p->in_type[0]->dtype, win, kind == POOL_MAX,
                      attr_int(p->node, "count_include_pad", 0) != 0);
}

bool cpu_maxpool_takes_chain(const kernel_prep *p) { return pool_takes_chain(p, POOL_MAX); }
bool cpu_averagepool_takes_chain(const kernel_prep *p) { return pool_takes_chain(p, POOL_AVG); }

static onyx_status pool_prepare(const kernel_prep *p, int kind, void **state) {
    pool_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("pool state");
    onyx_status st = ONYX_OK;
    const graph_node *n = p->node;
    const type_info *xt = p->in_type[0];
    s->kind = kind;
    s->include_pad = attr_int(n, "count_include_pad", 0) != 0;
    s->col_major = attr_int(n, "storage_order", 0) != 0;
    s->p = lp_p(n);
    /* the fusion pass keeps X and Y in the convolutions' opaque layout only together */
    if (!layouts_fit(p, kind)) {
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "an opaque-layout pooling takes no chain but its "
                        "layouts, and needs float X (8-bit for max) and Y both opaque, static "
                        "shapes and no Indices");
        goto done;
    }
    s->opaque = p->fused && p->fused->opaque_in0;
    const geom_window *win = dnnl_window(p, kind, s->opaque);
    if (win) {
        s->rank = xt->rank;
        s->dnnl_half = xt->dtype == ONYX_FLOAT16;
        CHECK(cpu_pool_dnnl_create(s->dnnl_half ? ONYX_FLOAT : xt->dtype, win, kind == POOL_MAX,
                                   s->include_pad, s->opaque, &s->dnnl));
        s->dnnl_dtype = xt->dtype;
        memcpy(s->dnnl_in, xt->dims, (size_t)s->rank * sizeof *s->dnnl_in);
    }
    if (s->opaque && !s->dnnl) {
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "oneDNN has no channels-last pooling for this case");
        goto done;
    }
done:
    if (st != ONYX_OK) {
        cpu_pool_dnnl_free(s->dnnl);
        free(s);
        return st;
    }
    *state = s;
    return ONYX_OK;
}

onyx_status cpu_maxpool_prepare(const kernel_prep *p, void **state) {
    return pool_prepare(p, POOL_MAX, state);
}
onyx_status cpu_averagepool_prepare(const kernel_prep *p, void **state) {
    return pool_prepare(p, POOL_AVG, state);
}
onyx_status cpu_lppool_prepare(const kernel_prep *p, void **state) {
    return pool_prepare(p, POOL_LP, state);
}

void cpu_pool_release(void *state) {
    pool_state *s = state;
    if (!s) return;
    cpu_pool_dnnl_free(s->dnnl);
    free(s);
}

/* A run context's part: the oneDNN memories it binds (NULL without a primitive). */
typedef struct pool_fork {
    const pool_state *s;
    cpu_pool_dnnl_mem *mem;
} pool_fork;

onyx_status cpu_pool_fork(const void *state, void **out) {
    const pool_state *s = state;
    pool_fork *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("pool working state");
    f->s = s;
    if (s->dnnl) {
        onyx_status st = cpu_pool_dnnl_mem_create(s->dnnl, &f->mem);
        if (st != ONYX_OK) {
            free(f);
            return st;
        }
    }
    *out = f;
    return ONYX_OK;
}

void cpu_pool_unfork(void *fork) {
    pool_fork *f = fork;
    if (!f) return;
    cpu_pool_dnnl_mem_free(f->mem);
    free(f);
}

onyx_status cpu_pool_run(const kernel_call *c) {
    const pool_fork *f = c->state;
    if (!f) return onyx_error(ONYX_ERR_RUNTIME, "kernel state missing (prepare was not run)");
    const pool_state *s = f->s;
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0), *idx = kernel_output(c, 1);
    const geom_window *w;
    TRY(kernel_window(c->params, &w));
    TRY(pool_check_window(w, x, y, idx));
    if (y->numel == 0) return ONYX_OK;
    if (s->dnnl && !idx && x->dtype == s->dnnl_dtype &&
        !memcmp(s->dnnl_in, x->dims, (size_t)s->rank * sizeof *x->dims)) {
        void *pad = NULL;
        size_t bytes = cpu_pool_dnnl_scratch(s->dnnl);
        if (s->dnnl_half) {
            /* one region: float X, float Y, then oneDNN's scratchpad, each 64-byte aligned */
            size_t xb = ((size_t)x->numel * sizeof(float) + 63) & ~(size_t)63;
            size_t yb = ((size_t)y->numel * sizeof(float) + 63) & ~(size_t)63;
            char *base;
            TRY(kernel_scratch(c, xb + yb + bytes, (void **)&base));
            float *fx = (float *)(void *)base, *fy = (float *)(void *)(base + xb);
            cpu_fp16_to_float_n(x->data, fx, x->numel);
            TRY(cpu_pool_dnnl_run(s->dnnl, f->mem, fx, fy, bytes ? base + xb + yb : NULL));
            cpu_float_to_fp16_n(fy, y->data, y->numel);
            return ONYX_OK;
        }
        if (bytes) TRY(kernel_scratch(c, bytes, &pad));
        return cpu_pool_dnnl_run(s->dnnl, f->mem, x->data, y->data, pad);
    }
    if (s->opaque)
        return onyx_error(ONYX_ERR_RUNTIME, "opaque-layout pooling got a new input shape");
    plane_fn fn = pool_fn(x->dtype, s->kind);
    if (!fn)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, not supported here",
                          onyx_dtype_name(x->dtype));
    pool_geom g;
    geom_fill(&g, w);
    g.kind = s->kind;
    g.include_pad = s->include_pad;
    g.col_major = s->col_major;
    g.p = s->p;
    g.planes = x->dims[0] * x->dims[1];
    pool_job job = {&g, x->data, y->data, idx ? (int64_t *)idx->data : NULL};
    int64_t kvol = g.k[0] * g.k[1] * g.k[2];
    parallel_for(g.planes, plane_grain(g.out_size * kvol), fn, &job);
    return ONYX_OK;
}

/* ---- Global pools: one reduction over each plane */

typedef struct global_job {
    const void *x;
    void *y;
    int64_t size;
    int kind;
    double p;
} global_job;

#define GLOBAL_TEMPLATE(N, T, A, LD, ST)                                                           \
    static void global_planes_##N(void *ctx, int64_t b, int64_t e) {                               \
        const global_job *j = ctx;                                                                 \
        for (int64_t pl = b; pl < e; pl++) {                                                       \
            const T *x = (const T *)j->x + pl * j->size;                                           \
            A acc;                                                                                 \
            if (j->kind == POOL_MAX) {                                                             \
                acc = (A)LD(x[0]);                                                                 \
                for (int64_t i = 1; i < j->size; i++) {                                            \
                    A v = (A)LD(x[i]);                                                             \
                    acc = v > acc ? v : acc;                                                       \
                }                                                                                  \
            } else if (j->kind == POOL_AVG) {                                                      \
                acc = 0;                                                                           \
                CPU_SIMD_SUM(acc) for (int64_t i = 0; i < j->size; i++) acc += (A)LD(x[i]);          \
                acc /= (A)j->size;                                                                 \
            } else {                                                                               \
                acc = 0;                                                                           \
                for (int64_t i = 0; i < j->size; i++) {                                            \
                    A v = (A)fabs((double)LD(x[i]));                                               \
                    acc += j->p == 2 ? v * v : j->p == 1 ? v : (A)pow((double)v, j->p);            \
                }                                                                                  \
                acc = j->p == 2 ? (A)sqrt((double)acc)                                             \
                      : j->p == 1 ? acc                                                            \
                                  : (A)pow((double)acc, 1.0 / j->p);                               \
            }                                                                                      \
            ((T *)j->y)[pl] = ST(acc);                                                             \
        }                                                                                          \
    }

GLOBAL_TEMPLATE(f32, float, float, cpu_f32_ld, cpu_f32_st)
GLOBAL_TEMPLATE(f64, double, double, cpu_f64_ld, cpu_f64_st)
GLOBAL_TEMPLATE(f16, uint16_t, float, cpu_f16_ld, cpu_f16_st)
GLOBAL_TEMPLATE(bf16, uint16_t, float, cpu_bf16_ld, cpu_bf16_st)

static onyx_status global_run(const kernel_call *c, int kind) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (x->rank < 3)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 3", x->rank);
    plane_fn fn = NULL;
    switch (x->dtype) {
    case ONYX_FLOAT: fn = global_planes_f32; break;
    case ONYX_DOUBLE: fn = global_planes_f64; break;
    case ONYX_FLOAT16: fn = global_planes_f16; break;
    case ONYX_BFLOAT16: fn = global_planes_bf16; break;
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a float type",
                          onyx_dtype_name(x->dtype));
    }
    int64_t planes = x->dims[0] * x->dims[1];
    if (planes == 0) return ONYX_OK;
    int64_t size = planes ? x->numel / planes : 0;
    if (size == 0)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has an empty spatial extent: nothing to pool");
    global_job job = {x->data, y->data, size, kind, lp_p(c->node)};
    parallel_for(planes, plane_grain(size), fn, &job);
    return ONYX_OK;
}

/* a non-NULL state: X opaque, Y opaque or plain alike (cpu_opaque_prepare) */
onyx_status cpu_globalmaxpool_run(const kernel_call *c) {
    if (c->state) return cpu_opaque_global_pool(c, true);
    return global_run(c, POOL_MAX);
}
onyx_status cpu_globalaveragepool_run(const kernel_call *c) {
    if (c->state) return cpu_opaque_global_pool(c, false);
    return global_run(c, POOL_AVG);
}
onyx_status cpu_globallppool_run(const kernel_call *c) { return global_run(c, POOL_LP); }
