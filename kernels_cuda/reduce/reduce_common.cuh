// What the reduce and norm families' CUDA kernels share: warp and block reductions, and the
// collapsed [kept dims, reduced dims] view of a tensor that lets any axis set reduce without a
// transpose (the plan is passed to kernels by value).
#ifndef ONYX_KERNELS_CUDA_REDUCE_COMMON_CUH
#define ONYX_KERNELS_CUDA_REDUCE_COMMON_CUH

#include <math.h>

#include "kernels_cuda/common.cuh"

namespace rdc {

// ---- warp / block reductions (blockDim.x * blockDim.y a multiple of 32, at most 1024)

template <typename A, typename Op> __device__ __forceinline__ A warp_reduce(A v, Op op) {
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// The reduction of v over the whole block, returned to every thread. `sh` holds 32 values.
// Barriers inside: every thread of the block must call it.
template <typename A, typename Op> __device__ A block_reduce(A v, Op op, A *sh) {
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int nthreads = blockDim.x * blockDim.y;
    const int lane = tid & 31, warp = tid >> 5, nwarps = (nthreads + 31) >> 5;
    v = warp_reduce(v, op);
    __syncthreads(); // sh may still be read by an earlier call
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    v = sh[0];
    for (int w = 1; w < nwarps; w++) v = op(v, sh[w]);
    return v;
}

struct add_op {
    template <typename A> __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};

// ---- the collapsed view: outputs (or groups) index the kept dims, elements the reduced ones.
// Size-1 dims are dropped and adjacent dims of one kind merged; the innermost block is
// contiguous and either kept (inner_k) or reduced (inner_r), the other being 1.

struct rplan {
    int nk, nr; // outer kept / outer reduced dims, outermost first
    int64_t kdim[CUDA_MAX_RANK], kstr[CUDA_MAX_RANK];
    int64_t rdim[CUDA_MAX_RANK], rstr[CUDA_MAX_RANK];
    int64_t inner_k, inner_r; // the contiguous innermost block
    int64_t nout, count;      // outputs, and elements reduced into each
};

// Builds the plan of x (rank <= CUDA_MAX_RANK, dims) reducing the axes in mask. An empty
// reduction (count 0) reads nothing.
static inline void rplan_build(rplan *p, int rank, const int64_t *dims, const bool *mask) {
    int64_t dim[CUDA_MAX_RANK];
    bool red[CUDA_MAX_RANK];
    int n = 0;
    p->count = 1;
    p->nout = 1;
    for (int i = 0; i < rank; i++) {
        if (mask[i])
            p->count *= dims[i];
        else
            p->nout *= dims[i];
        if (dims[i] == 1) continue;
        if (n > 0 && red[n - 1] == mask[i]) {
            dim[n - 1] *= dims[i];
        } else {
            dim[n] = dims[i];
            red[n++] = mask[i];
        }
    }
    p->nk = p->nr = 0;
    p->inner_k = p->inner_r = 1;
    if (p->count == 0 || p->nout == 0) {
        p->inner_r = 0;
        return;
    }
    if (n == 0) return; // a single element per output (all dims 1): nout == count == 1
    if (red[n - 1])
        p->inner_r = dim[n - 1];
    else
        p->inner_k = dim[n - 1];
    int64_t s = dim[n - 1];
    int64_t kd[CUDA_MAX_RANK], ks[CUDA_MAX_RANK], rd[CUDA_MAX_RANK], rs[CUDA_MAX_RANK];
    int nk = 0, nr = 0;
    for (int i = n - 2; i >= 0; i--) {
        if (red[i])
            rd[nr] = dim[i], rs[nr++] = s;
        else
            kd[nk] = dim[i], ks[nk++] = s;
        s *= dim[i];
    }
    // collected innermost first; offsets want outermost first
    for (int i = 0; i < nk; i++) p->kdim[i] = kd[nk - 1 - i], p->kstr[i] = ks[nk - 1 - i];
    for (int i = 0; i < nr; i++) p->rdim[i] = rd[nr - 1 - i], p->rstr[i] = rs[nr - 1 - i];
    p->nk = nk;
    p->nr = nr;
}

__device__ __forceinline__ int64_t dims_offset(int n, const int64_t *dim, const int64_t *str,
                                               int64_t idx) {
    if (n == 1) return idx * str[0];
    int64_t off = 0;
    for (int d = n - 1; d >= 0; d--) {
        int64_t q = idx / dim[d];
        off += (idx - q * dim[d]) * str[d];
        idx = q;
    }
    return off;
}

// Input offset of output (or group) o's first element.
__device__ __forceinline__ int64_t kept_offset(const rplan &p, int64_t o) {
    if (p.nk == 0) return o;
    int64_t j = 0;
    if (p.inner_k != 1) {
        int64_t q = o / p.inner_k;
        j = o - q * p.inner_k;
        o = q;
    }
    return dims_offset(p.nk, p.kdim, p.kstr, o) + j;
}

// Offset of reduced element t (0..count) from its output's first element.
__device__ __forceinline__ int64_t red_offset(const rplan &p, int64_t t) {
    if (p.nr == 0) return t;
    int64_t j = 0;
    if (p.inner_r != 1) {
        int64_t q = t / p.inner_r;
        j = t - q * p.inner_r;
        t = q;
    }
    return dims_offset(p.nr, p.rdim, p.rstr, t) + j;
}

} // namespace rdc

#endif
