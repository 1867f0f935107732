/* Numpy matmul geometry (MatMul, MatMulInteger, QLinearMatMul, FusedMatMul and the contrib
 * quantized products): a 1-D operand is promoted to a matrix and its dim dropped again, the
 * inner dims must agree, the batch dims (all but the last two) broadcast. */
#ifndef ONYX_GEOMETRY_MATMUL_H
#define ONYX_GEOMETRY_MATMUL_H

#include "geometry/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The output shape of A (ra, a) @ B (rb, b) into *rank and dims; unknown dims (-1) stay unknown
 * where they decide. Fails with ONYX_ERR_SHAPE for a scalar operand, inner dims that differ, or
 * batch dims that do not broadcast. Both ranks must be known (>= 0). */
onyx_status geom_matmul_dims(int ra, const int64_t *a, int rb, const int64_t *b, int *rank,
                             int64_t *dims, geom_msg *msg);

/* A product of known shapes as kernels walk it: nbatch products of [m, k] @ [k, n] over the nb
 * broadcast batch dims bdim[], batch index i's matrices at element offsets sum(i_d * astr[d])
 * in A and sum(i_d * bstr[d]) in B (a stride of 0 where that operand broadcasts). */
typedef struct geom_matmul {
    int64_t m, n, k, nbatch;
    int nb;
    int64_t bdim[GEOM_MAX_RANK], astr[GEOM_MAX_RANK], bstr[GEOM_MAX_RANK];
    int64_t a_batches, b_batches; /* matrices A and B hold (products of their own batch dims) */
} geom_matmul;

/* Fills s for A (ra, a) @ B (rb, b) of known dims, with geom_matmul_dims's refusals. */
onyx_status geom_matmul_plan(int ra, const int64_t *a, int rb, const int64_t *b, geom_matmul *s,
                             geom_msg *msg);

#ifdef __cplusplus
}
#endif

#endif
