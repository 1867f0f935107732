// MatMul and Gemm on CUDA through cuBLAS (row-major products computed as the column-major
// Y^T = B^T A^T), float16/bfloat16 with float accumulation, float without TF32. A product with a
// device epilogue (core/fuse_device.c: a bias per column, a Relu) runs through cuBLASLt, which
// applies them as it writes Y. MatMul computes over the product's geometry its schema resolved for
// the plan (core/op_params.h).
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "core/fuse_chain.h"
}
#include "kernels_cuda/common.cuh"

namespace {

const dtype_mask MM_TYPES =
    DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16);

// Batch dims a pointer-array product can index (MatMul's rank is bounded by CUDA_MAX_RANK).
const int MM_MAX_BATCH = CUDA_MAX_RANK - 2;

bool static_tensor(const type_info *t) {
    if (!t || t->kind != ONYX_VALUE_TENSOR || t->rank < 0 || t->rank > CUDA_MAX_RANK) return false;
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] < 0) return false;
    return true;
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

cudaDataType cuda_type(onyx_dtype d) {
    switch (d) {
    case ONYX_DOUBLE: return CUDA_R_64F;
    case ONYX_FLOAT16: return CUDA_R_16F;
    case ONYX_BFLOAT16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
    }
}

// float32 must not use TF32 (its 10-bit mantissa misses the 1e-3 tolerance on long sums); the
// 16-bit types accumulate in float.
cublasComputeType_t compute_type(onyx_dtype d) {
    return d == ONYX_DOUBLE ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
}

// alpha and beta as the compute type wants them (double for double, float otherwise).
struct scalars {
    double d[2];
    float f[2];
    const void *alpha(onyx_dtype t) const { return t == ONYX_DOUBLE ? (const void *)&d[0] : &f[0]; }
    const void *beta(onyx_dtype t) const { return t == ONYX_DOUBLE ? (const void *)&d[1] : &f[1]; }
};

scalars make_scalars(double alpha, double beta) {
    scalars s;
    s.d[0] = alpha;
    s.d[1] = beta;
    s.f[0] = (float)alpha;
    s.f[1] = (float)beta;
    return s;
}

/* ------------------------------------------------------------------ epilogue */

// Workspace cuBLASLt may use (its advice for Hopper); from the queue's scratch.
const size_t LT_WORKSPACE = (size_t)32 << 20;
// Alignment the chosen algorithm may assume of every pointer; run checks it.
const int LT_ALIGN = 16;

// One product Y = act(alpha * op(A) op(B) + bias + R) through cuBLASLt: its descriptors, made at
// prepare and only read at run, and the algorithm its heuristics chose. The bias is a constant
// (its device pointer is part of the descriptor), read from input bias_input; R, a residual of
// Y's shape computed per run, is input sum_input, cuBLASLt's C with beta 1.
struct lt_epilogue {
    int bias_input; // -1: none
    int sum_input;  // -1: none
    const void *bias;
    bool relu;
    float alpha;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld; // cuBLASLt's A (our B), B (our A) and D (Y^T)
    cublasLtMatmulAlgo_t algo;
    size_t ws;
};

void lt_free(lt_epilogue *e) {
    if (!e) return;
    if (e->desc) cublasLtMatmulDescDestroy(e->desc);
    if (e->la) cublasLtMatrixLayoutDestroy(e->la);
    if (e->lb) cublasLtMatrixLayoutDestroy(e->lb);
    if (e->ld) cublasLtMatrixLayoutDestroy(e->ld);
    free(e);
}

// The chain p->fused as a bias (input 2 of the fused node, or Gemm's own C: bias_input), a
// residual of Y's shape (input 3: sum_input) and a Relu, each optional, in that order; false
// where it is anything else.
bool epilogue_chain(const kernel_prep *p, int *bias_input, int *sum_input, bool *relu) {
    const fuse_chain *c = p->fused;
    if (c->n < 1 || c->n > 3 || c->n_pre || c->x_scale || c->attention || c->has_in_scale ||
        c->view_rank[0] || c->view_rank[1] || c->view_rank[2])
        return false;
    *relu = false;
    int i = 0;
    const fuse_op *op = c->ops;
    if (i < c->n && op[i].kind == FUSE_SHIFT && op[i].input == 2 && *bias_input < 0) {
        *bias_input = 2;
        i++;
    }
    if (i < c->n && op[i].kind == FUSE_SUM && op[i].input == 3 && p->n_in > 3 && p->in_type[3] &&
        p->in_type[3]->dtype == p->out_type[0].dtype) {
        *sum_input = 3;
        i++;
    }
    if (i < c->n && op[i].kind == FUSE_RELU && op[i].alpha == 0) {
        *relu = true;
        i++;
    }
    return i == c->n;
}

// Builds e for the row-major product of m x k op(A) by k x n op(B) (transposed as stored where
// ta, tb); false where cuBLASLt has no algorithm for it.
bool lt_build(const kernel_prep *p, onyx_dtype dt, int64_t m, int64_t n, int64_t k, bool ta,
              bool tb, lt_epilogue *e) {
    if (dt != ONYX_FLOAT && dt != ONYX_FLOAT16 && dt != ONYX_BFLOAT16) return false;
    if (e->bias_input >= 0) {
        const tensor *b = p->n_in > e->bias_input ? p->in_value[e->bias_input] : NULL;
        if (!b || b->device != DEVICE_CUDA || b->dtype != dt || b->numel != n || !b->data ||
            ((uintptr_t)b->data % LT_ALIGN) != 0)
            return false;
        e->bias = b->data;
    }
    cudaDataType t = cuda_type(dt);
    cublasOperation_t opa = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opb = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtEpilogue_t epi =
        e->bias ? (e->relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                : (e->relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    if (cublasLtMatmulDescCreate(&e->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) !=
        CUBLAS_STATUS_SUCCESS) {
        e->desc = NULL;
        return false;
    }
    bool ok = cublasLtMatmulDescSetAttribute(e->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa,
                                             sizeof opa) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatmulDescSetAttribute(e->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb,
                                             sizeof opb) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatmulDescSetAttribute(e->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
                                             sizeof epi) == CUBLAS_STATUS_SUCCESS &&
              (!e->bias ||
               cublasLtMatmulDescSetAttribute(e->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &e->bias,
                                              sizeof e->bias) == CUBLAS_STATUS_SUCCESS);
    // stored shapes, column-major: our B is n x k (k x n transposed), our A k x m (m x k),
    // Y^T n x m
    ok = ok &&
         cublasLtMatrixLayoutCreate(&e->la, t, tb ? k : n, tb ? n : k, tb ? k : n) ==
             CUBLAS_STATUS_SUCCESS &&
         cublasLtMatrixLayoutCreate(&e->lb, t, ta ? m : k, ta ? k : m, ta ? m : k) ==
             CUBLAS_STATUS_SUCCESS &&
         cublasLtMatrixLayoutCreate(&e->ld, t, n, m, n) == CUBLAS_STATUS_SUCCESS;
    if (!ok) return false;
    cublasLtHandle_t h;
    if (cublasLtCreate(&h) != CUBLAS_STATUS_SUCCESS) return false;
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t res;
    int got = 0;
    uint32_t align = LT_ALIGN;
    if (cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS) {
        ok = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &LT_WORKSPACE, sizeof LT_WORKSPACE) ==
             CUBLAS_STATUS_SUCCESS;
        const cublasLtMatmulPreferenceAttributes_t aligns[] = {
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
        for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++)
            ok = ok && cublasLtMatmulPreferenceSetAttribute(pref, aligns[i], &align,
                                                            sizeof align) == CUBLAS_STATUS_SUCCESS;
        ok = ok && cublasLtMatmulAlgoGetHeuristic(h, e->desc, e->la, e->lb, e->ld, e->ld, pref, 1,
                                                  &res, &got) == CUBLAS_STATUS_SUCCESS &&
             got > 0 && res.state == CUBLAS_STATUS_SUCCESS;
        cublasLtMatmulPreferenceDestroy(pref);
    } else {
        ok = false;
    }
    cublasLtDestroy(h);
    if (!ok) return false;
    e->algo = res.algo;
    e->ws = res.workspaceSize;
    return true;
}

bool aligned(const void *p) { return ((uintptr_t)p % LT_ALIGN) == 0; }

// Y = act(alpha * op(A) op(B) + bias + R) in one cuBLASLt call; false (nothing queued) where a
// pointer lacks the alignment the algorithm assumes or the bias is not the prepared one: the
// caller then runs the plain product and epilogue_after.
bool lt_run(const kernel_call *c, const lt_epilogue *e, const tensor *A, const tensor *B,
            tensor *Y, onyx_status *st) {
    const tensor *bias = e->bias_input >= 0 ? kernel_input(c, e->bias_input) : NULL;
    const tensor *sum = e->sum_input >= 0 ? kernel_input(c, e->sum_input) : NULL;
    if (!aligned(A->data) || !aligned(B->data) || !aligned(Y->data) ||
        (bias && bias->data != e->bias) || (e->sum_input >= 0 && !sum) ||
        (sum && (!aligned(sum->data) || sum->nbytes != Y->nbytes)))
        return false;
    cublasLtHandle_t h;
    void *ws = NULL;
    *st = cuda_blas_lt(c, &h);
    if (*st == ONYX_OK && e->ws) *st = cuda_scratch(c, e->ws, &ws);
    if (*st != ONYX_OK) return true;
    const float beta = sum ? 1.0f : 0.0f; // the residual is C, laid out as Y
    *st = cublas_status(cublasLtMatmul(h, e->desc, &e->alpha, B->data, e->la, A->data, e->lb, &beta,
                                       sum ? sum->data : Y->data, e->ld, Y->data, e->ld, &e->algo,
                                       ws, e->ws, cuda_stream(c)),
                        "product with its epilogue (cuBLASLt)");
    return true;
}

// y = act(y + bias[column] + r) over rows of n columns (bias and residual r optional).
template <typename T>
__global__ void epilogue_kernel(T *y, const T *bias, const T *r, int64_t n, int64_t total,
                                bool relu) {
    CUDA_GRID_LOOP(i, total) {
        auto v = to_compute(y[i]);
        if (bias) v += to_compute(bias[i % n]);
        if (r) v += to_compute(r[i]);
        if (relu && v < 0) v = 0; // NaN stays NaN, as ONNX's Relu
        y[i] = from_compute<T>(v);
    }
}

struct epilogue_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, void *y, const void *bias, const void *r,
                           int64_t n, int64_t total, bool relu) {
        epilogue_kernel<T><<<cuda_blocks(total), CUDA_THREADS, 0, cuda_stream(c)>>>(
            (T *)y, (const T *)bias, (const T *)r, n, total, relu);
        return cuda_launched("product epilogue");
    }
};

// The epilogue on its own, after the plain product: with_bias adds input bias_input.
onyx_status epilogue_after(const kernel_call *c, const lt_epilogue *e, onyx_dtype dt,
                           bool with_bias, int64_t n, tensor *Y) {
    const tensor *bias = with_bias && e->bias_input >= 0 ? kernel_input(c, e->bias_input) : NULL;
    const tensor *sum = e->sum_input >= 0 ? kernel_input(c, e->sum_input) : NULL;
    if (e->sum_input >= 0 && (!sum || sum->nbytes != Y->nbytes))
        return onyx_error(ONYX_ERR_SHAPE,
                          "product epilogue: the residual is not the output's size");
    if (!bias && !sum && !e->relu) return ONYX_OK;
    CUDA_DISPATCH_FLOATS(dt, epilogue_launch, c, Y->data, bias ? bias->data : NULL,
                         sum ? sum->data : NULL, n, Y->numel, e->relu)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "product epilogue: type %d on CUDA", (int)dt);
}

/* ------------------------------------------------------------------ MatMul */

enum mm_mode {
    MM_STRIDED, // every batch matrix of A and B at a fixed stride (0: shared)
    MM_POINTERS // batch dims broadcast both ways: pointer arrays made on the device
};

// The product's shape as prepare resolved it (numpy semantics, 1-D operands promoted).
struct mm_state {
    onyx_dtype dtype;
    int64_t m, n, k, nbatch;
    mm_mode mode;
    int64_t stride_a, stride_b; // MM_STRIDED
    // MM_POINTERS: broadcast batch dims and A's/B's element strides along them (0: broadcast)
    int nb;
    int64_t bdim[MM_MAX_BATCH], astr[MM_MAX_BATCH], bstr[MM_MAX_BATCH];
    lt_epilogue *ep; // a device epilogue, or NULL
};

struct mm_ptr_args {
    int nb;
    int64_t bdim[MM_MAX_BATCH], astr[MM_MAX_BATCH], bstr[MM_MAX_BATCH];
    int64_t ystride;
    size_t esize;
};

__global__ void mm_pointers_kernel(mm_ptr_args a, const char *A, const char *B, char *Y,
                                   const void **pa, const void **pb, void **py, int64_t nbatch) {
    CUDA_GRID_LOOP(t, nbatch) {
        int64_t r = t, ao = 0, bo = 0;
        for (int d = a.nb - 1; d >= 0; d--) {
            int64_t q = r / a.bdim[d], i = r - q * a.bdim[d];
            ao += i * a.astr[d];
            bo += i * a.bstr[d];
            r = q;
        }
        pa[t] = A + ao * a.esize;
        pb[t] = B + bo * a.esize;
        py[t] = Y + t * a.ystride * a.esize;
    }
}

// Fills s from the product's geometry the MatMul's schema resolved for the plan
// (kernel_prep.params, core/op_params.h; known dims only); false where there is none (shapes
// unknown at prepare) or cuBLAS cannot take the product.
bool mm_resolve(const kernel_prep *p, mm_state *s) {
    const geom_matmul *pg = op_params_matmul(p->params);
    const type_info *A = p->n_in > 1 ? p->in_type[0] : NULL;
    const type_info *B = p->n_in > 1 ? p->in_type[1] : NULL;
    if (!pg || !static_tensor(A) || !static_tensor(B) || pg->nb > MM_MAX_BATCH) return false;
    const geom_matmul &g = *pg;
    memset(s, 0, sizeof *s);
    s->dtype = A->dtype;
    s->m = g.m;
    s->k = g.k;
    s->n = g.n;
    s->nb = g.nb;
    s->nbatch = g.nbatch;
    for (int i = 0; i < g.nb; i++) {
        s->bdim[i] = g.bdim[i];
        s->astr[i] = g.astr[i];
        s->bstr[i] = g.bstr[i];
    }
    int64_t na = g.a_batches, nbb = g.b_batches;
    // B without batches: A's batches are the rows of one taller product
    if (B->rank <= 2 && s->nbatch > 1) {
        s->m *= s->nbatch;
        s->nbatch = 1;
    }
    if (s->nbatch <= 1 || ((na == 1 || na == s->nbatch) && (nbb == 1 || nbb == s->nbatch))) {
        s->mode = MM_STRIDED;
        s->stride_a = na == 1 ? 0 : s->m * s->k;
        s->stride_b = nbb == 1 ? 0 : s->k * s->n;
    } else {
        s->mode = MM_POINTERS;
    }
    return fits_int(s->m) && fits_int(s->n) && fits_int(s->k) && fits_int(s->nbatch) &&
           fits_int(s->m * s->k) && fits_int(s->k * s->n) && fits_int(s->m * s->n);
}

bool matmul_supports(const kernel_prep *p) {
    if (p->n_in < 2) return false;
    const type_info *A = p->in_type[0], *B = p->in_type[1];
    if (!static_tensor(A) || !static_tensor(B) || !dtype_in(A->dtype, MM_TYPES) ||
        B->dtype != A->dtype)
        return false;
    mm_state s;
    return mm_resolve(p, &s);
}

void mm_release(void *state) {
    mm_state *s = (mm_state *)state;
    if (s) lt_free(s->ep);
    free(s);
}

// One product (batches folded into its rows) takes a device epilogue through cuBLASLt.
bool mm_epilogue(const kernel_prep *p, mm_state *s) {
    lt_epilogue *e = (lt_epilogue *)calloc(1, sizeof *e);
    if (!e) return false;
    s->ep = e;
    e->bias_input = e->sum_input = -1;
    e->alpha = 1.0f;
    return s->mode == MM_STRIDED && s->nbatch == 1 && s->k > 0 &&
           epilogue_chain(p, &e->bias_input, &e->sum_input, &e->relu) &&
           lt_build(p, s->dtype, s->m, s->n, s->k, false, false, e);
}

// kernel.takes_chain of MatMul: whether matmul_prepare takes p->fused: the same resolve and
// epilogue, cuBLASLt asked for its heuristic's algorithm (nothing else is kept).
bool matmul_takes_chain(const kernel_prep *p) {
    mm_state s;
    if (!mm_resolve(p, &s)) return false;
    bool ok = mm_epilogue(p, &s);
    lt_free(s.ep);
    return ok;
}

onyx_status matmul_prepare(const kernel_prep *p, void **state) {
    mm_state *s = (mm_state *)calloc(1, sizeof *s);
    if (!s) return onyx_error(ONYX_ERR_NO_MEMORY, "MatMul: out of memory");
    if (!mm_resolve(p, s)) {
        free(s);
        return onyx_error(ONYX_ERR_SHAPE, "MatMul: operand shapes do not multiply");
    }
    if (p->fused && !mm_epilogue(p, s)) {
        mm_release(s);
        return onyx_error(ONYX_ERR_UNSUPPORTED, "MatMul: cuBLASLt does not apply this epilogue");
    }
    *state = s;
    return ONYX_OK;
}


onyx_status matmul_product(const kernel_call *c);

onyx_status matmul_run(const kernel_call *c) {
    const mm_state *s = (const mm_state *)c->state;
    if (!s || !s->ep) return matmul_product(c);
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1);
    tensor *Y = kernel_output(c, 0);
    if (Y->numel != s->m * s->n)
        return onyx_error(ONYX_ERR_SHAPE, "MatMul: output has %lld elements, expected %lld",
                          (long long)Y->numel, (long long)(s->m * s->n));
    onyx_status st = ONYX_OK;
    if (Y->numel && lt_run(c, s->ep, A, B, Y, &st)) return st;
    TRY(matmul_product(c));
    return epilogue_after(c, s->ep, s->dtype, true, s->n, Y);
}

// The product alone (a fused node's epilogue inputs unread).
onyx_status matmul_product(const kernel_call *c) {
    const mm_state *s = (const mm_state *)c->state;
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1);
    tensor *Y = kernel_output(c, 0);
    if (!s) return onyx_error(ONYX_ERR_RUNTIME, "MatMul: kernel state missing");
    if (Y->numel != s->nbatch * s->m * s->n)
        return onyx_error(ONYX_ERR_SHAPE, "MatMul: output has %lld elements, expected %lld",
                          (long long)Y->numel, (long long)(s->nbatch * s->m * s->n));
    if (Y->numel == 0) return ONYX_OK;
    cudaStream_t st = cuda_stream(c);
    if (s->k == 0) // an empty sum: zeros (all-zero bits in every float type)
        return cuda_status(cudaMemsetAsync(Y->data, 0, Y->nbytes, st), "MatMul zeros");
    cublasHandle_t h;
    TRY(cuda_blas(c, &h));
    scalars sc = make_scalars(1.0, 0.0);
    cudaDataType dt = cuda_type(s->dtype);
    int m = (int)s->m, n = (int)s->n, k = (int)s->k;
    if (s->mode == MM_STRIDED) {
        if (s->nbatch == 1)
            return cublas_status(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k,
                                              sc.alpha(s->dtype), B->data, dt, n, A->data, dt, k,
                                              sc.beta(s->dtype), Y->data, dt, n,
                                              compute_type(s->dtype), CUBLAS_GEMM_DEFAULT),
                                 "MatMul");
        return cublas_status(cublasGemmStridedBatchedEx(
                                 h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, sc.alpha(s->dtype), B->data,
                                 dt, n, s->stride_b, A->data, dt, k, s->stride_a, sc.beta(s->dtype),
                                 Y->data, dt, n, s->m * s->n, (int)s->nbatch,
                                 compute_type(s->dtype), CUBLAS_GEMM_DEFAULT),
                             "MatMul (strided batches)");
    }
    void *mem;
    TRY(cuda_scratch(c, 3 * (size_t)s->nbatch * sizeof(void *), &mem));
    const void **pa = (const void **)mem, **pb = pa + s->nbatch;
    void **py = (void **)(pb + s->nbatch);
    mm_ptr_args a;
    memset(&a, 0, sizeof a);
    a.nb = s->nb;
    for (int d = 0; d < s->nb; d++) {
        a.bdim[d] = s->bdim[d];
        a.astr[d] = s->astr[d];
        a.bstr[d] = s->bstr[d];
    }
    a.ystride = s->m * s->n;
    a.esize = dtype_size(s->dtype);
    mm_pointers_kernel<<<cuda_blocks(s->nbatch), CUDA_THREADS, 0, st>>>(
        a, (const char *)A->data, (const char *)B->data, (char *)Y->data, pa, pb, py, s->nbatch);
    TRY(cuda_launched("MatMul batch pointers"));
    return cublas_status(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k,
                                             sc.alpha(s->dtype), pb, dt, n, pa, dt, k,
                                             sc.beta(s->dtype), py, dt, n, (int)s->nbatch,
                                             compute_type(s->dtype), CUBLAS_GEMM_DEFAULT),
                         "MatMul (broadcast batches)");
}

/* ------------------------------------------------------------------ Gemm */

struct gemm_state {
    onyx_dtype dtype;
    bool ta, tb;
    int64_t m, n, k;
    double alpha, beta;
    bool has_c;     // C given and beta != 0
    int64_t cm, cn; // C's broadcast shape (1 or m, 1 or n)
    lt_epilogue *ep; // a device epilogue, or NULL
};

// y[i, j] = scale * C broadcast to [m, n] (scale 1: C itself; beta: the k == 0 result).
template <typename T>
__global__ void gemm_fill_kernel(const T *C, T *y, int64_t m, int64_t n, int64_t cm, int64_t cn,
                                 typename compute<T>::type scale, bool scaled) {
    CUDA_GRID_LOOP(i, m * n) {
        int64_t r = i / n, col = i - r * n;
        T v = C[(cm == 1 ? 0 : r) * cn + (cn == 1 ? 0 : col)];
        y[i] = scaled ? from_compute<T>(scale * to_compute(v)) : v;
    }
}

struct gemm_fill {
    template <typename T>
    static onyx_status run(const kernel_call *c, const gemm_state *s, const tensor *C, tensor *Y,
                           bool scaled) {
        gemm_fill_kernel<T><<<cuda_blocks(Y->numel), CUDA_THREADS, 0, cuda_stream(c)>>>(
            cuda_data<T>(C), cuda_data<T>(Y), s->m, s->n, s->cm, s->cn,
            (typename compute<T>::type)s->beta, scaled);
        return cuda_launched("Gemm bias");
    }
};

onyx_status fill_c(const kernel_call *c, const gemm_state *s, const tensor *C, tensor *Y,
                   bool scaled) {
    CUDA_DISPATCH_FLOATS(s->dtype, gemm_fill, c, s, C, Y, scaled)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "Gemm: type %d on CUDA", (int)s->dtype);
}

bool gemm_resolve(const kernel_prep *p, gemm_state *s) {
    if (p->n_in < 2) return false;
    const type_info *A = p->in_type[0], *B = p->in_type[1];
    const type_info *C = p->n_in > 2 ? p->in_type[2] : NULL;
    if (!static_tensor(A) || !static_tensor(B) || !dtype_in(A->dtype, MM_TYPES) ||
        B->dtype != A->dtype || A->rank != 2 || B->rank != 2)
        return false;
    memset(s, 0, sizeof *s);
    s->dtype = A->dtype;
    s->ta = attr_int(p->node, "transA", 0) != 0;
    s->tb = attr_int(p->node, "transB", 0) != 0;
    s->alpha = attr_float(p->node, "alpha", 1.0f);
    s->beta = attr_float(p->node, "beta", 1.0f);
    s->m = A->dims[s->ta ? 1 : 0];
    s->k = A->dims[s->ta ? 0 : 1];
    s->n = B->dims[s->tb ? 0 : 1];
    if (B->dims[s->tb ? 1 : 0] != s->k) return false;
    const type_info *Y = &p->out_type[0];
    if (Y->rank != 2 || Y->dims[0] != s->m || Y->dims[1] != s->n) return false;
    if (C) {
        if (!static_tensor(C) || C->dtype != A->dtype || C->rank > 2) return false;
        s->cm = C->rank == 2 ? C->dims[0] : 1;
        s->cn = C->rank >= 1 ? C->dims[C->rank - 1] : 1;
        if ((s->cm != 1 && s->cm != s->m) || (s->cn != 1 && s->cn != s->n)) return false;
        s->has_c = s->beta != 0;
    }
    return fits_int(s->m) && fits_int(s->n) && fits_int(s->k);
}

bool gemm_supports(const kernel_prep *p) {
    gemm_state s;
    return gemm_resolve(p, &s);
}

void gemm_release(void *state) {
    gemm_state *s = (gemm_state *)state;
    if (s) lt_free(s->ep);
    free(s);
}

// A device epilogue through cuBLASLt (p->fused, or none: the bias alone): the chain's bias
// (input 2 of the fused node) or Gemm's own C of one value per column as the bias, beta 1 either
// way (so that the plain product with C added, run where cuBLASLt's call cannot be, computes the
// same), and a Relu.
bool gemm_epilogue(const kernel_prep *p, gemm_state *s) {
    lt_epilogue *e = (lt_epilogue *)calloc(1, sizeof *e);
    if (!e) return false;
    s->ep = e;
    e->bias_input = e->sum_input = -1;
    e->alpha = (float)s->alpha;
    if (p->fused && !epilogue_chain(p, &e->bias_input, &e->sum_input, &e->relu)) return false;
    bool has_c = p->n_in > 2 && p->in_type[2];
    if (has_c && (s->beta != 1 || s->cm != 1 || s->cn != s->n)) return false;
    if (has_c) e->bias_input = 2;
    return s->k > 0 && lt_build(p, s->dtype, s->m, s->n, s->k, s->ta, s->tb, e);
}

// kernel.takes_chain of Gemm: whether gemm_prepare takes p->fused, as matmul_takes_chain.
bool gemm_takes_chain(const kernel_prep *p) {
    gemm_state s;
    if (!gemm_resolve(p, &s)) return false;
    bool ok = gemm_epilogue(p, &s);
    lt_free(s.ep);
    return ok;
}

onyx_status gemm_prepare(const kernel_prep *p, void **state) {
    gemm_state *s = (gemm_state *)calloc(1, sizeof *s);
    if (!s) return onyx_error(ONYX_ERR_NO_MEMORY, "Gemm: out of memory");
    if (!gemm_resolve(p, s)) {
        free(s);
        return onyx_error(ONYX_ERR_SHAPE, "Gemm: operand shapes do not multiply");
    }
    if (p->fused && !gemm_epilogue(p, s)) {
        gemm_release(s);
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Gemm: cuBLASLt does not apply this epilogue");
    }
    // a C of one constant value per column is the epilogue's bias too without a chain, where
    // cuBLASLt takes it: Y is written once instead of filled with C first
    if (!p->fused && s->has_c && p->in_value[2] && !gemm_epilogue(p, s)) {
        lt_free(s->ep);
        s->ep = NULL;
    }
    *state = s;
    return ONYX_OK;
}

onyx_status gemm_product(const kernel_call *c);

onyx_status gemm_run(const kernel_call *c) {
    const gemm_state *s = (const gemm_state *)c->state;
    if (!s || !s->ep) return gemm_product(c);
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1);
    tensor *Y = kernel_output(c, 0);
    if (Y->numel != s->m * s->n)
        return onyx_error(ONYX_ERR_SHAPE, "Gemm: output has %lld elements, expected %lld",
                          (long long)Y->numel, (long long)(s->m * s->n));
    onyx_status st = ONYX_OK;
    if (Y->numel && lt_run(c, s->ep, A, B, Y, &st)) return st;
    TRY(gemm_product(c)); // with the bias as C
    return epilogue_after(c, s->ep, s->dtype, false, s->n, Y);
}

// The product, C added (beta).
onyx_status gemm_product(const kernel_call *c) {
    const gemm_state *s = (const gemm_state *)c->state;
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1), *C = kernel_input(c, 2);
    tensor *Y = kernel_output(c, 0);
    if (!s) return onyx_error(ONYX_ERR_RUNTIME, "Gemm: kernel state missing");
    if (Y->numel != s->m * s->n)
        return onyx_error(ONYX_ERR_SHAPE, "Gemm: output has %lld elements, expected %lld",
                          (long long)Y->numel, (long long)(s->m * s->n));
    if (Y->numel == 0) return ONYX_OK;
    bool with_c = s->has_c && C;
    if (with_c) {
        // Y = C (or beta * C when there is no product to add) before the product adds to it
        TRY(fill_c(c, s, C, Y, s->k == 0));
        if (s->k == 0) return ONYX_OK;
    } else if (s->k == 0) {
        return cuda_status(cudaMemsetAsync(Y->data, 0, Y->nbytes, cuda_stream(c)), "Gemm zeros");
    }
    cublasHandle_t h;
    TRY(cuda_blas(c, &h));
    scalars sc = make_scalars(s->alpha, with_c ? s->beta : 0.0);
    cudaDataType dt = cuda_type(s->dtype);
    int m = (int)s->m, n = (int)s->n, k = (int)s->k;
    // column-major Y^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m)
    return cublas_status(cublasGemmEx(h, s->tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                      s->ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                                      sc.alpha(s->dtype), B->data, dt, s->tb ? k : n, A->data, dt,
                                      s->ta ? m : k, sc.beta(s->dtype), Y->data, dt, n,
                                      compute_type(s->dtype), CUBLAS_GEMM_DEFAULT),
                         "Gemm");
}

const kernel entries[] = {
    // domain, op, versions, device, dtypes, flags, prepare, run, release, fork, unfork,
    // supports, host_inputs, takes_chain
    {"", "MatMul", 1, 13, DEVICE_CUDA, MM_TYPES, KF_DEVICE_EPILOGUE, matmul_prepare, matmul_run,
     mm_release, NULL, NULL, matmul_supports, 0, matmul_takes_chain},
    {"", "Gemm", 1, 13, DEVICE_CUDA, MM_TYPES, KF_DEVICE_EPILOGUE, gemm_prepare, gemm_run,
     gemm_release, NULL, NULL, gemm_supports, 0, gemm_takes_chain},
};

} // namespace

extern "C" const kernel *cuda_family_linalg(size_t *count) {
    *count = sizeof entries / sizeof entries[0];
    return entries;
}
