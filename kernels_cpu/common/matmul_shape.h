/* The numpy-matmul reading of two operands that MatMul, MatMulInteger and QLinearMatMul share:
 * matrix dims, and the broadcast batch dims with each operand's stride per batch dim. */
#ifndef ONYX_KERNELS_CPU_MATMUL_SHAPE_H
#define ONYX_KERNELS_CPU_MATMUL_SHAPE_H

#include "core/value.h"

typedef struct cpu_mm_shape {
    int64_t m, n, k, nbatch;
    int nb; /* broadcast batch dims */
    int64_t bdim[ONYX_MAX_RANK], astr[ONYX_MAX_RANK], bstr[ONYX_MAX_RANK];
} cpu_mm_shape;

/* Y = A @ B: fills s, checking the inner dims, the batch broadcast and Y's element count. */
onyx_status cpu_mm_shape_init(const tensor *A, const tensor *B, const tensor *Y, cpu_mm_shape *s);

/* Element offsets of batch t's matrices in A and B. */
static inline void cpu_mm_batch_offsets(const cpu_mm_shape *s, int64_t t, int64_t *ao, int64_t *bo) {
    *ao = *bo = 0;
    for (int i = s->nb - 1; i >= 0; i--) {
        int64_t x = t % s->bdim[i];
        t /= s->bdim[i];
        *ao += x * s->astr[i];
        *bo += x * s->bstr[i];
    }
}

#endif
