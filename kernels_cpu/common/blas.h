/* The one door to BLAS for every CPU kernel: row-major GEMM/GEMV in float and double. Which
 * library sits behind it (and how it is set up for this CPU) is blas.c's business alone. */
#ifndef ONYX_KERNELS_CPU_BLAS_H
#define ONYX_KERNELS_CPU_BLAS_H

#include <stdbool.h>
#include <stdint.h>

/* C[m,n] = alpha * op(A) * op(B) + beta * C, row-major; op(X) = X^T when tX. lda/ldb/ldc are the
 * row strides of A, B, C as stored. Dims must fit in int (callers check; see cpu_blas_dims_ok). */
void cpu_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
               int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
void cpu_dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a,
               int64_t lda, const double *b, int64_t ldb, double beta, double *c, int64_t ldc);

/* y[m] = alpha * op(A) x + beta * y, A row-major [rows, cols] with row stride lda; op(A) = A^T
 * when ta (then y has cols elements and x rows). */
void cpu_sgemv(bool ta, int64_t rows, int64_t cols, float alpha, const float *a, int64_t lda,
               const float *x, float beta, float *y);
void cpu_dgemv(bool ta, int64_t rows, int64_t cols, double alpha, const double *a, int64_t lda,
               const double *x, double beta, double *y);

/* C[m,n] (int32) = (A - ao) (B - bo), exactly (32-bit wrapping sums), row-major without transposes;
 * A is uint8 (a_signed false) or int8, B int8. Returns false, computing nothing, where no exact
 * fast path exists on this CPU (oneDNN's int8 GEMM is exact only with VNNI/AMX): the caller then
 * computes the product itself. */
bool cpu_gemm_i8(bool a_signed, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                 int32_t ao, const int8_t *b, int64_t ldb, int32_t bo, int32_t *c, int64_t ldc);

/* Whether oneDNN's int8 products (GEMM, convolution) are exact on this CPU: VNNI (avx512_core_vnni
 * and up, avx2_vnni) multiplies u8 x s8 into int32 without the int16 saturation of the older
 * pmaddubsw path. */
bool cpu_int8_exact(void);

/* Whether every dim fits BLAS's int. */
bool cpu_blas_dims_ok(int64_t m, int64_t n, int64_t k);

#endif
