/* com.microsoft MatMulNBits' weight geometry: W [N, K] stored as N columns of k_blocks blocks of
 * `block` codes of `bits` bits (blob bytes a block, codes packed low bits first), with a scale per
 * block and, packed the same way, optional integer zero points (zp_bytes a column). The CPU and
 * CUDA kernels and the schema read a weight through it. */
#ifndef ONYX_GEOMETRY_NBITS_H
#define ONYX_GEOMETRY_NBITS_H

#include "geometry/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct geom_nbits {
    int64_t k, n, bits, block, k_blocks, blob; /* blob: bytes per block of one column */
    int64_t zp_bytes;                          /* packed uint8 zero points per column */
} geom_nbits;

/* Fills g from the attributes K, N, bits and block_size; refuses K or N not positive, bits other
 * than 2, 4 or 8, a block size that is not a power of 2 >= 16, and sizes past 2^31 - 1 (K, N) or
 * 2^20 (block), so that no size computed from them overflows. */
onyx_status geom_nbits_of(int64_t k, int64_t n, int64_t bits, int64_t block, geom_nbits *g,
                          geom_msg *msg);

#ifdef __cplusplus
}
#endif

#endif
