// CUDA C++ helpers every kernel family shares: element types by onyx dtype, launch shapes,
// grid-stride loops, and broadcast indexing of up to CUDA_MAX_RANK dimensions.
#ifndef ONYX_KERNELS_CUDA_COMMON_CUH
#define ONYX_KERNELS_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "kernels_cuda/cuda_kernels.h"

// Ranks above this stay on the CPU (the kernels' supports checks say so).
#define CUDA_MAX_RANK 8
#define CUDA_THREADS 256

// Blocks for n elements with a grid-stride loop: enough to fill the GPU, never more than needed.
static inline unsigned cuda_blocks(int64_t n) {
    int64_t b = (n + CUDA_THREADS - 1) / CUDA_THREADS;
    if (b < 1) b = 1;
    if (b > 65536) b = 65536;
    return (unsigned)b;
}

#define CUDA_GRID_LOOP(i, n)                                                                       \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                      \
         i += (int64_t)gridDim.x * blockDim.x)

// The C++ element type of an onyx dtype.
template <onyx_dtype D> struct dtype_type;
template <> struct dtype_type<ONYX_FLOAT> { typedef float type; };
template <> struct dtype_type<ONYX_DOUBLE> { typedef double type; };
template <> struct dtype_type<ONYX_FLOAT16> { typedef __half type; };
template <> struct dtype_type<ONYX_BFLOAT16> { typedef __nv_bfloat16 type; };
template <> struct dtype_type<ONYX_INT8> { typedef int8_t type; };
template <> struct dtype_type<ONYX_INT16> { typedef int16_t type; };
template <> struct dtype_type<ONYX_INT32> { typedef int32_t type; };
template <> struct dtype_type<ONYX_INT64> { typedef int64_t type; };
template <> struct dtype_type<ONYX_UINT8> { typedef uint8_t type; };
template <> struct dtype_type<ONYX_UINT16> { typedef uint16_t type; };
template <> struct dtype_type<ONYX_UINT32> { typedef uint32_t type; };
template <> struct dtype_type<ONYX_UINT64> { typedef uint64_t type; };
template <> struct dtype_type<ONYX_BOOL> { typedef bool type; };

// Arithmetic is done in `compute<T>::type`: float for the 16-bit floats, T otherwise.
template <typename T> struct compute { typedef T type; };
template <> struct compute<__half> { typedef float type; };
template <> struct compute<__nv_bfloat16> { typedef float type; };

template <typename T> __device__ __forceinline__ typename compute<T>::type to_compute(T v) {
    return (typename compute<T>::type)v;
}
template <> __device__ __forceinline__ float to_compute<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_compute<__nv_bfloat16>(__nv_bfloat16 v) {
    return __bfloat162float(v);
}
template <typename T, typename C> __device__ __forceinline__ T from_compute(C v) { return (T)v; }
template <> __device__ __forceinline__ __half from_compute<__half, float>(float v) {
    return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_compute<__nv_bfloat16, float>(float v) {
    return __float2bfloat16_rn(v);
}

// Calls F::template run<T>(args...) with T the element type of `dtype` when it is one of the
// listed sets; returns ONYX_ERR_UNSUPPORTED otherwise. Sets: CUDA_FLOAT_TYPES, CUDA_ALL_TYPES.
#define CUDA_CASE(D, F, ...)                                                                       \
    case D: return F::template run<dtype_type<D>::type>(__VA_ARGS__);
#define CUDA_DISPATCH_FLOATS(dtype, F, ...)                                                        \
    switch (dtype) {                                                                               \
        CUDA_CASE(ONYX_FLOAT, F, __VA_ARGS__)                                                      \
        CUDA_CASE(ONYX_DOUBLE, F, __VA_ARGS__)                                                     \
        CUDA_CASE(ONYX_FLOAT16, F, __VA_ARGS__)                                                    \
        CUDA_CASE(ONYX_BFLOAT16, F, __VA_ARGS__)                                                   \
    default: break;                                                                                \
    }
#define CUDA_DISPATCH_INTS(dtype, F, ...)                                                          \
    switch (dtype) {                                                                               \
        CUDA_CASE(ONYX_INT8, F, __VA_ARGS__)                                                       \
        CUDA_CASE(ONYX_INT16, F, __VA_ARGS__)                                                      \
        CUDA_CASE(ONYX_INT32, F, __VA_ARGS__)                                                      \
        CUDA_CASE(ONYX_INT64, F, __VA_ARGS__)                                                      \
        CUDA_CASE(ONYX_UINT8, F, __VA_ARGS__)                                                      \
        CUDA_CASE(ONYX_UINT16, F, __VA_ARGS__)                                                     \
        CUDA_CASE(ONYX_UINT32, F, __VA_ARGS__)                                                     \
        CUDA_CASE(ONYX_UINT64, F, __VA_ARGS__)                                                     \
    default: break;                                                                                \
    }

// Element offsets of an output index in up to three broadcast inputs: out dims, and per input
// the strides in elements (0 along broadcast dims). Passed to kernels by value.
struct cuda_bcast {
    int rank;
    int64_t dims[CUDA_MAX_RANK];
    int64_t stride[3][CUDA_MAX_RANK];
};

// Fills b for output `out` and inputs in[0..n) (numpy broadcasting, right-aligned). False when
// the rank is above CUDA_MAX_RANK.
static inline bool cuda_bcast_init(cuda_bcast *b, const tensor *out, const tensor *const *in,
                                   int n) {
    if (out->rank > CUDA_MAX_RANK) return false;
    b->rank = out->rank;
    for (int d = 0; d < out->rank; d++) b->dims[d] = out->dims[d];
    for (int k = 0; k < 3; k++) {
        for (int d = 0; d < CUDA_MAX_RANK; d++) b->stride[k][d] = 0;
        if (k >= n || !in[k]) continue;
        int64_t s = 1;
        for (int d = in[k]->rank - 1; d >= 0; d--) {
            int od = out->rank - in[k]->rank + d;
            b->stride[k][od] = in[k]->dims[d] == 1 ? 0 : s;
            s *= in[k]->dims[d];
        }
    }
    return true;
}

// Offset of output element i in input k.
__device__ __forceinline__ int64_t cuda_bcast_offset(const cuda_bcast &b, int k, int64_t i) {
    int64_t off = 0;
    for (int d = b.rank - 1; d >= 0; d--) {
        int64_t q = i / b.dims[d];
        off += (i - q * b.dims[d]) * b.stride[k][d];
        i = q;
    }
    return off;
}

// The device data of a tensor, typed.
template <typename T> static inline T *cuda_data(const tensor *t) { return (T *)t->data; }

#endif
