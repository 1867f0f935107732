// MaxPool (without Indices), AveragePool, GlobalMaxPool and GlobalAveragePool on CUDA: direct
// kernels over the windows the pools' schema resolved for the plan (core/op_params.h) with the
// loops of kernels_cpu/pool/pool.c (asymmetric pads, ceil_mode, dilations, count_include_pad),
// one thread per output.
#include <stdlib.h>
#include <string.h>

#include "kernels_cuda/common.cuh"
#include "kernels_cuda/conv/family.h"

namespace {

enum { POOL_MAX, POOL_AVG };

const int SP_MAX = 3;

// Windows of 1-D and 2-D pools padded to 3-D with leading unit dims, so one loop nest serves
// every rank. Passed to the kernels by value.
struct pool_geom {
    int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
    int64_t in_size, out_size, planes;
    bool include_pad;
};

struct pool_state {
    int kind;
    pool_geom g;
    int64_t x_numel, y_numel;
};

// The pool's window as its schema resolved it for the plan, the same for every device
// (kernel_prep.params: ops/spatial.c over geometry/window.h's rule), over known input dims; false
// where there is none or the output type disagrees.
bool resolve(const kernel_prep *p, int kind, pool_state *s) {
    const type_info *x = p->in_type[0];
    if (!x || x->kind != ONYX_VALUE_TENSOR) return false;
    dtype_mask types = DT_FLOATS;
    if (kind == POOL_MAX) types |= DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8);
    if (!dtype_in(x->dtype, types)) return false;
    // Indices (MaxPool's output 1) stay on the CPU
    for (int o = 1; o < p->node->n_outputs; o++)
        if (p->node->outputs[o] >= 0) return false;
    const graph_node *n = p->node;
    if (x->rank < 3 || x->rank > SP_MAX + 2) return false;
    int nd = x->rank - 2;
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] < 0) return false;
    const geom_window *sp = op_params_window(p->params);
    if (!sp || !geom_window_known(sp) || sp->nsp != nd) return false;
    const int64_t *out = sp->out;
    const type_info *y = &p->out_type[0];
    if (y->kind != ONYX_VALUE_TENSOR || y->rank != x->rank || y->dims[0] != x->dims[0] ||
        y->dims[1] != x->dims[1])
        return false;
    for (int i = 0; i < nd; i++)
        if (y->dims[2 + i] != out[i]) return false;

    memset(s, 0, sizeof *s);
    s->kind = kind;
    pool_geom *g = &s->g;
    int off = 3 - nd;
    for (int i = 0; i < 3; i++) {
        g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
        g->pb[i] = g->pe[i] = 0;
    }
    for (int i = 0; i < nd; i++) {
        g->in[off + i] = x->dims[2 + i];
        g->out[off + i] = out[i];
        g->k[off + i] = sp->k[i];
        g->s[off + i] = sp->stride[i];
        g->d[off + i] = sp->dil[i];
        g->pb[off + i] = sp->pad_b[i];
        g->pe[off + i] = sp->pad_e[i];
    }
    g->in_size = g->in[0] * g->in[1] * g->in[2];
    g->out_size = g->out[0] * g->out[1] * g->out[2];
    g->planes = x->dims[0] * x->dims[1];
    g->include_pad = attr_int(n, "count_include_pad", 0) != 0;
    s->x_numel = g->planes * g->in_size;
    s->y_numel = g->planes * g->out_size;
    return true;
}

// Valid kernel taps [lo, hi) of the window starting at `start`: those landing in [0, limit).
__device__ __forceinline__ void taps(int64_t start, int64_t k, int64_t d, int64_t limit,
                                     int64_t *lo, int64_t *hi) {
    int64_t l = start < 0 ? (-start + d - 1) / d : 0;
    int64_t h = limit > start ? (limit - start + d - 1) / d : 0;
    if (h > k) h = k;
    *lo = l;
    *hi = h > l ? h : l;
}

template <typename T, int KIND> __global__ void pool_kernel(pool_geom g, const T *x, T *y) {
    typedef typename compute<T>::type A;
    CUDA_GRID_LOOP(i, g.planes * g.out_size) {
        int64_t pl = i / g.out_size, o = i - pl * g.out_size;
        int64_t o2 = o % g.out[2], o01 = o / g.out[2];
        int64_t o1 = o01 % g.out[1], o0 = o01 / g.out[1];
        int64_t s0 = o0 * g.s[0] - g.pb[0], s1 = o1 * g.s[1] - g.pb[1], s2 = o2 * g.s[2] - g.pb[2];
        int64_t l0, h0, l1, h1, l2, h2;
        taps(s0, g.k[0], g.d[0], g.in[0], &l0, &h0);
        taps(s1, g.k[1], g.d[1], g.in[1], &l1, &h1);
        taps(s2, g.k[2], g.d[2], g.in[2], &l2, &h2);
        const T *xp = x + pl * g.in_size;
        A acc = A(0);
        bool found = false;
        for (int64_t j0 = l0; j0 < h0; j0++) {
            int64_t i0 = s0 + j0 * g.d[0];
            for (int64_t j1 = l1; j1 < h1; j1++) {
                const T *row = xp + (i0 * g.in[1] + s1 + j1 * g.d[1]) * g.in[2];
                for (int64_t j2 = l2; j2 < h2; j2++) {
                    A v = to_compute(row[s2 + j2 * g.d[2]]);
                    if (KIND == POOL_MAX) {
                        if (v > acc || !found) acc = v;
                        found = true;
                    } else {
                        acc += v;
                    }
                }
            }
        }
        if (KIND == POOL_AVG) {
            int64_t cnt = (h0 - l0) * (h1 - l1) * (h2 - l2);
            if (g.include_pad) {
                // taps inside the padded extent, not the ceil_mode overhang
                int64_t a0, b0, a1, b1, a2, b2;
                taps(s0 + g.pb[0], g.k[0], g.d[0], g.in[0] + g.pb[0] + g.pe[0], &a0, &b0);
                taps(s1 + g.pb[1], g.k[1], g.d[1], g.in[1] + g.pb[1] + g.pe[1], &a1, &b1);
                taps(s2 + g.pb[2], g.k[2], g.d[2], g.in[2] + g.pb[2] + g.pe[2], &a2, &b2);
                cnt = (b0 - a0) * (b1 - a1) * (b2 - a2);
            }
            acc = cnt > 0 ? acc / (A)cnt : A(0);
        }
        // a max window of padding only (large dilations) gives 0, as on the CPU
        y[i] = from_compute<T>(acc);
    }
}

struct pool_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const pool_state *s, const void *x, void *y) {
        unsigned blocks = cuda_blocks(s->y_numel);
        if (s->kind == POOL_MAX)
            pool_kernel<T, POOL_MAX><<<blocks, CUDA_THREADS, 0, cuda_stream(c)>>>(
                s->g, (const T *)x, (T *)y);
        else
            pool_kernel<T, POOL_AVG><<<blocks, CUDA_THREADS, 0, cuda_stream(c)>>>(
                s->g, (const T *)x, (T *)y);
        return cuda_launched(s->kind == POOL_MAX ? "MaxPool" : "AveragePool");
    }
};

// Average pooling is float-only, so its instances stay out of the integer types.
struct maxpool_int_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const pool_state *s, const void *x, void *y) {
        pool_kernel<T, POOL_MAX><<<cuda_blocks(s->y_numel), CUDA_THREADS, 0, cuda_stream(c)>>>(
            s->g, (const T *)x, (T *)y);
        return cuda_launched("MaxPool");
    }
};

bool pool_supports(const kernel_prep *p, int kind) {
    pool_state s;
    return resolve(p, kind, &s);
}

onyx_status pool_prepare(const kernel_prep *p, int kind, void **state) {
    pool_state *s = (pool_state *)calloc(1, sizeof *s);
    if (!s) return onyx_error(ONYX_ERR_NO_MEMORY, "pool: out of memory");
    if (!resolve(p, kind, s)) {
        free(s);
        return onyx_error(ONYX_ERR_UNSUPPORTED, "pool: the CUDA kernel does not take this node");
    }
    *state = s;
    return ONYX_OK;
}

/* ------------------------------------------------------------------ global pools */

const int WARPS = CUDA_THREADS / 32;

// One warp per N*C plane.
template <typename T, int KIND>
__global__ void global_kernel(const T *x, T *y, int64_t planes, int64_t size) {
    typedef typename compute<T>::type A;
    int lane = threadIdx.x & 31;
    for (int64_t pl = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5); pl < planes;
         pl += (int64_t)gridDim.x * WARPS) {
        const T *xp = x + pl * size;
        A acc = KIND == POOL_MAX ? to_compute(xp[0]) : A(0);
        for (int64_t i = lane; i < size; i += 32) {
            A v = to_compute(xp[i]);
            if (KIND == POOL_MAX) acc = v > acc ? v : acc;
            else acc += v;
        }
        for (int o = 16; o > 0; o >>= 1) {
            A v = __shfl_down_sync(0xffffffffu, acc, o);
            if (KIND == POOL_MAX) acc = v > acc ? v : acc;
            else acc += v;
        }
        if (lane == 0) y[pl] = from_compute<T>(KIND == POOL_MAX ? acc : acc / (A)size);
    }
}

struct global_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, int kind, const tensor *x, tensor *y,
                           int64_t planes, int64_t size) {
        int64_t b = (planes + WARPS - 1) / WARPS;
        unsigned blocks = (unsigned)(b > 65536 ? 65536 : b);
        if (kind == POOL_MAX)
            global_kernel<T, POOL_MAX><<<blocks, CUDA_THREADS, 0, cuda_stream(c)>>>(
                cuda_data<T>(x), cuda_data<T>(y), planes, size);
        else
            global_kernel<T, POOL_AVG><<<blocks, CUDA_THREADS, 0, cuda_stream(c)>>>(
                cuda_data<T>(x), cuda_data<T>(y), planes, size);
        return cuda_launched(kind == POOL_MAX ? "GlobalMaxPool" : "GlobalAveragePool");
    }
};

onyx_status global_run(const kernel_call *c, int kind) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (x->rank < 3)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 3", x->rank);
    int64_t planes = x->dims[0] * x->dims[1];
    if (planes == 0) return ONYX_OK;
    int64_t size = x->numel / planes;
    if (size == 0)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has an empty spatial extent: nothing to pool");
    if (y->numel != planes)
        return onyx_error(ONYX_ERR_SHAPE, "output has %lld elements, expected %lld",
                          (long long)y->numel, (long long)planes);
    CUDA_DISPATCH_FLOATS(x->dtype, global_launch, c, kind, x, y, planes, size)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "global pool: type %d on CUDA", (int)x->dtype);
}

} // namespace

bool cuda_maxpool_supports(const kernel_prep *p) { return pool_supports(p, POOL_MAX); }
bool cuda_averagepool_supports(const kernel_prep *p) { return pool_supports(p, POOL_AVG); }
onyx_status cuda_maxpool_prepare(const kernel_prep *p, void **state) {
    return pool_prepare(p, POOL_MAX, state);
}
onyx_status cuda_averagepool_prepare(const kernel_prep *p, void **state) {
    return pool_prepare(p, POOL_AVG, state);
}
void cuda_pool_release(void *state) { free(state); }

onyx_status cuda_pool_run(const kernel_call *c) {
    const pool_state *s = (const pool_state *)c->state;
    if (!s) return onyx_error(ONYX_ERR_RUNTIME, "pool: kernel state missing");
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (x->numel != s->x_numel || y->numel != s->y_numel)
        return onyx_error(ONYX_ERR_SHAPE, "pool: shapes differ from the prepared ones");
    if (y->numel == 0) return ONYX_OK;
    switch (x->dtype) {
    case ONYX_INT8: return maxpool_int_launch::run<int8_t>(c, s, x->data, y->data);
    case ONYX_UINT8: return maxpool_int_launch::run<uint8_t>(c, s, x->data, y->data);
    default: break;
    }
    CUDA_DISPATCH_FLOATS(x->dtype, pool_launch, c, s, x->data, y->data)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "pool: type %d on CUDA", (int)x->dtype);
}

bool cuda_global_pool_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    if (!x || x->kind != ONYX_VALUE_TENSOR || !dtype_in(x->dtype, DT_FLOATS) || x->rank < 3)
        return false;
    int64_t size = 1;
    for (int i = 0; i < x->rank; i++) {
        if (x->dims[i] < 0) return false;
        if (i >= 2) size *= x->dims[i];
    }
    // an empty spatial extent is the CPU's error to report
    return size > 0;
}

onyx_status cuda_globalmaxpool_run(const kernel_call *c) { return global_run(c, POOL_MAX); }
onyx_status cuda_globalaveragepool_run(const kernel_call *c) { return global_run(c, POOL_AVG); }
