/* CPU kernels of MatMul and Gemm: float and double through blas.h (float16/bfloat16 through
 * float copies), integers through a plain loop that wraps as ONNX does. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/matmul_shape.h"

/* Batches of matrices at most this many multiply-adds run one matrix per thread rather than one
 * after the other with BLAS threading each (BLAS threads poorly on small products). */
#define SMALL_MM (256 * 256 * 256)
/* Multiply-adds below which integer rows are not worth another thread. */
#define INT_GRAIN 65536

/* Float copies of float16/bfloat16 operands, in the run context's scratch (never shared between
 * concurrent runs, kept across runs). */
static onyx_status scratch(const kernel_call *c, int64_t n, float **out) {
    if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(float))
        return onyx_error(ONYX_ERR_NO_MEMORY, "float copies of half-precision operands overflow");
    void *b;
    TRY(kernel_scratch(c, n ? (size_t)n * sizeof(float) : 1, &b));
    *out = b;
    return ONYX_OK;
}

static bool is_half(onyx_dtype d) { return d == ONYX_FLOAT16 || d == ONYX_BFLOAT16; }

static void half_to_float(onyx_dtype d, const uint16_t *x, float *y, int64_t n) {
    if (d == ONYX_FLOAT16)
        CPU_SIMD for (int64_t i = 0; i < n; i++) y[i] = cpu_fp16_to_float(x[i]);
    else
        CPU_SIMD for (int64_t i = 0; i < n; i++) y[i] = cpu_bf16_to_float(x[i]);
}

static void float_to_half(onyx_dtype d, const float *x, uint16_t *y, int64_t n) {
    if (d == ONYX_FLOAT16)
        CPU_SIMD for (int64_t i = 0; i < n; i++) y[i] = cpu_float_to_fp16(x[i]);
    else
        CPU_SIMD for (int64_t i = 0; i < n; i++) y[i] = cpu_float_to_bf16(x[i]);
}

/* Element i of a float-family tensor as double (Gemm's bias, read once per output). */
static double real_at(const tensor *t, int64_t i) {
    switch (t->dtype) {
    case ONYX_FLOAT: return ((const float *)t->data)[i];
    case ONYX_DOUBLE: return ((const double *)t->data)[i];
    case ONYX_FLOAT16: return fp16_to_float(((const uint16_t *)t->data)[i]);
    case ONYX_BFLOAT16: return bf16_to_float(((const uint16_t *)t->data)[i]);
    default: return tensor_get_f64(t, i);
    }
}

static onyx_status check_blas_dims(int64_t m, int64_t n, int64_t k) {
    if (!cpu_blas_dims_ok(m, n, k))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "matrix dims %lldx%lldx%lld exceed BLAS's int "
                          "range", (long long)m, (long long)n, (long long)k);
    return ONYX_OK;
}

/* ---- one C[M,N] = alpha * op(A) * op(B) + beta * C in the real types, through blas.h (which
 * picks gemv for a single row or column where that pays). */

#define DEFINE_BLAS(N, T, GEMM)                                                                    \
    static void N(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T *a,          \
                  const T *b, T beta, T *c) {                                                      \
        GEMM(ta, tb, m, n, k, alpha, a, ta ? m : k, b, tb ? k : n, beta, c, n);                    \
    }
DEFINE_BLAS(blas_f32, float, cpu_sgemm)
DEFINE_BLAS(blas_f64, double, cpu_dgemm)

/* ---- integers: C = op(A) * op(B), wrapping in the unsigned type of the same width */

#define DEFINE_INT_MM(D, T)                                                                        \
    static void D##_mm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *a,              \
                       const T *b, T *c, int64_t row0, int64_t row1) {                             \
        typedef CPU_UNSIGNED_OF(T) U;                                                              \
        for (int64_t i = row0; i < row1; i++) {                                                    \
            U *ci = (U *)c + i * n;                                                                \
            if (tb) {                                                                              \
                for (int64_t j = 0; j < n; j++) {                                                  \
                    uint64_t s = 0;                                                                \
                    for (int64_t p = 0; p < k; p++)                                                \
                        s += (uint64_t)(ta ? a[p * m + i] : a[i * k + p]) * (uint64_t)b[j * k + p]; \
                    ci[j] = (U)s;                                                                  \
                }                                                                                  \
                continue;                                                                          \
            }                                                                                      \
            for (int64_t j = 0; j < n; j++) ci[j] = 0;                                             \
            for (int64_t p = 0; p < k; p++) {                                                      \
                /* uint64 products: narrower unsigned types would promote to (overflowing) int */  \
                uint64_t av = (uint64_t)(ta ? a[p * m + i] : a[i * k + p]);                        \
                const U *bp = (const U *)b + p * n;                                                \
                for (int64_t j = 0; j < n; j++) ci[j] = (U)(ci[j] + av * bp[j]);                   \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    /* Gemm's alpha and beta * C on integer results: exact when both are 1, else through double    \
     * truncated (saturating) back as numpy's astype does. */                                      \
    static void D##_scale(T *y, const T *c, int64_t m, int64_t n, int64_t cm, int64_t cn,          \
                          double alpha, double beta) {                                             \
        typedef CPU_UNSIGNED_OF(T) U;                                                              \
        bool exact = alpha == 1 && (!c || beta == 1);                                              \
        const T tmax = (T)0 < (T)-1 ? (T)-1 : (T)(((U)1 << (sizeof(T) * 8 - 1)) - 1);              \
        const T tmin = (T)0 < (T)-1 ? 0 : (T)(-tmax - 1);                                          \
        for (int64_t i = 0; i < m; i++)                                                            \
            for (int64_t j = 0; j < n; j++) {                                                      \
                T cv = c ? c[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)] : 0;                      \
                T *yp = y + i * n + j;                                                             \
                if (exact) {                                                                       \
                    *yp = (T)((U)*yp + (U)cv);                                                     \
                    continue;                                                                      \
                }                                                                                  \
                double v = alpha * (double)*yp + (c ? beta * (double)cv : 0.0);                    \
                *yp = v != v ? 0 : v <= (double)tmin ? tmin : v >= (double)tmax ? tmax : (T)v;     \
            }                                                                                      \
    }
CPU_FOR_INTS(DEFINE_INT_MM)

/* ---- MatMul */

/* A batched product: output batch index -> offsets of A's and B's matrices (broadcast dims have
 * stride 0). */
typedef struct mm_job {
    onyx_dtype dtype;
    const void *a, *b;
    void *c;
    cpu_mm_shape sh;
} mm_job;

/* BLAS batches [b, e); float16/bfloat16 arrive here as float. */
static void mm_batches(void *ctx, int64_t b, int64_t e) {
    const mm_job *j = ctx;
    for (int64_t t = b; t < e; t++) {
        int64_t ao, bo, co = t * j->sh.m * j->sh.n;
        cpu_mm_batch_offsets(&j->sh, t, &ao, &bo);
        if (j->dtype == ONYX_DOUBLE)
            blas_f64(false, false, j->sh.m, j->sh.n, j->sh.k, 1.0, (const double *)j->a + ao,
                     (const double *)j->b + bo, 0.0, (double *)j->c + co);
        else
            blas_f32(false, false, j->sh.m, j->sh.n, j->sh.k, 1.0f, (const float *)j->a + ao,
                     (const float *)j->b + bo, 0.0f, (float *)j->c + co);
    }
}

/* Integer output rows [b, e) over all batches. */
static void mm_int_rows(void *ctx, int64_t b, int64_t e) {
    const mm_job *j = ctx;
    while (b < e) {
        int64_t t = b / j->sh.m, r0 = b % j->sh.m, r1 = j->sh.m;
        if (r1 - r0 > e - b) r1 = r0 + (e - b);
        int64_t ao, bo, co = t * j->sh.m * j->sh.n;
        cpu_mm_batch_offsets(&j->sh, t, &ao, &bo);
        switch (j->dtype) {
#define CASE(D, T)                                                                                 \
    case D:                                                                                        \
        D##_mm(false, false, j->sh.m, j->sh.n, j->sh.k, (const T *)j->a + ao, (const T *)j->b + bo, \
               (T *)j->c + co, r0, r1);                                                            \
        break;
            CPU_FOR_INTS(CASE)
#undef CASE
        default: break;
        }
        b += r1 - r0;
    }
}

/* `b_shared`: B has no batch dims, so A's batches are contiguous rows of one taller product. */
static void mm_run_job(mm_job *j, bool b_shared) {
    if (b_shared && j->sh.nb > 0) {
        j->sh.m *= j->sh.nbatch;
        j->sh.nbatch = 1;
        j->sh.nb = 0;
    }
    if (dtype_is_int(j->dtype))
        parallel_for(j->sh.nbatch * j->sh.m, INT_GRAIN / (j->sh.n * j->sh.k) + 1, mm_int_rows, j);
    else if (j->sh.nbatch >= parallel_threads() && j->sh.m * j->sh.n * j->sh.k <= SMALL_MM)
        parallel_for(j->sh.nbatch, 1, mm_batches, j);
    else
        mm_batches(j, 0, j->sh.nbatch);
}

onyx_status cpu_mm_shape_init(const tensor *A, const tensor *B, const tensor *Y, cpu_mm_shape *s) {
    int ra = A->rank, rb = B->rank;
    if (ra < 1 || rb < 1)
        return onyx_error(ONYX_ERR_SHAPE, "operand %c is a scalar, expected rank >= 1",
                          ra < 1 ? 'A' : 'B');
    s->m = ra > 1 ? A->dims[ra - 2] : 1;
    s->k = A->dims[ra - 1];
    s->n = rb > 1 ? B->dims[rb - 1] : 1;
    int64_t kb = rb > 1 ? B->dims[rb - 2] : B->dims[0];
    if (kb != s->k)
        return onyx_error(ONYX_ERR_SHAPE, "inner dims differ: %lld (A) vs %lld (B)",
                          (long long)s->k, (long long)kb);
    int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0;
    s->nb = ba > bb ? ba : bb;
    int64_t sa = s->m * s->k, sb = s->k * s->n;
    s->nbatch = 1;
    for (int i = s->nb - 1; i >= 0; i--) {
        int ia = i - (s->nb - ba), ib = i - (s->nb - bb);
        int64_t da = ia >= 0 ? A->dims[ia] : 1, db = ib >= 0 ? B->dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return onyx_error(ONYX_ERR_SHAPE, "batch dims %lld and %lld do not broadcast",
                              (long long)da, (long long)db);
        s->bdim[i] = da > db ? da : db;
        if (da == 0 || db == 0) s->bdim[i] = 0;
        s->astr[i] = da == 1 ? 0 : sa;
        s->bstr[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
        s->nbatch *= s->bdim[i];
    }
    if (Y->numel != s->nbatch * s->m * s->n)
        return onyx_error(ONYX_ERR_SHAPE, "output has %lld elements, expected %lld",
                          (long long)Y->numel, (long long)(s->nbatch * s->m * s->n));
    return ONYX_OK;
}

onyx_status cpu_matmul_run(const kernel_call *c) {
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1);
    tensor *Y = kernel_output(c, 0);
    if (A->dtype != B->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "inputs have types %s and %s, expected one type",
                          onyx_dtype_name(A->dtype), onyx_dtype_name(B->dtype));
    mm_job j = {.dtype = A->dtype};
    TRY(cpu_mm_shape_init(A, B, Y, &j.sh));
    int rb = B->rank;
    if (Y->numel == 0) return ONYX_OK;
    if (j.sh.k == 0) {
        memset(Y->data, 0, Y->nbytes); /* all-zero bits is 0 in every numeric type */
        return ONYX_OK;
    }
    TRY(check_blas_dims(rb <= 2 ? j.sh.m * j.sh.nbatch : j.sh.m, j.sh.n, j.sh.k));
    j.a = A->data;
    j.b = B->data;
    j.c = Y->data;
    if (is_half(A->dtype)) {
        float *f = NULL;
        TRY(scratch(c, A->numel + B->numel + Y->numel, &f));
        half_to_float(A->dtype, A->data, f, A->numel);
        half_to_float(A->dtype, B->data, f + A->numel, B->numel);
        j.a = f;
        j.b = f + A->numel;
        j.c = f + A->numel + B->numel;
        mm_run_job(&j, rb <= 2);
        float_to_half(A->dtype, j.c, Y->data, Y->numel);
        return ONYX_OK;
    }
    switch (A->dtype) {
    case ONYX_FLOAT: case ONYX_DOUBLE:
#define CASE(D, T) case D:
        CPU_FOR_INTS(CASE)
#undef CASE
        mm_run_job(&j, rb <= 2);
        return ONYX_OK;
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, which MatMul does not take",
                          onyx_dtype_name(A->dtype));
    }
}

/* ---- MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) in int32, computed as
 * sum_k a'[i,k] b[k,j] - zb[j] * sum_k a'[i,k] so that B is read as stored. Zero points are one
 * value, one per row of A / column of B, or that for each of A's / B's matrices ([D1, D2, M, 1]
 * and [D1, D2, 1, N]). Wraps on overflow (uint32 arithmetic). */

typedef enum zp_kind { ZP_ONE, ZP_EACH, ZP_EACH_MATRIX } zp_kind;

typedef struct mmi_job {
    mm_job j;
    const void *za, *zb;
    zp_kind za_kind, zb_kind;
} mmi_job;

static inline int64_t zp_index(zp_kind k, int64_t matrix, int64_t per, int64_t i) {
    return k == ZP_ONE ? 0 : k == ZP_EACH ? i : matrix * per + i;
}

#define DEFINE_MMI(NA, TA, NB, TB)                                                                 \
    static void mmi_##NA##_##NB(void *ctx, int64_t b, int64_t e) {                                 \
        const mmi_job *q = ctx;                                                                    \
        const mm_job *j = &q->j;                                                                   \
        for (int64_t t = b; t < e; t++) {                                                          \
            int64_t bt = t / j->sh.m, i = t % j->sh.m, ao, bo;                                     \
            cpu_mm_batch_offsets(&j->sh, bt, &ao, &bo);                                            \
            const TA *a = (const TA *)j->a + ao + i * j->sh.k;                                     \
            const TB *bm = (const TB *)j->b + bo;                                                  \
            uint32_t *c = (uint32_t *)j->c + t * j->sh.n;                                          \
            int64_t ma = ao / (j->sh.m * j->sh.k), mb = bo / (j->sh.k * j->sh.n);                  \
            int32_t za = q->za ? ((const TA *)q->za)[zp_index(q->za_kind, ma, j->sh.m, i)] : 0;    \
            uint32_t rs = 0;                                                                       \
            for (int64_t n = 0; n < j->sh.n; n++) c[n] = 0;                                        \
            for (int64_t p = 0; p < j->sh.k; p++) {                                                \
                uint32_t av = (uint32_t)((int32_t)a[p] - za);                                      \
                const TB *bp = bm + p * j->sh.n;                                                   \
                rs += av;                                                                          \
                for (int64_t n = 0; n < j->sh.n; n++) c[n] += av * (uint32_t)(int32_t)bp[n];       \
            }                                                                                      \
            if (!q->zb) continue;                                                                  \
            const TB *zb = q->zb;                                                                  \
            for (int64_t n = 0; n < j->sh.n; n++)                                                  \
                c[n] -= rs * (uint32_t)(int32_t)zb[zp_index(q->zb_kind, mb, j->sh.n, n)];          \
        }                                                                                          \
    }
DEFINE_MMI(u8, uint8_t, u8, uint8_t)
DEFINE_MMI(u8, uint8_t, s8, int8_t)
DEFINE_MMI(s8, int8_t, u8, uint8_t)
DEFINE_MMI(s8, int8_t, s8, int8_t)

/* How zero point input i (of operand x, `per` rows or columns per matrix) is laid out. */
static onyx_status zero_point_kind(const tensor *z, int i, const tensor *x, int64_t per,
                                   zp_kind *kind) {
    int64_t matrices = 1;
    for (int d = 0; d < x->rank - 2; d++) matrices *= x->dims[d];
    if (z->numel == 1) *kind = ZP_ONE;
    else if (z->rank == 1 && z->numel == per) *kind = ZP_EACH;
    else if (z->numel == matrices * per) *kind = ZP_EACH_MATRIX;
    else
        return onyx_error(ONYX_ERR_SHAPE, "input %d (zero point) has %lld elements, expected 1, "
                          "%lld or %lld", i, (long long)z->numel, (long long)per,
                          (long long)(matrices * per));
    return ONYX_OK;
}

onyx_status cpu_matmul_integer_run(const kernel_call *c) {
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1), *za = kernel_input(c, 2), *zb = kernel_input(c, 3);
    tensor *Y = kernel_output(c, 0);
    mmi_job q = {.j = {.dtype = ONYX_INT32}};
    TRY(cpu_mm_shape_init(A, B, Y, &q.j.sh));
    bool sa = A->dtype == ONYX_INT8, sb = B->dtype == ONYX_INT8;
    if ((!sa && A->dtype != ONYX_UINT8) || (!sb && B->dtype != ONYX_UINT8) ||
        Y->dtype != ONYX_INT32)
        return onyx_error(ONYX_ERR_SHAPE, "types %s x %s -> %s, expected (u)int8 x (u)int8 -> "
                          "int32", onyx_dtype_name(A->dtype), onyx_dtype_name(B->dtype),
                          onyx_dtype_name(Y->dtype));
    if (za) {
        if (za->dtype != A->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input 2 (a_zero_point) has type %s, expected %s",
                              onyx_dtype_name(za->dtype), onyx_dtype_name(A->dtype));
        TRY(zero_point_kind(za, 2, A, q.j.sh.m, &q.za_kind));
        q.za = za->data;
    }
    if (zb) {
        if (zb->dtype != B->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input 3 (b_zero_point) has type %s, expected %s",
                              onyx_dtype_name(zb->dtype), onyx_dtype_name(B->dtype));
        TRY(zero_point_kind(zb, 3, B, q.j.sh.n, &q.zb_kind));
        q.zb = zb->data;
    }
    if (Y->numel == 0) return ONYX_OK;
    if (q.j.sh.k == 0) {
        /* empty sums; the rows' matrix index (offset / (m * k)) would divide by zero */
        memset(Y->data, 0, Y->nbytes);
        return ONYX_OK;
    }
    q.j.a = A->data;
    q.j.b = B->data;
    q.j.c = Y->data;
    void (*fn)(void *, int64_t, int64_t) = sa ? (sb ? mmi_s8_s8 : mmi_s8_u8)
                                              : (sb ? mmi_u8_s8 : mmi_u8_u8);
    parallel_for(q.j.sh.nbatch * q.j.sh.m, INT_GRAIN / (q.j.sh.n * q.j.sh.k + 1) + 1, fn, &q);
    return ONYX_OK;
}

/* ---- Gemm */

typedef struct gemm_job {
    bool ta, tb;
    int64_t m, n, k;
    const void *a, *b;
    void *y;
} gemm_job;

/* Integer rows [b, e). */
static void gemm_int_rows(onyx_dtype d, const gemm_job *g, int64_t b, int64_t e) {
    switch (d) {
#define CASE(D, T)                                                                                 \
    case D: D##_mm(g->ta, g->tb, g->m, g->n, g->k, g->a, g->b, g->y, b, e); break;
        CPU_FOR_INTS(CASE)
#undef CASE
    default: break;
    }
}

typedef struct gemm_int_ctx {
    onyx_dtype dtype;
    const gemm_job *g;
} gemm_int_ctx;

static void gemm_int_task(void *ctx, int64_t b, int64_t e) {
    const gemm_int_ctx *x = ctx;
    gemm_int_rows(x->dtype, x->g, b, e);
}

/* Fills y[M,N] (float or double, by `dbl`) with C broadcast unidirectionally. */
static void bias_fill(const tensor *C, int64_t m, int64_t n, void *y, bool dbl) {
    int64_t cm = C->rank == 2 ? C->dims[0] : 1, cn = C->rank >= 1 ? C->dims[C->rank - 1] : 1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double v = real_at(C, (cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j));
            if (dbl) ((double *)y)[i * n + j] = v;
            else ((float *)y)[i * n + j] = (float)v;
        }
}

onyx_status cpu_gemm_run(const kernel_call *c) {
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1), *C = kernel_input(c, 2);
    tensor *Y = kernel_output(c, 0);
    gemm_job g = {.ta = attr_int(c->node, "transA", 0) != 0,
                  .tb = attr_int(c->node, "transB", 0) != 0};
    float alpha = attr_float(c->node, "alpha", 1.0f), beta = attr_float(c->node, "beta", 1.0f);
    if (B->dtype != A->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "inputs have types %s and %s, expected one type",
                          onyx_dtype_name(A->dtype), onyx_dtype_name(B->dtype));
    if (A->rank != 2 || B->rank != 2)
        return onyx_error(ONYX_ERR_SHAPE, "inputs have ranks %d and %d, expected 2 and 2",
                          A->rank, B->rank);
    g.m = A->dims[g.ta ? 1 : 0];
    g.k = A->dims[g.ta ? 0 : 1];
    g.n = B->dims[g.tb ? 0 : 1];
    if (B->dims[g.tb ? 1 : 0] != g.k)
        return onyx_error(ONYX_ERR_SHAPE, "inner dims differ: A' has %lld columns, B' has %lld "
                          "rows", (long long)g.k, (long long)B->dims[g.tb ? 1 : 0]);
    if (Y->rank != 2 || Y->dims[0] != g.m || Y->dims[1] != g.n)
        return onyx_error(ONYX_ERR_SHAPE, "output is not [%lld,%lld]", (long long)g.m,
                          (long long)g.n);
    if (C) {
        if (C->dtype != A->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input 2 (C) has type %s, expected %s",
                              onyx_dtype_name(C->dtype), onyx_dtype_name(A->dtype));
        int64_t cm = C->rank == 2 ? C->dims[0] : 1, cn = C->rank >= 1 ? C->dims[C->rank - 1] : 1;
        if (C->rank > 2 || (cm != 1 && cm != g.m) || (cn != 1 && cn != g.n))
            return onyx_error(ONYX_ERR_SHAPE, "input 2 (C) of rank %d (%lldx%lld) does not "
                              "broadcast to [%lld,%lld]", C->rank, (long long)cm, (long long)cn,
                              (long long)g.m, (long long)g.n);
        if (beta == 0) C = NULL;
    }
    if (Y->numel == 0) return ONYX_OK;
    TRY(check_blas_dims(g.m, g.n, g.k));
    int64_t mn = g.m * g.n;

    if (dtype_is_int(A->dtype)) {
        g.a = A->data;
        g.b = B->data;
        g.y = Y->data;
        gemm_int_ctx x = {A->dtype, &g};
        parallel_for(g.m, INT_GRAIN / (g.n * g.k + 1) + 1, gemm_int_task, &x);
        if (alpha == 1 && !C) return ONYX_OK;
        int64_t cm = C && C->rank == 2 ? C->dims[0] : 1;
        int64_t cn = C && C->rank >= 1 ? C->dims[C->rank - 1] : 1;
        switch (A->dtype) {
#define CASE(D, T)                                                                                 \
    case D: D##_scale(Y->data, C ? C->data : NULL, g.m, g.n, cm, cn, alpha, beta); break;
            CPU_FOR_INTS(CASE)
#undef CASE
        default: break;
        }
        return ONYX_OK;
    }

    bool dbl = A->dtype == ONYX_DOUBLE;
    void *y = Y->data;
    const void *a = A->data, *b = B->data;
    if (is_half(A->dtype)) {
        float *f = NULL;
        TRY(scratch(c, A->numel + B->numel + mn, &f));
        half_to_float(A->dtype, A->data, f, A->numel);
        half_to_float(A->dtype, B->data, f + A->numel, B->numel);
        a = f;
        b = f + A->numel;
        y = f + A->numel + B->numel;
    } else if (A->dtype != ONYX_FLOAT && !dbl) {
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, which Gemm does not take",
                          onyx_dtype_name(A->dtype));
    }
    if (C) bias_fill(C, g.m, g.n, y, dbl);
    if (g.k == 0) {
        /* no product: Y = beta * C, and BLAS is not called with an empty inner dim */
        for (int64_t i = 0; i < mn; i++) {
            if (dbl) ((double *)y)[i] = C ? beta * ((double *)y)[i] : 0.0;
            else ((float *)y)[i] = C ? beta * ((float *)y)[i] : 0.0f;
        }
    } else if (dbl) {
        blas_f64(g.ta, g.tb, g.m, g.n, g.k, alpha, a, b, C ? beta : 0.0, y);
    } else {
        blas_f32(g.ta, g.tb, g.m, g.n, g.k, alpha, a, b, C ? beta : 0.0f, y);
    }
    if (is_half(A->dtype)) float_to_half(A->dtype, y, Y->data, mn);
    return ONYX_OK;
}
