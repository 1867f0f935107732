// Softmax, LogSoftmax, Hardmax and CumSum on CUDA over [outer, n, inner] around the axis
// (Softmax v1/v11 coerce to 2-D: n is everything from the axis on, inner 1). Semantics mirror
// kernels_cpu/math/softmax.c and cumulative.c.
#include <type_traits>

#include "kernels_cuda/reduce/reduce.h"
#include "kernels_cuda/reduce/reduce_common.cuh"

namespace rdc {
namespace {

enum sm_mode { SM_SOFTMAX, SM_LOG, SM_HARD };

__device__ __forceinline__ float sm_exp(float v) { return expf(v); }
__device__ __forceinline__ double sm_exp(double v) { return exp(v); }
__device__ __forceinline__ float sm_log(float v) { return logf(v); }
__device__ __forceinline__ double sm_log(double v) { return log(v); }

// The first maximum wins; NaN counts as the maximum (and then the first NaN), like numpy's argmax.
template <typename C> __device__ __forceinline__ bool max_beats(C v, int64_t i, C bv, int64_t bi) {
    if (bi < 0) return i >= 0;
    if (i < 0) return false;
    bool vn = isnan(v), bn = isnan(bv);
    if (vn != bn) return vn;
    if (vn || v == bv) return i < bi;
    return v > bv;
}

struct sm_max_op {
    template <typename C> __device__ __forceinline__ C operator()(C a, C b) const {
        return (b > a || isnan(b)) ? b : a; // a NaN a stays: nothing compares above it
    }
};

// Contiguous rows (inner == 1): a warp (BLOCK false) or the whole block per row.
template <typename T, bool BLOCK>
__global__ void __launch_bounds__(1024)
    softmax_rows(const T *x, T *y, int64_t rows, int64_t n, int mode) {
    typedef typename compute<T>::type C;
    __shared__ C sh[32];
    __shared__ int64_t shi[32];
    const int64_t per = BLOCK ? 1 : blockDim.x / 32;
    const int64_t lane = BLOCK ? threadIdx.x : (threadIdx.x & 31);
    const int64_t width = BLOCK ? blockDim.x : 32;
    for (int64_t r = (int64_t)blockIdx.x * per + (BLOCK ? 0 : threadIdx.x / 32); r < rows;
         r += (int64_t)gridDim.x * per) {
        const T *xr = x + r * n;
        T *yr = y + r * n;
        if (mode == SM_HARD) {
            C bv = 0;
            int64_t bi = -1;
            for (int64_t t = lane; t < n; t += width) {
                C v = to_compute(xr[t]);
                if (max_beats(v, t, bv, bi)) bv = v, bi = t;
            }
            for (int o = 16; o > 0; o >>= 1) {
                C ov = __shfl_xor_sync(0xffffffffu, bv, o);
                int64_t oi = __shfl_xor_sync(0xffffffffu, bi, o);
                if (max_beats(ov, oi, bv, bi)) bv = ov, bi = oi;
            }
            if constexpr (BLOCK) {
                __syncthreads();
                if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = bv, shi[threadIdx.x >> 5] = bi;
                __syncthreads();
                bv = sh[0];
                bi = shi[0];
                for (unsigned w = 1; w < (blockDim.x + 31) / 32; w++)
                    if (max_beats(sh[w], shi[w], bv, bi)) bv = sh[w], bi = shi[w];
            }
            for (int64_t t = lane; t < n; t += width) yr[t] = from_compute<T>((C)(t == bi ? 1 : 0));
            continue;
        }
        C mx = -INFINITY;
        for (int64_t t = lane; t < n; t += width) mx = sm_max_op()(mx, (C)to_compute(xr[t]));
        if constexpr (BLOCK)
            mx = block_reduce(mx, sm_max_op(), sh);
        else
            mx = warp_reduce(mx, sm_max_op());
        C s = 0;
        for (int64_t t = lane; t < n; t += width) s += sm_exp((C)to_compute(xr[t]) - mx);
        if constexpr (BLOCK)
            s = block_reduce(s, add_op(), sh);
        else
            s = warp_reduce(s, add_op());
        if (mode == SM_LOG) {
            C l = mx + sm_log(s);
            for (int64_t t = lane; t < n; t += width)
                yr[t] = from_compute<T>((C)to_compute(xr[t]) - l);
        } else {
            C inv = (C)1 / s;
            for (int64_t t = lane; t < n; t += width)
                yr[t] = from_compute<T>(sm_exp((C)to_compute(xr[t]) - mx) * inv);
        }
    }
}

// Strided rows (inner > 1): a thread per (outer, inner) column, coalesced over the columns.
template <typename T>
__global__ void softmax_cols(const T *x, T *y, int64_t outer, int64_t n, int64_t inner, int mode) {
    typedef typename compute<T>::type C;
    CUDA_GRID_LOOP(i, outer * inner) {
        int64_t o = i / inner, j = i - o * inner;
        const T *xc = x + o * n * inner + j;
        T *yc = y + o * n * inner + j;
        C mx = to_compute(xc[0]);
        int64_t arg = 0;
        for (int64_t r = 1; r < n; r++) {
            C v = to_compute(xc[r * inner]);
            if (!isnan(mx) && (v > mx || isnan(v))) mx = v, arg = r;
        }
        if (mode == SM_HARD) {
            for (int64_t r = 0; r < n; r++) yc[r * inner] = from_compute<T>((C)(r == arg ? 1 : 0));
            continue;
        }
        C s = 0;
        for (int64_t r = 0; r < n; r++) s += sm_exp((C)to_compute(xc[r * inner]) - mx);
        if (mode == SM_LOG) {
            C l = mx + sm_log(s);
            for (int64_t r = 0; r < n; r++)
                yc[r * inner] = from_compute<T>((C)to_compute(xc[r * inner]) - l);
        } else {
            C inv = (C)1 / s;
            for (int64_t r = 0; r < n; r++)
                yc[r * inner] = from_compute<T>(sm_exp((C)to_compute(xc[r * inner]) - mx) * inv);
        }
    }
}

unsigned grid_cap(int64_t n) { return (unsigned)(n < 1 ? 1 : n > (1 << 20) ? (1 << 20) : n); }

struct softmax_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, tensor *y, int64_t outer,
                           int64_t n, int64_t inner, int mode) {
        cudaStream_t st = cuda_stream(c);
        const T *xd = cuda_data<T>(x);
        T *yd = cuda_data<T>(y);
        if (inner == 1 && n >= 2048)
            softmax_rows<T, true>
                <<<grid_cap(outer), n >= 16384 ? 1024 : 256, 0, st>>>(xd, yd, outer, n, mode);
        else if (inner == 1 && n >= 16)
            softmax_rows<T, false>
                <<<grid_cap((outer + 7) / 8), 256, 0, st>>>(xd, yd, outer, n, mode);
        else
            softmax_cols<T><<<cuda_blocks(outer * inner), CUDA_THREADS, 0, st>>>(xd, yd, outer, n,
                                                                                 inner, mode);
        return cuda_launched("Softmax");
    }
};

// The [outer, n, inner] view around the axis the schema resolved (params, core/op_params.h);
// false when there is none for this rank.
bool softmax_view(const graph_node *node, const op_params *params, int rank, const int64_t *dims,
                  int64_t *outer, int64_t *n, int64_t *inner) {
    bool coerce = node->version < 13;
    const geom_axis_set *axes = op_params_axes(params);
    if (!axes || axes->rank != rank || axes->axis < 0) return false;
    int axis = axes->axis;
    *outer = *n = *inner = 1;
    for (int i = 0; i < axis; i++) *outer *= dims[i];
    for (int i = axis; i < rank; i++) {
        if (i == axis || coerce)
            *n *= dims[i];
        else
            *inner *= dims[i];
    }
    return true;
}

onyx_status softmax_run(const kernel_call *c, int mode) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    int64_t outer, n, inner;
    int axis;
    TRY(kernel_axis(c->params, x->rank, &axis)); // an error where the plan handed none
    softmax_view(c->node, c->params, x->rank, x->dims, &outer, &n, &inner);
    if (x->numel == 0) return ONYX_OK;
    CUDA_DISPATCH_FLOATS(x->dtype, softmax_launch, c, x, y, outer, n, inner, mode)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: type %d on CUDA", c->node->op_type, (int)x->dtype);
}

// ---- CumSum: integers wrap (accumulated in uint64), 16-bit floats accumulate in float

template <typename T> struct cacc { typedef typename compute<T>::type type; };
template <> struct cacc<int32_t> { typedef uint64_t type; };
template <> struct cacc<int64_t> { typedef uint64_t type; };

template <typename T, typename A> __device__ __forceinline__ A cum_ld(T v) {
    return (A)to_compute(v);
}
template <typename T, typename A> __device__ __forceinline__ T cum_st(A v) {
    return from_compute<T>((typename compute<T>::type)v);
}

// Contiguous rows (inner == 1): the block scans a tile of blockDim elements at a time in
// scan order (reversed when `reverse`), carrying the running total between tiles.
template <typename T>
__global__ void __launch_bounds__(1024)
    cumsum_rows(const T *x, T *y, int64_t rows, int64_t n, bool exclusive, bool reverse) {
    typedef typename cacc<T>::type A;
    __shared__ A wsum[32];
    __shared__ A tile[1024];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int nwarps = (blockDim.x + 31) >> 5;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *xr = x + r * n;
        T *yr = y + r * n;
        A carry = 0;
        for (int64_t t0 = 0; t0 < n; t0 += blockDim.x) {
            int64_t t = t0 + tid, idx = reverse ? n - 1 - t : t;
            A v = t < n ? cum_ld<T, A>(xr[idx]) : (A)0;
            for (int d = 1; d < 32; d <<= 1) {
                A u = __shfl_up_sync(0xffffffffu, v, d);
                if (lane >= d) v += u;
            }
            if (lane == 31) wsum[warp] = v;
            __syncthreads();
            if (warp == 0) {
                A w = lane < nwarps ? wsum[lane] : (A)0;
                for (int d = 1; d < 32; d <<= 1) {
                    A u = __shfl_up_sync(0xffffffffu, w, d);
                    if (lane >= d) w += u;
                }
                wsum[lane] = w;
            }
            __syncthreads();
            if (warp > 0) v += wsum[warp - 1];
            A incl = carry + v;
            tile[tid] = incl;
            __syncthreads();
            if (t < n)
                yr[idx] = cum_st<T, A>(exclusive ? (tid == 0 ? carry : tile[tid - 1]) : incl);
            carry = tile[blockDim.x - 1];
            __syncthreads();
        }
    }
}

template <typename T>
__global__ void cumsum_cols(const T *x, T *y, int64_t outer, int64_t n, int64_t inner,
                            bool exclusive, bool reverse) {
    typedef typename cacc<T>::type A;
    CUDA_GRID_LOOP(i, outer * inner) {
        int64_t o = i / inner, j = i - o * inner;
        const T *xc = x + o * n * inner + j;
        T *yc = y + o * n * inner + j;
        A acc = 0;
        for (int64_t s = 0; s < n; s++) {
            int64_t r = reverse ? n - 1 - s : s;
            A v = cum_ld<T, A>(xc[r * inner]);
            if (exclusive) yc[r * inner] = cum_st<T, A>(acc);
            acc += v;
            if (!exclusive) yc[r * inner] = cum_st<T, A>(acc);
        }
    }
}

struct cumsum_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, tensor *y, int64_t outer,
                           int64_t n, int64_t inner, bool exclusive, bool reverse) {
        cudaStream_t st = cuda_stream(c);
        const T *xd = cuda_data<T>(x);
        T *yd = cuda_data<T>(y);
        if (inner == 1 && n >= 32) {
            unsigned threads = n >= 1024 ? 1024 : (unsigned)((n + 31) / 32 * 32);
            cumsum_rows<T>
                <<<grid_cap(outer), threads, 0, st>>>(xd, yd, outer, n, exclusive, reverse);
        } else {
            cumsum_cols<T><<<cuda_blocks(outer * inner), CUDA_THREADS, 0, st>>>(
                xd, yd, outer, n, inner, exclusive, reverse);
        }
        return cuda_launched("CumSum");
    }
};

bool cum_int(onyx_dtype d) { return d == ONYX_INT32 || d == ONYX_INT64; }

// The axis from input 1 (one int32 or int64 on the host); a scalar x is a 1-element vector.
bool cum_axis(const tensor *at, int rank, int *axis) {
    if (!at || at->numel != 1 || at->device != DEVICE_CPU) return false;
    int64_t a;
    if (at->dtype == ONYX_INT64)
        a = *(const int64_t *)at->data;
    else if (at->dtype == ONYX_INT32)
        a = *(const int32_t *)at->data;
    else
        return false;
    int r = rank == 0 ? 1 : rank;
    if (a < -(int64_t)r || a >= (int64_t)r) return false;
    *axis = (int)(a < 0 ? a + r : a);
    return true;
}

} // namespace

bool cuda_softmax_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    if (!x || x->rank < 0 || !dtype_is_float(x->dtype)) return false;
    int64_t outer, n, inner;
    return softmax_view(p->node, p->params, x->rank, x->dims, &outer, &n, &inner);
}

onyx_status cuda_softmax(const kernel_call *c) { return softmax_run(c, SM_SOFTMAX); }
onyx_status cuda_logsoftmax(const kernel_call *c) { return softmax_run(c, SM_LOG); }
onyx_status cuda_hardmax(const kernel_call *c) { return softmax_run(c, SM_HARD); }

bool cuda_cumsum_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    if (!x || x->rank < 0 || (!dtype_is_float(x->dtype) && !cum_int(x->dtype))) return false;
    if (p->n_in < 2 || !p->in_type[1]) return false;
    const type_info *a = p->in_type[1];
    if (a->dtype != ONYX_INT32 && a->dtype != ONYX_INT64) return false;
    const tensor *av = p->in_value[1];
    int axis;
    // a constant axis is checked now; another at run, failing there as on the CPU
    return !av || av->device != DEVICE_CPU || cum_axis(av, x->rank, &axis);
}

onyx_status cuda_cumsum(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    int axis;
    if (!cum_axis(kernel_input(c, 1), x->rank, &axis))
        return onyx_error(ONYX_ERR_SHAPE,
                          "CumSum: axis (input 1) must hold one int32 or int64 in range");
    bool exclusive = attr_int(c->node, "exclusive", 0) != 0;
    bool reverse = attr_int(c->node, "reverse", 0) != 0;
    int64_t outer = 1, n = x->rank == 0 ? 1 : x->dims[axis], inner = 1;
    for (int i = 0; i < axis && i < x->rank; i++) outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++) inner *= x->dims[i];
    if (x->numel == 0) return ONYX_OK;
    CUDA_DISPATCH_FLOATS(x->dtype, cumsum_launch, c, x, y, outer, n, inner, exclusive, reverse)
    switch (x->dtype) {
        CUDA_CASE(ONYX_INT32, cumsum_launch, c, x, y, outer, n, inner, exclusive, reverse)
        CUDA_CASE(ONYX_INT64, cumsum_launch, c, x, y, outer, n, inner, exclusive, reverse)
    default:
        break;
    }
    return onyx_error(ONYX_ERR_UNSUPPORTED, "CumSum: type %d on CUDA", (int)x->dtype);
}

} // namespace rdc
