/* BLAS behind kernels_cpu/blas.h: OpenBLAS's cblas interface. */
#include <cblas.h>
#include <limits.h>

#include "blas.h"

bool cpu_blas_dims_ok(int64_t m, int64_t n, int64_t k) {
    return m <= INT_MAX && n <= INT_MAX && k <= INT_MAX;
}

#define DEFINE_GEMM(NAME, T, GEMM)                                                                 \
    void NAME(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T *a, int64_t lda,\
              const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {                                \
        GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,        \
             (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);          \
    }
DEFINE_GEMM(cpu_sgemm, float, cblas_sgemm)
DEFINE_GEMM(cpu_dgemm, double, cblas_dgemm)

#define DEFINE_GEMV(NAME, T, GEMV)                                                                 \
    void NAME(bool ta, int64_t rows, int64_t cols, T alpha, const T *a, int64_t lda, const T *x,   \
              T beta, T *y) {                                                                      \
        GEMV(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, (int)rows, (int)cols, alpha, a,        \
             (int)lda, x, 1, beta, y, 1);                                                          \
    }
DEFINE_GEMV(cpu_sgemv, float, cblas_sgemv)
DEFINE_GEMV(cpu_dgemv, double, cblas_dgemv)
