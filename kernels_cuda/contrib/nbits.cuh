// How the CUDA kernels read a MatMulNBits weight (geometry/nbits.h): a value is (code - zero
// point) * scale, as kernels_cpu/contrib_nlp/nbits_dot.c computes it.
#ifndef ONYX_KERNELS_CUDA_CONTRIB_NBITS_CUH
#define ONYX_KERNELS_CUDA_CONTRIB_NBITS_CUH

#include "kernels_cuda/common.cuh"
#include "kernels_cuda/contrib/family.h"

// The zero point of block kb of column n: the packed integer, the value given in the scales'
// type, or 2^(bits - 1) when there is none.
template <typename T, int BITS>
__device__ __forceinline__ float nbits_zero_point(const uint8_t *zp_u8, const T *zp_t,
                                                  const geom_nbits &g, int64_t n, int64_t kb) {
    if (zp_u8) {
        constexpr int PER_BYTE = 8 / BITS;
        const uint8_t byte = zp_u8[n * g.zp_bytes + kb / PER_BYTE];
        return (float)((byte >> ((kb % PER_BYTE) * BITS)) & ((1u << BITS) - 1));
    }
    if (zp_t) return to_compute(zp_t[n * g.k_blocks + kb]);
    return (float)(1 << (BITS - 1));
}

#endif
