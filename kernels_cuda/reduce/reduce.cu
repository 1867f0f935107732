// Reduce* and ArgMax/ArgMin on CUDA, and the reduce family's table (Softmax, LogSoftmax, Hardmax
// and CumSum live in softmax.cu). Semantics mirror kernels_cpu/reduce/reduce.c; the axes are the
// ones the schemas resolved (core/op_params.h).
#include <string.h>

#include <type_traits>

#include "kernels_cuda/reduce/reduce.h"
#include "kernels_cuda/reduce/reduce_common.cuh"

namespace rdc {
namespace {

enum rop { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LSE, R_SUMSQ };

// Accumulators: float for the 16-bit floats, double for double, int64 for the integers.
template <typename T> struct racc { typedef typename compute<T>::type type; };
template <> struct racc<int32_t> { typedef int64_t type; };
template <> struct racc<int64_t> { typedef int64_t type; };

__device__ __forceinline__ bool is_nan(float v) { return isnan(v); }
__device__ __forceinline__ bool is_nan(double v) { return isnan(v); }
__device__ __forceinline__ bool is_nan(int32_t) { return false; }
__device__ __forceinline__ bool is_nan(int64_t) { return false; }

// Integers wrap as ONNX has it: through unsigned arithmetic, as signed overflow is undefined.
__device__ __forceinline__ float w_add(float a, float b) { return a + b; }
__device__ __forceinline__ double w_add(double a, double b) { return a + b; }
__device__ __forceinline__ int64_t w_add(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a + (uint64_t)b);
}
__device__ __forceinline__ float w_mul(float a, float b) { return a * b; }
__device__ __forceinline__ double w_mul(double a, double b) { return a * b; }
__device__ __forceinline__ int64_t w_mul(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a * (uint64_t)b);
}
__device__ __forceinline__ float w_abs(float a) { return a < 0 ? -a : a; }
__device__ __forceinline__ double w_abs(double a) { return a < 0 ? -a : a; }
__device__ __forceinline__ int64_t w_abs(int64_t a) {
    return a < 0 ? (int64_t)(0 - (uint64_t)a) : a;
}

// Identities of max/min: the type's range for integers (the CPU's), infinities for floats.
template <typename T> struct rlim {
    static __device__ __forceinline__ typename racc<T>::type lo() { return -INFINITY; }
    static __device__ __forceinline__ typename racc<T>::type hi() { return INFINITY; }
};
template <> struct rlim<int32_t> {
    static __device__ __forceinline__ int64_t lo() { return INT32_MIN; }
    static __device__ __forceinline__ int64_t hi() { return INT32_MAX; }
};
template <> struct rlim<int64_t> {
    static __device__ __forceinline__ int64_t lo() { return INT64_MIN; }
    static __device__ __forceinline__ int64_t hi() { return INT64_MAX; }
};

// A double result into T: through the compute type for floats, saturating for integers.
template <typename T> __device__ __forceinline__ T r_fromd(double d) {
    return from_compute<T>((typename compute<T>::type)d);
}
template <> __device__ __forceinline__ int32_t r_fromd<int32_t>(double d) {
    if (isnan(d)) return 0;
    if (d <= (double)INT32_MIN) return INT32_MIN;
    if (d >= (double)INT32_MAX) return INT32_MAX;
    return (int32_t)d;
}
template <> __device__ __forceinline__ int64_t r_fromd<int64_t>(double d) {
    if (isnan(d)) return 0;
    if (d <= (double)INT64_MIN) return INT64_MIN;
    if (d >= (double)INT64_MAX) return INT64_MAX;
    return (int64_t)d;
}

// NaN propagates through max and min.
template <typename A> __device__ __forceinline__ A r_comb(int op, A a, A b) {
    switch (op) {
    case R_PROD:
        return w_mul(a, b);
    case R_MAX:
        return (b > a || is_nan(b)) ? b : a;
    case R_MIN:
        return (b < a || is_nan(b)) ? b : a;
    default:
        return w_add(a, b);
    }
}

template <typename A> __device__ __forceinline__ A r_pre(int op, A v) {
    switch (op) {
    case R_L1:
        return w_abs(v);
    case R_L2:
    case R_SUMSQ:
        return w_mul(v, v);
    default:
        return v;
    }
}

template <typename T> __device__ __forceinline__ typename racc<T>::type r_ident(int op) {
    switch (op) {
    case R_PROD:
        return 1;
    case R_MAX:
        return rlim<T>::lo();
    case R_MIN:
        return rlim<T>::hi();
    default:
        return 0;
    }
}

template <typename T, typename A>
__device__ __forceinline__ T r_finish(int op, A a, int64_t count) {
    switch (op) {
    case R_MEAN:
        return r_fromd<T>((double)a / (double)count);
    case R_L2:
        return r_fromd<T>(sqrt((double)a));
    case R_LOGSUM:
        return r_fromd<T>(log((double)a));
    default:
        return from_compute<T>(a);
    }
}

struct comb_op {
    int op;
    template <typename A> __device__ __forceinline__ A operator()(A a, A b) const {
        return r_comb(op, a, b);
    }
};

struct nanmax_op {
    __device__ __forceinline__ double operator()(double a, double b) const {
        return (b > a || isnan(b)) ? b : a;
    }
};

// Folds elements t, t + step, ... < end of one output into acc.
template <typename T, typename A>
__device__ __forceinline__ A r_accum(int op, const T *xo, const rplan &p, int64_t t, int64_t end,
                                     int64_t step, A acc) {
    for (; t < end; t += step)
        acc = r_comb(op, acc, r_pre(op, (A)to_compute(xo[red_offset(p, t)])));
    return acc;
}

// Log-sum-exp runs in double around the largest finite element (inf and NaN pass through).
template <typename T>
__device__ __forceinline__ double lse_max(const T *xo, const rplan &p, int64_t t, int64_t end,
                                          int64_t step, double mx) {
    for (; t < end; t += step) {
        double v = (double)to_compute(xo[red_offset(p, t)]);
        if (!isinf(v) && (v > mx || isnan(v))) mx = v;
    }
    return mx;
}

template <typename T>
__device__ __forceinline__ double lse_sum(const T *xo, const rplan &p, int64_t t, int64_t end,
                                          int64_t step, double mx, double s) {
    for (; t < end; t += step) s += exp((double)to_compute(xo[red_offset(p, t)]) - mx);
    return s;
}

template <typename A, typename Op> __device__ __forceinline__ A col_reduce(A v, Op op, A *sh) {
    if (blockDim.y == 1) return v;
    __syncthreads();
    sh[threadIdx.y * blockDim.x + threadIdx.x] = v;
    __syncthreads();
    v = sh[threadIdx.x];
    for (unsigned k = 1; k < blockDim.y; k++) v = op(v, sh[k * blockDim.x + threadIdx.x]);
    return v;
}

// Reduced block innermost: a warp (BLOCK false) or the whole block per output.
template <typename T, bool BLOCK>
__global__ void __launch_bounds__(1024) reduce_rows(const T *x, T *y, rplan p, int op) {
    typedef typename racc<T>::type A;
    __shared__ A sh[32];
    __shared__ double shd[32];
    const int64_t per = BLOCK ? 1 : blockDim.x / 32;
    const int64_t lane = BLOCK ? threadIdx.x : (threadIdx.x & 31);
    const int64_t width = BLOCK ? blockDim.x : 32;
    for (int64_t o = (int64_t)blockIdx.x * per + (BLOCK ? 0 : threadIdx.x / 32); o < p.nout;
         o += (int64_t)gridDim.x * per) {
        const T *xo = x + kept_offset(p, o);
        if constexpr (!std::is_integral<T>::value) {
            if (op == R_LSE) {
                double mx = lse_max(xo, p, lane, p.count, width, -INFINITY);
                if constexpr (BLOCK)
                    mx = block_reduce(mx, nanmax_op(), shd);
                else
                    mx = warp_reduce(mx, nanmax_op());
                if (isinf(mx)) mx = 0;
                double s = lse_sum(xo, p, lane, p.count, width, mx, 0.0);
                if constexpr (BLOCK)
                    s = block_reduce(s, add_op(), shd);
                else
                    s = warp_reduce(s, add_op());
                if (lane == 0) y[o] = r_fromd<T>(mx + log(s));
                continue;
            }
        }
        A acc = r_accum(op, xo, p, lane, p.count, width, r_ident<T>(op));
        if constexpr (BLOCK)
            acc = block_reduce(acc, comb_op{op}, sh);
        else
            acc = warp_reduce(acc, comb_op{op});
        if (lane == 0) y[o] = r_finish<T>(op, acc, p.count);
    }
}

#define COL_THREADS 512

// Kept block innermost (or short reductions): threadIdx.x over consecutive outputs (coalesced),
// threadIdx.y splitting each output's elements.
template <typename T>
__global__ void __launch_bounds__(COL_THREADS) reduce_cols(const T *x, T *y, rplan p, int op) {
    typedef typename racc<T>::type A;
    __shared__ A sh[COL_THREADS];
    __shared__ double shd[COL_THREADS];
    const int64_t bx = blockDim.x, by = blockDim.y, ty = threadIdx.y;
    for (int64_t ob = (int64_t)blockIdx.x * bx; ob < p.nout; ob += (int64_t)gridDim.x * bx) {
        const int64_t o = ob + threadIdx.x;
        const bool live = o < p.nout;
        const T *xo = x + (live ? kept_offset(p, o) : 0);
        const int64_t end = live ? p.count : 0;
        if constexpr (!std::is_integral<T>::value) {
            if (op == R_LSE) {
                double mx = col_reduce(lse_max(xo, p, ty, end, by, -INFINITY), nanmax_op(), shd);
                if (isinf(mx)) mx = 0;
                double s = col_reduce(lse_sum(xo, p, ty, end, by, mx, 0.0), add_op(), shd);
                if (live && ty == 0) y[o] = r_fromd<T>(mx + log(s));
                continue;
            }
        }
        A acc = col_reduce(r_accum(op, xo, p, ty, end, by, r_ident<T>(op)), comb_op{op}, sh);
        if (live && ty == 0) y[o] = r_finish<T>(op, acc, p.count);
    }
}

// Few long reductions: each split in gridDim.x parts (blockIdx.y the output) whose partial
// results reduce_parts combines.
template <typename T>
__global__ void __launch_bounds__(512)
    reduce_split(const T *x, typename racc<T>::type *part, rplan p, int op, int64_t chunk) {
    typedef typename racc<T>::type A;
    __shared__ A sh[32];
    const int64_t o = blockIdx.y, s = blockIdx.x;
    const T *xo = x + kept_offset(p, o);
    int64_t t0 = s * chunk, t1 = t0 + chunk < p.count ? t0 + chunk : p.count;
    A acc = r_accum(op, xo, p, t0 + threadIdx.x, t1, blockDim.x, r_ident<T>(op));
    acc = block_reduce(acc, comb_op{op}, sh);
    if (threadIdx.x == 0) part[o * gridDim.x + s] = acc;
}

template <typename T>
__global__ void reduce_parts(const typename racc<T>::type *part, T *y, int64_t nparts, int op,
                             int64_t count) {
    typedef typename racc<T>::type A;
    __shared__ A sh[32];
    const int64_t o = blockIdx.x;
    A acc = r_ident<T>(op);
    for (int64_t k = threadIdx.x; k < nparts; k += blockDim.x)
        acc = r_comb(op, acc, part[o * nparts + k]);
    acc = block_reduce(acc, comb_op{op}, sh);
    if (threadIdx.x == 0) y[o] = r_finish<T>(op, acc, count);
}

static unsigned grid_of(int64_t n) { return (unsigned)(n < 1 ? 1 : n > (1 << 20) ? (1 << 20) : n); }

struct reduce_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const rplan &p, int op, const tensor *x,
                           tensor *y) {
        typedef typename racc<T>::type A;
        cudaStream_t st = cuda_stream(c);
        const T *xd = cuda_data<T>(x);
        T *yd = cuda_data<T>(y);
        if (p.inner_k == 1 && p.count >= 64) {
            if (op != R_LSE && p.nout <= 64 && p.count >= (1 << 17)) {
                int64_t nparts = p.count / 32768, most = (528 + p.nout - 1) / p.nout;
                if (nparts > most) nparts = most;
                if (nparts > 1024) nparts = 1024;
                int64_t chunk = (p.count + nparts - 1) / nparts;
                nparts = (p.count + chunk - 1) / chunk;
                void *part;
                TRY(cuda_scratch(c, (size_t)(p.nout * nparts) * sizeof(A), &part));
                reduce_split<T><<<dim3((unsigned)nparts, (unsigned)p.nout), 512, 0, st>>>(
                    xd, (A *)part, p, op, chunk);
                TRY(cuda_launched("Reduce (split)"));
                reduce_parts<T>
                    <<<(unsigned)p.nout, 256, 0, st>>>((const A *)part, yd, nparts, op, p.count);
            } else if (p.count >= 4096) {
                unsigned threads = p.count >= 65536 ? 1024 : 256;
                reduce_rows<T, true><<<grid_of(p.nout), threads, 0, st>>>(xd, yd, p, op);
            } else {
                reduce_rows<T, false><<<grid_of((p.nout + 7) / 8), 256, 0, st>>>(xd, yd, p, op);
            }
        } else {
            dim3 b(256, 1);
            if (p.count >= 16) b = dim3(32, 8);
            if (p.count >= 256 && p.nout <= 8192) b = dim3(32, COL_THREADS / 32);
            reduce_cols<T><<<grid_of((p.nout + b.x - 1) / b.x), b, 0, st>>>(xd, yd, p, op);
        }
        return cuda_launched("Reduce");
    }
};

// ---- which axes a node reduces: the ones its schema resolved (kernel_prep/kernel_call.params,
// core/op_params.h): for the plan, or per run where they come from an axes input the plan does
// not know (that input kept on the host, RED below)

bool int_type(onyx_dtype d) { return d == ONYX_INT32 || d == ONYX_INT64; }

bool reduce_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    if (!x || x->rank < 0 || x->rank > CUDA_MAX_RANK) return false;
    const char *op = p->node->op_type;
    bool float_only = strcmp(op, "ReduceL2") == 0 || strcmp(op, "ReduceLogSum") == 0 ||
                      strcmp(op, "ReduceLogSumExp") == 0;
    if (!dtype_is_float(x->dtype) && (float_only || !int_type(x->dtype))) return false;
    const geom_axis_set *axes = op_params_axes(p->params);
    if (axes) return axes->rank == x->rank;
    // none yet: axes from an input whose value each run gives (a bad one fails at run as it does
    // on the CPU)
    return p->n_in > 1 && p->in_type[1] && p->in_type[1]->dtype == ONYX_INT64;
}

onyx_status reduce_run(const kernel_call *c, int op) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (x->rank > CUDA_MAX_RANK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: rank %d on CUDA", c->node->op_type, x->rank);
    const geom_axis_set *axes;
    TRY(kernel_axes(c->params, x->rank, &axes));
    if (y->numel == 0) return ONYX_OK;
    rplan p;
    rplan_build(&p, x->rank, x->dims, axes->mask);
    if (p.nout != y->numel)
        return onyx_error(ONYX_ERR_SHAPE, "%s: output has %lld elements, expected %lld",
                          c->node->op_type, (long long)y->numel, (long long)p.nout);
    CUDA_DISPATCH_FLOATS(x->dtype, reduce_launch, c, p, op, x, y)
    bool float_only = op == R_L2 || op == R_LOGSUM || op == R_LSE;
    if (!float_only) {
        switch (x->dtype) {
            CUDA_CASE(ONYX_INT32, reduce_launch, c, p, op, x, y)
            CUDA_CASE(ONYX_INT64, reduce_launch, c, p, op, x, y)
        default:
            break;
        }
    }
    return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: type %d on CUDA", c->node->op_type, (int)x->dtype);
}

#define REDUCE_RUN(fn, op)                                                                         \
    onyx_status fn(const kernel_call *c) { return reduce_run(c, op); }
REDUCE_RUN(cuda_reduce_sum, R_SUM)
REDUCE_RUN(cuda_reduce_mean, R_MEAN)
REDUCE_RUN(cuda_reduce_max, R_MAX)
REDUCE_RUN(cuda_reduce_min, R_MIN)
REDUCE_RUN(cuda_reduce_prod, R_PROD)
REDUCE_RUN(cuda_reduce_l1, R_L1)
REDUCE_RUN(cuda_reduce_l2, R_L2)
REDUCE_RUN(cuda_reduce_log_sum, R_LOGSUM)
REDUCE_RUN(cuda_reduce_log_sum_exp, R_LSE)
REDUCE_RUN(cuda_reduce_sum_square, R_SUMSQ)

// ---- ArgMax / ArgMin over [outer, n, inner]: the first (or with select_last_index the last)
// extreme wins, and NaN counts as the extreme, as numpy's argmax has it.

// Whether (v, i) beats the best so far (bv, bi); bi < 0: none yet. A total order (ties broken
// by index), so that combining partial results in any order gives the sequential answer.
template <typename C>
__device__ __forceinline__ bool arg_beats(C v, int64_t i, C bv, int64_t bi, bool is_max,
                                          bool last) {
    if (bi < 0) return i >= 0;
    if (i < 0) return false;
    bool vn = is_nan(v), bn = is_nan(bv);
    if (vn != bn) return vn;
    if (vn || v == bv) return last ? i > bi : i < bi;
    return is_max ? v > bv : v < bv;
}

template <typename T, bool BLOCK>
__global__ void arg_rows(const T *x, int64_t *y, int64_t rows, int64_t n, bool is_max, bool last) {
    typedef typename compute<T>::type C;
    __shared__ C shv[32];
    __shared__ int64_t shi[32];
    const int64_t per = BLOCK ? 1 : blockDim.x / 32;
    const int64_t lane = BLOCK ? threadIdx.x : (threadIdx.x & 31);
    const int64_t width = BLOCK ? blockDim.x : 32;
    for (int64_t r = (int64_t)blockIdx.x * per + (BLOCK ? 0 : threadIdx.x / 32); r < rows;
         r += (int64_t)gridDim.x * per) {
        const T *xr = x + r * n;
        C bv = 0;
        int64_t bi = -1;
        for (int64_t t = lane; t < n; t += width) {
            C v = to_compute(xr[t]);
            if (arg_beats(v, t, bv, bi, is_max, last)) bv = v, bi = t;
        }
        for (int o = 16; o > 0; o >>= 1) {
            C ov = __shfl_xor_sync(0xffffffffu, bv, o);
            int64_t oi = __shfl_xor_sync(0xffffffffu, bi, o);
            if (arg_beats(ov, oi, bv, bi, is_max, last)) bv = ov, bi = oi;
        }
        if constexpr (BLOCK) {
            __syncthreads();
            if ((threadIdx.x & 31) == 0) shv[threadIdx.x >> 5] = bv, shi[threadIdx.x >> 5] = bi;
            __syncthreads();
            bv = shv[0];
            bi = shi[0];
            for (unsigned w = 1; w < (blockDim.x + 31) / 32; w++)
                if (arg_beats(shv[w], shi[w], bv, bi, is_max, last)) bv = shv[w], bi = shi[w];
        }
        if (lane == 0) y[r] = bi;
    }
}

template <typename T>
__global__ void arg_cols(const T *x, int64_t *y, int64_t outer, int64_t n, int64_t inner,
                         bool is_max, bool last) {
    typedef typename compute<T>::type C;
    CUDA_GRID_LOOP(i, outer * inner) {
        int64_t o = i / inner, j = i - o * inner;
        const T *xo = x + o * n * inner + j;
        C bv = to_compute(xo[0]);
        int64_t bi = 0;
        for (int64_t r = 1; r < n; r++) {
            C v = to_compute(xo[r * inner]);
            if (arg_beats(v, r, bv, bi, is_max, last)) bv = v, bi = r;
        }
        y[i] = bi;
    }
}

struct arg_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, tensor *y, int64_t outer,
                           int64_t n, int64_t inner, bool is_max, bool last) {
        cudaStream_t st = cuda_stream(c);
        const T *xd = cuda_data<T>(x);
        int64_t *yd = cuda_data<int64_t>(y);
        if (inner == 1 && n >= 4096)
            arg_rows<T, true><<<grid_of(outer), 256, 0, st>>>(xd, yd, outer, n, is_max, last);
        else if (inner == 1 && n >= 64)
            arg_rows<T, false>
                <<<grid_of((outer + 7) / 8), 256, 0, st>>>(xd, yd, outer, n, is_max, last);
        else
            arg_cols<T><<<cuda_blocks(outer * inner), CUDA_THREADS, 0, st>>>(xd, yd, outer, n,
                                                                             inner, is_max, last);
        return cuda_launched(is_max ? "ArgMax" : "ArgMin");
    }
};

bool arg_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    if (!x || x->rank < 1 || x->rank > CUDA_MAX_RANK) return false;
    if (!dtype_is_float(x->dtype) && !int_type(x->dtype)) return false;
    const geom_axis_set *axes = op_params_axes(p->params); // the schema's, for the plan
    if (!axes || axes->rank != x->rank || axes->axis < 0) return false;
    int axis = axes->axis;
    // an empty axis with outputs is the CPU's error to report
    int64_t numel = 1;
    for (int i = 0; i < x->rank; i++) numel *= x->dims[i];
    return numel == 0 || x->dims[axis] > 0;
}

onyx_status arg_run(const kernel_call *c, bool is_max) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    int axis;
    TRY(kernel_axis(c->params, x->rank, &axis));
    bool last = attr_int(c->node, "select_last_index", 0) != 0;
    int64_t outer = 1, n = x->dims[axis], inner = 1;
    for (int i = 0; i < axis; i++) outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++) inner *= x->dims[i];
    if (y->numel == 0) return ONYX_OK;
    if (n == 0)
        return onyx_error(ONYX_ERR_RUNTIME, "axis %d has size 0: there is no extreme to index",
                          axis);
    CUDA_DISPATCH_FLOATS(x->dtype, arg_launch, c, x, y, outer, n, inner, is_max, last)
    switch (x->dtype) {
        CUDA_CASE(ONYX_INT32, arg_launch, c, x, y, outer, n, inner, is_max, last)
        CUDA_CASE(ONYX_INT64, arg_launch, c, x, y, outer, n, inner, is_max, last)
    default:
        break;
    }
    return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: type %d on CUDA", c->node->op_type, (int)x->dtype);
}

onyx_status cuda_argmax(const kernel_call *c) { return arg_run(c, true); }
onyx_status cuda_argmin(const kernel_call *c) { return arg_run(c, false); }

#define RED_TYPES (DT_FLOATS | DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64))
// Axes come from input 1 from ReduceSum 13 and the others 18 on: bit 1 keeps it on the host
// (earlier versions have no input 1).
#define RED(op, hi, types, fn)                                                                     \
    { "", op, 1, hi, DEVICE_CUDA, types, 0, NULL, fn, NULL, NULL, NULL, reduce_supports, 1u << 1 }

const kernel entries[] = {
    // domain, op, versions, device, dtypes, flags, prepare, run, release, fork, unfork,
    // supports, host_inputs
    RED("ReduceSum", 13, RED_TYPES, cuda_reduce_sum),
    RED("ReduceMean", 18, RED_TYPES, cuda_reduce_mean),
    RED("ReduceMax", 20, RED_TYPES, cuda_reduce_max),
    RED("ReduceMin", 20, RED_TYPES, cuda_reduce_min),
    RED("ReduceProd", 18, RED_TYPES, cuda_reduce_prod),
    RED("ReduceL1", 18, RED_TYPES, cuda_reduce_l1),
    RED("ReduceL2", 18, DT_FLOATS, cuda_reduce_l2),
    RED("ReduceLogSum", 28, DT_FLOATS, cuda_reduce_log_sum),
    RED("ReduceLogSumExp", 28, DT_FLOATS, cuda_reduce_log_sum_exp),
    RED("ReduceSumSquare", 18, RED_TYPES, cuda_reduce_sum_square),
    {"", "ArgMax", 1, 13, DEVICE_CUDA, RED_TYPES, 0, NULL, cuda_argmax, NULL, NULL, NULL,
     arg_supports, 0},
    {"", "ArgMin", 1, 13, DEVICE_CUDA, RED_TYPES, 0, NULL, cuda_argmin, NULL, NULL, NULL,
     arg_supports, 0},
    {"", "Softmax", 1, 13, DEVICE_CUDA, DT_FLOATS, 0, NULL, cuda_softmax, NULL, NULL, NULL,
     cuda_softmax_supports, 0},
    {"", "LogSoftmax", 1, 13, DEVICE_CUDA, DT_FLOATS, 0, NULL, cuda_logsoftmax, NULL, NULL, NULL,
     cuda_softmax_supports, 0},
    {"", "Hardmax", 1, 13, DEVICE_CUDA, DT_FLOATS, 0, NULL, cuda_hardmax, NULL, NULL, NULL,
     cuda_softmax_supports, 0},
    {"", "CumSum", 11, 14, DEVICE_CUDA, RED_TYPES, 0, NULL, cuda_cumsum, NULL, NULL, NULL,
     cuda_cumsum_supports, 1u << 1},
};

} // namespace
} // namespace rdc

extern "C" const kernel *cuda_family_reduce(size_t *count) {
    *count = sizeof rdc::entries / sizeof rdc::entries[0];
    return rdc::entries;
}
