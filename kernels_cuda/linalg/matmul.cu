// MatMul and Gemm on CUDA through cuBLAS (row-major products computed as the column-major
// Y^T = B^T A^T), float16/bfloat16 with float accumulation, float without TF32.
#include <limits.h>
#include <stdlib.h>
#include <string.h>

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

// Fills s from the operand shapes; false where cuBLAS cannot take the product.
bool mm_resolve(const type_info *A, const type_info *B, mm_state *s) {
    int ra = A->rank, rb = B->rank;
    if (ra < 1 || rb < 1) return false;
    memset(s, 0, sizeof *s);
    s->dtype = A->dtype;
    s->m = ra > 1 ? A->dims[ra - 2] : 1;
    s->k = A->dims[ra - 1];
    s->n = rb > 1 ? B->dims[rb - 1] : 1;
    int64_t kb = rb > 1 ? B->dims[rb - 2] : B->dims[0];
    if (kb != s->k) return false;
    int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0;
    s->nb = ba > bb ? ba : bb;
    if (s->nb > MM_MAX_BATCH) return false;
    int64_t sa = s->m * s->k, sb = s->k * s->n;
    int64_t na = 1, nbb = 1;
    s->nbatch = 1;
    for (int i = s->nb - 1; i >= 0; i--) {
        int ia = i - (s->nb - ba), ib = i - (s->nb - bb);
        int64_t da = ia >= 0 ? A->dims[ia] : 1, db = ib >= 0 ? B->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return false;
        s->bdim[i] = da > db ? da : db;
        if (da == 0 || db == 0) s->bdim[i] = 0;
        s->astr[i] = da == 1 ? 0 : sa;
        s->bstr[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
        na *= da;
        nbb *= db;
        s->nbatch *= s->bdim[i];
    }
    // B without batches: A's batches are the rows of one taller product
    if (bb == 0 && s->nbatch > 1) {
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
    return mm_resolve(A, B, &s);
}

onyx_status matmul_prepare(const kernel_prep *p, void **state) {
    mm_state *s = (mm_state *)calloc(1, sizeof *s);
    if (!s) return onyx_error(ONYX_ERR_NO_MEMORY, "MatMul: out of memory");
    if (!mm_resolve(p->in_type[0], p->in_type[1], s)) {
        free(s);
        return onyx_error(ONYX_ERR_SHAPE, "MatMul: operand shapes do not multiply");
    }
    *state = s;
    return ONYX_OK;
}

void state_release(void *state) { free(state); }

onyx_status matmul_run(const kernel_call *c) {
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

onyx_status gemm_prepare(const kernel_prep *p, void **state) {
    gemm_state *s = (gemm_state *)calloc(1, sizeof *s);
    if (!s) return onyx_error(ONYX_ERR_NO_MEMORY, "Gemm: out of memory");
    if (!gemm_resolve(p, s)) {
        free(s);
        return onyx_error(ONYX_ERR_SHAPE, "Gemm: operand shapes do not multiply");
    }
    *state = s;
    return ONYX_OK;
}

onyx_status gemm_run(const kernel_call *c) {
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
    // supports, host_inputs
    {"", "MatMul", 1, 13, DEVICE_CUDA, MM_TYPES, 0, matmul_prepare, matmul_run, state_release,
     NULL, NULL, matmul_supports, 0},
    {"", "Gemm", 1, 13, DEVICE_CUDA, MM_TYPES, 0, gemm_prepare, gemm_run, state_release, NULL,
     NULL, gemm_supports, 0},
};

} // namespace

extern "C" const kernel *cuda_family_linalg(size_t *count) {
    *count = sizeof entries / sizeof entries[0];
    return entries;
}
