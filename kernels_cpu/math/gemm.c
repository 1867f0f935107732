/* CPU kernels of MatMul and Gemm. Float products whose shapes prepare knows run on a oneDNN
 * matmul primitive made at prepare (constant B packed once into its layout); the rest goes
 * through blas.h: float and double (float16/bfloat16 through float copies either way), integers
 * through a plain loop that wraps as ONNX does. MatMulInteger is in matmul_integer.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec_run.h"
#include "core/fuse_chain.h"
#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/common/dnnl_util.h"
#include "kernels_cpu/common/post_vmath.h"
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
    cpu_half_to_float_n(d, x, y, n);
}

static void float_to_half(onyx_dtype d, const float *x, uint16_t *y, int64_t n) {
    cpu_float_to_half_n(d, x, y, n);
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

onyx_status cpu_mm_shape_init(const op_params *params, const tensor *A, const tensor *B,
                              const tensor *Y, cpu_mm_shape *s) {
    const geom_matmul *g = op_params_matmul(params);
    if (!g) return onyx_error(ONYX_ERR_RUNTIME, "the plan handed the kernel no product geometry");
    int64_t ka = A->rank >= 1 ? A->dims[A->rank - 1] : -1;
    int64_t kb = B->rank >= 2 ? B->dims[B->rank - 2] : B->rank == 1 ? B->dims[0] : -1;
    if (ka != g->k || kb != g->k || A->numel != g->a_batches * g->m * g->k ||
        B->numel != g->b_batches * g->k * g->n)
        return onyx_error(ONYX_ERR_RUNTIME, "the plan's product geometry ([%lld,%lld] @ "
                          "[%lld,%lld]) is for other operands", (long long)g->m, (long long)g->k,
                          (long long)g->k, (long long)g->n);
    if (Y->numel != g->nbatch * g->m * g->n)
        return onyx_error(ONYX_ERR_SHAPE, "output has %lld elements, expected %lld",
                          (long long)Y->numel, (long long)(g->nbatch * g->m * g->n));
    *s = *g;
    return ONYX_OK;
}

/* MatMul through blas.h: every type, any shapes. */
static onyx_status matmul_generic(const kernel_call *c) {
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1);
    tensor *Y = kernel_output(c, 0);
    if (A->dtype != B->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "inputs have types %s and %s, expected one type",
                          onyx_dtype_name(A->dtype), onyx_dtype_name(B->dtype));
    mm_job j = {.dtype = A->dtype};
    TRY(cpu_mm_shape_init(c->params, A, B, Y, &j.sh));
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

/* Gemm through blas.h: every type, every attribute. */
static onyx_status gemm_generic(const kernel_call *c) {
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

/* ---- oneDNN matmul primitives for the float products (float16/bfloat16 on float copies) whose
 * shapes prepare knows. dnnl_sgemm mallocs its packing buffers on every call (about 90 MB in
 * 440 blocks per BERT-base run); a primitive made at prepare with the user scratchpad takes its
 * working memory from the run's scratch, so a run allocates nothing, and a constant B is
 * reordered once into the layout the primitive picks (format `any`), then only read. The packed
 * B goes through kernel_shared: the layout oneDNN picks does not depend on M (checked for M from
 * 1 to 2048), so the plans of other batch or sequence sizes reuse it. */

typedef struct mm_prim {
    dnnl_primitive_t prim;           /* NULL: the generic path (or gemv) */
    /* a single row times a constant B runs on B packed into panels instead (see gemv_run),
     * shared like `packed` */
    const float *gemv;
    int64_t k, panel_stride;         /* gemv: floats from one panel of B to the next */
    int n_post;                      /* gemv: the chain's post-ops, applied to the N results */
    fuse_op post[FUSE_MAX_OPS];
    onyx_dtype dtype;                /* float, float16 or bfloat16 */
    /* the shapes it was made for (a run with others takes the generic path) */
    int a_rank, b_rank, c_rank;
    int64_t a_dims[ONYX_MAX_RANK], b_dims[ONYX_MAX_RANK], c_dims[2];
    const void *packed;              /* constant B in the primitive's layout (shared, borrowed) */
    /* rows known only at run (a generic plan, core/exec_run.c): B packed at prepare (md_wei its
     * layout), a primitive made per call for its rows, or the panels (gemv) for one row */
    bool run_rows;
    const float *row_panels;
    fuse_chain *rows_chain;          /* the chain applied per call (owned copy), or NULL */
    int64_t an, bn, yn, n;           /* elements of A, B, Y; N */
    /* Gemm's C: a bias of N elements (C itself, or beta * C broadcast into scratch when
     * bias_own), or (sum) for a C with rows beta * C written into Y before a sum post-op adds
     * the product to it */
    bool bias, bias_own, sum;
    float beta;
    /* MatMul with the fusion pass's chain (core/fuse.h): its bias (N floats, owned) and whether
     * it ends in a sum post-op over the fused node's input 3 */
    bool fused, chain_sum;
    float *chain_bias;
    bool a_bf16;                     /* A converted to bfloat16 per run (off_a16), B packed so */
    /* the chain's last op, applied by vmath to the dense Y after the primitive (post_vmath.h) */
    bool tail;
    fuse_op tail_op;
    /* owned descriptors (NULL when unused), destroyed with the primitive (drop_prim) */
    dnnl_memory_desc_t md_src, md_wei, md_bias, md_dst, md_pad;
    size_t pad_size;
    /* byte offsets of a run's buffers in its scratch (64-byte aligned), and the total */
    size_t off_a, off_b, off_y, off_bias, off_pad, off_a16, scratch_bytes;
} mm_prim;

/* A run context's memory objects for the primitive (handles set per run). */
typedef struct mm_fork {
    const mm_prim *p;
    dnnl_memory_t src, wei, bias, dst, pad;
} mm_fork;

/* The product as oneDNN sees it: nd dims (batch dims, then rows and columns), strides of A and
 * B as stored. */
typedef struct mm_geom {
    int nd;
    dnnl_dims_t a, b, y, as, bs, ys;
    const tensor *b_const;           /* a constant 2-D B to pack once, or NULL (bound per run) */
    const_dnnl_memory_desc_t b_packed; /* or B packed before in this layout (rows_run) */
    bool take_ref;                   /* oneDNN's reference kernel too: B packed has no other path */
    float alpha;                     /* folded into the packed B */
    bool bias, sum;
    const fuse_chain *chain;         /* post-ops, or NULL */
    bool bf16;                       /* A and the packed B in bfloat16 (A dense, B constant) */
} mm_geom;

static void dense_strides(int nd, const dnnl_dim_t *dims, dnnl_dim_t *strides) {
    dnnl_dim_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

static bool region(size_t *total, size_t *off, size_t bytes) {
    bytes = (bytes + 63) / 64 * 64;
    if (bytes > SIZE_MAX / 4 || *total > SIZE_MAX / 4 - bytes) return false;
    *off = *total;
    *total += bytes;
    return true;
}

/* B's layout as key bytes; ONYX_ERR_UNSUPPORTED for a layout other than a blocked one, which
 * oneDNN's CPU matmul does not pick. */
static onyx_status md_layout_of(const_dnnl_memory_desc_t md, cpu_dnnl_layout *l) {
    if (!cpu_dnnl_layout_of(md, l))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "oneDNN: matrix B's layout is not a blocked one");
    return ONYX_OK;
}

/* What packs a constant B: everything the packed bytes depend on is in the key. */
typedef struct pack_key {
    char tag[8];                     /* the rep's cache is shared with other kernels */
    const void *data;                /* the constant's buffer (stable while the rep lives) */
    int32_t dtype;
    float alpha;
    cpu_dnnl_layout user, wei;             /* B as stored ([K, N], or [N, K] read transposed) and the
                                        primitive's layout */
} pack_key;

typedef struct pack_ctx {
    const tensor *b;
    const pack_key *key;
    const_dnnl_memory_desc_t user, wei; /* the descriptors the key's layouts came from */
} pack_ctx;

/* A packed B and the two layouts between which it was reordered (kept to rebuild B from it). */
typedef struct packed_b {
    void *buf;
    dnnl_memory_desc_t user, wei;
} packed_b;

static void pack_release(void *obj) {
    packed_b *pb = obj;
    if (!pb) return;
    free(pb->buf);
    if (pb->user) dnnl_memory_desc_destroy(pb->user);
    if (pb->wei) dnnl_memory_desc_destroy(pb->wei);
    free(pb);
}

static onyx_status pack_make(void *ctx, void **obj) {
    const pack_ctx *x = ctx;
    const tensor *b = x->b;
    onyx_status st = ONYX_OK;
    float *tmp = NULL;
    const void *src = b->data;
    packed_b *pb = calloc(1, sizeof *pb);
    if (!pb) return onyx_oom("packed matrix B");
    if (b->dtype != ONYX_FLOAT || x->key->alpha != 1.0f) {
        if (!(tmp = malloc((size_t)(b->numel > 0 ? b->numel : 1) * sizeof *tmp))) {
            st = onyx_oom("packed matrix B");
            goto done;
        }
        if (b->dtype == ONYX_FLOAT) memcpy(tmp, b->data, (size_t)b->numel * sizeof *tmp);
        else half_to_float(b->dtype, b->data, tmp, b->numel);
        for (int64_t i = 0; i < b->numel; i++) tmp[i] *= x->key->alpha;
        src = tmp;
    }
    if (!(pb->buf = cpu_dnnl_alloc(dnnl_memory_desc_get_size(x->wei)))) {
        st = onyx_oom("packed matrix B");
        goto done;
    }
    CHECK(cpu_dnnl_check(dnnl_memory_desc_clone(&pb->user, x->user), "copying matrix B's layout"));
    CHECK(cpu_dnnl_check(dnnl_memory_desc_clone(&pb->wei, x->wei), "copying matrix B's layout"));
    CHECK(cpu_dnnl_reorder_once(x->user, src, x->wei, pb->buf));
    *obj = pb;
    pb = NULL;
done:
    pack_release(pb);
    free(tmp);
    return st;
}

/* B as stored, from a packed float B made without scaling: the reorder back, exact. */
static onyx_status pack_unpack(const void *obj, void *dst) {
    const packed_b *pb = obj;
    return cpu_dnnl_reorder_once(pb->wei, pb->buf, pb->user, dst);
}

static onyx_status md_strided(dnnl_memory_desc_t *md, int nd, const dnnl_dim_t *dims,
                              const dnnl_dim_t *strides, dnnl_data_type_t dt) {
    return cpu_dnnl_check(dnnl_memory_desc_create_with_strides(md, nd, dims, dt, strides),
                          "describing a matrix");
}

/* Destroys m's primitive and descriptors, leaving m without a primitive. */
static void drop_prim(mm_prim *m) {
    if (m->prim) dnnl_primitive_destroy(m->prim);
    dnnl_memory_desc_t *all[] = {&m->md_src, &m->md_wei, &m->md_bias, &m->md_dst, &m->md_pad};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (*all[i]) dnnl_memory_desc_destroy(*all[i]);
        *all[i] = NULL;
    }
    m->prim = NULL;
    m->pad_size = 0;
}

/* What oneDNN is asked for g: the operands' descriptors (b: the packed B's layout, `any`, for a
 * constant B; b_user: B as stored), the post-ops' list and the primitive descriptor, and tail:
 * the chain's op vmath applies after the primitive (post_vmath.h), or -1. */
typedef struct mm_desc {
    dnnl_memory_desc_t a, b, b_user, y, bias;
    dnnl_primitive_desc_t pd;
    int tail;
} mm_desc;

static void desc_drop(mm_desc *d) {
    dnnl_memory_desc_t *all[] = {&d->a, &d->b, &d->b_user, &d->y, &d->bias};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (*all[i]) dnnl_memory_desc_destroy(*all[i]);
        *all[i] = NULL;
    }
    if (d->pd) dnnl_primitive_desc_destroy(d->pd);
    d->pd = NULL;
}

/* Describes g to oneDNN (d filled; the caller drops it): ONYX_ERR_UNSUPPORTED where oneDNN has
 * no primitive for it but its reference one. The rule prepare (mm_build) and the fusion pass's
 * query (prim_takes_chain) both follow: oneDNN answers at the primitive descriptor, before
 * anything is built or packed. */
static onyx_status mm_describe(const mm_geom *g, mm_desc *d) {
    onyx_status st = ONYX_OK;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_engine_t eng;
    memset(d, 0, sizeof *d);
    d->tail = -1;
    CHECK(cpu_dnnl_engine(&eng));
    /* bfloat16 A: dense strides, so the same layout in half the bytes */
    CHECK(md_strided(&d->a, g->nd, g->a, g->as, g->bf16 ? dnnl_bf16 : dnnl_f32));
    CHECK(md_strided(&d->b_user, g->nd, g->b, g->bs, dnnl_f32));
    if (g->b_packed)
        CHECK(cpu_dnnl_check(dnnl_memory_desc_clone(&d->b, g->b_packed), "copying B's layout"));
    else if (g->b_const)
        CHECK(cpu_dnnl_check(dnnl_memory_desc_create_with_tag(&d->b, g->nd, g->b,
                                                              g->bf16 ? dnnl_bf16 : dnnl_f32,
                                                              dnnl_format_tag_any),
                             "describing matrix B"));
    /* B bound per run is read as stored */
    const_dnnl_memory_desc_t b_prim = d->b ? d->b : d->b_user;
    CHECK(md_strided(&d->y, g->nd, g->y, g->ys, dnnl_f32));
    /* an exp-based activation last, Y dense: vmath applies it after the primitive */
    dnnl_dim_t dense[DNNL_MAX_NDIMS];
    dense_strides(g->nd, g->y, dense);
    d->tail = g->chain && !memcmp(dense, g->ys, sizeof(dnnl_dim_t) * (size_t)g->nd)
                  ? cpu_post_vmath_tail(g->chain)
                  : -1;
    if (g->bias) {
        int64_t bd[DNNL_MAX_NDIMS];
        for (int i = 0; i < g->nd; i++) bd[i] = i == g->nd - 1 ? g->y[i] : 1;
        CHECK(cpu_dnnl_md_plain(&d->bias, g->nd, bd, dnnl_f32));
    }
    CHECK(cpu_dnnl_attr(&attr));
    if (g->sum || g->chain) {
        CHECK(cpu_dnnl_check(dnnl_post_ops_create(&po), "creating post-ops"));
        if (g->sum)
            CHECK(cpu_dnnl_check(dnnl_post_ops_append_sum(po, 1.f, 0, dnnl_data_type_undef),
                                 "adding a post-op"));
        if (g->chain && g->chain->has_in_scale) /* the operands' factors, before the rest */
            CHECK(cpu_dnnl_check(dnnl_post_ops_append_eltwise(po, dnnl_eltwise_linear,
                                                               g->chain->in_scale, 0.f),
                                 "adding a post-op"));
        if (g->chain)
            CHECK(cpu_dnnl_post_ops_n(g->chain, d->tail >= 0 ? d->tail : g->chain->n, po));
        CHECK(cpu_dnnl_check(dnnl_primitive_attr_set_post_ops(attr, po), "setting post-ops"));
    }
    CHECK(cpu_dnnl_check(dnnl_guard_matmul_pd(&d->pd, eng, d->a, b_prim,
                                              g->bias ? d->bias : NULL, d->y, attr),
                         "creating the product"));
    /* oneDNN's reference matmul is far slower than dnnl_sgemm: leave such products to it */
    const char *impl = NULL;
    dnnl_primitive_desc_query(d->pd, dnnl_query_impl_info_str, 0, &impl);
    if (impl && !strncmp(impl, "ref", 3) && !g->take_ref)
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "no optimized matmul for this product");
done:
    if (po) dnnl_post_ops_destroy(po);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (st != ONYX_OK) desc_drop(d);
    return st;
}

/* Makes m's primitive for g (and packs B). ONYX_ERR_UNSUPPORTED and other refusals leave the node
 * to the generic path (the caller decides); m is left without a primitive on failure. */
static onyx_status mm_build(const kernel_prep *kp, const mm_geom *g, mm_prim *m) {
    onyx_status st = ONYX_OK;
    mm_desc d;
    CHECK(mm_describe(g, &d));
    /* the weights' layout outlives pd: m keeps a copy */
    const_dnnl_memory_desc_t wei = dnnl_primitive_desc_query_md(d.pd, dnnl_query_weights_md, 0);
    if (!wei) {
        st = onyx_error(ONYX_ERR_RUNTIME, "oneDNN: the product has no weights descriptor");
        goto done;
    }
    CHECK(cpu_dnnl_check(dnnl_memory_desc_clone(&m->md_wei, wei), "copying matrix B's layout"));
    m->pad_size = cpu_dnnl_scratchpad(d.pd, &m->md_pad);
    if (m->pad_size == SIZE_MAX) {
        m->pad_size = 0;
        st = onyx_oom("matmul scratchpad descriptor");
        goto done;
    }
    CHECK(cpu_dnnl_check(dnnl_guard_primitive_create(&m->prim, d.pd), "creating the product"));
    m->md_src = d.a;
    d.a = NULL;
    m->md_dst = d.y;
    d.y = NULL;
    m->tail = d.tail >= 0;
    if (m->tail) m->tail_op = g->chain->ops[d.tail];
    if (g->bias) {
        m->md_bias = d.bias;
        d.bias = NULL;
    }
    m->bias = g->bias;
    m->sum = g->sum;
    m->a_bf16 = g->bf16;
    if (g->b_const) {
        pack_key key;
        memset(&key, 0, sizeof key); /* padding bytes are part of the key */
        memcpy(key.tag, "matmulB", 8);
        key.data = g->b_const->data;
        key.dtype = (int32_t)g->b_const->dtype;
        key.alpha = g->alpha;
        CHECK(md_layout_of(d.b_user, &key.user));
        CHECK(md_layout_of(m->md_wei, &key.wei));
        pack_ctx ctx = {g->b_const, &key, d.b_user, m->md_wei};
        /* the model's B may then be handed back (core/kernel.h): the packed one holds it */
        bool exact = g->b_const->dtype == ONYX_FLOAT && g->alpha == 1.0f && !g->bf16;
        void *obj = NULL;
        CHECK(kernel_shared_weight(kp, 1, &key, sizeof key, pack_make, pack_release,
                                   exact ? pack_unpack : NULL, &ctx, &obj));
        m->packed = ((const packed_b *)obj)->buf;
    }
    m->an = m->bn = m->yn = 1;
    for (int i = 0; i < g->nd; i++) {
        m->an *= g->a[i];
        m->bn *= g->b[i];
        m->yn *= g->y[i];
    }
    m->n = g->y[g->nd - 1];
    bool half = is_half(m->dtype), ok = true;
    size_t t = 0;
    ok &= region(&t, &m->off_a, half ? (size_t)m->an * sizeof(float) : 0);
    ok &= region(&t, &m->off_b, half && !m->packed ? (size_t)m->bn * sizeof(float) : 0);
    ok &= region(&t, &m->off_y, half ? (size_t)m->yn * sizeof(float) : 0);
    ok &= region(&t, &m->off_bias, m->bias_own ? (size_t)m->n * sizeof(float) : 0);
    ok &= region(&t, &m->off_pad, m->pad_size);
    ok &= region(&t, &m->off_a16, m->a_bf16 ? (size_t)m->an * sizeof(uint16_t) : 0);
    if (!ok) {
        st = onyx_oom("matmul buffers");
        goto done;
    }
    m->scratch_bytes = t;
done:
    desc_drop(&d);
    if (st != ONYX_OK) drop_prim(m);
    return st;
}

/* ---- a single row times a constant B (a classifier's Gemm or Linear at batch 1, a decoder's
 * step): the product only streams B from memory once, which oneDNN's matmul (brgemm over B
 * packed by 64 columns) does at about 30 GB/s here and a plain loop over the same panels at
 * 45-50 GB/s, as fast as onnxruntime's (eight 1280 x 1280 products in a row, B from memory: 1.7
 * ms against 1.2). The panels are the primitive's own packed B where oneDNN lays it out as
 * panels of GEMV_PANEL columns, [ceil(N / 64)][K padded][64] (inner blocks [kb on K][64 on N]):
 * the plans for one row and for many then share one packed copy of the weight (through
 * kernel_shared), and a decoder holds each weight once more, not twice. Elsewhere the
 * primitive runs the row. Bias and post-ops are applied to the N results. */
enum { GEMV_PANEL = 64 };

/* Whether oneDNN's layout of B is panels of GEMV_PANEL columns, K rows each, one after
 * another; *panel_stride: floats from one panel to the next. */
static bool gemv_layout(const_dnnl_memory_desc_t md, int64_t *panel_stride) {
    cpu_dnnl_layout l;
    if (!cpu_dnnl_layout_of(md, &l) || l.data_type != dnnl_f32 || l.ndims != 2 ||
        l.offset0 != 0 || l.inner_nblks != 2 || l.inner_idxs[0] != 0 || l.inner_idxs[1] != 1 ||
        l.inner_blks[1] != GEMV_PANEL || l.strides[0] != l.inner_blks[0] * GEMV_PANEL ||
        l.strides[1] < l.padded_dims[0] * GEMV_PANEL)
        return false;
    *panel_stride = l.strides[1];
    return true;
}

/* Whether the chain's post-ops are all ones gemv_post applies. */
static bool gemv_chain_ok(const fuse_chain *c) {
    if (!c) return true;
    if (c->has_in_scale || c->view_rank[0] || c->view_rank[1] || c->view_rank[2]) return false;
    for (int i = 0; i < c->n; i++)
        if (c->ops[i].kind == FUSE_BATCHNORM || c->ops[i].kind == FUSE_SCALE) return false;
    return true;
}

static bool gemv_fits(const mm_geom *g, const mm_prim *m) {
    return m->dtype == ONYX_FLOAT && g->b_const && g->b_const->dtype == ONYX_FLOAT &&
           g->nd == 2 && g->y[0] == 1 && !g->sum && g->as[1] == 1 && g->y[1] >= GEMV_PANEL &&
           gemv_chain_ok(g->chain);
}

/* m runs the row on the primitive's packed B where its layout is panels (gemv_layout); else m
 * is left as it was, for the primitive. */
static onyx_status gemv_prepare(const kernel_prep *kp, const mm_geom *g, mm_prim *m) {
    mm_geom plain = *g; /* the product alone: B's layout does not depend on the post-ops */
    plain.chain = NULL;
    plain.bias = plain.sum = false;
    mm_prim probe = {.dtype = ONYX_FLOAT};
    onyx_status st = mm_build(kp, &plain, &probe);
    int64_t stride = 0;
    bool panels = st == ONYX_OK && probe.packed && gemv_layout(probe.md_wei, &stride);
    const float *packed = probe.packed; /* the rep's shared cache holds it */
    drop_prim(&probe);
    if (st == ONYX_ERR_NO_MEMORY) return st;
    if (st != ONYX_OK) onyx_error_clear();
    if (!panels) return ONYX_OK;
    m->gemv = packed;
    m->panel_stride = stride;
    m->k = g->b[0];
    m->n = g->b[1];
    m->an = m->k;
    m->yn = m->n;
    m->bias = g->bias;
    if (g->chain) {
        m->n_post = g->chain->n;
        memcpy(m->post, g->chain->ops, sizeof(fuse_op) * (size_t)g->chain->n);
    }
    return ONYX_OK;
}

typedef struct gemv_job {
    const float *x, *panels;
    float *y;
    int64_t k, n, panel_stride;
} gemv_job;

/* Accumulators in registers (16 lanes each: AVX-512 in the x86-64-v4 clone, halves or quarters
 * elsewhere); a plain array of 64 sums went through memory on every k. */
typedef float gemv_vec __attribute__((vector_size(64)));

CPU_CLONES static void gemv_panels(void *ctx, int64_t begin, int64_t end) {
    const gemv_job *j = ctx;
    for (int64_t p = begin; p < end; p++) {
        const float *w = j->panels + p * j->panel_stride;
        gemv_vec a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, w0, w1, w2, w3;
        for (int64_t k = 0; k < j->k; k++, w += GEMV_PANEL) {
            float xv = j->x[k];
            memcpy(&w0, w, sizeof w0);
            memcpy(&w1, w + 16, sizeof w1);
            memcpy(&w2, w + 32, sizeof w2);
            memcpy(&w3, w + 48, sizeof w3);
            a0 += xv * w0;
            a1 += xv * w1;
            a2 += xv * w2;
            a3 += xv * w3;
        }
        float acc[GEMV_PANEL];
        memcpy(acc, &a0, sizeof a0);
        memcpy(acc + 16, &a1, sizeof a1);
        memcpy(acc + 32, &a2, sizeof a2);
        memcpy(acc + 48, &a3, sizeof a3);
        int64_t first = p * GEMV_PANEL, cnt = j->n - first < GEMV_PANEL ? j->n - first : GEMV_PANEL;
        memcpy(j->y + first, acc, (size_t)cnt * sizeof *acc);
    }
}

/* The post-ops on one value, as oneDNN's eltwise post-ops compute them (dnnl_util.c). */
static float gemv_post(const fuse_op *op, float v, float addend) {
    switch (op->kind) {
    case FUSE_RELU: return v > 0.f ? v : v * op->alpha;
    case FUSE_CLIP: return v < op->alpha ? op->alpha : v > op->beta ? op->beta : v;
    case FUSE_SIGMOID: return 1.f / (1.f + expf(-v));
    case FUSE_TANH: return tanhf(v);
    case FUSE_HARDSIGMOID: {
        float h = op->alpha * v + op->beta;
        return h < 0.f ? 0.f : h > 1.f ? 1.f : h;
    }
    case FUSE_SWISH: return v / (1.f + expf(-op->alpha * v));
    case FUSE_HARDSWISH: {
        float h = v / 6.f + 0.5f;
        return v * (h < 0.f ? 0.f : h > 1.f ? 1.f : h);
    }
    case FUSE_GELU: /* 1 + tanh(u) as 2 / (1 + e^-2u), 1 + erf(x) as erfc(-x): no cancellation
                     * in the negative tail */
        if (op->alpha != 0.f)
            return v / (1.f + expf(-1.5957691216f * (v + 0.044715f * v * v * v)));
        return 0.5f * v * erfcf(-v * 0.70710678f);
    case FUSE_SUM: return v + addend;
    case FUSE_LINEAR: return op->alpha * v;
    default: return v; /* FUSE_SHIFT: the bias, added before */
    }
}

/* One row on `panels` (m->gemv, or rows_run's m->row_panels), then the bias and post-ops. */
static onyx_status gemv_run(const mm_prim *m, const kernel_call *c, const float *panels,
                            const tensor *A, const tensor *C, tensor *Y) {
    float *y = Y->data;
    const float *addend = NULL;
    if (m->chain_sum) {
        const tensor *t = kernel_input(c, 3);
        if (!t || t->numel != m->n || t->dtype != ONYX_FLOAT)
            return onyx_error(ONYX_ERR_RUNTIME, "fused MatMul: the addend is not Y's shape");
        addend = t->data;
        if (addend == y) { /* Y took the addend's bytes: keep it before the products land */
            void *copy;
            TRY(kernel_scratch(c, (size_t)m->n * sizeof(float) + 1, &copy));
            memcpy(copy, addend, (size_t)m->n * sizeof(float));
            addend = copy;
        }
    }
    gemv_job j = {A->data, panels, y, m->k, m->n, m->panel_stride};
    parallel_for((m->n + GEMV_PANEL - 1) / GEMV_PANEL, 1, gemv_panels, &j);
    float beta = m->bias_own ? m->beta : 1.f;
    for (int64_t i = 0; i < m->n; i++) {
        float v = y[i];
        if (m->chain_bias) v += m->chain_bias[i];
        else if (m->bias) v += beta * (float)real_at(C, C->numel == 1 ? 0 : i);
        for (int o = 0; o < m->n_post; o++) v = gemv_post(&m->post[o], v, addend ? addend[i] : 0.f);
        y[i] = v;
    }
    return ONYX_OK;
}

static bool prim_dtype(onyx_dtype d) { return d == ONYX_FLOAT || is_half(d); }

static bool known(const kernel_prep *p, int i) {
    const type_info *t = i < p->n_in ? p->in_type[i] : NULL;
    return t && t->kind == ONYX_VALUE_TENSOR && type_is_static(t);
}

/* Builds m for g when oneDNN takes it; a refusal (or a failed pack) leaves m without a
 * primitive and the node to the generic path, which says what is wrong at run if anything is.
 * oneDNN sizes its work at creation for the threads of the caller's TBB arena: prepare runs in
 * the rep's, as the runs do. */
static onyx_status mm_try(const kernel_prep *kp, const mm_geom *g, mm_prim *m) {
    if (g->nd > DNNL_MAX_NDIMS) return ONYX_OK;
    onyx_status st = mm_build(kp, g, m);
    if (st == ONYX_ERR_NO_MEMORY) return st;
    if (st != ONYX_OK) onyx_error_clear();
    return ONYX_OK;
}

static void keep_shape(int rank, const int64_t *dims, int *r, int64_t *d) {
    *r = rank;
    memcpy(d, dims, sizeof(int64_t) * (size_t)rank);
}

/* Y = A @ B as oneDNN sees it: B without batch dims makes A's batch dims rows of one taller
 * product (and may be packed when constant); otherwise both get the broadcast batch dims (a
 * rank-1 operand as a single row or column). False where the primitive does not apply. */
static bool matmul_geom(const type_info *A, const type_info *B, const tensor *bval, bool batched,
                        mm_geom *g) {
    int ra = A->rank, rb = B->rank;
    if (ra < 1 || rb < 1) return false;
    int64_t m = ra > 1 ? A->dims[ra - 2] : 1, k = A->dims[ra - 1];
    int64_t n = rb > 1 ? B->dims[rb - 1] : 1, kb = rb > 1 ? B->dims[rb - 2] : B->dims[0];
    if (kb != k || m <= 0 || n <= 0 || k <= 0) return false;
    int64_t abatch = 1, bbatch = 1;
    for (int i = 0; i < ra - 2; i++) abatch *= A->dims[i];
    for (int i = 0; i < rb - 2; i++) bbatch *= B->dims[i];
    if (abatch <= 0 || bbatch <= 0) return false;
    if (bbatch == 1 && !batched) {
        g->nd = 2;
        g->a[0] = g->y[0] = abatch * m;
        g->a[1] = g->b[0] = k;
        g->b[1] = g->y[1] = n;
        g->b_const = bval;
    } else {
        int na = ra > 2 ? ra - 2 : 0, nb = rb > 2 ? rb - 2 : 0, nbt = na > nb ? na : nb;
        if (nbt + 2 > DNNL_MAX_NDIMS) return false;
        g->nd = nbt + 2;
        for (int i = 0; i < nbt; i++) {
            int ia = i - (nbt - na), ib = i - (nbt - nb);
            int64_t da = ia >= 0 ? A->dims[ia] : 1, db = ib >= 0 ? B->dims[ib] : 1;
            if (da != db && da != 1 && db != 1) return false;
            g->a[i] = da;
            g->b[i] = db;
            g->y[i] = da > db ? da : db;
        }
        g->a[nbt] = g->y[nbt] = m;
        g->a[nbt + 1] = g->b[nbt] = k;
        g->b[nbt + 1] = g->y[nbt + 1] = n;
    }
    dense_strides(g->nd, g->a, g->as);
    dense_strides(g->nd, g->b, g->bs);
    dense_strides(g->nd, g->y, g->ys);
    return true;
}

/* A MatMul with views (core/fuse.h): the product over the tensors the views start from, in
 * strided form, with operands and result of one rank and no batch broadcast of a view. False
 * where the geometry does not apply. */
static bool view_geom(const kernel_prep *p, mm_geom *g) {
    const fuse_chain *c = p->fused;
    type_info v[2];
    for (int i = 0; i < 2; i++) {
        v[i] = *p->in_type[i];
        if (!c->view_rank[i]) continue;
        v[i].rank = c->view_rank[i];
        memcpy(v[i].dims, c->view_dims[i], sizeof(int64_t) * (size_t)v[i].rank);
    }
    int r = v[0].rank;
    if (r < 3 || v[1].rank != r || !matmul_geom(&v[0], &v[1], NULL, true, g) || g->nd != r)
        return false;
    for (int i = 0; i < 2; i++) {
        if (!c->view_rank[i]) continue;
        const dnnl_dim_t *d = i ? g->b : g->a;
        if (memcmp(d, v[i].dims, sizeof(int64_t) * (size_t)r)) return false; /* broadcast */
        memcpy(i ? g->bs : g->as, c->view_strides[i], sizeof(int64_t) * (size_t)r);
    }
    if (c->view_rank[2]) {
        if (c->view_rank[2] != r || memcmp(g->y, c->view_dims[2], sizeof(int64_t) * (size_t)r))
            return false;
        memcpy(g->ys, c->view_strides[2], sizeof(int64_t) * (size_t)r);
    }
    return true;
}

/* Gemm as oneDNN sees it: transposes as strides; alpha folded into a constant B; C as a bias
 * (one row) or through a sum post-op (with rows). False where the primitive does not apply. */
static bool gemm_geom(const kernel_prep *p, mm_prim *m, mm_geom *g) {
    const type_info *A = p->in_type[0], *B = p->in_type[1];
    const type_info *C = p->n_in > 2 ? p->in_type[2] : NULL;
    bool ta = attr_int(p->node, "transA", 0) != 0, tb = attr_int(p->node, "transB", 0) != 0;
    float alpha = attr_float(p->node, "alpha", 1.0f), beta = attr_float(p->node, "beta", 1.0f);
    if (A->rank != 2 || B->rank != 2) return false;
    int64_t M = A->dims[ta ? 1 : 0], K = A->dims[ta ? 0 : 1], N = B->dims[tb ? 0 : 1];
    if (B->dims[tb ? 1 : 0] != K || M <= 0 || N <= 0 || K <= 0) return false;
    g->nd = 2;
    g->a[0] = g->y[0] = M;
    g->a[1] = g->b[0] = K;
    g->b[1] = g->y[1] = N;
    g->as[0] = ta ? 1 : K;
    g->as[1] = ta ? M : 1;
    g->bs[0] = tb ? 1 : N;
    g->bs[1] = tb ? K : 1;
    dense_strides(2, g->y, g->ys);
    g->b_const = p->in_value[1];
    g->alpha = alpha;
    if (alpha != 1.0f && !g->b_const) return false;
    if (C && beta != 0.0f) {
        if (!known(p, 2) || C->dtype != A->dtype || C->rank > 2) return false;
        int64_t cm = C->rank == 2 ? C->dims[0] : 1, cn = C->rank >= 1 ? C->dims[C->rank - 1] : 1;
        if ((cm != 1 && cm != M) || (cn != 1 && cn != N)) return false;
        m->c_rank = C->rank;
        memcpy(m->c_dims, C->dims, sizeof(int64_t) * (size_t)C->rank);
        m->beta = beta;
        g->bias = cm == 1;
        g->sum = cm != 1;
        /* a bias of our own where C is not N floats to read as they are */
        m->bias_own = g->bias && (cn != N || beta != 1.0f || A->dtype != ONYX_FLOAT);
    }
    return true;
}

/* Why a product does not take the chain c (core/fuse.h), or NULL: a Gemm's C with rows is already
 * its sum's addend and a Gemm's bias is its C; a MatMul takes one per-column float bias (an Add
 * of per-column constants), first. The rule prepare (take_chain) and the query share. */
static const char *chain_refusal(const fuse_chain *c, bool gemm, const mm_geom *g) {
    int64_t n = g->y[g->nd - 1];
    for (int i = 0; i < c->n; i++) {
        const fuse_op *op = &c->ops[i];
        if (op->kind == FUSE_SUM && g->sum) return "a Gemm adding C by rows takes no other sum";
        if (op->kind == FUSE_SHIFT && gemm) return "a Gemm's bias is its C";
        if (op->kind == FUSE_SHIFT &&
            (i != 0 || c->has_in_scale || !op->bias || op->bias->dtype != ONYX_FLOAT ||
             (op->bias->numel != 1 && op->bias->numel != n)))
            return "a MatMul takes one per-column bias, first";
    }
    return NULL;
}

/* The chain c into g: its bias as the primitive's, the rest as post-ops. */
static void chain_into(const fuse_chain *c, mm_geom *g) {
    g->chain = c;
    for (int i = 0; i < c->n; i++)
        if (c->ops[i].kind == FUSE_SHIFT) g->bias = true;
}

/* A MatMul's chain (core/fuse.h) into g and m: its bias (an Add of per-column constants, first
 * if anywhere) as the primitive's, the rest as post-ops. */
static onyx_status take_chain(const fuse_chain *c, bool gemm, mm_geom *g, mm_prim *m) {
    const char *refused = chain_refusal(c, gemm, g);
    if (refused) return onyx_error(ONYX_ERR_UNSUPPORTED, "%s", refused);
    m->fused = true;
    chain_into(c, g);
    int64_t n = g->y[g->nd - 1];
    for (int i = 0; i < c->n; i++) {
        const fuse_op *op = &c->ops[i];
        if (op->kind == FUSE_SUM) m->chain_sum = true;
        if (op->kind != FUSE_SHIFT) continue;
        if (!(m->chain_bias = malloc((size_t)n * sizeof *m->chain_bias)))
            return onyx_oom("matmul bias");
        const float *b = op->bias->data;
        for (int64_t j = 0; j < n; j++) m->chain_bias[j] = b[op->bias->numel == 1 ? 0 : j];
    }
    return ONYX_OK;
}

static onyx_status bind(dnnl_memory_t mem, const void *ptr) {
    return cpu_dnnl_check(dnnl_memory_set_data_handle(mem, (void *)ptr), "binding a matrix");
}

/* ---- a float MatMul by a constant 2-D B whose rows (A's leading dims) are known only at run:
 * B is packed at prepare as for known shapes (so the model's copy can be handed back), and each
 * call makes a primitive for its rows over the packed B (oneDNN's matmul with the rows as a
 * run-time dim takes only its reference kernel with a packed B; its primitive cache keeps the
 * per-call ones), or runs one row on the panels. A generic plan's chain (core/fuse_postops.c:
 * a bias, activations, factors; no addend, whose shape could differ at run) is applied as a known
 * shape's is (the same post-ops, bias and vmath tail), so a prompt of a new length runs the
 * steps of a known one. */

/* The product of `rows` rows on this path (B as stored), or false: A float with B's K columns,
 * B a constant float [K, N]. */
static bool rows_geom(const kernel_prep *p, int64_t rows, mm_geom *g) {
    if (p->n_in < 2) return false;
    const type_info *A = p->in_type[0], *B = p->in_type[1];
    const tensor *b = p->in_value[1];
    if (!A || !B || !b || A->kind != ONYX_VALUE_TENSOR || A->dtype != ONYX_FLOAT || A->rank < 1 ||
        b->dtype != ONYX_FLOAT || B->rank != 2 || A->dims[A->rank - 1] != B->dims[0] ||
        B->dims[0] <= 0 || B->dims[1] <= 0)
        return false;
    *g = (mm_geom){.nd = 2, .alpha = 1.0f, .b_const = b};
    g->a[0] = g->y[0] = rows;
    g->a[1] = g->b[0] = B->dims[0];
    g->b[1] = g->y[1] = B->dims[1];
    dense_strides(2, g->a, g->as);
    dense_strides(2, g->b, g->bs);
    dense_strides(2, g->y, g->ys);
    return true;
}

/* Why this path does not take chain c, or NULL: MatMul's rule (chain_refusal), and only what one
 * row's panels apply too (gemv_chain_ok: no views, no factors of the operands), no addend. The
 * rule prepare (rows_prepare) and the query (rows_take_chain) share. */
static const char *rows_refusal(const fuse_chain *c, const mm_geom *g) {
    const char *refused = chain_refusal(c, false, g);
    if (refused) return refused;
    if (!gemv_chain_ok(c)) return "a product whose rows are known only at run takes no views";
    for (int i = 0; i < c->n; i++)
        if (c->ops[i].kind == FUSE_SUM)
            return "a product whose rows are known only at run takes no addend";
    return NULL;
}

/* The chain into m for rows_run: its bias (take_chain), its post-ops for one row (as
 * gemv_prepare's) and a copy for the per-call primitives (the pass's is gone after prepare). */
static onyx_status rows_take(const fuse_chain *c, mm_geom *g, mm_prim *m) {
    const char *refused = rows_refusal(c, g);
    if (refused) return onyx_error(ONYX_ERR_UNSUPPORTED, "%s", refused);
    TRY(take_chain(c, false, g, m));
    if (!(m->rows_chain = malloc(sizeof *m->rows_chain))) return onyx_oom("matmul post-ops");
    *m->rows_chain = *c;
    m->n_post = c->n;
    memcpy(m->post, c->ops, sizeof(fuse_op) * (size_t)c->n);
    return ONYX_OK;
}

/* `chain`: p's chain, which this path then must take (A's shape unknown at prepare). */
static onyx_status rows_prepare(const kernel_prep *p, const fuse_chain *chain, mm_prim *m) {
    mm_geom g;
    if (!rows_geom(p, 1, &g)) return ONYX_OK;
    mm_prim probe = {.dtype = ONYX_FLOAT};
    onyx_status st = mm_build(p, &g, &probe);
    if (st == ONYX_OK) {
        m->run_rows = true;
        m->dtype = ONYX_FLOAT;
        m->packed = probe.packed;
        m->md_wei = probe.md_wei; /* kept: the per-call primitives' weights */
        probe.md_wei = NULL;
        m->k = g.b[0];
        m->n = g.b[1];
        int64_t stride;
        if (gemv_layout(m->md_wei, &stride)) m->row_panels = probe.packed, m->panel_stride = stride;
        if (chain) st = rows_take(chain, &g, m);
    }
    drop_prim(&probe);
    if (st == ONYX_ERR_NO_MEMORY || (st != ONYX_OK && chain)) return st;
    if (st != ONYX_OK) onyx_error_clear(); /* the generic path reads B as stored */
    return ONYX_OK;
}

static bool rows_fit(const mm_prim *m, const tensor *A, const tensor *B) {
    return m && m->run_rows && A->dtype == ONYX_FLOAT && B->dtype == ONYX_FLOAT && A->rank >= 1 &&
           A->dims[A->rank - 1] == m->k && B->rank == 2 && B->dims[0] == m->k &&
           B->dims[1] == m->n;
}

static onyx_status rows_run(const mm_prim *m, const kernel_call *c, const tensor *A, tensor *Y) {
    int64_t rows = A->numel / m->k;
    if (rows == 0) return ONYX_OK;
    if (rows == 1 && m->row_panels) return gemv_run(m, c, m->row_panels, A, NULL, Y);
    onyx_status st = ONYX_OK;
    mm_geom g = {.nd = 2, .alpha = 1.0f, .b_packed = m->md_wei, .take_ref = true};
    g.a[0] = g.y[0] = rows;
    g.a[1] = g.b[0] = m->k;
    g.b[1] = g.y[1] = m->n;
    dense_strides(2, g.a, g.as);
    dense_strides(2, g.b, g.bs);
    dense_strides(2, g.y, g.ys);
    if (m->rows_chain) chain_into(m->rows_chain, &g);
    mm_desc d;
    dnnl_primitive_t prim = NULL;
    dnnl_memory_desc_t pad_md = NULL;
    dnnl_memory_t src = NULL, wei = NULL, dst = NULL, bias = NULL, pad = NULL;
    TRY(mm_describe(&g, &d));
    size_t pad_size = cpu_dnnl_scratchpad(d.pd, &pad_md);
    if (pad_size == SIZE_MAX) {
        st = onyx_oom("matmul scratchpad descriptor");
        goto done;
    }
    CHECK(cpu_dnnl_check(dnnl_guard_primitive_create(&prim, d.pd), "creating the product"));
    CHECK(cpu_dnnl_memory(&src, d.a));
    CHECK(cpu_dnnl_memory(&wei, d.b));
    CHECK(cpu_dnnl_memory(&dst, d.y));
    CHECK(bind(src, A->data));
    CHECK(bind(wei, m->packed));
    CHECK(bind(dst, Y->data));
    dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    int nargs = 3;
    if (g.bias) {
        CHECK(cpu_dnnl_memory(&bias, d.bias));
        CHECK(bind(bias, m->chain_bias));
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, bias};
    }
    if (pad_size) {
        void *mem;
        CHECK(kernel_scratch(c, pad_size, &mem));
        CHECK(cpu_dnnl_memory(&pad, pad_md));
        CHECK(bind(pad, mem));
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, pad};
    }
    CHECK(cpu_dnnl_execute(prim, nargs, args));
    if (d.tail >= 0) cpu_post_vmath_apply(&m->rows_chain->ops[d.tail], Y->data, rows * m->n);
done:
    dnnl_memory_t mems[] = {src, wei, dst, bias, pad};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        if (mems[i]) dnnl_memory_destroy(mems[i]);
    if (prim) dnnl_primitive_destroy(prim);
    if (pad_md) dnnl_memory_desc_destroy(pad_md);
    desc_drop(&d);
    return st;
}

/* Whether p asks for a product with a chain (post-ops, factors, or on a MatMul views), which then
 * needs its primitive or the single row's panels. */
static bool has_chain(const kernel_prep *p, bool gemm, bool *views) {
    const fuse_chain *fc = p->fused;
    *views = !gemm && fc && (fc->view_rank[0] || fc->view_rank[1] || fc->view_rank[2]);
    return fc && (fc->n > 0 || *views || fc->has_in_scale);
}

/* The product p asks for as oneDNN would see it, m given its type (and Gemm's C); false where
 * no primitive is tried: shapes unknown at prepare, a type oneDNN does not take, a chain on
 * another type than float, or a geometry the primitive does not take. */
static bool prim_geom(const kernel_prep *p, bool gemm, mm_prim *m, mm_geom *g) {
    bool views, chain = has_chain(p, gemm, &views);
    if (p->n_in < 2 || !known(p, 0) || !known(p, 1) || !prim_dtype(p->in_type[0]->dtype) ||
        p->in_type[1]->dtype != p->in_type[0]->dtype ||
        (chain && p->in_type[0]->dtype != ONYX_FLOAT))
        return false;
    const type_info *A = p->in_type[0], *B = p->in_type[1];
    *g = (mm_geom){.alpha = 1.0f};
    m->dtype = A->dtype;
    return gemm    ? gemm_geom(p, m, g)
           : views ? view_geom(p, g)
                   : matmul_geom(A, B, p->in_value[1], false, g);
}

/* bfloat16 where the session allows it, for products with constant weights and a dense A; in
 * float where oneDNN has no fast bfloat16 kernel (the caller tries again). */
static bool bf16_fits(const kernel_prep *p, const mm_geom *g) {
    int64_t dense[DNNL_MAX_NDIMS];
    dense_strides(g->nd, g->a, dense);
    return p->env && p->env->bf16 && p->in_type[0]->dtype == ONYX_FLOAT && g->b_const &&
           !memcmp(dense, g->as, sizeof(int64_t) * (size_t)g->nd);
}

/* MatMul's and Gemm's prepare: a primitive where the shapes are known and oneDNN applies
 * (`gemm` picks Gemm's reading of the inputs); otherwise the state only says so. A MatMul with a
 * chain must have its primitive. */
static onyx_status prim_prepare(const kernel_prep *p, void **state, bool gemm) {
    mm_prim *m = calloc(1, sizeof *m);
    if (!m) return onyx_oom(gemm ? "gemm state" : "matmul state");
    onyx_status st = ONYX_OK;
    bool views, chain = has_chain(p, gemm, &views);
    mm_geom g;
    if (prim_geom(p, gemm, m, &g)) {
        const type_info *A = p->in_type[0], *B = p->in_type[1];
        keep_shape(A->rank, A->dims, &m->a_rank, m->a_dims);
        keep_shape(B->rank, B->dims, &m->b_rank, m->b_dims);
        if (chain) st = take_chain(p->fused, gemm, &g, m);
        g.bf16 = bf16_fits(p, &g);
        if (st == ONYX_OK && !g.bf16 && gemv_fits(&g, m)) st = gemv_prepare(p, &g, m);
        if (st == ONYX_OK && !m->gemv) st = mm_try(p, &g, m);
        if (st == ONYX_OK && !m->prim && !m->gemv && g.bf16) {
            g.bf16 = false;
            st = mm_try(p, &g, m);
        }
    }
    /* rows known only at run take the chain on their path; known ones only on the primitive */
    bool rows_chain = chain && !known(p, 0);
    if (st == ONYX_OK && !gemm && (!chain || rows_chain) && !m->prim && !m->gemv)
        st = rows_prepare(p, rows_chain ? p->fused : NULL, m);
    if (st == ONYX_OK && chain && !m->prim && !m->gemv && !m->run_rows)
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "a MatMul's post-ops need its oneDNN primitive");
    /* a constant B read as stored (the generic path, or a primitive taking B per run) */
    if (st == ONYX_OK && p->n_in > 1 && p->in_value[1] && !m->packed && !m->gemv)
        st = kernel_weight_bytes(p, 1);
    if (st != ONYX_OK) {
        cpu_matmul_release(m);
        return st;
    }
    *state = m;
    return ONYX_OK;
}

/* Whether oneDNN makes a primitive of g other than its reference one (mm_describe; nothing is
 * built). Its refusal is this answer, not an error: the message is cleared. */
static bool mm_describable(const mm_geom *g) {
    if (g->nd > DNNL_MAX_NDIMS) return false; /* as mm_try */
    mm_desc d;
    onyx_status st = mm_describe(g, &d);
    desc_drop(&d);
    if (st != ONYX_OK) onyx_error_clear();
    return st == ONYX_OK;
}

/* Whether gemv_prepare finds the single row's panels: the plain product's B as oneDNN lays it
 * out (gemv_layout). */
static bool panels_fit(const mm_geom *g) {
    mm_geom plain = *g;
    plain.chain = NULL;
    plain.bias = plain.sum = false;
    mm_desc d;
    int64_t stride;
    onyx_status st = mm_describe(&plain, &d);
    bool panels = st == ONYX_OK && g->b_const &&
                  gemv_layout(dnnl_primitive_desc_query_md(d.pd, dnnl_query_weights_md, 0),
                              &stride);
    desc_drop(&d);
    if (st != ONYX_OK) onyx_error_clear();
    return panels;
}

/* Whether rows_prepare takes p's chain (A's shape unknown): its geometry and rule
 * (rows_refusal), and oneDNN making the plain product for one row (mm_build's probe) and one with
 * the chain for several (rows_run's, any kernel). */
static bool rows_take_chain(const kernel_prep *p) {
    mm_geom g;
    if (!rows_geom(p, 1, &g) || rows_refusal(p->fused, &g) || !mm_describable(&g)) return false;
    g.a[0] = g.y[0] = 2;
    dense_strides(2, g.a, g.as);
    dense_strides(2, g.y, g.ys);
    chain_into(p->fused, &g);
    g.take_ref = true;
    return mm_describable(&g);
}

/* kernel.takes_chain of MatMul and Gemm: whether prim_prepare applies p->fused, decided as it
 * decides (prim_geom, chain_refusal, bf16_fits, gemv_fits, then the primitive or the panels
 * oneDNN would make), with oneDNN asked for primitive descriptors only: nothing is packed or
 * built, so the fusion pass asks before it fuses. */
static bool prim_takes_chain(const kernel_prep *p, bool gemm) {
    bool views;
    if (!has_chain(p, gemm, &views)) return true; /* nothing for the product to apply */
    if (!gemm && !known(p, 0)) return rows_take_chain(p);
    mm_prim m = {0};
    mm_geom g;
    if (!prim_geom(p, gemm, &m, &g) || chain_refusal(p->fused, gemm, &g)) return false;
    chain_into(p->fused, &g);
    g.bf16 = bf16_fits(p, &g);
    if (g.bf16) {
        if (mm_describable(&g)) return true;
        g.bf16 = false;
        return mm_describable(&g);
    }
    return (gemv_fits(&g, &m) && panels_fit(&g)) || mm_describable(&g);
}

bool cpu_matmul_takes_chain(const kernel_prep *p) { return prim_takes_chain(p, false); }

bool cpu_gemm_takes_chain(const kernel_prep *p) { return prim_takes_chain(p, true); }

onyx_status cpu_matmul_prepare(const kernel_prep *p, void **state) {
    return prim_prepare(p, state, false);
}

onyx_status cpu_gemm_prepare(const kernel_prep *p, void **state) {
    return prim_prepare(p, state, true);
}

void cpu_matmul_release(void *state) {
    mm_prim *m = state;
    if (!m) return;
    drop_prim(m);
    free(m->chain_bias);
    free(m->rows_chain);
    free(m); /* m->packed belongs to the rep's shared cache */
}

void cpu_matmul_unfork(void *fork) {
    mm_fork *f = fork;
    if (!f) return;
    dnnl_memory_t all[] = {f->src, f->wei, f->bias, f->dst, f->pad};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]) dnnl_memory_destroy(all[i]);
    free(f);
}

onyx_status cpu_matmul_fork(const void *state, void **out) {
    const mm_prim *m = state;
    mm_fork *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("matmul working state");
    onyx_status st = ONYX_OK;
    f->p = m;
    if (m && m->prim) {
        CHECK(cpu_dnnl_memory(&f->src, m->md_src));
        CHECK(cpu_dnnl_memory(&f->wei, m->md_wei));
        CHECK(cpu_dnnl_memory(&f->dst, m->md_dst));
        if (m->bias) CHECK(cpu_dnnl_memory(&f->bias, m->md_bias));
        if (m->pad_size) CHECK(cpu_dnnl_memory(&f->pad, m->md_pad));
    }
    *out = f;
    f = NULL;
done:
    cpu_matmul_unfork(f);
    return st;
}

static bool same_shape(const tensor *t, int rank, const int64_t *dims) {
    return t && t->rank == rank && !memcmp(t->dims, dims, sizeof(int64_t) * (size_t)rank);
}

/* Whether this call's operands are the ones the primitive was made for. */
static bool prim_fits(const mm_fork *f, const tensor *A, const tensor *B, const tensor *C) {
    const mm_prim *m = f ? f->p : NULL;
    if (!m || (!m->prim && !m->gemv) || A->dtype != m->dtype || B->dtype != m->dtype ||
        !same_shape(A, m->a_rank, m->a_dims) || !same_shape(B, m->b_rank, m->b_dims))
        return false;
    bool uses_c = m->sum || (m->bias && !m->chain_bias);
    return !uses_c || (same_shape(C, m->c_rank, m->c_dims) && C->dtype == m->dtype);
}

static onyx_status prim_run(const mm_fork *f, const kernel_call *c, const tensor *A,
                            const tensor *B, const tensor *C, tensor *Y) {
    const mm_prim *m = f->p;
    void *mem;
    TRY(kernel_scratch(c, m->scratch_bytes + 1, &mem));
    char *sb = mem;
    bool half = is_half(m->dtype);
    const void *a = A->data, *b = m->packed ? m->packed : B->data;
    float *y = half ? (float *)(sb + m->off_y) : Y->data;
    if (half) {
        half_to_float(m->dtype, A->data, (float *)(sb + m->off_a), m->an);
        a = sb + m->off_a;
        if (!m->packed) {
            half_to_float(m->dtype, B->data, (float *)(sb + m->off_b), m->bn);
            b = sb + m->off_b;
        }
    }
    const void *bias = NULL;
    if (m->chain_bias) {
        bias = m->chain_bias;
    } else if (m->bias) {
        bias = C->data;
        if (m->bias_own) {
            float *bb = (float *)(sb + m->off_bias);
            bool one = C->numel == 1;
            for (int64_t j = 0; j < m->n; j++) bb[j] = m->beta * (float)real_at(C, one ? 0 : j);
            bias = bb;
        }
    } else if (m->sum) {
        /* beta * C broadcast into Y: the sum post-op adds the product to it */
        int64_t rows = m->yn / m->n;
        bias_fill(C, rows, m->n, y, false);
        if (m->beta != 1.0f)
            for (int64_t i = 0; i < m->yn; i++) y[i] *= m->beta;
    }
    if (m->chain_sum) { /* the sum post-op adds the product to the addend, copied into Y */
        const tensor *addend = kernel_input(c, 3);
        if (!addend || addend->numel != m->yn || addend->dtype != ONYX_FLOAT)
            return onyx_error(ONYX_ERR_RUNTIME, "fused MatMul: the addend is not Y's shape");
        if (addend->data != y) memcpy(y, addend->data, (size_t)m->yn * sizeof(float));
    }
    if (m->a_bf16) {
        cpu_float_to_half_n(ONYX_BFLOAT16, a, (uint16_t *)(sb + m->off_a16), m->an);
        a = sb + m->off_a16;
    }
    TRY(bind(f->src, a));
    TRY(bind(f->wei, b));
    TRY(bind(f->dst, y));
    dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, f->src}, {DNNL_ARG_WEIGHTS, f->wei},
                               {DNNL_ARG_DST, f->dst}};
    int nargs = 3;
    if (m->bias) {
        TRY(bind(f->bias, bias));
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, f->bias};
    }
    if (m->pad_size) {
        TRY(bind(f->pad, sb + m->off_pad));
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, f->pad};
    }
    TRY(cpu_dnnl_execute(m->prim, nargs, args));
    if (m->tail) cpu_post_vmath_apply(&m->tail_op, y, m->yn);
    if (half) float_to_half(m->dtype, y, Y->data, m->yn);
    return ONYX_OK;
}

onyx_status cpu_matmul_run(const kernel_call *c) {
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1);
    const mm_fork *f = c->state;
    if (A && B && f && rows_fit(f->p, A, B)) return rows_run(f->p, c, A, kernel_output(c, 0));
    if (A && B && prim_fits(f, A, B, NULL))
        return f->p->gemv ? gemv_run(f->p, c, f->p->gemv, A, NULL, kernel_output(c, 0))
                          : prim_run(f, c, A, B, NULL, kernel_output(c, 0));
    if (f && f->p && f->p->fused) /* fused only with static shapes: cannot happen */
        return onyx_error(ONYX_ERR_RUNTIME, "fused MatMul called with other shapes than planned");
    return matmul_generic(c);
}

onyx_status cpu_gemm_run(const kernel_call *c) {
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1), *C = kernel_input(c, 2);
    const mm_fork *f = c->state;
    if (A && B && prim_fits(f, A, B, C))
        return f->p->gemv ? gemv_run(f->p, c, f->p->gemv, A, C, kernel_output(c, 0))
                          : prim_run(f, c, A, B, C, kernel_output(c, 0));
    if (f && f->p && f->p->fused) /* fused only with static shapes: cannot happen */
        return onyx_error(ONYX_ERR_RUNTIME, "fused Gemm called with other shapes than planned");
    return gemm_generic(c);
}

void cpu_gemm_release(void *state) { cpu_matmul_release(state); }
onyx_status cpu_gemm_fork(const void *state, void **out) { return cpu_matmul_fork(state, out); }
void cpu_gemm_unfork(void *fork) { cpu_matmul_unfork(fork); }
