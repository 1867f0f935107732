/* The 8-bit product with a constant B, behind MatMulInteger, MatMulIntegerToFloat,
 * DynamicQuantizeMatMul, QLinearMatMul and QGemm: oneDNN's int8 matmul primitive made at prepare
 * where this CPU has VNNI, else (or with ONYX_I8=avx2) the AVX2 kernels of i8_gemm_avx2.h, which
 * sum as onnxruntime does on such a CPU; B packed once and shared by every plan of the rep, the
 * zero points applied by our own pass over the int32 result (which also scales it to float where
 * the op wants that). */
#ifndef ONYX_KERNELS_CPU_I8_MATMUL_H
#define ONYX_KERNELS_CPU_I8_MATMUL_H

#include <stdbool.h>
#include <stdint.h>

#include <oneapi/dnnl/dnnl.h>

#include "core/kernel.h"

/* Prepared once per plan, read-only afterwards. */
typedef struct cpu_i8mm {
    bool avx2;               /* the AVX2 kernels: no primitive, B packed by i8avx2_pack */
    dnnl_primitive_t prim;
    dnnl_memory_desc_t md_src, md_wei, md_dst, md_pad; /* owned */
    size_t pad_size;
    const void *packed;      /* B (moved to int8) in the primitive's layout (rep's shared cache) */
    const int32_t *colsum;   /* [n] column sums of that int8 B, beside it in the same object */
    int64_t m, k, n;
    bool a_signed;           /* A is int8 */
    bool b_signed;           /* B is int8 */
    int32_t a_shift;         /* 128 where int8 A is moved up into uint8 for oneDNN, else 0 */
    int32_t b_shift;         /* 128 where uint8 B is stored as B - 128 for oneDNN, else 0 */
    size_t off_u, off_zb, off_pad, scratch_bytes; /* the run's scratch, 64-byte aligned */
} cpu_i8mm;

/* A run context's memory objects (handles set per run). */
typedef struct cpu_i8mm_mem {
    const cpu_i8mm *p;
    dnnl_memory_t src, wei, dst, pad;
} cpu_i8mm_mem;

/* Prepares (A - za)(B - zb) for A [m, k] (int8 when a_signed, else uint8) and the constant 2-D
 * int8/uint8 B [k, n] (stored [n, k] when b_transposed). *out is NULL, with ONYX_OK, where the
 * fast path does not apply: neither VNNI nor AVX2 on this CPU (cpu_i8_choose), dims oneDNN does
 * not take, or only its reference implementation; the caller then computes the product itself.
 * Fails only for memory. */
onyx_status cpu_i8mm_prepare(const kernel_prep *kp, int64_t m, bool a_signed, const tensor *b,
                             bool b_transposed, cpu_i8mm **out);
void cpu_i8mm_release(cpu_i8mm *p);
onyx_status cpu_i8mm_fork(const cpu_i8mm *p, cpu_i8mm_mem **out);
void cpu_i8mm_unfork(cpu_i8mm_mem *f);

/* One product. Zero points as numbers in A's and B's own types. */
typedef struct cpu_i8mm_call {
    const void *a;           /* [m, k], dense */
    const int32_t *za;       /* za[0], or za[i] for row i when za_rows */
    bool za_rows;
    const int32_t *zb;       /* zb[0], or zb[j] for column j when zb_cols; NULL: 0 */
    bool zb_cols;
    /* NULL, or an int32 term added (wrapping) to each sum before any scaling: element
     * c_add[i * c_rs + j * c_cs] for row i and column j, c_cs 0 or 1 (QGemm's C, broadcast by
     * its strides) */
    const int32_t *c_add;
    int64_t c_rs, c_cs;
    /* [m, n], dense: the int32 products (mult NULL), or float(acc) * mult[j] (+ bias[j]), as
     * onnxruntime's scale-bias output processor rounds (the int32 sums land here first) */
    void *y;
    const float *mult;       /* mult[0], or mult[j] when mult_cols */
    bool mult_cols;
    const float *bias;       /* [n] or NULL */
    /* [m, n], dense, or NULL: float(acc) * mult[j] requantized to 8 bits (q8_saturate) with
     * zero point qz, as onnxruntime's requantizing output processor; y then holds the int32 sums
     * as scratch */
    void *q;
    bool q_signed;
    int32_t qz;
    void *scratch;           /* p->scratch_bytes, 64-byte aligned (kernel_scratch) */
} cpu_i8mm_call;

/* Runs the product: 32-bit wrapping sums, exact as the reference loops on oneDNN's VNNI path; on
 * the AVX2 path as onnxruntime's AVX2 kernels sum (uint8 A x int8 B saturates each pair of
 * products to int16 first, i8_gemm_avx2.c), which is the same wherever no pair saturates. */
onyx_status cpu_i8mm_run(const cpu_i8mm_mem *f, const cpu_i8mm_call *x);

/* ---- The state of a kernel (KERNEL_FORKED) whose input a_in, of static type, times its constant
 * 2-D input b_in is one product of A's rows (batch dims folded in) and B: MatMulInteger,
 * QLinearMatMul, MatMulIntegerToFloat, DynamicQuantizeMatMul (a_float: A is float there, made
 * uint8 per run). The fork holds the primitive's memory objects. */
onyx_status cpu_i8mm_rows_prepare(const kernel_prep *p, int a_in, int b_in, bool a_float,
                                  void **state);
void cpu_i8mm_rows_release(void *state);
onyx_status cpu_i8mm_rows_fork(const void *state, void **fork);
void cpu_i8mm_rows_unfork(void *fork);
/* The prepared product where this call's A and B are the ones it was made for, else NULL. */
const cpu_i8mm_mem *cpu_i8mm_rows_for(const kernel_call *c, const tensor *a, const tensor *b);

#endif
