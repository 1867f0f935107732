// Conv and ConvTranspose on CUDA through cuDNN's convolution (ConvTranspose as its backward-data
// pass), with the window the node's schema resolved for the plan (core/op_params.h); pads cuDNN
// cannot take (asymmetric ones, ConvTranspose's negative or output_shape-derived ones) go
// through a padded copy of the input or a staged output cropped into Y.
#include <limits.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "core/fuse_chain.h"
}
#include "kernels_cuda/common.cuh"
#include "kernels_cuda/conv/family.h"

namespace {

const int MAX_SP = 3;           // spatial dims taken (cuDNN's Nd convolutions go to 3)
const int WIN_RANK = MAX_SP + 2;
// Largest cuDNN workspace a chosen algorithm may ask for.
const size_t WS_CAP = (size_t)1 << 30;

/* ------------------------------------------------------------------ geometry */

bool static_dims(const type_info *t) {
    if (!t || t->kind != ONYX_VALUE_TENSOR || t->rank < 0) return false;
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] < 0) return false;
    return true;
}

// The node's window as its schema resolved it for the plan, the same for every device
// (kernel_prep.params: ops/conv/conv.c's conv_geometry over geometry/window.h's rules), for known
// shapes; false where it is out of what this file takes.
bool resolve(const kernel_prep *p, const type_info *x, const type_info *w, geom_window *g) {
    if (!static_dims(x) || !static_dims(w) || x->rank < 3 || x->rank > MAX_SP + 2 ||
        w->rank != x->rank)
        return false;
    const geom_window *win = op_params_window(p->params);
    if (!win || !geom_window_known(win) || win->nsp != x->rank - 2) return false;
    *g = *win;
    for (int i = 0; i < g->nsp; i++)
        if (g->out[i] < 1) return false;
    return true;
}

/* ------------------------------------------------------------------ device kernels */

// dst[i] = src[i + off] (zero outside src) + bias[channel]: a padded copy of X, or the crop of
// a staged ConvTranspose output into Y.
struct win_args {
    int rank;
    int64_t dst[WIN_RANK], src[WIN_RANK], off[WIN_RANK];
};

template <typename T>
__global__ void window_kernel(win_args a, const T *src, T *dst, const T *bias, int64_t n) {
    CUDA_GRID_LOOP(i, n) {
        int64_t r = i, so = 0, sstride = 1;
        bool inside = true;
        int64_t ch = 0;
        for (int d = a.rank - 1; d >= 0; d--) {
            int64_t q = r / a.dst[d], idx = r - q * a.dst[d];
            r = q;
            if (d == 1) ch = idx;
            int64_t s = idx + a.off[d];
            if (s < 0 || s >= a.src[d]) inside = false;
            so += s * sstride;
            sstride *= a.src[d];
        }
        auto v = inside ? to_compute(src[so]) : decltype(to_compute(src[0]))(0);
        if (bias) v += to_compute(bias[ch]);
        dst[i] = from_compute<T>(v);
    }
}

// y[i] = bias[channel]: the convolution then adds its sum to it (beta 1) before its one rounding.
template <typename T>
__global__ void bias_fill_kernel(T *y, const T *bias, int64_t m, int64_t inner, int64_t n) {
    CUDA_GRID_LOOP(i, n) { y[i] = bias[(i / inner) % m]; }
}

struct window_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const win_args *a, const void *src, void *dst,
                           const void *bias, int64_t n) {
        window_kernel<T><<<cuda_blocks(n), CUDA_THREADS, 0, cuda_stream(c)>>>(
            *a, (const T *)src, (T *)dst, (const T *)bias, n);
        return cuda_launched("Conv window copy");
    }
};

struct bias_fill_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, void *y, const void *bias, int64_t m,
                           int64_t inner, int64_t n) {
        bias_fill_kernel<T><<<cuda_blocks(n), CUDA_THREADS, 0, cuda_stream(c)>>>(
            (T *)y, (const T *)bias, m, inner, n);
        return cuda_launched("Conv bias");
    }
};

// y = relu(y + z) (z optional): a device epilogue that cuDNN declined to fuse at run, after the
// convolution wrote y with its bias.
template <typename T>
__global__ void sum_relu_kernel(T *y, const T *z, int64_t n) {
    CUDA_GRID_LOOP(i, n) {
        auto v = to_compute(y[i]);
        if (z) v += to_compute(z[i]);
        y[i] = from_compute<T>(v < 0 ? 0 : v); // NaN stays NaN, as ONNX's Relu
    }
}

struct sum_relu_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, void *y, const void *z, int64_t n) {
        sum_relu_kernel<T><<<cuda_blocks(n), CUDA_THREADS, 0, cuda_stream(c)>>>(
            (T *)y, (const T *)z, n);
        return cuda_launched("Conv epilogue");
    }
};

onyx_status sum_relu(const kernel_call *c, onyx_dtype dt, void *y, const void *z, int64_t n) {
    CUDA_DISPATCH_FLOATS(dt, sum_relu_launch, c, y, z, n)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "Conv: type %d on CUDA", (int)dt);
}

onyx_status window_copy(const kernel_call *c, onyx_dtype dt, const win_args *a, const void *src,
                        void *dst, const void *bias, int64_t n) {
    CUDA_DISPATCH_FLOATS(dt, window_launch, c, a, src, dst, bias, n)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "Conv: type %d on CUDA", (int)dt);
}

onyx_status fill_bias(const kernel_call *c, onyx_dtype dt, void *y, const void *bias, int64_t m,
                      int64_t inner, int64_t n) {
    CUDA_DISPATCH_FLOATS(dt, bias_fill_launch, c, y, bias, m, inner, n)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "Conv: type %d on CUDA", (int)dt);
}

/* ------------------------------------------------------------------ cuDNN state */

// float32 without TF32 (FMA only): TF32's 10-bit mantissa misses the 1e-3 tolerance; the 16-bit
// types on tensor cores (accumulating in float).
cudnnMathType_t default_math(onyx_dtype t) {
    return t == ONYX_FLOAT    ? CUDNN_FMA_MATH
           : t == ONYX_DOUBLE ? CUDNN_DEFAULT_MATH
                              : CUDNN_TENSOR_OP_MATH;
}

// What run reads: descriptors, the algorithm and the buffers around the cuDNN call.
struct conv_state {
    bool transpose;
    onyx_dtype dtype;
    cudnnTensorDescriptor_t xdesc, ydesc; // what cuDNN reads (X or its padded copy) and writes
    cudnnFilterDescriptor_t wdesc;
    cudnnConvolutionDescriptor_t cdesc;
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd;
    size_t ws_bytes;
    bool pad_in;     // Conv: cuDNN reads a padded copy of X (pad_copy), pads 0
    win_args pad_copy;
    int64_t pad_numel;
    bool staged;     // ConvTranspose: cuDNN writes the uncropped output, cropped into Y
    win_args crop;
    int64_t stage_numel;
    bool has_bias;
    // float32 with fewer than 64 channels per group in or out: no Winograd or FFT algorithm
    bool direct_only;
    int64_t m, inner, x_numel, y_numel;
    int nsp;
    // a device epilogue (core/fuse_device.c): Relu, after the sum with input 3 where fused_sum,
    // in cuDNN's convolution with bias and activation
    bool fused, fused_sum;
    cudnnTensorDescriptor_t bdesc; // the bias as [1, M, 1, ...]
    cudnnActivationDescriptor_t adesc;
};

void state_free(conv_state *s) {
    if (!s) return;
    if (s->xdesc) cudnnDestroyTensorDescriptor(s->xdesc);
    if (s->ydesc) cudnnDestroyTensorDescriptor(s->ydesc);
    if (s->wdesc) cudnnDestroyFilterDescriptor(s->wdesc);
    if (s->cdesc) cudnnDestroyConvolutionDescriptor(s->cdesc);
    if (s->bdesc) cudnnDestroyTensorDescriptor(s->bdesc);
    if (s->adesc) cudnnDestroyActivationDescriptor(s->adesc);
    free(s);
}

cudnnDataType_t dnn_type(onyx_dtype d) {
    switch (d) {
    case ONYX_DOUBLE: return CUDNN_DATA_DOUBLE;
    case ONYX_FLOAT16: return CUDNN_DATA_HALF;
    case ONYX_BFLOAT16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
    }
}

bool fits_int(int64_t v) { return v >= 1 && v <= INT_MAX; }

// [n, c, spatial...] as cuDNN wants it: 1-D as 2-D with a height of 1. Returns the rank.
int dnn_dims(int64_t n, int64_t c, const int64_t *sp, int nsp, int *out) {
    int r = 0;
    out[r++] = (int)n;
    out[r++] = (int)c;
    if (nsp == 1) out[r++] = 1;
    for (int i = 0; i < nsp; i++) out[r++] = (int)sp[i];
    return r;
}

bool set_tensor(cudnnTensorDescriptor_t *d, cudnnDataType_t dt, int64_t n, int64_t c,
                const int64_t *sp, int nsp) {
    int dims[WIN_RANK + 1], strides[WIN_RANK + 1];
    int r = dnn_dims(n, c, sp, nsp, dims);
    int64_t s = 1;
    for (int i = r - 1; i >= 0; i--) {
        if (!fits_int(dims[i])) return false;
        strides[i] = (int)s;
        s *= dims[i];
        if (s > INT_MAX) return false;
    }
    if (cudnnCreateTensorDescriptor(d) != CUDNN_STATUS_SUCCESS) {
        *d = NULL;
        return false;
    }
    return cudnnSetTensorNdDescriptor(*d, dt, r, dims, strides) == CUDNN_STATUS_SUCCESS;
}

int64_t numel_of(int64_t n, int64_t c, const int64_t *sp, int nsp) {
    int64_t v = n * c;
    for (int i = 0; i < nsp; i++) v *= sp[i];
    return v;
}

void fill_win(win_args *a, int64_t n, int64_t c, int nsp, const int64_t *dst, const int64_t *src,
              const int64_t *off) {
    memset(a, 0, sizeof *a);
    a->rank = nsp + 2;
    a->dst[0] = a->src[0] = n;
    a->dst[1] = a->src[1] = c;
    for (int i = 0; i < nsp; i++) {
        a->dst[2 + i] = dst[i];
        a->src[2 + i] = src[i];
        a->off[2 + i] = off[i];
    }
}

// Builds everything but the algorithm; false (s left for state_free) where cuDNN cannot take
// the node.
bool build(const kernel_prep *p, bool transpose, conv_state *s) {
    if (p->n_in < 2) return false;
    const type_info *x = p->in_type[0], *w = p->in_type[1];
    const type_info *b = p->n_in > 2 ? p->in_type[2] : NULL;
    // bfloat16 (Conv-22) stays on the CPU: cuDNN's legacy bfloat16 paths are not checked here
    dtype_mask types = DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16);
    if (!x || !w || !dtype_in(x->dtype, types) || w->dtype != x->dtype) return false;
    geom_window g;
    if (!resolve(p, x, w, &g)) return false;
    const type_info *y = &p->out_type[0];
    if (y->kind != ONYX_VALUE_TENSOR || y->rank != g.nsp + 2 || y->dims[0] != g.n ||
        y->dims[1] != g.m)
        return false;
    for (int i = 0; i < g.nsp; i++)
        if (y->dims[2 + i] != g.out[i] || !fits_int(g.in[i]) || !fits_int(g.out[i])) return false;
    if (!fits_int(g.n) || !fits_int(g.c) || !fits_int(g.m) || !fits_int(g.group)) return false;
    if (b) {
        if (!static_dims(b) || b->dtype != x->dtype || b->rank != 1 || b->dims[0] != g.m)
            return false;
        s->has_bias = true;
    }
    s->transpose = transpose;
    s->dtype = x->dtype;
    s->nsp = g.nsp;
    s->direct_only = x->dtype == ONYX_FLOAT && (g.c / g.group < 64 || g.m / g.group < 64);
    s->m = g.m;
    s->inner = numel_of(1, 1, g.out, g.nsp);
    s->x_numel = numel_of(g.n, g.c, g.in, g.nsp);
    s->y_numel = numel_of(g.n, g.m, g.out, g.nsp);
    cudnnDataType_t dt = dnn_type(x->dtype);
    int nsp = g.nsp, dn = nsp == 1 ? 2 : nsp;
    int64_t dk[MAX_SP];
    for (int i = 0; i < nsp; i++) dk[i] = (g.k[i] - 1) * g.dil[i] + 1;

    // the spatial dims of what cuDNN reads and writes, and its (symmetric) pads
    int64_t rd[MAX_SP], wr[MAX_SP], pad[MAX_SP];
    if (!transpose) {
        for (int i = 0; i < nsp; i++) s->pad_in |= g.pad_b[i] != g.pad_e[i] || g.pad_b[i] >= dk[i];
        for (int i = 0; i < nsp; i++) {
            rd[i] = s->pad_in ? g.in[i] + g.pad_b[i] + g.pad_e[i] : g.in[i];
            wr[i] = g.out[i];
            pad[i] = s->pad_in ? 0 : g.pad_b[i];
        }
        if (s->pad_in) {
            int64_t off[MAX_SP];
            for (int i = 0; i < nsp; i++) off[i] = -g.pad_b[i];
            fill_win(&s->pad_copy, g.n, g.c, nsp, rd, g.in, off);
            s->pad_numel = numel_of(g.n, g.c, rd, nsp);
        }
    } else {
        // Y straight from cuDNN when its pads are symmetric and its size one that the forward
        // convolution maps back onto X (output_padding below the stride)
        bool direct = true;
        for (int i = 0; i < nsp; i++)
            direct &= g.pad_b[i] == g.pad_e[i] && g.pad_b[i] >= 0 && g.pad_b[i] < dk[i] &&
                      g.stride[i] * (g.in[i] - 1) + dk[i] - 2 * g.pad_b[i] <= g.out[i] &&
                      g.out[i] < g.stride[i] * g.in[i] + dk[i] - 2 * g.pad_b[i];
        s->staged = !direct;
        for (int i = 0; i < nsp; i++) {
            rd[i] = g.in[i];
            // staged: the full output without padding, where X's last pixel ends
            wr[i] = s->staged ? g.stride[i] * (g.in[i] - 1) + dk[i] : g.out[i];
            pad[i] = s->staged ? 0 : g.pad_b[i];
        }
        if (s->staged) {
            fill_win(&s->crop, g.n, g.m, nsp, g.out, wr, g.pad_b);
            s->stage_numel = numel_of(g.n, g.m, wr, nsp);
        }
    }
    if (s->pad_numel > INT_MAX || s->stage_numel > INT_MAX || s->x_numel > INT_MAX ||
        s->y_numel > INT_MAX)
        return false;

    // cuDNN's view: forward reads xdesc (C channels) and writes ydesc (M); backward-data reads
    // xdesc (X: C channels, the forward's output) and writes ydesc (M, the forward's input)
    if (!set_tensor(&s->xdesc, dt, g.n, g.c, rd, nsp)) return false;
    if (!set_tensor(&s->ydesc, dt, g.n, g.m, wr, nsp)) return false;
    int wdims[WIN_RANK + 1];
    int64_t ksp[MAX_SP];
    for (int i = 0; i < nsp; i++) ksp[i] = g.k[i];
    int wr_ = dnn_dims(transpose ? g.c : g.m, transpose ? g.m / g.group : g.c / g.group, ksp,
                       nsp, wdims);
    if (cudnnCreateFilterDescriptor(&s->wdesc) != CUDNN_STATUS_SUCCESS) {
        s->wdesc = NULL;
        return false;
    }
    if (cudnnSetFilterNdDescriptor(s->wdesc, dt, CUDNN_TENSOR_NCHW, wr_, wdims) !=
        CUDNN_STATUS_SUCCESS)
        return false;
    int cp[MAX_SP], cs[MAX_SP], cdl[MAX_SP], j = 0;
    if (nsp == 1) {
        cp[j] = 0;
        cs[j] = 1;
        cdl[j++] = 1;
    }
    for (int i = 0; i < nsp; i++, j++) {
        if (!fits_int(g.stride[i]) || !fits_int(g.dil[i]) || pad[i] < 0 || pad[i] > INT_MAX)
            return false;
        cp[j] = (int)pad[i];
        cs[j] = (int)g.stride[i];
        cdl[j] = (int)g.dil[i];
    }
    if (cudnnCreateConvolutionDescriptor(&s->cdesc) != CUDNN_STATUS_SUCCESS) {
        s->cdesc = NULL;
        return false;
    }
    cudnnDataType_t ct = x->dtype == ONYX_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    cudnnMathType_t math = default_math(x->dtype);
    if (cudnnSetConvolutionNdDescriptor(s->cdesc, dn, cp, cs, cdl, CUDNN_CROSS_CORRELATION, ct) !=
            CUDNN_STATUS_SUCCESS ||
        cudnnSetConvolutionGroupCount(s->cdesc, (int)g.group) != CUDNN_STATUS_SUCCESS ||
        cudnnSetConvolutionMathType(s->cdesc, math) != CUDNN_STATUS_SUCCESS)
        return false;

    // the forward convolution's output must be exactly ydesc (forward) or X (backward data)
    int od[WIN_RANK + 1], want[WIN_RANK + 1];
    int r = transpose ? dnn_dims(g.n, g.c, rd, nsp, want) : dnn_dims(g.n, g.m, wr, nsp, want);
    if (cudnnGetConvolutionNdForwardOutputDim(s->cdesc, transpose ? s->ydesc : s->xdesc, s->wdesc,
                                              r, od) != CUDNN_STATUS_SUCCESS)
        return false;
    for (int i = 0; i < r; i++)
        if (od[i] != want[i]) return false;
    return true;
}

bool supports(const kernel_prep *p, bool transpose) {
    conv_state *s = (conv_state *)calloc(1, sizeof *s);
    if (!s) return false;
    bool ok = build(p, transpose, s);
    state_free(s);
    return ok;
}

// Winograd's and the FFT's transforms round more than a direct or GEMM sum: measured on the
// H200, cudnnFind chose them for convs of 8 to 40 channels, whose integer-valued cases then summed
// to 2e-5 where the exact result is 0.
bool transform(cudnnConvolutionFwdAlgo_t a) {
    return a == CUDNN_CONVOLUTION_FWD_ALGO_FFT || a == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
           a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
           a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool transform(cudnnConvolutionBwdDataAlgo_t a) {
    return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
           a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
           a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
           a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}

// Whether a measured algorithm may run: it ran, its workspace is bounded, and float32 keeps to
// FMA math (a tensor-op conversion would be TF32, which misses the 1e-3 tolerance) and, below 64
// channels, to direct sums, as the CPU's convs do (kernels_cpu/conv/conv.c: Winograd from 64).
template <class Algo>
bool usable(const conv_state *s, cudnnStatus_t st, size_t memory, cudnnMathType_t math, Algo a) {
    if (st != CUDNN_STATUS_SUCCESS || memory > WS_CAP) return false;
    if (s->direct_only && transform(a)) return false;
    return s->dtype != ONYX_FLOAT || math == CUDNN_FMA_MATH;
}

// The first of a search's results (fastest first) that may run here, with its math type set and
// its workspace (as the query `workspace` gives it) bounded; false where none may.
template <class Perf, class Algo, class Workspace>
bool take_fastest(conv_state *s, const Perf *perf, int got, Workspace workspace, Algo *algo) {
    for (int i = 0; i < got; i++) {
        size_t ws = 0;
        if (!usable(s, perf[i].status, perf[i].memory, perf[i].mathType, perf[i].algo) ||
            cudnnSetConvolutionMathType(s->cdesc, perf[i].mathType) != CUDNN_STATUS_SUCCESS ||
            workspace(perf[i].algo, &ws) != CUDNN_STATUS_SUCCESS || ws > WS_CAP)
            continue;
        *algo = perf[i].algo;
        s->ws_bytes = ws;
        return true;
    }
    return false;
}

// The fastest algorithm as cuDNN measures it here (cudnnFind runs each on memory of its own), as
// onnxruntime's default exhaustive search and PyTorch's cudnn.benchmark choose: the heuristics'
// first choice left VGG-19 and AlexNet at batch 32 1.2-1.5x slower than PyTorch (H200). false
// where the search fails or finds nothing usable: the heuristics choose then.
bool measured_algo(cudnnHandle_t h, conv_state *s) {
    bool found = false;
    if (!s->transpose) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int got = 0;
        if (cudnnFindConvolutionForwardAlgorithm(h, s->xdesc, s->wdesc, s->cdesc, s->ydesc,
                                                 CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                                 perf) == CUDNN_STATUS_SUCCESS)
            found = take_fastest(
                s, perf, got,
                [&](cudnnConvolutionFwdAlgo_t a, size_t *ws) {
                    return cudnnGetConvolutionForwardWorkspaceSize(h, s->xdesc, s->wdesc, s->cdesc,
                                                                   s->ydesc, a, ws);
                },
                &s->fwd);
    } else {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        int got = 0;
        if (cudnnFindConvolutionBackwardDataAlgorithm(h, s->wdesc, s->xdesc, s->cdesc, s->ydesc,
                                                      CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got,
                                                      perf) == CUDNN_STATUS_SUCCESS)
            found = take_fastest(
                s, perf, got,
                [&](cudnnConvolutionBwdDataAlgo_t a, size_t *ws) {
                    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, s->wdesc, s->xdesc,
                                                                        s->cdesc, s->ydesc, a, ws);
                },
                &s->bwd);
    }
    if (found) return true;
    (void)cudaGetLastError(); // a failed search leaves no error behind for the next launch
    cudnnSetConvolutionMathType(s->cdesc, default_math(s->dtype)); // as build() set it
    return false;
}

// The first algorithm of cuDNN's heuristics that it can run here with a bounded workspace.
onyx_status choose_algo(cudnnHandle_t h, conv_state *s) {
    if (!s->transpose) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int got = 0;
        TRY(cudnn_status(cudnnGetConvolutionForwardAlgorithm_v7(
                             h, s->xdesc, s->wdesc, s->cdesc, s->ydesc,
                             CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf),
                         "Conv algorithm heuristics"));
        for (int i = 0; i < got; i++) {
            size_t ws = 0;
            if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > WS_CAP) continue;
            if (cudnnGetConvolutionForwardWorkspaceSize(h, s->xdesc, s->wdesc, s->cdesc, s->ydesc,
                                                        perf[i].algo, &ws) != CUDNN_STATUS_SUCCESS ||
                ws > WS_CAP)
                continue;
            s->fwd = perf[i].algo;
            s->ws_bytes = ws;
            return ONYX_OK;
        }
        // implicit GEMM takes every geometry
        size_t ws = 0;
        if (cudnnGetConvolutionForwardWorkspaceSize(h, s->xdesc, s->wdesc, s->cdesc, s->ydesc,
                                                    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                                    &ws) == CUDNN_STATUS_SUCCESS) {
            s->fwd = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
            s->ws_bytes = ws;
            return ONYX_OK;
        }
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Conv: cuDNN has no algorithm for this geometry");
    }
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int got = 0;
    TRY(cudnn_status(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                         h, s->wdesc, s->xdesc, s->cdesc, s->ydesc,
                         CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, perf),
                     "ConvTranspose algorithm heuristics"));
    for (int i = 0; i < got; i++) {
        size_t ws = 0;
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > WS_CAP) continue;
        if (cudnnGetConvolutionBackwardDataWorkspaceSize(h, s->wdesc, s->xdesc, s->cdesc,
                                                         s->ydesc, perf[i].algo,
                                                         &ws) != CUDNN_STATUS_SUCCESS ||
            ws > WS_CAP)
            continue;
        s->bwd = perf[i].algo;
        s->ws_bytes = ws;
        return ONYX_OK;
    }
    size_t ws = 0;
    if (cudnnGetConvolutionBackwardDataWorkspaceSize(h, s->wdesc, s->xdesc, s->cdesc, s->ydesc,
                                                     CUDNN_CONVOLUTION_BWD_DATA_ALGO_0,
                                                     &ws) == CUDNN_STATUS_SUCCESS) {
        s->bwd = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
        s->ws_bytes = ws;
        return ONYX_OK;
    }
    return onyx_error(ONYX_ERR_UNSUPPORTED,
                      "ConvTranspose: cuDNN has no algorithm for this geometry");
}

// Takes the device epilogue p->fused where cuDNN's fused call applies it: a float or float16
// Conv of one or two spatial dims with a bias, the chain a Relu after at most the sum with an
// addend of Y's shape (cuDNN's identity activation runs with one algorithm only). False leaves
// the chain to its nodes.
bool epilogue(const kernel_prep *p, conv_state *s) {
    const fuse_chain *c = p->fused;
    if (s->transpose || s->staged || !s->has_bias || s->nsp > 2 ||
        (s->dtype != ONYX_FLOAT && s->dtype != ONYX_FLOAT16))
        return false;
    if (c->n < 1 || c->n > 2 || c->n_pre || c->x_scale || c->attention || c->has_in_scale ||
        c->x_channels_last || c->y_channels_last || c->view_rank[0] || c->view_rank[2])
        return false;
    const fuse_op *act = &c->ops[c->n - 1];
    if (act->kind != FUSE_RELU || act->alpha != 0) return false;
    if (c->n == 2) {
        const type_info *z = p->n_in > 3 ? p->in_type[3] : NULL;
        if (c->ops[0].kind != FUSE_SUM || c->ops[0].input != 3 || !z || !static_dims(z) ||
            z->dtype != s->dtype || z->rank != p->out_type[0].rank)
            return false;
        for (int d = 0; d < z->rank; d++)
            if (z->dims[d] != p->out_type[0].dims[d]) return false;
        s->fused_sum = true;
    }
    int dims[4] = {1, (int)s->m, 1, 1}, strides[4] = {(int)s->m, 1, 1, 1};
    if (cudnnCreateTensorDescriptor(&s->bdesc) != CUDNN_STATUS_SUCCESS) {
        s->bdesc = NULL;
        return false;
    }
    if (cudnnCreateActivationDescriptor(&s->adesc) != CUDNN_STATUS_SUCCESS) {
        s->adesc = NULL;
        return false;
    }
    s->fused = cudnnSetTensorNdDescriptor(s->bdesc, dnn_type(s->dtype), 4, dims, strides) ==
                   CUDNN_STATUS_SUCCESS &&
               cudnnSetActivationDescriptor(s->adesc, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN,
                                            0.0) == CUDNN_STATUS_SUCCESS;
    return s->fused;
}

onyx_status prepare(const kernel_prep *p, bool transpose, void **state) {
    const char *op = transpose ? "ConvTranspose" : "Conv";
    conv_state *s = (conv_state *)calloc(1, sizeof *s);
    if (!s) return onyx_error(ONYX_ERR_NO_MEMORY, "%s: out of memory", op);
    if (!build(p, transpose, s)) {
        state_free(s);
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: cuDNN does not take this node", op);
    }
    if (p->fused && !epilogue(p, s)) {
        state_free(s);
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: cuDNN does not apply this epilogue", op);
    }
    // the algorithm is chosen now (run only reads the state): a handle of our own for the query
    cudnnHandle_t h;
    onyx_status st = cudnn_status(cudnnCreate(&h), "creating a handle");
    if (st == ONYX_OK) {
        if (!measured_algo(h, s)) st = choose_algo(h, s);
        cudnnDestroy(h);
    }
    if (st != ONYX_OK) {
        state_free(s);
        return st;
    }
    *state = s;
    return ONYX_OK;
}

size_t align256(size_t v) { return (v + 255) & ~(size_t)255; }

// y = relu(conv(x) + bias [+ z]) in cuDNN's one call; where cuDNN declines that call for this
// configuration, the convolution with its bias and then the epilogue's own kernel.
onyx_status run_fused(const kernel_call *c, const conv_state *s, cudnnHandle_t h, const void *x,
                      const void *w, const void *bias, void *ws, tensor *y) {
    const tensor *z = s->fused_sum ? kernel_input(c, 3) : NULL;
    if (!bias || (s->fused_sum && (!z || z->numel != y->numel)))
        return onyx_error(ONYX_ERR_RUNTIME, "Conv: the fused bias or addend is missing");
    float one = 1.0f, zero = 0.0f;
    cudnnStatus_t st = cudnnConvolutionBiasActivationForward(
        h, &one, s->xdesc, x, s->wdesc, w, s->cdesc, s->fwd, ws, s->ws_bytes, z ? &one : &zero,
        s->ydesc, z ? z->data : y->data, s->bdesc, bias, s->adesc, s->ydesc, y->data);
    if (st != CUDNN_STATUS_NOT_SUPPORTED) return cudnn_status(st, "Conv (bias, sum, Relu)");
    TRY(fill_bias(c, s->dtype, y->data, bias, s->m, s->inner, y->numel));
    TRY(cudnn_status(cudnnConvolutionForward(h, &one, s->xdesc, x, s->wdesc, w, s->cdesc, s->fwd,
                                             ws, s->ws_bytes, &one, s->ydesc, y->data),
                     "Conv"));
    return sum_relu(c, s->dtype, y->data, z ? z->data : NULL, y->numel);
}

} // namespace

bool cuda_conv_supports(const kernel_prep *p) { return supports(p, false); }
bool cuda_convtranspose_supports(const kernel_prep *p) { return supports(p, true); }
onyx_status cuda_conv_prepare(const kernel_prep *p, void **state) {
    return prepare(p, false, state);
}
onyx_status cuda_convtranspose_prepare(const kernel_prep *p, void **state) {
    return prepare(p, true, state);
}
// kernel.takes_chain of Conv: whether prepare takes p->fused, from the same build and epilogue
// (cuDNN's descriptors; the algorithm, chosen for the geometry whatever the chain, is not).
bool cuda_conv_takes_chain(const kernel_prep *p) {
    conv_state *s = (conv_state *)calloc(1, sizeof *s);
    if (!s) return false;
    bool ok = build(p, false, s) && epilogue(p, s);
    state_free(s);
    return ok;
}
void cuda_conv_release(void *state) { state_free((conv_state *)state); }

onyx_status cuda_conv_run(const kernel_call *c) {
    const conv_state *s = (const conv_state *)c->state;
    const char *op = s && s->transpose ? "ConvTranspose" : "Conv";
    if (!s) return onyx_error(ONYX_ERR_RUNTIME, "%s: kernel state missing", op);
    const tensor *x = kernel_input(c, 0), *w = kernel_input(c, 1), *b = kernel_input(c, 2);
    tensor *y = kernel_output(c, 0);
    if (x->numel != s->x_numel || y->numel != s->y_numel)
        return onyx_error(ONYX_ERR_SHAPE, "%s: shapes differ from the prepared ones", op);
    if (y->numel == 0) return ONYX_OK;
    size_t es = dtype_size(s->dtype);
    size_t ws_off = 0, pad_off = align256(s->ws_bytes);
    size_t stage_off = pad_off + align256((size_t)s->pad_numel * es);
    size_t total = stage_off + (size_t)s->stage_numel * es;
    char *scratch = NULL;
    if (total) TRY(cuda_scratch(c, total, (void **)&scratch));
    void *ws = s->ws_bytes ? scratch + ws_off : NULL;
    cudnnHandle_t h;
    TRY(cuda_dnn(c, &h));
    float f1 = 1.0f, f0 = 0.0f;
    double d1 = 1.0, d0 = 0.0;
    const void *one = s->dtype == ONYX_DOUBLE ? (const void *)&d1 : &f1;
    const void *zero = s->dtype == ONYX_DOUBLE ? (const void *)&d0 : &f0;
    const void *src = x->data;
    if (s->pad_in) {
        src = scratch + pad_off;
        TRY(window_copy(c, s->dtype, &s->pad_copy, x->data, scratch + pad_off, NULL,
                        s->pad_numel));
    }
    void *dst = s->staged ? (void *)(scratch + stage_off) : y->data;
    const void *bias = s->has_bias && b ? b->data : NULL;
    if (s->fused) return run_fused(c, s, h, src, w->data, bias, ws, y);
    // Y starts as the bias and cuDNN adds its sum (beta 1) in float before it rounds: a bias added
    // after rounds float16 twice (1e-3 off where the bias cancels the sum, seen on an H200).
    bool bias_first = bias && !s->staged;
    if (bias_first) TRY(fill_bias(c, s->dtype, y->data, bias, s->m, s->inner, y->numel));
    const void *beta = bias_first ? one : zero;
    if (!s->transpose)
        TRY(cudnn_status(cudnnConvolutionForward(h, one, s->xdesc, src, s->wdesc, w->data,
                                                 s->cdesc, s->fwd, ws, s->ws_bytes, beta,
                                                 s->ydesc, dst),
                         "Conv"));
    else
        TRY(cudnn_status(cudnnConvolutionBackwardData(h, one, s->wdesc, w->data, s->xdesc, src,
                                                      s->cdesc, s->bwd, ws, s->ws_bytes, beta,
                                                      s->ydesc, dst),
                         "ConvTranspose"));
    if (s->staged) return window_copy(c, s->dtype, &s->crop, dst, y->data, bias, y->numel);
    return ONYX_OK;
}
