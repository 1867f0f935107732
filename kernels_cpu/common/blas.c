/* BLAS behind kernels_cpu/common/blas.h: oneDNN's dnnl_sgemm for most float products, OpenBLAS
 * (dlopen'ed with the right core type) for tiny float products and for double.
 *
 * Why this mix (measured here, Xeon with AVX-512/AMX, 2 cores, best of several runs, GFLOP/s,
 * 1 thread / 2 threads; Debian OpenBLAS 0.3.21 openmp variant, oneDNN 2.6.3):
 *                        OpenBLAS default  OpenBLAS       OpenBLAS      dnnl_sgemm
 *                        (Prescott)        Haswell        SkylakeX
 *   1x1000x2048             5 /  10          5 /   8        6 /  11      15 /  27
 *   64x64x64 (x64 batch)   22 /  19         50 /  62      148 / 202*    120 / 171*
 *   256x256x256            20 /  32         63 /  83      148 / 194     160 / 228
 *   1024x1024x1024         17 /  33         62 /  83      147 / 203     145 / 226
 *   49x512x4608 (conv)     17 /  30         51 /  73      101 / 133     146 / 143
 *   4x1024x256 (rnn step)   -                -             16 /  22      67 / 120
 *   32x32x32                -                -            152 / 152      71 /  86
 *   128x128x128             -                -            108 / 156     126 / 285
 *   (* 2 threads: the batch spread one matrix per thread, as MatMul does; the other columns
 *    thread each product. "-": not measured. Quiet machine; other users' load skews numbers.)
 * OpenBLAS falls back to Prescott kernels on this CPU unless OPENBLAS_CORETYPE is set before
 * the library loads, which is why it is not linked but dlopen'ed after a setenv (a user's own
 * OPENBLAS_CORETYPE wins). oneDNN beats even the right OpenBLAS kernels on all but tiny
 * products (m*n*k <= 64^3 with both m and n >= 8, where OpenBLAS's small-matrix kernels win
 * and it runs single-threaded anyway), and it runs on the one TBB pool with the oneDNN convs.
 * (The table was measured with oneDNN 2.6.3 on OpenMP; onyx now uses oneDNN 3.2 on TBB.)
 * gemv: OpenBLAS sgemv and dnnl_sgemm with n = 1 are equal (13 / 26 at 1000x2048), so float
 * gemv goes to oneDNN too and OpenBLAS is only loaded when a tiny or double product needs it.
 * oneDNN has no double GEMM; without libopenblas.so.0 a plain loop computes it.
 * dnnl_sgemm mallocs its packing buffers on every call (BERT-base: ~90 MB a run): MatMul and Gemm
 * with shapes known at prepare use oneDNN matmul primitives instead (kernels_cpu/math/gemm.c),
 * which take their working memory from the run's scratch and B packed once. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/common/dnnl_guard.h"
#include "kernels_cpu/common/i8_gemm_avx2.h"

/* cblas's enum values, so that no cblas header is needed. */
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int,
                         const double *, int, double, double *, int);
typedef void (*dgemv_fn)(int, int, int, int, double, const double *, int, const double *, int,
                         double, double *, int);
typedef void (*set_threads_fn)(int);

static pthread_once_t ob_once = PTHREAD_ONCE_INIT;
static struct {
    sgemm_fn sgemm;
    dgemm_fn dgemm;
    dgemv_fn dgemv;
    set_threads_fn set_threads;
} ob;

static void ob_load(void) {
    const char *core = __builtin_cpu_supports("avx512f") ? "SkylakeX"
                       : __builtin_cpu_supports("avx2") ? "Haswell" : NULL;
    if (core) setenv("OPENBLAS_CORETYPE", core, 0);
    void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    /* POSIX's sanctioned way of turning dlsym's void * into a function pointer */
    sgemm_fn s;
    dgemm_fn d;
    dgemv_fn v;
    set_threads_fn t;
    *(void **)&s = dlsym(h, "cblas_sgemm");
    *(void **)&d = dlsym(h, "cblas_dgemm");
    *(void **)&v = dlsym(h, "cblas_dgemv");
    *(void **)&t = dlsym(h, "openblas_set_num_threads");
    if (!s || !d || !v || !t) return; /* the handle stays open: harmless, and never reused */
    /* OpenBLAS runs single-threaded: its own threads (OpenMP in the openmp variant) would
     * compete with the TBB pool (core/parallel.h). What reaches it is tiny or double. */
    t(1);
    ob.sgemm = s;
    ob.dgemm = d;
    ob.dgemv = v;
    ob.set_threads = t;
}

/* OpenBLAS, when it loads. */
static bool ob_ready(void) {
    pthread_once(&ob_once, ob_load);
    return ob.sgemm != NULL;
}

bool cpu_blas_dims_ok(int64_t m, int64_t n, int64_t k) {
    return m <= INT_MAX && n <= INT_MAX && k <= INT_MAX;
}

/* The plain product, for double without OpenBLAS and should oneDNN refuse a call. */
#define DEFINE_NAIVE(NAME, T)                                                                      \
    static void NAME(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T *a,      \
                     int64_t lda, const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {            \
        for (int64_t i = 0; i < m; i++)                                                            \
            for (int64_t j = 0; j < n; j++) {                                                      \
                T s = 0;                                                                           \
                for (int64_t p = 0; p < k; p++)                                                    \
                    s += (ta ? a[p * lda + i] : a[i * lda + p]) *                                  \
                         (tb ? b[j * ldb + p] : b[p * ldb + j]);                                   \
                T *cp = c + i * ldc + j;                                                           \
                *cp = alpha * s + (beta == 0 ? (T)0 : beta * *cp);                                 \
            }                                                                                      \
    }
DEFINE_NAIVE(naive_s, float)
DEFINE_NAIVE(naive_d, double)

/* C = beta * C (beta 0 writes zeros, so that NaN or garbage in C does not survive). */
#define DEFINE_SCALE(NAME, T)                                                                      \
    static void NAME(int64_t m, int64_t n, T beta, T *c, int64_t ldc) {                            \
        for (int64_t i = 0; i < m; i++)                                                            \
            for (int64_t j = 0; j < n; j++)                                                        \
                c[i * ldc + j] = beta == 0 ? (T)0 : beta * c[i * ldc + j];                         \
    }
DEFINE_SCALE(scale_s, float)
DEFINE_SCALE(scale_d, double)

#define TINY_MNK (64 * 64 * 64)

void cpu_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
               int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        scale_s(m, n, beta, c, ldc);
        return;
    }
    /* (in this order the products cannot overflow) */
    if (m >= 8 && n >= 8 && m * n <= TINY_MNK && k <= TINY_MNK && m * n * k <= TINY_MNK &&
        ob_ready()) {
        ob.sgemm(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, (int)m, (int)n, (int)k,
                 alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
        return;
    }
    parallel_work_coming();
    dnnl_status_t st =
        dnnl_guard_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    parallel_work_done();
    if (st != dnnl_success) naive_s(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cpu_sgemv(bool ta, int64_t rows, int64_t cols, float alpha, const float *a, int64_t lda,
               const float *x, float beta, float *y) {
    /* y = op(A) x as the product [ylen, 1] = op(A) [xlen, 1] */
    if (ta) cpu_sgemm(true, false, cols, 1, rows, alpha, a, lda, x, 1, beta, y, 1);
    else cpu_sgemm(false, false, rows, 1, cols, alpha, a, lda, x, 1, beta, y, 1);
}

void cpu_dgemv(bool ta, int64_t rows, int64_t cols, double alpha, const double *a, int64_t lda,
               const double *x, double beta, double *y) {
    int64_t ylen = ta ? cols : rows, xlen = ta ? rows : cols;
    if (ylen <= 0) return;
    if (xlen <= 0 || !ob_ready()) {
        if (ta) naive_d(true, false, cols, 1, rows, alpha, a, lda, x, 1, beta, y, 1);
        else naive_d(false, false, rows, 1, cols, alpha, a, lda, x, 1, beta, y, 1);
        return;
    }
    /* beta 0 as zeroed y: some OpenBLAS versions' gemv lets NaN in y through 0 * y */
    if (beta == 0) memset(y, 0, (size_t)ylen * sizeof *y);
    ob.dgemv(ROW_MAJOR, ta ? TRANS : NO_TRANS, (int)rows, (int)cols, alpha, a, (int)lda, x, 1,
             beta, y, 1);
}

void cpu_dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a,
               int64_t lda, const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        scale_d(m, n, beta, c, ldc);
        return;
    }
    /* a single row or column: OpenBLAS 0.3.21's gemm would pack the whole other operand */
    if (m == 1 && (!ta || lda == 1)) {
        /* c[n] = op(B)^T a: B[k,n] read transposed, or B[n,k] as stored */
        cpu_dgemv(!tb, tb ? n : k, tb ? k : n, alpha, b, ldb, a, beta, c);
        return;
    }
    if (n == 1 && ldc == 1 && (tb || ldb == 1)) {
        /* c[m] = op(A) b */
        cpu_dgemv(ta, ta ? k : m, ta ? m : k, alpha, a, lda, b, beta, c);
        return;
    }
    if (!ob_ready()) {
        naive_d(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    ob.dgemm(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, (int)m, (int)n, (int)k,
             alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

bool cpu_int8_exact(void) {
    static int known; /* 0 unknown, 1 yes, 2 no; a benign race: every thread finds the same */
    int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (!k) {
        unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
        unsigned avx512_vnni = dnnl_cpu_isa_avx512_core_vnni & ~dnnl_cpu_isa_avx512_core,
                 avx2_vnni = dnnl_cpu_isa_avx2_vnni & ~dnnl_cpu_isa_avx2;
        k = (isa & avx512_vnni) || (isa & avx2_vnni) ? 1 : 2;
        __atomic_store_n(&known, k, __ATOMIC_RELAXED);
    }
    return k == 1;
}

bool cpu_gemm_i8(bool a_signed, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                 int32_t ao, const int8_t *b, int64_t ldb, int32_t bo, int32_t *c, int64_t ldc) {
    /* without VNNI (or forced off it) the caller's exact loop: B here is moved by 128 where it
     * was uint8, which the AVX2 kernels, summing as onnxruntime does, must see as stored */
    if (m <= 0 || n <= 0 || k <= 0 || cpu_i8_choose() != CPU_I8_ONEDNN || bo < -128 || bo > 127 ||
        ao < (a_signed ? -128 : 0) || ao > (a_signed ? 127 : 255))
        return false;
    const int32_t co = 0;
    parallel_work_coming();
    dnnl_status_t st = a_signed
        ? dnnl_gemm_s8s8s32('N', 'N', 'F', m, n, k, 1.0f, a, lda, (int8_t)ao, b, ldb, (int8_t)bo,
                            0.0f, c, ldc, &co)
        : dnnl_gemm_u8s8s32('N', 'N', 'F', m, n, k, 1.0f, a, lda, (uint8_t)ao, b, ldb, (int8_t)bo,
                            0.0f, c, ldc, &co);
    parallel_work_done();
    return st == dnnl_success;
}
