/* The 8-bit convolutions (QLinearConv of ai.onnx and com.microsoft, ConvInteger) on CPUs without
 * VNNI, summed as onnxruntime sums them there: channels-last patches times the weights packed
 * once per group through the AVX2 product (kernels_cpu/common/i8_gemm_avx2.h), depthwise ones
 * exact. Why the arithmetic is what it is: qconv_avx2.c's opening comment. */
#ifndef ONYX_KERNELS_CPU_QCONV_AVX2_H
#define ONYX_KERNELS_CPU_QCONV_AVX2_H

#include <stdbool.h>

#include "core/kernel.h"
#include "core/status.h"

typedef struct qconv_avx2 qconv_avx2;

/* Which op the node is: its inputs sit at different positions, and ConvInteger writes int32. */
typedef enum qconv_avx2_op { QCONV_AVX2_QLINEAR, QCONV_AVX2_INTEGER } qconv_avx2_op;

/* How X and Y are stored. dims_last: the com.microsoft form with channels_last, dims and bytes
 * [N, spatial..., C]; x_opaque / y_opaque: the logical [N, C, spatial...] stored channels last
 * (core/fuse.h's opaque layout). */
typedef struct qconv_avx2_layout {
    bool dims_last, x_opaque, y_opaque;
} qconv_avx2_layout;

/* The prepared path in *out, or NULL where it does not apply: cpu_i8_choose() is not the AVX2
 * path, and not oneDNN's with types this path sums exactly (ConvInteger, and QLinearConv but for
 * uint8 X x int8 W), shapes not static, W not a constant, types other than 8-bit. Fails only for memory. */
onyx_status qconv_avx2_prepare(const kernel_prep *p, qconv_avx2_op op, qconv_avx2_layout layout,
                               qconv_avx2 **out);
/* Whether qconv_avx2_prepare would prepare the path for p (op), from the checks it makes before
 * packing anything. */
bool qconv_avx2_takes(const kernel_prep *p, qconv_avx2_op op);
void qconv_avx2_release(qconv_avx2 *q);

/* Runs the call; *done false (nothing written) where its inputs are not the prepared ones or its
 * scales, zero points or bias are not of the forms this path takes, for the reference to check. */
onyx_status qconv_avx2_run(const qconv_avx2 *q, const kernel_call *c, bool *done);

/* Whether the prepared path reads or writes an opaque tensor. */
bool qconv_avx2_opaque(const qconv_avx2 *q);

#endif
