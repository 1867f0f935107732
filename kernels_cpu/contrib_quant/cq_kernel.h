/* Pieces shared by the CPU kernels of the com.microsoft quantized ops: run-time parameters,
 * onnxruntime's quantization rounding, 256-entry tables, the exact 8-bit GEMM. */
#ifndef ONYX_KERNELS_CPU_CONTRIB_QUANT_CQ_KERNEL_H
#define ONYX_KERNELS_CPU_CONTRIB_QUANT_CQ_KERNEL_H

#include <stdint.h>

#include "kernels_cpu/common/requant.h"
#include "kernels_cpu/cpu_kernels.h"

typedef struct cq_param {
    float scale;
    int32_t zp;
} cq_param;

/* The scale (input si, float, one element) and zero point (input zi, one element of type t; 0
 * when omitted or zi < 0) of a per-tensor quantized value; `what` names it in messages. */
onyx_status cq_param_get(const kernel_call *c, int si, int zi, onyx_dtype t, const char *what,
                         cq_param *p);

/* Fails unless input i is an int8/uint8 tensor (of type t when t is set). */
onyx_status cq_need_q8(const kernel_call *c, int i, onyx_dtype t, const char *what);

static inline int32_t cq_lo(onyx_dtype t) { return t == ONYX_INT8 ? -128 : 0; }
static inline int32_t cq_hi(onyx_dtype t) { return t == ONYX_INT8 ? 127 : 255; }

/* Element i of an int8/uint8 buffer as a number. */
static inline int32_t cq_get(onyx_dtype t, const void *p, int64_t i) {
    return t == ONYX_INT8 ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

/* onnxruntime's QuantizeLinear of one float: v / scale in float, then q8_saturate. */
static inline int32_t cq_quantize(float v, cq_param y, int32_t lo, int32_t hi) {
    return q8_saturate(v / y.scale, y.zp, lo, hi);
}

/* A function applied to the 256 dequantized values of a table (in place). */
typedef void (*cq_lut_fn)(float *v, int n, const void *ctx);

/* lut[b] = quantize(fn(x.scale * (b - x.zp)), y) for every byte b of type t, the values computed
 * in float as onnxruntime's QlinearBuildLookupTable; fn NULL is the identity. */
void cq_lut_build(uint8_t lut[256], onyx_dtype t, cq_param x, cq_param y, cq_lut_fn fn,
                  const void *ctx);

/* y[i] = lut[x[i]] for i < n, over threads when n is large. */
void cq_lut_apply(const uint8_t lut[256], const uint8_t *x, uint8_t *y, int64_t n);

/* Exact integer GEMM of 8-bit operands, the core of QGemm and MatMulIntegerToFloat:
 *   acc[i, j] = sum_p (A[i, p] - za) (B[p, j] - zb[j])   (32-bit wrapping sums)
 * A is int8/uint8 [m, k] ([k, m] when ta), B int8/uint8 [k, n] ([n, k] when tb), zb[] n values
 * (per column) or one (zb_n 1). b_ready, when set, is B already laid out by cq_gemm_layout_b
 * (weights prepared once). `work` holds cq_gemm_work_bytes(m, n, k) bytes. oneDNN's int8 GEMM
 * does it where it is exact (VNNI), else a plain loop. */
typedef struct cq_gemm {
    int64_t m, n, k;
    onyx_dtype at, bt;
    const void *a, *b;
    bool ta, tb;
    int32_t za;
    const int32_t *zb;
    int64_t zb_n;
    const int8_t *b_ready;
} cq_gemm;
size_t cq_gemm_work_bytes(int64_t m, int64_t n, int64_t k);
void cq_gemm_s32(const cq_gemm *g, void *work, int32_t *acc);

/* B (type bt, [k, n] or [n, k] when tb) as the int8 [k, n] the GEMM reads: uint8 values move
 * down by 128 (cq_gemm_s32 moves their zero points alike). */
void cq_gemm_layout_b(onyx_dtype bt, bool tb, const void *b, int64_t k, int64_t n, int8_t *out);

#endif
