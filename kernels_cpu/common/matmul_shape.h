/* The numpy-matmul reading of two operands that the CPU's MatMul, MatMulInteger, QLinearMatMul,
 * FusedMatMul and MatMulIntegerToFloat share: the product's plan of geometry/matmul.h, checked
 * against the output they write. */
#ifndef ONYX_KERNELS_CPU_MATMUL_SHAPE_H
#define ONYX_KERNELS_CPU_MATMUL_SHAPE_H

#include "core/value.h"
#include "geometry/matmul.h"

typedef geom_matmul cpu_mm_shape;

/* Y = A @ B: fills s (geom_matmul_plan), checking Y's element count too. */
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
