/* Einsum equations that are a batched matrix product, run through BLAS (einsum_matmul.c). */
#ifndef ONYX_KERNELS_CPU_EINSUM_MATMUL_H
#define ONYX_KERNELS_CPU_EINSUM_MATMUL_H

#include <stdbool.h>

#include "core/kernel.h"
#include "ops/math/einsum.h"

/* Computes Y of call c when the parsed equation `sp` is such a product of float or double
 * operands (*done true); otherwise leaves everything to the generic loop nest (*done false). */
onyx_status cpu_einsum_matmul(const kernel_call *c, const einsum_spec *sp, bool *done);

#endif
