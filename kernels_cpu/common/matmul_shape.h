/* The numpy-matmul reading of two operands that the CPU's MatMul, MatMulInteger, QLinearMatMul,
 * FusedMatMul, MatMulIntegerToFloat and DynamicQuantizeMatMul share: the product's geometry
 * (geometry/matmul.h) as the node's schema resolved it for the plan (core/op_params.h), checked
 * against the operands and the output they run on. */
#ifndef ONYX_KERNELS_CPU_MATMUL_SHAPE_H
#define ONYX_KERNELS_CPU_MATMUL_SHAPE_H

#include "core/op_params.h"
#include "core/value.h"

typedef geom_matmul cpu_mm_shape;

/* Y = A @ B (the operands as the product reads them): s = the geometry in the kernel's params,
 * after checking it is the one of A, B and Y (it was made for them: a check, not a second
 * derivation); an error where the plan handed none. */
onyx_status cpu_mm_shape_init(const op_params *params, const tensor *A, const tensor *B,
                              const tensor *Y, cpu_mm_shape *s);

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
